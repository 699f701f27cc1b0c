"""The lean code generator (sitegen/render/lean_jinja.py) renders exactly what stock jinja
renders: case by case, and every file of the fixture site."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st
from jinja2 import DictLoader, Environment, StrictUndefined, UndefinedError, pass_context
from markupsafe import Markup, escape

from sitegen.render import lean_jinja
from sitegen.render.assets import TEMPLATES_DIR
from sitegen.render.environment import make_environment
from sitegen.render.lean_jinja import LeanEnvironment, check_plain_globals, escape_output
from tests.conftest import SCRIPT


@given(st.text() | st.integers() | st.floats() | st.booleans() | st.none())
def test_output_escaping_is_markupsafes(value: object) -> None:
    assert escape_output(value) == str(escape(value))
    assert escape_output(Markup(f"<b>{value}</b>")) == f"<b>{value}</b>"  # already safe


def test_templates_hold_their_globals_in_one_dict() -> None:
    environment = make_environment()
    template = environment.get_template("run.html")
    # A plain dict: each render copies it into the page's context (a ChainMap copied slowly).
    assert type(template.globals) is dict
    assert template.globals.keys() >= environment.globals.keys() >= {"facts", "identity", "link"}
    page = environment.from_string("{{ facts(items) }}", globals={"items": ()}).render()
    assert page.strip() == '<dl class="facts">\n</dl>', "template globals overlay the environment's"


# Templates exercising what LeanCodeGenerator compiles its own way (attributes, keyword attributes,
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
    ours = LeanEnvironment(loader=DictLoader(sources), autoescape=True, undefined=StrictUndefined)
    stock = Environment(loader=DictLoader(sources), autoescape=True, undefined=StrictUndefined)
    values = {"y": SimpleNamespace(z=SCRIPT)}
    for name in sources:
        expected = stock.get_template(name).render(values)
        assert ours.get_template(name).render(values) == expected, name
    assert ours.get_template("child.html").render(values).startswith("<b>[base &lt;")


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
        check_plain_globals(environment)
    del environment.globals["wants_context"]
    check_plain_globals(environment)  # macros (link, facts …) and plain functions pass


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


def test_every_file_of_the_fixture_site_is_what_stock_jinja_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sitegen.render.environment
    from sitegen.pipeline import build_site
    from tests.conftest import FIXTURES

    content = FIXTURES / "site" / "content"
    lean = tmp_path / "lean"
    build_site(content, lean)
    original = sitegen.render.environment.make_environment
    stock_environments = []

    def stock(templates: Path = TEMPLATES_DIR, lean: bool = True) -> Environment:
        environment = original(templates, lean=False)
        stock_environments.append(environment)
        return environment

    monkeypatch.setattr(sitegen.render.environment, "make_environment", stock)
    plain = tmp_path / "stock"
    build_site(content, plain)
    assert [type(e) for e in stock_environments] == [Environment], "stock jinja's code"
    files = sorted(p.relative_to(lean) for p in lean.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(plain) for p in plain.rglob("*") if p.is_file())
    assert len(files) > 40
    for path in files:
        assert (lean / path).read_bytes() == (plain / path).read_bytes(), path


def test_other_library_versions_get_stock_jinja(monkeypatch: pytest.MonkeyPatch) -> None:
    assert lean_jinja.environment_class() is LeanEnvironment, "the pinned versions are installed"
    monkeypatch.setitem(lean_jinja.WRITTEN_FOR, "jinja2", "0.0.1")
    lean_jinja.lean_available.cache_clear()
    try:
        assert lean_jinja.environment_class() is Environment
        code = make_environment().compile("{{ text }}", raw=True)
        assert "escape_text(" not in code
    finally:
        monkeypatch.undo()
        lean_jinja.lean_available.cache_clear()
