"""sitegen: the static site generator behind kernelindex."""

__version__ = "0.1.0"
