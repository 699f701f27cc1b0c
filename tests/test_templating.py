"""templating.py: escaping of content in HTML, JSON script blocks and Markdown; the globals."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from jinja2 import DictLoader, Environment, StrictUndefined, UndefinedError, pass_context
from jinja2.runtime import Macro
from markupsafe import Markup, escape

from sitegen.render import TEMPLATES_DIR
from sitegen.templating import (
    _check_plain_globals,
    _Compiled,
    _LeanCode,
    _safe_link,
    direct_macro,
    escape_output,
    make_environment,
    markdown_renderer,
    script_json,
    template_cache_dir,
)
from tests.conftest import HOSTILE_MARKDOWN, NEEDLES, SCRIPT


@given(st.text() | st.integers() | st.floats() | st.booleans() | st.none())
def test_output_escaping_is_markupsafes(value: object) -> None:
    assert escape_output(value) == str(escape(value))
    assert escape_output(Markup(f"<b>{value}</b>")) == f"<b>{value}</b>"  # already safe


def test_templates_escape_what_they_output_and_keep_markup() -> None:
    template = make_environment().from_string(
        "{{ text }}|{{ number }}|{{ safe }}|{% set block %}<i>{{ text }}</i>{% endset %}{{ block }}"
    )
    page = template.render(text=SCRIPT + "'&", number=3, safe=Markup("<em>ok</em>"))
    assert page == (
        "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;&#39;&amp;|3|<em>ok</em>|"
        "<i>&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;&#39;&amp;</i>"
    )
    code = make_environment().compile("{{ text }}", raw=True)
    assert "escape_text(" in code and "escape_output(" in code, "templates compiled with ours"


def test_templates_hold_their_globals_in_one_dict() -> None:
    environment = make_environment()
    template = environment.get_template("run.html")
    # A plain dict: each render copies it into the page's context (a ChainMap copied slowly).
    assert type(template.globals) is dict
    assert template.globals.keys() >= environment.globals.keys() >= {"facts", "identity", "link"}
    page = environment.from_string("{{ facts(items) }}", globals={"items": ()}).render()
    assert page.strip() == '<dl class="facts">\n</dl>', "template globals overlay the environment's"


# Templates exercising what _LeanCode compiles its own way (attributes, keyword attributes,
# calls with keywords and unpacking, macros calling macros, loops): the output must be jinja's.
LEAN_CASES = {
    "attributes": "{{ a.b.c }}|{% for x in a.items_ %}{{ x.n }}{% endfor %}|{{ a.class }}",
    "calls": (
        "{% macro m(x, y=2) %}[{{ x }}{{ y }}]{% endmacro %}"
        "{% macro outer(x) %}{{ m(x, y=x) }}{% endmacro %}"
        "{{ m(1) }}{{ m(1, y=3) }}{{ m(*args) }}{{ m(**kwargs) }}{{ outer(5) }}"
        "{{ join(args) }}{{ range(3)|list }}{% for i in range(2) %}{{ loop.index }}{% endfor %}"
    ),
    "escaping": "{{ text }}{{ m }}{% set x %}<b>{{ text }}</b>{% endset %}{{ x }}",
    # Output is escaped inline for a str, by escape_output for anything else.
    "values": "{{ number }}|{{ real }}|{{ none }}|{{ html }}|{{ text_like }}|{{ flag }}",
    # Where autoescaping is off, or decided at run time, output is jinja's own.
    "unescaped": "{% autoescape false %}{{ text }}{{ number }}{% endautoescape %}{{ text }}"
    "{% autoescape flag %}{{ text }}{% endautoescape %}",
}


class _Html:
    def __html__(self) -> str:
        return "<u>own</u>"


class _Text(str):
    pass


@pytest.mark.parametrize("name", sorted(LEAN_CASES))
def test_lean_code_renders_what_jinja_renders(name: str) -> None:
    a = SimpleNamespace(
        b=SimpleNamespace(c=SCRIPT),
        items_=[SimpleNamespace(n=1), SimpleNamespace(n="<2>")],
        **{"class": "c&"},
    )
    values = {
        "a": a,
        "args": (7, 8),
        "kwargs": {"x": 9},
        "join": lambda items: "-".join(map(str, items)),
        "text": SCRIPT,
        "m": Markup("<i>kept</i>"),
        "number": 3,
        "real": 0.5,
        "none": None,
        "html": _Html(),
        "text_like": _Text("<a&b>"),
        "flag": True,
    }
    stock = Environment(autoescape=True, undefined=StrictUndefined)
    ours = make_environment()
    expected = stock.from_string(LEAN_CASES[name]).render(values)
    assert ours.from_string(LEAN_CASES[name]).render(values) == expected


def test_lean_code_keeps_jinjas_blocks_calls_and_loops() -> None:
    """What jinja's runtime offers a template (super(), self.<block>(), loop.cycle, caller(),
    imported macros, namespaces) renders as with jinja's own code generator."""
    sources = {
        "base.html": "<b>{% block x %}base {{ y.z }}{% endblock %}</b>{% block w %}W{% endblock %}"
        "{% for i in [1, 2] %}{{ loop.cycle('a', 'b') }}{% endfor %}",
        "child.html": '{% extends "base.html" %}{% block x %}[{{ super() }}]{{ self.w() }}'
        "{% endblock %}",
        "call.html": "{% macro m() %}<{{ caller() }}>{% endmacro %}{% call m() %}in{% endcall %}",
        "lib.html": "{% macro m(x) %}<{{ x }}>{% endmacro %}",
        "imports.html": "{% import 'lib.html' as lib %}{{ lib.m(1) }}{% from 'lib.html' import m %}"
        "{{ m(2) }}{% set ns = namespace(a=1) %}{% set ns.a = 2 %}{{ ns.a }}",
    }
    ours = _Compiled(loader=DictLoader(sources), autoescape=True, undefined=StrictUndefined)
    ours.code_generator_class = _LeanCode
    stock = Environment(loader=DictLoader(sources), autoescape=True, undefined=StrictUndefined)
    values = {"y": SimpleNamespace(z=SCRIPT)}
    for name in sources:
        expected = stock.get_template(name).render(values)
        assert ours.get_template(name).render(values) == expected, name
    assert ours.get_template("child.html").render(values).startswith("<b>[base &lt;")
    # A root and its blocks collect their output and yield it once (the child's root yields
    # its own, empty, then its parent's): not one piece per output through every generator.
    for name in sources:
        pieces = list(ours.get_template(name).generate(values))
        assert len(pieces) <= 2, (name, pieces)
    assert len(list(stock.get_template("child.html").generate(values))) > 2


