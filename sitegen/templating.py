"""The jinja environment pages are rendered with: autoescaping compiled to plain `str` escapes,
one dict of globals per template, the filters (Markdown without HTML, JSON for script blocks),
and the shared macros as globals.

Its own module because jinja2 and markdown-it cost ~0.1 s to import and the templates ~0.15 s
to compile: `sitegen build` does both while the load workers read the content (build.py), not
before them, and nothing else imports this module at its top. Compiled templates are kept
between builds in the user's cache folder, as Python keeps its own bytecode (`TemplateBytecode`).
"""

from __future__ import annotations

import functools
import hashlib
import keyword
import os
import sys
from collections.abc import Callable, Iterable, MutableMapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import jinja2
from jinja2 import (
    Environment,
    FileSystemBytecodeCache,
    FileSystemLoader,
    StrictUndefined,
    TemplateSyntaxError,
)
from jinja2 import Template as JinjaTemplate
from jinja2.bccache import Bucket
from jinja2.compiler import CodeGenerator, Frame
from jinja2.nodes import Call, Expr, Getattr, Name, Node, Template
from jinja2.runtime import Macro
from markdown_it import MarkdownIt
from markupsafe import Markup

try:  # markupsafe's own C escaping, without the Markup object around its result
    from markupsafe._speedups import _escape_inner as escape_text
except ImportError:  # pragma: no cover - markupsafe built without its C extension
    from markupsafe._native import _escape_inner as escape_text

from sitegen.pages import ChartBlock
from sitegen.render import TEMPLATES_DIR, RenderError, compact_json

# Characters that could end a <script> block or a JS string early, as JSON escapes (replaced
# one by one: str.translate looks each character of a chart's JSON up in a dict, 10× slower).
_SCRIPT_ESCAPES = (
    ("<", "\\u003c"),
    (">", "\\u003e"),
    ("&", "\\u0026"),
    ("\u2028", "\\u2028"),
    ("\u2029", "\\u2029"),
)


# --- filters ------------------------------------------------------------------------------------


def script_json(value: Any) -> Markup:
    """JSON safe inside <script type="application/json">: nothing in it can close the block.

    The bytes are `json.dumps(value, ensure_ascii=False, separators=(",", ":"))`'s, made by
    orjson where they are provably the same (render.compact_json): a kernel page's chart specs
    were ~40 % of its JSON time."""
    text = compact_json(value).decode()
    for character, escaped in _SCRIPT_ESCAPES:
        text = text.replace(character, escaped)
    return Markup(text)


def _safe_link(url: str) -> bool:
    """Markdown links may go to http(s) or stay relative; never javascript:, data: and the like."""
    stripped = url.strip()
    if not stripped or stripped.startswith("//"):
        return False
    scheme = urlsplit(stripped).scheme.lower()
    if scheme:
        return scheme in ("http", "https")
    return ":" not in stripped.split("/", 1)[0]


def markdown_renderer() -> Callable[[str], Markup]:
    md = MarkdownIt("commonmark", {"html": False})
    md.disable("image")  # no third-party requests from content
    md.validateLink = _safe_link  # type: ignore[method-assign]

    def render(text: str) -> Markup:
        return Markup(md.render(text))

    return render


def escape_output(value: Any) -> str:
    """`markupsafe.escape` for text going straight into a page: the same characters escaped,
    but a plain `str` back (a `Markup` would only be joined into the page and dropped)."""
    if type(value) is str:
        return escape_text(value)  # type: ignore[no-any-return]
    if hasattr(value, "__html__"):
        return value.__html__()  # type: ignore[no-any-return]
    return escape_text(str(value))  # type: ignore[no-any-return]


