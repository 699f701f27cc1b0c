"""The jinja environment pages are rendered with: the filters (Markdown without HTML, JSON for
script blocks), the shared macros as globals, and compiled templates kept between builds.

jinja2 and markdown-it are imported here only: a build compiles the templates while the load
workers read the content (pipeline.py), and the commands that render nothing never import them.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import pickle
import sys
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from jinja2 import (
    BytecodeCache,
    Environment,
    FileSystemLoader,
    StrictUndefined,
    TemplateSyntaxError,
)
from jinja2.bccache import Bucket
from markdown_it import MarkdownIt
from markupsafe import Markup

from sitegen.model.text import neutralised_paragraphs
from sitegen.render import lean_jinja
from sitegen.render.assets import TEMPLATES_DIR
from sitegen.render.compact_json import compact_json
from sitegen.render.errors import RenderError
from sitegen.user_cache import private_cache_folder, read_private, user_cache_dir, write_private

# Macros of _macros.html every template may call as globals (importing them cost each render).
MACROS = (
    "link",
    "table",
    "run_table",
    "identity",
    "pager",
    "chart_figure",
    "frontier_figure",
    "entry_row",
)
TEMPLATE_FOLDER = "templates"  # in the user's cache folder
COMPILED_LIMIT = 1 << 24  # bytes: a compiled template is tens of kilobytes
FACTS_CACHE = 4096  # distinct fact lists kept rendered: a protocol's block on each of its runs

# Characters that could end a <script> block or a JS string early, as JSON escapes (replaced
# one by one: str.translate looks each character of a chart's JSON up in a dict, much slower).
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
    orjson where they are provably the same (render/compact_json.py)."""
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
        return Markup(md.render(neutralised_paragraphs(text)))

    return render


class TemplateBytecode(BytecodeCache):
    """Compiled templates kept between builds, as Python keeps `.pyc` files: compiling them all
    is a noticeable part of a small build's CPU, loading them back almost none.

    Kept in the user's cache folder (`$XDG_CACHE_HOME/sitegen/templates`, else
    `~/.cache/sitegen/templates`), never in the checkout, where a pull request could commit
    compiled code that no reviewer reads. Loading one is running code (jinja unpickles its
    header), so it is read and written only as user_cache.py allows: a private folder, private
    files. A template's code is reused only while the template, the code generator, this module
    (the environment's options), the libraries' versions and Python's are all unchanged:
    Python's is in jinja's header, the rest in its checksum. A folder that is not private or
    cannot be read or written only means compiling; `PYTHONDONTWRITEBYTECODE` (Python's own
    switch) stops writing.
    """

    def __init__(self, environment_class: type[Environment]) -> None:
        self._code = _CODE_VERSION + environment_class.__name__.encode()
        self._folder = private_cache_folder(TEMPLATE_FOLDER, make=False)
        self._folder_made = False

    def get_source_checksum(self, source: str) -> str:
        return hashlib.sha256(self._code + source.encode()).hexdigest()

    def load_bytecode(self, bucket: Bucket) -> None:
        if self._folder is None:
            return
        code = read_private(self._folder / _file_name(bucket), COMPILED_LIMIT)
        if code is not None:
            try:
                bucket.load_bytecode(io.BytesIO(code))
            except (EOFError, ValueError, TypeError, pickle.UnpicklingError):  # damaged: compile
                bucket.reset()

    def dump_bytecode(self, bucket: Bucket) -> None:
        if sys.dont_write_bytecode:
            return
        if not self._folder_made:
            self._folder = private_cache_folder(TEMPLATE_FOLDER)
            self._folder_made = True
        if self._folder is None:
            return
        code = io.BytesIO()
        bucket.write_bytecode(code)
        with contextlib.suppress(OSError):  # compiled again next time
            write_private(self._folder / _file_name(bucket), code.getvalue())


def _file_name(bucket: Bucket) -> str:
    return f"__jinja2_{bucket.key}.cache"  # jinja's own name for it (key: a sha1's hex)


def template_cache_dir() -> Path | None:
    """Where compiled templates are kept (not checked: TemplateBytecode reaches it through
    `private_cache_folder`); None where there is no cache folder to use."""
    folder = user_cache_dir()
    return None if folder is None else folder / TEMPLATE_FOLDER


# What the compiled code depends on besides the template: the code generator and the libraries.
_CODE_VERSION = hashlib.sha256(
    Path(lean_jinja.__file__).read_bytes()
    + Path(__file__).read_bytes()
    + f"{version('jinja2')} {version('markupsafe')}".encode()
).digest()


def make_environment(templates: Path = TEMPLATES_DIR, lean: bool = True) -> Environment:
    """The environment with every template compiled; `lean=False`: stock jinja's code (the
    lean one's test). Raises RenderError, naming the template and its line, for one that does
    not compile (`sitegen serve` then keeps serving)."""
    try:
        return _compiled(templates, lean)
    except TemplateSyntaxError as error:
        message = f"{templates.name}/{error.name}:{error.lineno}: {error.message}"
        raise RenderError(message) from None


def _compiled(templates: Path, lean: bool) -> Environment:
    environment_class = lean_jinja.environment_class(lean)
    environment = environment_class(
        loader=FileSystemLoader(str(templates)),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        auto_reload=False,
        bytecode_cache=TemplateBytecode(environment_class),
    )
    environment.filters["markdown"] = markdown_renderer()
    environment.filters["script_json"] = script_json
    macros = environment.get_template("_macros.html").module
    for name in MACROS:
        environment.globals[name] = getattr(macros, name)
    # Fact lists are named tuples (immutable): the macro's argument is its own cache key.
    facts_macro = macros.facts  # type: ignore[attr-defined]
    rendered = functools.lru_cache(maxsize=FACTS_CACHE)(facts_macro)

    def facts(items: Any) -> Markup:
        return rendered(items) if isinstance(items, tuple) else facts_macro(items)  # type: ignore[no-any-return]

    environment.globals["facts"] = facts
    lean_jinja.check_plain_globals(environment)
    for name in environment.list_templates(extensions=("html", "xml")):
        environment.get_template(name)  # compiled now, once, not by the first page to use it
    return environment