def test_lean_code_calls_and_reads_attributes_directly() -> None:
    environment = make_environment()
    source = (TEMPLATES_DIR / "run.html").read_text()
    code = environment.compile(source, "run.html", raw=True)
    assert "facts" in code and "page" in code
    assert "context.call(" not in code and "environment.getattr(" not in code
    # A dict's keys are not attributes: the template fails rather than guessing.
    with pytest.raises(AttributeError):
        environment.from_string("{{ d.key }}").render(d={"key": 1})


def test_globals_that_want_jinjas_context_are_refused(tmp_path: Path) -> None:
    environment = make_environment()
    environment.globals["wants_context"] = pass_context(lambda context: "x")
    with pytest.raises(TypeError, match="wants_context"):
        _check_plain_globals(environment)
    del environment.globals["wants_context"]
    _check_plain_globals(environment)  # macros (link, facts …) and plain functions pass


def test_a_parent_template_is_looked_up_once(monkeypatch: pytest.MonkeyPatch) -> None:
    environment = make_environment()
    loads = []
    original = Environment._load_template

    def counted(self: Environment, name: str, globals: object) -> object:
        loads.append(name)
        return original(self, name, globals)  # type: ignore[arg-type]

    monkeypatch.setattr(Environment, "_load_template", counted)
    template = environment.get_template("run.html")
    assert environment.get_template("run.html") is template
    with pytest.raises(UndefinedError):  # gets as far as {% extends "_base.html" %} and past
        template.render()
    assert loads == [], "every template was loaded by make_environment; no lookup reaches jinja"


def test_script_json_cannot_close_its_block() -> None:
    text = str(script_json({"t": SCRIPT + "&\u2028\u2029<!--"}))
    assert "<" not in text and ">" not in text and "&" not in text
    assert "\u2028" not in text and "\u2029" not in text
    assert json.loads(text) == {"t": SCRIPT + "&\u2028\u2029<!--"}