class _LeanCode(CodeGenerator):
    """jinja's code generator with costs of its generality removed, each measured on a run
    page's render (docs/performance.md):

    - each `{{ … }}` of an autoescaped template is escaped to a plain `str` (markupsafe's own
      C escaping, inline for a str, `escape_output` for anything else), not by jinja's
      `escape(…)`: building a `Markup` for every value was a third of the time, and the call
      to `escape_output` half of what was left of escaping;
    - a template's root and each block append their output to a list and yield it joined,
      once: yielding each piece up a child template's chain of generators (~160 pieces a run
      page) took ~5 % of the render;
    - `x.name` is Python's attribute access, not `environment.getattr(x, "name")` (a method
      call that falls back to `x["name"]`): what templates read are named tuples (pages.py),
      and a dict's keys are not attributes here (a template that tries gets AttributeError;
      `self.block()` is still jinja's); ~14 % of the time;
    - a call (`{{ facts(page.summary) }}`) is a plain Python call, not `context.call(…)`, which
      inspects the callee for a context argument on every call: `make_environment` refuses a
      global that asks for one; ~18 % of the time.

    Macros, `{% set %}` blocks, filters and tests are jinja's. The inline escaping and the one
    yield together took a run page's render from ~75 to ~68 µs, and all the real catalog's
    pages from 454 to ~415 ms of CPU (best of 5, in one process).
    """

    def visit_Template(self, node: Template, frame: Frame | None = None) -> None:
        self.writeline(f"from {__name__} import escape_output, escape_text")
        super().visit_Template(node, frame)

    def blockvisit(self, nodes: Iterable[Node], frame: Frame) -> None:
        # A template's root and its blocks collect their output in a list and yield it once,
        # joined, as macros return theirs: one `yield` per piece went up through the chain of
        # generators (a run page: ~160 pieces, each through three). Every frame made inside
        # (loops, ifs) inherits the list, so only those two bodies come here without one.
        if frame.buffer is not None or self.environment.is_async:
            super().blockvisit(nodes, frame)
            return
        frame.buffer = self.temporary_identifier()
        self.writeline(f"{frame.buffer} = []")
        super().blockvisit(nodes, frame)
        self.writeline(f"yield concat({frame.buffer})")

    @staticmethod
    def _escapes_inline(frame: Frame) -> bool:
        # What `_output_child_pre` opens, `_output_child_post` must close: one test for both.
        return not frame.eval_ctx.volatile and frame.eval_ctx.autoescape

    def _output_child_pre(self, node: Expr, frame: Frame, finalize: Any) -> None:
        if not self._escapes_inline(frame):
            super()._output_child_pre(node, frame, finalize)
            return
        # escape_output inlined for the common case, a str: half the time of the call.
        self.write("(escape_text(_value) if type(_value := ")
        if finalize.src is not None:
            self.write(finalize.src)

    def _output_child_post(self, node: Expr, frame: Frame, finalize: Any) -> None:
        if not self._escapes_inline(frame):
            super()._output_child_post(node, frame, finalize)
            return
        if finalize.src is not None:
            self.write(")")
        self.write(") is str else escape_output(_value))")

    def visit_Getattr(self, node: Getattr, frame: Frame) -> None:
        # `self.block()` reads a block by item: jinja's way.
        own_block = isinstance(node.node, Name) and node.node.name == "self"
        if own_block or self.environment.sandboxed or self.environment.is_async:
            super().visit_Getattr(node, frame)
            return
        if node.attr.isidentifier() and not keyword.iskeyword(node.attr):
            self.visit(node.node, frame)
            self.write(f".{node.attr}")
        else:  # `x.class` is no Python: getattr(x, 'class')
            self.write("getattr(")
            self.visit(node.node, frame)
            self.write(f", {node.attr!r})")

    def visit_Call(self, node: Call, frame: Frame, forward_caller: bool = False) -> None:
        if forward_caller or self.environment.sandboxed or self.environment.is_async:
            super().visit_Call(node, frame, forward_caller=forward_caller)  # {% call %}: `caller`
            return
        # `signature` writes each argument after a comma: `f(*(), a, b)` is `f(a, b)`.
        self.write("(")
        self.visit(node.node, frame)
        self.write(")(*()")
        self.signature(node, frame)
        self.write(")")


class _Compiled(Environment):
    """An environment whose templates, once loaded, never change (`auto_reload` is off and
    every global is set in `make_environment` before a page template is loaded):

    - each template's globals are one dict, not jinja's ChainMap over the environment's: every
      render copies the globals into a new context, and iterating a ChainMap made that ~15 % of
      a run page's render time;
    - `get_template` answers from a dict: `{% extends %}` calls it on every render, and
      jinja's own cache (a weak reference, a lock, a queue) was ~7 % of a run page's.
    """

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._loaded: dict[str | JinjaTemplate, JinjaTemplate] = {}

    def make_globals(self, d: MutableMapping[str, Any] | None) -> MutableMapping[str, Any]:
        return {**self.globals, **(d or {})}

    def get_template(
        self,
        name: str | JinjaTemplate,
        parent: str | None = None,
        globals: MutableMapping[str, Any] | None = None,
    ) -> JinjaTemplate:
        if parent is not None and isinstance(name, str):
            name = self.join_path(name, parent)
        found = self._loaded.get(name) if globals is None else None
        if found is None:
            found = super().get_template(name, globals=globals)
            if globals is None:
                self._loaded[name] = found
        return found


