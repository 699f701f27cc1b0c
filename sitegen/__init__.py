"""sitegen: the static site generator behind kernelindex.

The public surface: `build_site` and `check_content` (the pipeline), and what they return.
Everything else is internal and may change between versions.
"""

from sitegen.pipeline import BuiltSite, CheckedContent, build_site, check_content

__version__ = "0.1.0"
__all__ = ["BuiltSite", "CheckedContent", "__version__", "build_site", "check_content"]