@pytest.mark.parametrize(
    "value",
    [
        {"x": [1e-05, 1.5e-07, 0.0001, 123456.789, 1e16, 2.5e22, -0.0, 3.0], "y": None},
        {"text": "ünïcode ✓ 𝄞", "n": 2**60, "nested": [{"a": True}, [], {}]},
    ],
)
def test_script_json_writes_the_standard_librarys_bytes(value: Any) -> None:
    """orjson where it writes json's bytes, json where it does not (small floats, NaN)."""
    expected = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    for character, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        expected = expected.replace(character, escaped)
    assert str(script_json(value)) == expected


def test_script_json_refuses_nan() -> None:
    with pytest.raises(ValueError):
        script_json({"x": [1.0, float("nan")]})


@pytest.mark.parametrize(
    ("url", "allowed"),
    [
        ("https://example.org/x", True),
        ("http://example.org", True),
        ("../runs/", True),
        ("#anchor", True),
        ("javascript:alert(1)", False),
        ("JaVaScRiPt:alert(1)", False),
        ("vbscript:x", False),
        ("data:text/html,x", False),
        ("//evil.example/", False),
        ("file:///etc/passwd", False),
    ],
)
def test_markdown_links(url: str, allowed: bool) -> None:
    assert _safe_link(url) is allowed


def test_markdown_drops_html_images_and_bad_links() -> None:
    html = str(markdown_renderer()(HOSTILE_MARKDOWN))
    assert '<a href="https://example.org/">ok</a>' in html
    for needle in NEEDLES[1:]:
        assert needle not in html, needle
    assert "&lt;b&gt;raw&lt;/b&gt;" in html


def test_every_template_is_compiled_with_the_environment() -> None:
    """make_environment compiles them all (during the load, in a build), the partials too:
    `_base.html` would otherwise compile when the first page extends it."""
    environment = make_environment()
    assert environment.cache is not None
    compiled = {key[1] for key in environment.cache}
    files = {path.name for path in TEMPLATES_DIR.iterdir() if path.suffix in (".html", ".xml")}
    assert compiled == files and {"_base.html", "run.html", "feed.xml"} <= files


def test_the_command_line_imports_jinja_only_when_a_build_needs_it() -> None:
    """`sitegen` starts the load workers before jinja and markdown-it are imported (~0.1 s
    that build_site spends beside them): nothing the command line imports at its top may
    import them."""
    import subprocess
    import sys

    code = "import sys, sitegen.cli; print(sorted({'jinja2', 'markdown_it'} & set(sys.modules)))"
    found = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert found.strip() == "[]"


def test_a_template_that_does_not_compile_fails_the_build_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Compiled during the load now, a broken template still fails the build cleanly: one line
    naming the template and its line, exit 1, nothing written (and `serve` keeps serving)."""
    import shutil

    import sitegen.templating
    from sitegen.cli import main
    from sitegen.render import RenderError
    from tests.conftest import FIXTURES

    templates = tmp_path / "templates"
    shutil.copytree(TEMPLATES_DIR, templates)
    run = templates / "run.html"
    lines = run.read_text().splitlines(keepends=True)
    lines[3] = "<h1>{{ page.meta.title }</h1>\n"
    run.write_text("".join(lines))
    with pytest.raises(RenderError, match=r"^templates/run\.html:4: unexpected '}'$"):
        make_environment(templates)

    original = sitegen.templating.make_environment
    monkeypatch.setattr(sitegen.templating, "make_environment", lambda: original(templates))
    out = tmp_path / "public"
    assert main(["build", str(FIXTURES / "site" / "content"), "--out", str(out)]) == 1
    error = capsys.readouterr().err.strip()
    assert error == "sitegen build: templates/run.html:4: unexpected '}'"
    assert not out.exists() and not list(tmp_path.glob(".public*"))


# --- compiled templates kept between builds (TemplateBytecode) -----------------------------------


def _compiles(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the templates jinja compiles from source from now on."""
    compiled: list[str] = []
    original = Environment._parse

    def parse(self: Environment, source: str, name: str | None, filename: str | None) -> Any:
        compiled.append(name or "")
        return original(self, source, name, filename)

    monkeypatch.setattr(Environment, "_parse", parse)
    return compiled


def _template_names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.suffix in (".html", ".xml"))


def _page(environment: Environment) -> str:
    return environment.get_template("page.html").render(title="<t>", items=[1, 2])


@pytest.fixture
def templates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr("sys.dont_write_bytecode", False)
    folder = tmp_path / "templates"
    shutil.copytree(TEMPLATES_DIR, folder)
    (folder / "page.html").write_text(
        "<h1>{{ title }}</h1>{% for i in items %}<i>{{ i }}</i>{% endfor %}\n"
    )
    return folder


