"""sitegen: the static site generator behind kernelindex.

The public surface: `build_site` and `check_content` (the pipeline), and what they return.
Everything else is internal and may change between versions. The names are imported on first
use, so that importing one stage does not import them all.
"""

import importlib as _importlib
import typing as _typing

__version__ = "0.1.0"
__all__ = ["BuiltSite", "CheckedContent", "__version__", "build_site", "check_content"]

if _typing.TYPE_CHECKING:
    from sitegen.pipeline import BuiltSite, CheckedContent, build_site, check_content


def __getattr__(name: str) -> _typing.Any:
    if name in __all__:
        return getattr(_importlib.import_module("sitegen.pipeline"), name)
    raise AttributeError(f"module 'sitegen' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
