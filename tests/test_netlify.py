"""netlify.toml as Netlify reads it, and its build command run for real, per deploy context.

The configuration is resolved by Netlify's own library, `@netlify/config` (tests/netlify/, run
with the machine's Node; `npm ci` there when node_modules is missing; CI installs it). Never
skipped: without node this fails. The build command it resolves then runs in a copy of the
repository, with the venv's bin first on PATH (Netlify's image has already installed
requirements.txt by then) and Netlify's variables for the context set.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from sitegen.pipeline import build_site, manifest_of_content
from sitegen.publish.compare import Baseline
from sitegen.publish.deploy import Deployment
from tests.conftest import FIXTURES, REPOSITORY, QuietHandler, http_served, npm_installed
from tests.netlify_headers import headers_for, matching, site_rules, toml_rules, url_paths
from tests.pull_request import make_pull_request

NODE_PROJECT = REPOSITORY / "tests" / "netlify"
CONTEXTS = ("production", "deploy-preview", "branch-deploy")
SITE_CONTENT = FIXTURES / "site" / "content"
COMMIT = "5f3c0ffee1234567890abcdef1234567890abcde"
REVALIDATE = "public, max-age=0, must-revalidate"
IMMUTABLE = "public, max-age=31536000, immutable"


@pytest.fixture(scope="session")
def node_project() -> Path:
    """tests/netlify with its node_modules, installed once (`npm ci`)."""
    assert shutil.which("node"), "node is missing: apt-get install -y nodejs npm (.ci/run does)"
    return npm_installed(NODE_PROJECT, NODE_PROJECT / "node_modules" / "@netlify" / "config")


def resolve(node_project: Path, context: str, repository: Path = REPOSITORY) -> dict[str, Any]:
    result = subprocess.run(
        ["node", "resolve-config.mjs", "--context", context, "--repository", str(repository)],
        cwd=node_project,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr == "", result.stderr  # nothing logged outside the buffered logs
    return json.loads(result.stdout)  # type: ignore[no-any-return]


@pytest.mark.parametrize("context", CONTEXTS)
def test_netlify_resolves_each_context(node_project: Path, context: str) -> None:
    resolved = resolve(node_project, context)
    assert resolved["logs"] == {"stdout": [], "stderr": []}  # no warnings of any kind
    assert resolved["context"] == context
    build = resolved["config"]["build"]
    assert build["command"] == f"sitegen build content --out public --context {context}"
    assert build["publish"] == str(REPOSITORY / "public")
    environment = build["environment"]
    assert environment["PYTHON_VERSION"] == (REPOSITORY / "runtime.txt").read_text()
    assert environment.get("SITEGEN_BASE_BRANCH") == (None if context == "production" else "main")
    headers = [(h["for"], h["values"]) for h in resolved["config"]["headers"]]
    assert headers == toml_rules()


def test_warnings_would_be_caught(node_project: Path, tmp_path: Path) -> None:
    """The no-warnings assertion above can fail: a header rule without a path is reported."""
    (tmp_path / "netlify.toml").write_text('[[headers]]\n  [headers.values]\n    X-Test = "y"\n')
    logs = resolve(node_project, "production", tmp_path)["logs"]
    assert any('Missing "for" field' in line for line in logs["stderr"])


def test_python_is_pinned_as_netlify_reads_it() -> None:
    config = tomllib.loads((REPOSITORY / "netlify.toml").read_text())
    pinned = config["build"]["environment"]["PYTHON_VERSION"]
    # Netlify's image reads runtime.txt first (just `3.11`, no newline), then PYTHON_VERSION.
    assert (REPOSITORY / "runtime.txt").read_text() == pinned
    project = tomllib.loads((REPOSITORY / "pyproject.toml").read_text())["project"]
    minimum = tuple(int(p) for p in project["requires-python"].removeprefix(">=").split("."))
    assert tuple(int(p) for p in pinned.split(".")) >= minimum
    requirements = (REPOSITORY / "requirements.txt").read_text().splitlines()
    assert [line for line in requirements if line and not line.startswith("#")] == ["-e .[search]"]


@pytest.fixture(scope="module")
def preview_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("preview") / "public"
    baseline = Baseline("main", manifest_of_content(SITE_CONTENT).manifest)
    deployment = Deployment(context="deploy-preview", review_id="1")
    built = build_site(SITE_CONTENT, out, deployment=deployment, baseline=baseline, search=True)
    assert built.out_dir and built.search  # the search index's files are published too
    return out


def test_every_published_file_has_one_cache_rule(preview_site: Path) -> None:
    rules = site_rules(preview_site)
    paths = url_paths(preview_site)
    assert "/changes/" in paths and "/manifest.json" in paths and "/" in paths
    assert "/pagefind/pagefind-entry.json" in paths and "/llms.txt" in paths
    for path in paths:
        cache = [p for p, values in matching(rules, path) if "Cache-Control" in values]
        assert len(cache) == 1, f"{path}: Cache-Control rules {cache}"
        headers = headers_for(rules, path)  # raises if two rules set one header
        if path.startswith("/assets/"):
            assert re.search(r"-[0-9a-f]{12}\.[a-z.]+$", path), path  # content-hashed
            assert headers["Cache-Control"] == IMMUTABLE
        else:
            assert headers["Cache-Control"] == REVALIDATE, path
        assert headers["X-Robots-Tag"] == "noindex"
        assert "frame-ancestors 'none'" in headers["Content-Security-Policy"]
        assert headers["X-Content-Type-Options"] == "nosniff"
        assert headers["X-Frame-Options"] == "DENY"
        assert headers["Referrer-Policy"] == "strict-origin-when-cross-origin"
        assert headers["Permissions-Policy"].startswith("camera=()")


# --- the resolved command, run for real ---------------------------------------------------------


def _copy_repository(target: Path) -> None:
    """The files of a fresh clone (tracked, and new ones not ignored) as they are now.

    Not tests/: the build needs none of it, and a conftest.py left in the temporary folder
    would be collected by a later pytest run that follows a symlink out to /tmp.
    """
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPOSITORY,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in sorted(set(filter(None, listed.split("\0")))):
        source = REPOSITORY / name
        if name.startswith(("content/", "tests/")) or not source.is_file():
            continue  # the real catalog is swapped for the fixture below: seconds, not minutes
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target / name)


@pytest.fixture
def serve() -> Iterator[Callable[[Path], str]]:
    """Serves a folder per call until the test ends: its URL."""
    with contextlib.ExitStack() as servers:
        yield lambda directory: servers.enter_context(
            http_served(functools.partial(QuietHandler, directory=str(directory)))
        )


def _run_build(node_project: Path, checkout: Path, context: str, netlify: dict[str, str]) -> str:
    resolved = resolve(node_project, context, checkout)
    assert resolved["logs"]["stderr"] == []
    command = resolved["config"]["build"]["command"]
    environment = {
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "HOME": os.environ.get("HOME", "/tmp"),
        "LANG": "C.UTF-8",
        "NETLIFY": "true",
        "CONTEXT": context,
        "COMMIT_REF": COMMIT,
        "REPOSITORY_URL": "https://github.com/kernelindex/kernelindex",
        **resolved["config"]["build"]["environment"],
        **netlify,
    }
    result = subprocess.run(
        ["bash", "-c", command],
        cwd=checkout,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stderr


def test_resolved_build_command_per_context(node_project: Path, tmp_path: Path, serve: Any) -> None:
    checkout = tmp_path / "repo"
    _copy_repository(checkout)
    shutil.copytree(SITE_CONTENT, checkout / "content")
    public = checkout / "public"

    _run_build(
        node_project, checkout, "production", {"URL": "https://kernelindex.dev", "BRANCH": "main"}
    )
    for page in ("index.html", "kernels/liger-layer-norm/index.html", "runs/index.html"):
        html = (public / page).read_text()
        assert "noindex" not in html and "preview-banner" not in html, page
    manifest = json.loads((public / "manifest.json").read_text())
    assert manifest["deploy"] == {"context": "production", "commit": COMMIT, "branch": "main"}
    assert not (public / "changes").exists() and not (public / "_headers").exists()
    assert "Allow: /" in (public / "robots.txt").read_text()

    # The published production site, which the preview falls back to: the copy is no git clone.
    shutil.copytree(public, tmp_path / "production")
    production_url = serve(tmp_path / "production")
    shutil.rmtree(checkout / "content")
    make_pull_request(checkout / "content")
    preview = {
        "URL": production_url,
        "DEPLOY_PRIME_URL": "https://deploy-preview-9--kernelindex.netlify.app",
        "REVIEW_ID": "9",
        "HEAD": "add-a100-backward",
        "BRANCH": "add-a100-backward",
        "PULL_REQUEST": "true",
    }
    log = _run_build(node_project, checkout, "deploy-preview", preview)
    assert f"changes compared with the production site ({production_url}/manifest.json)" in log
    home = (public / "index.html").read_text()
    assert '<meta name="robots" content="noindex">' in home
    assert "Deploy preview for pull request #9</a> · <a href" in home
    changes = (public / "changes" / "index.html").read_text()
    assert "1 resource added, 1 removed, 1 with modified metadata; 1 run moved." in changes
    assert (public / "changes" / "index.json").is_file()
    assert (public / "kernels" / "liger-layer-norm" / "index.html").is_file()
    assert json.loads((public / "manifest.json").read_text())["deploy"]["reviewId"] == "9"
    # Netlify reads the `_headers` the build wrote: it parses, and adds X-Robots-Tag.
    resolved = resolve(node_project, "deploy-preview", checkout)
    assert resolved["logs"] == {"stdout": [], "stderr": []}
    assert {"for": "/*", "values": {"X-Robots-Tag": "noindex"}} in resolved["config"]["headers"]

    branch = {"URL": production_url, "HEAD": "staging", "BRANCH": "staging"}
    _run_build(node_project, checkout, "branch-deploy", branch)
    home = (public / "index.html").read_text()
    assert "Branch deploy of staging · <a href" in home
    assert (public / "changes" / "index.html").is_file()
    assert (public / "robots.txt").read_text() == "User-agent: *\nDisallow: /\n"
