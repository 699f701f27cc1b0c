"""Which code a process runs: a hash that follows every source file's bytes and path."""

from __future__ import annotations

import hashlib
from pathlib import Path

from sitegen.code_hash import hash_files, package_hash
from sitegen.publish.incremental import code_version


def _hashed(*folders: Path) -> str:
    return hash_files(hashlib.sha256(), folders)


def test_the_hash_follows_sources_and_only_sources(tmp_path: Path) -> None:
    code = tmp_path / "code"
    (code / "site").mkdir(parents=True)
    (code / "build.py").write_text("x = 1\n")
    (code / "site" / "page.html").write_text("<p>{{ x }}</p>\n")
    first = _hashed(code)
    (code / "notes.txt").write_text("not code")
    (code / "site" / "__pycache__").mkdir()
    assert _hashed(code) == first
    (code / "build.py").write_text("x = 2\n")
    edited = _hashed(code)
    assert edited != first
    (code / "build.py").rename(code / "site" / "build.py")  # the same bytes elsewhere
    assert _hashed(code) not in (first, edited)


def test_the_state_and_the_daemon_name_this_code() -> None:
    assert package_hash() == package_hash()
    assert code_version() != package_hash()  # the state's format is in its own
