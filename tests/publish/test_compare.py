"""What a pull request changes: manifests, the comparison, `sitegen diff`, the changes page, and
how a preview finds its base (git, the production manifest, or nothing).

The fixture pull request is tests/pull_request.py. The exact `sitegen diff` output is
tests/golden/diff/fixture-pr.md (`SITEGEN_REGENERATE=1` rewrites it; read the diff).
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from sitegen.cli import main
from sitegen.pipeline import build_site, manifest_of_content
from sitegen.publish.baseline import BaseError, preview_baseline, read_manifest
from sitegen.publish.compare import Baseline, compare, format_markdown
from sitegen.publish.deploy import Deployment
from sitegen.publish.manifest import ManifestError, manifest_document, parse_manifest
from tests.conftest import FIXTURES, REGENERATE, REPOSITORY, QuietHandler, http_served
from tests.pull_request import BASE_CONTENT, NEW_PROTOCOL_TITLE, make_pull_request

GOLDEN_DIFF = REPOSITORY / "tests" / "golden" / "diff" / "fixture-pr.md"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.org",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.org",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


@pytest.fixture(scope="module")
def pull_request(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding `base/` (the fixture content) and `head/` (the pull request's)."""
    root = tmp_path_factory.mktemp("pr")
    shutil.copytree(BASE_CONTENT, root / "base")
    make_pull_request(root / "head")
    return root


