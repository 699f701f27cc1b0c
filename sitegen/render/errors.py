"""The one error rendering raises."""


class RenderError(Exception):
    """A template that does not compile or fails, two outputs on one path, a missing asset:
    a broken template or install, never the content's fault (content is checked before)."""
