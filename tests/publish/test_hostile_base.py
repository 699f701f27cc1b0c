"""A base is as hostile as content (publish/baseline.py): a manifest to compare with, from a file
or a URL, is read with content's strict parser and value rules. Each unusable one is a one-line
refusal for `sitegen diff` (exit 2), and for a preview a build that still succeeds and says why.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from sitegen.cli import main
from sitegen.pipeline import build_site
from sitegen.publish.baseline import BaseError, fetch_manifest, read_manifest
from sitegen.publish.compare import md
from tests.conftest import FIXTURES, http_served
from tests.pull_request import make_pull_request
from tests.test_pipeline import tree

SITE_CONTENT = FIXTURES / "site" / "content"


@pytest.fixture(scope="module")
def manifest(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("base") / "public"
    assert build_site(SITE_CONTENT, out).out_dir is not None
    return json.loads((out / "manifest.json").read_text())  # type: ignore[no-any-return]


def _run_value(document: dict[str, Any], value: object) -> str:
    run = next(e for e in document["resources"] if "value" in e.get("run", {}))
    text = json.dumps(document)
    return text.replace(json.dumps(run["run"]["value"]), str(value), 1)


def _with(change: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], str]:
    def make(document: dict[str, Any]) -> str:
        copy = json.loads(json.dumps(document))
        change(copy)
        return json.dumps(copy, ensure_ascii=False)

    return make


def _title(value: str) -> Callable[[dict[str, Any]], None]:
    def change(document: dict[str, Any]) -> None:
        document["resources"][0]["title"] = value

    return change


def _source(value: str) -> Callable[[dict[str, Any]], None]:
    def change(document: dict[str, Any]) -> None:
        document["resources"][0]["source"] = value

    return change


def _site(value: str) -> Callable[[dict[str, Any]], None]:
    def change(document: dict[str, Any]) -> None:
        document["site"] = value

    return change


# (case, the manifest's text from a good one, what the refusal says after the file's path)
HOSTILE: list[tuple[str, Callable[[dict[str, Any]], str], str]] = [
    (
        "deep",
        lambda d: "[" * 100_000 + "]" * 100_000,
        "not a manifest sitegen reads: $: nesting deeper than 8 levels",
    ),
    (
        "huge-integer",
        lambda d: _run_value(d, "7" * 5000),
        "not a manifest sitegen reads: resources[1].run.value: integer out of range "
        "(beyond ±2^53−1, not exact in JSON numbers)",
    ),
    (
        "float-overflow",
        lambda d: _run_value(d, "1e999"),
        "not a manifest sitegen reads: resources[1].run.value: number out of range "
        "(overflows a double)",
    ),
    (
        "infinity",
        lambda d: _run_value(d, "Infinity"),
        "not a manifest sitegen reads: resources[1].run.value: Infinity is not valid JSON "
        "(numbers must be finite)",
    ),
    (
        "tiny",
        lambda d: _run_value(d, "1e-300"),
        "resources[1].run.value: 1e-300 is out of range: 0, or from 1e-100 to 1e100",
    ),
    (
        "negative",
        lambda d: _run_value(d, "-5"),
        "resources[1].run.value: -5 is negative: a measured value never is",
    ),
    (
        "duplicate-key",
        lambda d: json.dumps(d)[:-1] + ', "version": 1}',
        'not a manifest sitegen reads: version: duplicate key "version"',
    ),
    (
        "bidi-source",
        _with(_source("liger\u202eevil")),
        "resources[0].source: holds the bidirectional control U+202E at character 6",
    ),
    (
        "markup-in-site",
        _with(_site("https://kernelindex.dev/) ![x](https://tracker.example/p.png) (/")),
        "site: a URL of other characters than a site's: "
        "'https://kernelindex.dev/) ![x](https://tracker.example/p.png) (/'",
    ),
    ("not-utf8", lambda d: '{"format": "\xff"}', "not a JSON manifest: not UTF-8 at byte 12"),
]


@pytest.mark.parametrize(("case", "make", "reason"), HOSTILE, ids=[c[0] for c in HOSTILE])
def test_a_hostile_manifest_is_refused_in_one_line(
    case: str,
    make: Callable[[dict[str, Any]], str],
    reason: str,
    manifest: dict[str, Any],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / "manifest.json"
    encoding = "latin-1" if case == "not-utf8" else "utf-8"
    path.write_bytes(make(manifest).encode(encoding))
    assert main(["diff", str(path), str(SITE_CONTENT)]) == 2
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", f"sitegen diff: {path}: {reason}\n")


@pytest.mark.parametrize("case", ["deep", "huge-integer", "markup-in-site"])
def test_a_preview_against_a_hostile_base_builds_and_says_why(
    case: str, manifest: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make, reason = next((m, r) for c, m, r in HOSTILE if c == case)
    base = tmp_path / "manifest.json"
    base.write_text(make(manifest))
    content = make_pull_request(tmp_path / "content")
    out = tmp_path / "public"
    arguments = ["build", str(content), "--out", str(out), "--context", "deploy-preview"]
    assert main([*arguments, "--review-id", "7", "--compare-with", str(base)]) == 0
    errors = capsys.readouterr().err.splitlines()
    assert f"warning: base: {base}: {reason}" in errors
    assert "warning: the changes page says the base could not be read" in errors
    assert "The base could not be read" in (out / "changes" / "index.html").read_text()


def test_diff_json_holds_only_finite_numbers(
    manifest: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The widest values a base may hold still give a finite change: no `Infinity` printed."""
    run = next(e for e in manifest["resources"] if "value" in e.get("run", {}))
    sides = []
    for name, value, digest in (("base", 1e-100, "1" * 64), ("head", 1e100, "2" * 64)):
        document = json.loads(json.dumps(manifest))
        entry = next(e for e in document["resources"] if e["digest"] == run["digest"])
        entry["run"]["value"] = value
        entry["digest"] = "sha256:" + digest
        document["resources"].sort(key=lambda e: e["digest"])
        (tmp_path / f"{name}.json").write_text(json.dumps(document))
        sides.append(str(tmp_path / f"{name}.json"))
    assert main(["diff", *sides, "--format", "json"]) == 0

    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} printed")

    document = json.loads(capsys.readouterr().out, parse_constant=refuse)
    (moved,) = document["groups"][0]["moved"]
    assert moved["ratio"] == pytest.approx(1e200)


