"""Deploy contexts: what Netlify's environment and the options make of a build.

Production output is the local output plus nothing; previews and branch deploys are noindex
(meta on every page, robots.txt, `_headers`), carry the banner, and canonical links still point
at production.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from sitegen.cli import main
from sitegen.pipeline import build_site, manifest_of_content
from sitegen.publish.compare import Baseline
from sitegen.publish.deploy import DeployError, Deployment, deployment_from
from tests.conftest import FIXTURES
from tests.test_pipeline import GOLDEN, tree

SITE_CONTENT = FIXTURES / "site" / "content"
COMMIT = "abc1234def5678901234567890abcdef01234567"
NETLIFY = {
    "URL": "https://kernelindex.dev",
    "DEPLOY_PRIME_URL": "https://deploy-preview-123--kernelindex.netlify.app",
    "DEPLOY_URL": "https://65f0c0ffee--kernelindex.netlify.app",
    "REVIEW_ID": "123",
    "HEAD": "add-h200-runs",
    "BRANCH": "pull/123/head",
    "COMMIT_REF": COMMIT,
    "REPOSITORY_URL": "https://github.com/kernelindex/kernelindex",
}
BANNERS = {
    "deploy-preview": (
        "Deploy preview for pull request #123 · commit abc1234 · see what it changes →"
    ),
    "branch-deploy": "Branch deploy of add-h200-runs · commit abc1234 · see what it changes →",
}


def test_environment_and_options() -> None:
    deployment = deployment_from({**NETLIFY, "CONTEXT": "deploy-preview"})
    assert deployment == Deployment(
        context="deploy-preview",
        base_url="https://kernelindex.dev",
        deploy_url="https://deploy-preview-123--kernelindex.netlify.app",  # prime before DEPLOY_URL
        review_id="123",
        branch="add-h200-runs",  # HEAD, the pull request's branch, before BRANCH
        commit=COMMIT,
        repository_url="https://github.com/kernelindex/kernelindex",
    )
    assert deployment.pull_request_url() == "https://github.com/kernelindex/kernelindex/pull/123"
    assert not deployment.indexable and deployment.compares
    overridden = deployment_from(
        {**NETLIFY, "CONTEXT": "deploy-preview"},
        context="branch-deploy",
        review_id="7",
        commit="ABCDEF1",
        base_url="https://example.org/",
        compare_with="main",
    )
    assert (overridden.context, overridden.review_id, overridden.commit) == (
        "branch-deploy",
        "7",
        "abcdef1",
    )
    assert (overridden.base_url, overridden.compare_with) == ("https://example.org/", "main")
    local = deployment_from({})
    assert local == Deployment() and local.production and not local.compares
    ssh = Deployment(repository_url="git@github.com:kernelindex/kernelindex.git", commit=COMMIT)
    assert ssh.commit_url() == f"https://github.com/kernelindex/kernelindex/commit/{COMMIT}"


@pytest.mark.parametrize(
    ("environment", "message"),
    [
        ({"REVIEW_ID": "12a"}, "REVIEW_ID: a pull request number is a positive integer: '12a'"),
        ({"COMMIT_REF": "HEAD~1"}, "COMMIT_REF: a commit is 7 to 64 hex digits: 'HEAD~1'"),
        ({"HEAD": "a b"}, "HEAD: not a branch name: 'a b'"),
        ({"CONTEXT": "Prod!"}, "CONTEXT: not a deploy context: 'Prod!'"),
        ({"DEPLOY_PRIME_URL": "ftp://x"}, "DEPLOY_PRIME_URL: the deploy URL must be http(s)"),
    ],
)
def test_bad_settings_name_their_source(environment: dict[str, str], message: str) -> None:
    with pytest.raises(DeployError, match=re.escape(message)):
        deployment_from(environment)


@pytest.fixture(scope="module")
def baseline() -> Baseline:
    manifest = manifest_of_content(SITE_CONTENT).manifest
    return Baseline("main at 0123456 (merge base)", manifest)


def _build(tmp: Path, context: str, baseline: Baseline | None) -> Path:
    deployment = deployment_from({**NETLIFY, "CONTEXT": context})
    out = tmp / context / "public"
    out.parent.mkdir()
    built = build_site(SITE_CONTENT, out, deployment=deployment, baseline=baseline)
    assert built.out_dir is not None
    return out


def _html_pages(site: Path) -> list[Path]:
    return sorted(site.rglob("*.html"))


def test_production_is_the_local_build_plus_its_commit(tmp_path: Path, baseline: Baseline) -> None:
    site = _build(tmp_path, "production", None)
    built, golden = tree(site), tree(GOLDEN)
    manifest = json.loads(built.pop("manifest.json"))
    assert manifest["deploy"] == {
        "context": "production",
        "commit": COMMIT,
        "branch": "add-h200-runs",
        "reviewId": "123",
        "url": "https://deploy-preview-123--kernelindex.netlify.app",
    }
    assert manifest["resources"] == json.loads(golden.pop("manifest.json"))["resources"]
    assert built == golden  # every page, robots.txt, sitemap: byte for byte
    assert not (site / "_headers").exists() and not (site / "changes").exists()


@pytest.mark.parametrize("context", ["deploy-preview", "branch-deploy"])
def test_previews_are_noindex_and_bannered(
    tmp_path: Path, baseline: Baseline, context: str
) -> None:
    site = _build(tmp_path, context, baseline)
    pages = _html_pages(site)
    assert len(pages) == 64  # the 63 of production (62 pages and 404.html), and changes/
    for page in pages:
        html = page.read_text()
        assert '<meta name="robots" content="noindex">' in html, page
        banner = re.search(
            r'<aside class="preview-banner" aria-label="Deploy preview">(.*?)</div></aside>', html
        )
        assert banner is not None, page
        assert re.sub(r"<[^>]+>", "", banner.group(1)) == BANNERS[context]
        assert '<a href="/changes/">see what it changes →</a>' in banner.group(1)
        canonical = re.search(r'<link rel="canonical" href="([^"]+)">', html)
        assert canonical is not None and canonical.group(1).startswith("https://kernelindex.dev/")
    assert (site / "robots.txt").read_text() == "User-agent: *\nDisallow: /\n"
    assert (site / "_headers").read_text() == "/*\n  X-Robots-Tag: noindex\n"
    sitemap = (site / "sitemap.xml").read_text()
    assert "https://kernelindex.dev/runs/f0cf6dd69e048a9b/" in sitemap  # production URLs
    run = (site / "runs" / "f0cf6dd69e048a9b" / "index.html").read_text()
    assert '<link rel="canonical" href="https://kernelindex.dev/runs/f0cf6dd69e048a9b/">' in run
    changes = (site / "changes" / "index.html").read_text()
    assert "Nothing added, removed or modified." in changes
    assert "main at 0123456 (merge base)" in changes


def test_pull_request_link_in_the_banner(tmp_path: Path, baseline: Baseline) -> None:
    html = (_build(tmp_path, "deploy-preview", baseline) / "index.html").read_text()
    assert (
        '<a href="https://github.com/kernelindex/kernelindex/pull/123">Deploy preview for pull '
        'request #123</a> · <a href="https://github.com/kernelindex/kernelindex/commit/'
        f'{COMMIT}">commit abc1234</a> · <a href="/changes/">see what it changes →</a>'
    ) in html


def test_unreadable_base_still_builds(tmp_path: Path) -> None:
    notes = ("git: not in a git checkout", "production manifest: HTTP 404")
    site = _build(tmp_path, "deploy-preview", Baseline("nothing", None, notes))
    changes = (site / "changes" / "index.html").read_text()
    assert "The base could not be read; the rest of this preview is complete." in changes
    assert "<li>production manifest: HTTP 404</li>" in changes
    twin = json.loads((site / "changes" / "index.json").read_text())
    assert twin["baseNotes"] == list(notes) and "groups" not in twin


def test_cli_options_override_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, value in {**NETLIFY, "CONTEXT": "production", "REVIEW_ID": "5"}.items():
        monkeypatch.setenv(name, value)
    out = tmp_path / "public"
    arguments = ["build", str(SITE_CONTENT), "--out", str(out), "--context", "deploy-preview"]
    arguments += ["--review-id", "7", "--compare-with", str(SITE_CONTENT)]
    assert main(arguments) == 0
    html = (out / "kernels" / "liger-layer-norm" / "index.html").read_text()
    assert "Deploy preview for pull request #7</a>" in html
    assert "changes compared with" in capsys.readouterr().err
    monkeypatch.setenv("REVIEW_ID", "seven")
    assert main(["build", str(SITE_CONTENT), "--out", str(out)]) == 2
    assert "REVIEW_ID: a pull request number" in capsys.readouterr().err