def test_compiled_templates_are_kept_in_the_users_cache_not_the_checkout(
    templates: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = _page(make_environment(templates))
    cache = tmp_path / "cache" / "sitegen" / "templates"
    assert template_cache_dir() == cache
    kept = sorted(cache.iterdir())
    assert len(kept) == len(_template_names(templates))  # one file per template
    assert not [p for p in templates.rglob("*") if p.suffix == ".cache"]
    compiled = _compiles(monkeypatch)
    assert _page(make_environment(templates)) == first
    assert compiled == [], "a second environment compiles nothing"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert template_cache_dir() == Path.home() / ".cache" / "sitegen" / "templates"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")  # not a path the XDG rules allow
    assert template_cache_dir() == Path.home() / ".cache" / "sitegen" / "templates"


def test_without_a_home_folder_templates_are_compiled_and_kept_nowhere(
    templates: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_home() -> Path:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setattr(Path, "home", staticmethod(no_home))
    assert template_cache_dir() is None
    assert _page(make_environment(templates)) == "<h1>&lt;t&gt;</h1><i>1</i><i>2</i>"


def test_a_changed_template_or_code_generator_is_compiled_again(
    templates: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_environment(templates)
    compiled = _compiles(monkeypatch)
    (templates / "page.html").write_text("<h2>{{ title }}</h2>\n")
    assert _page(make_environment(templates)) == "<h2>&lt;t&gt;</h2>\n"
    assert compiled == ["page.html"]
    # A change to templating.py (options, _LeanCode) or to jinja changes every checksum.
    monkeypatch.setattr("sitegen.templating._CODE_VERSION", b"another code generator")
    compiled.clear()
    make_environment(templates)
    assert sorted(compiled) == _template_names(templates)


def test_an_unusable_or_damaged_cache_only_means_compiling(
    templates: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = _page(make_environment(templates))
    cache = tmp_path / "cache" / "sitegen" / "templates"
    for kept in cache.iterdir():
        kept.write_bytes(kept.read_bytes()[:200])  # cut short mid-code
    compiled = _compiles(monkeypatch)
    assert _page(make_environment(templates)) == expected
    assert "page.html" in compiled
    compiled.clear()
    assert _page(make_environment(templates)) == expected and compiled == []  # mended
    # A cache "folder" that is a file: nothing can be read or written, the build goes on.
    (tmp_path / "blocked").write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "blocked"))
    assert _page(make_environment(templates)) == expected
    assert _page(make_environment(templates)) == expected


def test_pythons_dont_write_bytecode_switch_stops_writing(
    templates: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.dont_write_bytecode", True)
    make_environment(templates)
    assert not (tmp_path / "cache").exists()


def test_macros_called_with_their_arguments_skip_jinjas_matching() -> None:
    """The shared macros are called straight (direct_macro) when given exactly their
    positional arguments, with the macro's own result; keywords and defaults still work."""
    sources = {
        "m.html": "{% macro pair(a, b='<d>') %}[{{ a }}|{{ b }}]{% endmacro %}"
        "{% macro wrap() %}({{ caller() }}){% endmacro %}"
    }
    environment = _Compiled(loader=DictLoader(sources), autoescape=True, undefined=StrictUndefined)
    module = environment.get_template("m.html").module
    pair = direct_macro(module.pair)  # type: ignore[attr-defined]
    assert pair is not module.pair  # type: ignore[attr-defined]
    for args, kwargs in (((SCRIPT, "x"), {}), ((SCRIPT,), {}), ((), {"a": 1, "b": 2})):
        expected = module.pair(*args, **kwargs)  # type: ignore[attr-defined]
        got = pair(*args, **kwargs)
        assert got == expected and isinstance(got, Markup) and isinstance(expected, Markup)
    assert pair(SCRIPT, "x") == "[&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;|x]"
    with pytest.raises(TypeError):
        pair(1, 2, 3)  # jinja's own error: too many arguments
    assert direct_macro(module.wrap) is module.wrap  # type: ignore[attr-defined]  # a caller
    environment.autoescape = False
    plain = environment.from_string("{% macro m(a) %}{{ a }}{% endmacro %}").module
    assert direct_macro(plain.m) is plain.m  # type: ignore[attr-defined]  # returns a plain str
    assert not isinstance(make_environment().globals["identity"], Macro)