def git(cwd: Path, *args: str) -> str:
    result = subprocess.run(
        ["git", *args],
        cwd=cwd,
        env={**os.environ, **GIT_ENV},
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout.strip()


def body(markdown: str) -> str:
    """The report without its "Compared X with Y" line, which names the two sides."""
    return "\n".join(line for line in markdown.splitlines() if not line.startswith("Compared "))


def test_compare_the_fixture_pull_request(pull_request: Path) -> None:
    base = manifest_of_content(pull_request / "base").manifest
    head = manifest_of_content(pull_request / "head").manifest
    assert base is not None and head is not None
    changes = compare(base, head, "base", "head")
    counts = {w: changes.total(w) for w in ("added", "removed", "modified", "moved", "replaced")}
    assert counts == {"added": 1, "removed": 1, "modified": 1, "moved": 1, "replaced": 0}
    layer_norm, other = changes.groups
    assert layer_norm.kernel is not None and layer_norm.kernel.title == "LayerNorm"
    (moved,) = layer_norm.moved
    assert moved.delta == 182934 - 166304 and moved.percent == "+10.0%"
    assert (moved.before, moved.after, moved.change) == ("0.166 ms", "0.183 ms", "+0.0166 ms")
    assert moved.base.run is not None and moved.head.run is not None
    assert moved.base.run.identity == moved.head.run.identity
    assert layer_norm.added[0].run is not None and layer_norm.added[0].run.gpu.endswith("80GB")
    assert layer_norm.removed[0].title == "LayerNorm · huggingface · forward"
    assert other.kernel is None
    (retitled,) = other.modified
    assert retitled.base.digest == retitled.head.digest  # metadata is not identity
    assert [(f.field, f.after) for f in retitled.fields] == [("title", NEW_PROTOCOL_TITLE)]


def test_diff_golden_markdown(
    pull_request: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(pull_request)
    assert main(["diff", "base", "head"]) == 0
    output = capsys.readouterr().out
    if REGENERATE:
        GOLDEN_DIFF.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN_DIFF.write_text(output)
    assert output == GOLDEN_DIFF.read_text()


def test_diff_json(
    pull_request: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(pull_request)
    assert main(["diff", "base", "head", "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["summary"] == {
        "added": 1,
        "removed": 1,
        "modified": 1,
        "moved": 1,
        "replaced": 0,
    }
    assert (document["base"]["label"], document["head"]["label"]) == ("base/", "head/")
    moved = document["groups"][0]["moved"][0]
    assert moved["base"]["run"]["value"] == 166304 and moved["head"]["run"]["value"] == 182934
    assert moved["delta"] == 16630 and round(moved["ratio"], 4) == 0.1
    modified = document["groups"][1]["modified"][0]
    assert modified["fields"] == [
        {
            "field": "title",
            "before": "Liger benchmark harness · forward pass",
            "after": NEW_PROTOCOL_TITLE,
        }
    ]


def test_diff_between_git_refs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repository = tmp_path / "repo"
    shutil.copytree(BASE_CONTENT, repository / "content")
    git(repository, "init", "-q", "-b", "main")
    git(repository, "add", "-A")
    git(repository, "commit", "-q", "-m", "base")
    git(repository, "checkout", "-q", "-b", "pr")
    shutil.rmtree(repository / "content")
    make_pull_request(repository / "content")
    git(repository, "add", "-A")
    git(repository, "commit", "-q", "-m", "head")
    git(repository, "checkout", "-q", "main")  # the working tree stays at main
    monkeypatch.chdir(repository)
    base, base_label = read_manifest("main", cwd=repository)
    head, head_label = read_manifest("pr", cwd=repository)
    assert base_label == f"main at {git(repository, 'rev-parse', '--short=7', 'main')}"
    markdown = format_markdown(compare(base, head, base_label, head_label))
    assert body(markdown) == body(GOLDEN_DIFF.read_text())
    assert git(repository, "status", "--porcelain") == ""  # nothing checked out or left
    with pytest.raises(BaseError, match="not a directory, a manifest file"):
        read_manifest("no-such-ref", cwd=repository)
    with pytest.raises(BaseError, match="not a directory, a manifest file"):
        read_manifest("--output=x", cwd=repository)


@pytest.fixture(scope="module")
def production(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """The base built as production, served on 127.0.0.1: (output folder, its URL)."""
    out = tmp_path_factory.mktemp("production") / "public"
    assert build_site(BASE_CONTENT, out).out_dir is not None
    with http_served(functools.partial(QuietHandler, directory=str(out))) as url:
        yield out, f"{url}/"


def test_diff_against_a_published_manifest(
    pull_request: Path,
    production: tuple[Path, str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out, url = production
    monkeypatch.chdir(pull_request)
    for base in (str(out), str(out / "manifest.json"), url + "manifest.json"):
        assert main(["diff", base, "head"]) == 0
        assert body(capsys.readouterr().out) == body(GOLDEN_DIFF.read_text())
    assert main(["diff", url + "missing.json", "head"]) == 2
    assert "HTTP 404" in capsys.readouterr().err
    assert main(["diff", "http://example.org/manifest.json", "head"]) == 2
    assert "only https, or http to this machine" in capsys.readouterr().err


def test_manifest_round_trip_and_refusals() -> None:
    manifest = manifest_of_content(BASE_CONTENT).manifest
    assert manifest is not None
    document = manifest_document(manifest)
    assert parse_manifest(json.loads(json.dumps(document))) == manifest
    run = next(e for e in document["resources"] if "run" in e)
    assert set(run["run"]) >= {"identity", "pass", "gpu", "value", "unit", "metric"}
    for change, message in (
        ({"version": 2}, "manifest: version 2 is not 1"),
        ({"format": "x"}, "manifest: format is not 'kernelindex-site-manifest'"),
        ({"site": "javascript:alert(1)"}, "site: not an http(s) URL ending in '/'"),
        ({"extra": 1}, "manifest: unknown field 'extra'"),
    ):
        with pytest.raises(ManifestError, match=re.escape(message)):
            parse_manifest({**document, **change})
    bad = json.loads(json.dumps(document))
    bad["resources"][0]["path"] = "../../etc/"
    with pytest.raises(ManifestError, match=r"resources\[0\].path: not a site path"):
        parse_manifest(bad)
    bad["resources"][0]["path"] = "javascript:alert(1)"
    with pytest.raises(ManifestError, match="not a site path"):
        parse_manifest(bad)
    # `$` matches before a final newline: every pattern must hold to the very end.
    bad["resources"][0]["path"] = "runs/\n"
    with pytest.raises(ManifestError, match="path: holds the control character U\\+000A"):
        parse_manifest(bad)
    bad = json.loads(json.dumps(document))
    bad["resources"][0]["digest"] += "\n"
    with pytest.raises(ManifestError, match=r"resources\[0\].digest"):
        parse_manifest(bad)


def test_changes_page_of_a_preview(pull_request: Path, tmp_path: Path) -> None:
    base = manifest_of_content(pull_request / "base").manifest
    deployment = Deployment(context="deploy-preview", review_id="42", commit="0123456789abcdef")
    out = tmp_path / "public"
    baseline = Baseline("main at 89abcde (merge base)", base)
    built = build_site(pull_request / "head", out, deployment=deployment, baseline=baseline)
    assert built.out_dir is not None
    html = (out / "changes" / "index.html").read_text()
    assert "<h1>What pull request #42 changes</h1>" in html
    assert (
        "Compared <strong>pull request #42 at 0123456</strong> with <strong>main at 89abcde "
        "(merge base)</strong>. 1 resource added, 1 removed, 1 with modified metadata; "
        "1 run moved."
    ) in html
    assert '<h2 id="kernel-layernorm-heading"><a href="/kernels/liger-layer-norm/">' in html
    assert (
        '<td class="num">0.166 ms</td><td class="num">0.183 ms</td>'
        '<td class="num change">+0.0166 ms (+10.0%)</td>'
    ) in html
    assert '<a href="https://kernelindex.dev/runs/14898dec64a3ee7d/">' in html  # removed: base
    assert "title: “Liger benchmark harness · forward pass” → “" + NEW_PROTOCOL_TITLE in html
    twin = json.loads((out / "changes" / "index.json").read_text())
    assert twin["summary"]["moved"] == 1 and twin["groups"][0]["kernel"]["inHead"] is True
    moved_run = twin["groups"][0]["moved"][0]["head"]["path"]
    assert (out / moved_run / "index.html").is_file()  # the link goes to a page of this preview


# --- how a preview finds its base ---------------------------------------------------------------


def _origin_and_clone(tmp_path: Path, depth: int | None = None) -> Path:
    """An `origin` with main holding the base, and a clone on a pull request branch."""
    origin = tmp_path / "origin"
    shutil.copytree(BASE_CONTENT, origin / "content")
    git(origin, "init", "-q", "-b", "main")
    git(origin, "add", "-A")
    git(origin, "commit", "-q", "-m", "base")
    clone = tmp_path / "clone"
    depth_args = [f"--depth={depth}"] if depth else []
    git(tmp_path, "clone", "-q", *depth_args, f"file://{origin}", str(clone))
    git(clone, "checkout", "-q", "-b", "pr")
    shutil.rmtree(clone / "content")
    make_pull_request(clone / "content")
    git(clone, "add", "-A")
    git(clone, "commit", "-q", "-m", "pull request")
    git(clone, "update-ref", "-d", "refs/remotes/origin/main")  # as a PR build's clone may be
    # main moves on after the pull request branched: the merge base, not the tip, is the base.
    (origin / "content" / "runs" / "later.json").write_text("{")
    git(origin, "add", "-A")
    git(origin, "commit", "-q", "-m", "broken later commit on main")
    return clone


@pytest.mark.parametrize("depth", [None, 1])
def test_preview_base_is_the_merge_base_with_main(tmp_path: Path, depth: int | None) -> None:
    clone = _origin_and_clone(tmp_path, depth)
    merge_base = git(clone, "rev-parse", "HEAD~1")
    baseline = preview_baseline(Deployment(context="deploy-preview"), clone / "content")
    assert baseline.label == f"main at {merge_base[:7]} (merge base)", baseline.notes
    assert baseline.manifest == manifest_of_content(BASE_CONTENT).manifest
    assert git(clone, "status", "--porcelain") == ""


def test_preview_base_falls_back_to_the_production_manifest(
    tmp_path: Path, production: tuple[Path, str]
) -> None:
    content = tmp_path / "content"
    make_pull_request(content)  # not in a git checkout
    _, url = production
    baseline = preview_baseline(Deployment(context="deploy-preview", base_url=url), content)
    assert baseline.label == f"the production site ({url}manifest.json)"
    assert baseline.manifest is not None
    assert baseline.notes == (f"git: {content} is not in a git checkout",)


def test_preview_base_unreadable(tmp_path: Path, production: tuple[Path, str]) -> None:
    content = tmp_path / "content"
    make_pull_request(content)
    _, url = production
    deployment = Deployment(context="deploy-preview", base_url=url + "nowhere/")
    baseline = preview_baseline(deployment, content)
    assert baseline.manifest is None
    assert baseline.notes == (
        f"git: {content} is not in a git checkout",
        f"production manifest: {url}nowhere/manifest.json: HTTP 404",
    )
    out = tmp_path / "public"
    assert build_site(content, out, deployment=deployment, baseline=baseline).out_dir is not None
    assert "The base could not be read" in (out / "changes" / "index.html").read_text()


def test_an_absolute_content_path_reads_the_commit_and_makes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repository = tmp_path / "repo"
    shutil.copytree(BASE_CONTENT, repository / "content")
    git(repository, "init", "-q", "-b", "main")
    git(repository, "add", "-A")
    git(repository, "commit", "-q", "-m", "base")
    shutil.rmtree(repository / "content")
    make_pull_request(repository / "content")  # the working tree: the pull request
    monkeypatch.chdir(repository)
    outputs = []
    for content_path in ("content", str(repository / "content"), "./content/"):
        assert main(["diff", "HEAD", "content", "--content-path", content_path]) == 0
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1] == outputs[2]
    assert "Nothing added" not in outputs[0]
    # A content tree not in the commit: all of HEAD is new, and no folder is made for it.
    assert main(["diff", "HEAD", "content", "--content-path", str(repository / "new")]) == 0
    assert not (repository / "new").exists()
    changed = git(repository, "status", "--porcelain", "--ignored").splitlines()
    assert all(line.split()[-1].startswith("content/") for line in changed), changed
    for outside in (str(tmp_path), "../elsewhere"):
        assert main(["diff", "HEAD", "content", "--content-path", outside]) == 2
        assert capsys.readouterr().err == (
            f"sitegen diff: --content-path: {outside} is outside the repository {repository}; "
            "hint: give the content tree's path inside the repository, such as content\n"
        )


@pytest.mark.parametrize(
    ("head_url", "message"),
    [
        (
            "https://x.example/)![p](https://evil.example/p.png",
            "--head-url: a path is letters, digits, -._~ and %-escapes, with no . or .. segment: "
            "'https://x.example/)![p](https://evil.example/p.png'; hint: give an http(s) URL "
            "such as https://example.org/sub/, or a path such as /sub/",
        ),
        ("/preview/", "--head-url must be an http(s) URL: '/preview/'"),
        (
            "https://x.example:99999/",
            "--head-url: a port is a number from 1 to 65535: 'https://x.example:99999/'; hint: "
            "give an http(s) URL such as https://example.org/sub/, or a path such as /sub/",
        ),
    ],
)
def test_a_head_url_is_held_as_a_base_url_is(
    head_url: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    content = str(FIXTURES / "site" / "content")
    assert main(["diff", content, content, "--head-url", head_url]) == 2
    assert capsys.readouterr() == ("", f"sitegen diff: {message}\n")
