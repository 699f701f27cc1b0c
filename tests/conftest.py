"""Shared test fixtures: where reference data and sources live; golden-file regeneration."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

REPOSITORY = Path(__file__).resolve().parents[1]
# Published test vectors and the example bundle (tests/reference/README.md says where each is from).
REFERENCE = REPOSITORY / "tests" / "reference"
SOURCES = REPOSITORY / "sources"  # the upstream inputs content/ is built from (sources.toml)
FIXTURES = REPOSITORY / "tests" / "fixtures"


def npm_installed(folder: Path, installed: Path) -> Path:
    """`folder` (a package.json and its lock) with its node_modules, `npm ci` run once when
    `installed` is missing: a fresh checkout's tests install what they need, as `.ci/run`
    does. Under a lock, since pytest-xdist workers share the folder."""
    with open(folder / "package.json", "rb") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not installed.exists():
            npm = shutil.which("npm")
            assert npm, "npm is missing: apt-get install -y nodejs npm (.ci/run does)"
            subprocess.run(
                [npm, "ci", "--no-audit", "--no-fund"], cwd=folder, check=True, capture_output=True
            )
    return folder


class QuietHandler(SimpleHTTPRequestHandler):
    """Serves a folder without a log line per request in the test output."""

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextlib.contextmanager
def http_served(handler: Callable[..., BaseHTTPRequestHandler]) -> Iterator[str]:
    """`handler` answering on 127.0.0.1 at a free port, from a thread, while the block runs:
    its URL, without a trailing slash."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


# `SITEGEN_REGENERATE=1 pytest` rewrites every expected-output file instead of comparing.
REGENERATE = os.environ.get("SITEGEN_REGENERATE") == "1"

# Hostile strings a contributor could put in content (test_render.py, test_templating.py).
SCRIPT = "</script><script>alert(1)</script>"
IMG = '<img src=x onerror="alert(2)">'
HOSTILE_TITLE = f"LayerNorm {SCRIPT} · liger {IMG} · backward"
HOSTILE_MARKDOWN = (
    f"[click](javascript:alert(3)) [ok](https://example.org/) <b>raw</b> {IMG} "
    "[data](data:text/html;base64,PHNjcmlwdD4=) ![pic](https://tracker.example/p.png) \u2028"
)
# What would execute or load if it reached the HTML unescaped (as text, the words are harmless).
NEEDLES = (
    "<script>alert(1)",
    "<img",
    'onerror="alert',
    'href="javascript:',
    'href="data:text',
    "<b>raw</b>",
    'src="https://tracker',
)


def beside(folder: Path) -> list[str]:
    """The names in `folder`, sorted, but the lock files that stay beside each output
    (publish/lock.py): what a command left there."""
    return sorted(p.name for p in folder.iterdir() if not p.name.endswith(".sitegen-lock"))


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def seed_row() -> dict[str, Any]:
    return read_json(REFERENCE / "liger-seed-row.json")  # type: ignore[no-any-return]


@pytest.fixture(scope="session")
def example_bundle() -> dict[str, Any]:
    return read_json(REFERENCE / "layer-norm-backward-liger-h100.json")  # type: ignore[no-any-return]


# What sitegen reads from a deploy environment (sitegen/deploy.py): never from the test runner's.
DEPLOY_VARIABLES = (
    "CONTEXT",
    "URL",
    "DEPLOY_PRIME_URL",
    "DEPLOY_URL",
    "REVIEW_ID",
    "HEAD",
    "BRANCH",
    "COMMIT_REF",
    "REPOSITORY_URL",
    "SITEGEN_COMPARE_WITH",
    "SITEGEN_BASE_BRANCH",
)


@pytest.fixture(autouse=True)
def _no_deploy_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in DEPLOY_VARIABLES:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True, scope="session")
def _own_cache_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Compiled templates (templating.TemplateBytecode) go to this session's own folder, not
    the user's cache: no test reads what an earlier run, or another checkout, left there."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
        yield
