"""sitegen: the static site generator behind kernelindex.

The public surface: `build_site` and `check_content` (the pipeline), and what they return.
Everything else is internal and may change between versions.

The pipeline is imported on first use, not with the package: `sitegen environment` runs on a
GPU machine that has only the benchmark's Python, without pydantic and the rest.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sitegen.pipeline import BuiltSite, CheckedContent, build_site, check_content

__version__ = "0.1.0"
__all__ = ["BuiltSite", "CheckedContent", "__version__", "build_site", "check_content"]
_FROM_PIPELINE = frozenset(__all__) - {"__version__"}


def __getattr__(name: str) -> Any:
    if name in _FROM_PIPELINE:
        return getattr(importlib.import_module("sitegen.pipeline"), name)
    raise AttributeError(f"module 'sitegen' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The public names and the subpackages imported so far, as a plain package's would be."""
    submodules = {
        name
        for name, value in globals().items()
        if isinstance(value, ModuleType) and value.__name__.startswith("sitegen.")
    }
    return sorted({*__all__, *submodules, *(name for name in globals() if name.startswith("_"))})