# --- redirects ----------------------------------------------------------------------------------


class _Redirecting(BaseHTTPRequestHandler):
    """`/go` redirects to the query's URL; `/manifest.json` serves the manifest given."""

    def __init__(self, *args: Any, body: bytes, **kwargs: Any) -> None:
        self.body = body
        super().__init__(*args, **kwargs)

    def do_GET(self) -> None:
        if self.path.startswith("/go?"):
            self.send_response(302)
            self.send_header("Location", self.path.removeprefix("/go?"))
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def redirecting(manifest: dict[str, Any]) -> Iterator[str]:
    handler = functools.partial(_Redirecting, body=json.dumps(manifest).encode())
    with http_served(handler) as url:
        yield url


def test_a_redirect_is_followed_only_within_the_first_urls_rule(redirecting: str) -> None:
    """http is allowed to this machine only, so a redirect from it must stay on it."""
    assert fetch_manifest(f"{redirecting}/go?{redirecting}/manifest.json").entries
    away = "http://192.0.2.1/manifest.json"  # never reached: refused before it is asked
    with pytest.raises(BaseError) as refused:
        fetch_manifest(f"{redirecting}/go?{away}")
    assert str(refused.value) == (
        f"{redirecting}/go?{away}: redirected to {away!r}, which is not on this machine"
    )
    with pytest.raises(BaseError, match=r": HTTP 302$"):  # urllib's own refusal of the scheme
        fetch_manifest(f"{redirecting}/go?file:///etc/passwd")


def test_an_output_unchanged_by_a_failed_base(
    manifest: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`sitegen diff` writes nothing; a preview's previous site is replaced only by a whole one."""
    out = tmp_path / "public"
    assert build_site(SITE_CONTENT, out).out_dir is not None
    before = tree(out)
    base = tmp_path / "manifest.json"
    base.write_text("[" * 100_000)
    assert main(["diff", str(base), str(SITE_CONTENT)]) == 2
    assert tree(out) == before


def test_content_text_in_a_base_may_hold_what_the_format_allows(
    manifest: dict[str, Any], tmp_path: Path
) -> None:
    """A title may hold a bidirectional control (a warning in content): the base that lists it
    is read, and the Markdown comment shows it neutralised."""
    path = tmp_path / "manifest.json"
    path.write_text(_with(_title("LayerNorm \u202eevil\u2028x"))(manifest), encoding="utf-8")
    base, _ = read_manifest(str(path), cwd=tmp_path)
    titles = [entry.title for entry in base.entries]
    assert "LayerNorm \u202eevil\u2028x" in titles
    assert md("LayerNorm \u202eevil\u2028x") == "LayerNorm  evil x"
