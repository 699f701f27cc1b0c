"""environment.py: escaping of content in HTML, JSON script blocks and Markdown; the compiled
templates kept between builds."""

from __future__ import annotations

import json
import os
import pickle
import shutil
from pathlib import Path
from typing import Any

import pytest
from jinja2 import Environment
from jinja2.bccache import bc_magic
from markupsafe import Markup

from sitegen.render.assets import TEMPLATES_DIR
from sitegen.render.environment import (
    _safe_link,
    make_environment,
    markdown_renderer,
    script_json,
    template_cache_dir,
)
from tests.conftest import HOSTILE_MARKDOWN, NEEDLES, SCRIPT, beside


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


def test_markdown_shows_controls_and_bidirectional_controls_as_escapes() -> None:
    html = str(markdown_renderer()("first \u202eevil\u202c\x1b[2J\n\nsecond\u2028line"))
    assert html == "<p>first \\u202eevil\\u202c\\x1b[2J</p>\n<p>second\\u2028line</p>\n"


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

    import sitegen.render.environment
    from sitegen.cli import main
    from sitegen.render.errors import RenderError
    from tests.conftest import FIXTURES

    templates = tmp_path / "templates"
    shutil.copytree(TEMPLATES_DIR, templates)
    run = templates / "run.html"
    lines = run.read_text().splitlines(keepends=True)
    lines[3] = "<h1>{{ page.meta.title }</h1>\n"
    run.write_text("".join(lines))
    with pytest.raises(RenderError, match=r"^templates/run\.html:4: unexpected '}'$"):
        make_environment(templates)

    original = sitegen.render.environment.make_environment
    monkeypatch.setattr(sitegen.render.environment, "make_environment", lambda: original(templates))
    out = tmp_path / "public"
    assert main(["build", str(FIXTURES / "site" / "content"), "--out", str(out)]) == 1
    error = capsys.readouterr().err.strip()
    assert error == "sitegen build: templates/run.html:4: unexpected '}'"
    assert not out.exists() and beside(tmp_path) == ["templates"]


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
    # A change to environment.py, the code generator or a library changes every checksum.
    monkeypatch.setattr("sitegen.render.environment._CODE_VERSION", b"another code generator")
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


class _Planted:
    """A pickle that, unpickled, makes the folder it names: code jinja's header would run."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> tuple[Any, ...]:
        return (os.makedirs, (str(self.path), 0o700, True))


def test_compiled_templates_are_loaded_only_from_a_private_cache(
    templates: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = _page(make_environment(templates))
    ran = tmp_path / "ran"
    cache = tmp_path / "cache" / "sitegen" / "templates"
    kept = sorted(cache.iterdir())

    def plant() -> None:
        for path in kept:
            path.unlink(missing_ok=True)
            path.write_bytes(bc_magic + pickle.dumps(_Planted(ran)))

    # Each a folder another user could have planted the files in: never unpickled.
    for folder, mode in ((cache, 0o775), (cache.parent, 0o757), (tmp_path / "cache", 0o777)):
        plant()
        folder.chmod(mode)
        assert _page(make_environment(templates)) == expected
        assert not ran.exists(), f"unpickled from a folder of mode {oct(mode)}"
        folder.chmod(0o700)
    # A file with another name (a hard link) is not the cache's own either.
    plant()
    for path in kept:
        os.link(path, tmp_path / f"other-{path.name}")
    assert _page(make_environment(templates)) == expected
    assert not ran.exists()
    plant()  # the same files, private: loaded (the planted pickle ran)
    assert _page(make_environment(templates)) == expected and ran.exists()


def test_a_linked_cache_folder_is_not_written_through(
    templates: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "sitegen").symlink_to(elsewhere)
    assert _page(make_environment(templates)) == "<h1>&lt;t&gt;</h1><i>1</i><i>2</i>"
    assert list(elsewhere.iterdir()) == []