class TemplateBytecode(FileSystemBytecodeCache):
    """Compiled templates kept between builds, as Python keeps `.pyc` files: compiling them all
    is ~0.15 s of CPU in every build, loading them back ~0.005 s.

    Kept in the user's cache folder (`$XDG_CACHE_HOME/sitegen/templates`, else
    `~/.cache/sitegen/templates`), never in the checkout, where a pull request could commit
    compiled code that no reviewer reads. A template's code is reused only while the template,
    this module (the environment's options and `_LeanCode`), jinja's version and Python's are
    all unchanged: the first three are in the checksum jinja compares, Python's in its header.
    A folder that cannot be read or written only means compiling; `PYTHONDONTWRITEBYTECODE`
    (Python's own switch) stops writing.
    """

    def __init__(self, directory: Path) -> None:
        super().__init__(str(directory))

    def get_source_checksum(self, source: str) -> str:
        return hashlib.sha256(_CODE_VERSION + source.encode()).hexdigest()

    def load_bytecode(self, bucket: Bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except OSError:
            bucket.reset()

    def dump_bytecode(self, bucket: Bucket) -> None:
        if sys.dont_write_bytecode:
            return
        try:
            os.makedirs(self.directory, mode=0o700, exist_ok=True)
            super().dump_bytecode(bucket)
        except OSError:
            pass  # compiled again next time


def template_cache_dir() -> Path | None:
    """Where compiled templates are kept; None where there is no cache folder to use."""
    cache_home = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(cache_home):  # the XDG rule: unset, empty or relative is ignored
        try:
            cache_home = os.path.join(Path.home(), ".cache")
        except RuntimeError:  # no home folder (no HOME, no passwd entry)
            return None
    return Path(cache_home, "sitegen", "templates")


# What the compiled code depends on besides the template: this module and jinja itself.
_CODE_VERSION = hashlib.sha256(Path(__file__).read_bytes() + jinja2.__version__.encode()).digest()


def _check_plain_globals(environment: Environment) -> None:
    """Templates call globals as plain functions (_LeanCode): refuse one that asks jinja for
    its context, environment or evaluation context. A macro may: called without one, it
    takes the autoescaping it was compiled with, which is the environment's (always on)."""
    for name, value in environment.globals.items():
        if isinstance(value, Macro):
            continue
        method = type(value).__call__ if callable(value) else None  # a callable object's
        if hasattr(value, "jinja_pass_arg") or hasattr(method, "jinja_pass_arg"):
            raise TypeError(f"the template global {name!r} asks jinja for its context")


def direct_macro(macro: Macro) -> Callable[..., Any]:
    """`macro`, called with exactly its positional arguments, straight to its compiled
    function: jinja's matching of keywords, defaults and `caller` to its parameters was ~3 µs
    of the ~5 µs a run page's identity block cost. Any other call goes through the macro."""
    function = getattr(macro, "_func", None)
    plain = not (macro.catch_kwargs or macro.catch_varargs or macro.caller)
    if function is None or not plain or not getattr(macro, "_default_autoescape", False):
        return macro
    count = len(macro.arguments)

    def call(*args: Any, **kwargs: Any) -> Any:
        if len(args) == count and not kwargs:
            return Markup(function(*args))  # what the macro returns, autoescaping on
        return macro(*args, **kwargs)

    return call


def make_environment(templates: Path = TEMPLATES_DIR) -> Environment:
    """The environment with every template compiled. Raises RenderError, naming the template
    and its line, for one that does not compile (`sitegen serve` then keeps serving)."""
    try:
        return _compiled(templates)
    except TemplateSyntaxError as error:
        message = f"{templates.name}/{error.name}:{error.lineno}: {error.message}"
        raise RenderError(message) from None


def _compiled(templates: Path) -> Environment:
    environment = _Compiled(
        loader=FileSystemLoader(str(templates)),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        auto_reload=False,
        bytecode_cache=TemplateBytecode(cache) if (cache := template_cache_dir()) else None,
    )
    environment.code_generator_class = _LeanCode
    environment.filters["markdown"] = markdown_renderer()
    environment.filters["script_json"] = script_json
    macros = environment.get_template("_macros.html").module
    # The macros of _macros.html are globals: a template importing them paid ~9 µs a render
    # (7 % of a run page). `facts` and `figure` are wrapped below.
    for name in ("link", "table", "run_table", "identity", "pager"):
        environment.globals[name] = direct_macro(getattr(macros, name))
    # The protocol and environment blocks repeat on thousands of run pages: render each once.
    # Facts are named tuples (immutable), so the macro's argument is its own cache key.
    macro = direct_macro(macros.facts)  # type: ignore[attr-defined]
    cached = functools.lru_cache(maxsize=4096)(macro)

    def facts(items: Any) -> Markup:
        return cached(items) if isinstance(items, tuple) else macro(items)  # type: ignore[no-any-return]

    environment.globals["facts"] = facts
    chart_figure = direct_macro(macros.chart_figure)  # type: ignore[attr-defined]

    def figure(chart: ChartBlock) -> str:
        # A chart kept by a PlanCache (pages.py) keeps its HTML for the next rebuild too.
        kept = chart.rendered
        if kept.markup is not None:
            return kept.markup
        markup: str = chart_figure(chart)
        if kept.keep:
            kept.markup = markup
        return markup

    environment.globals["figure"] = figure
    _check_plain_globals(environment)
    for name in environment.list_templates(extensions=("html", "xml")):
        environment.get_template(name)  # compiled now, once, not by the first page to use it
    return environment
