"""user_cache.py: the one way into the user's cache folder, private all the way down."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sitegen.user_cache import (
    KEY_BYTES,
    private_cache_folder,
    read_private,
    state_key,
    write_private,
)


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    return home


def test_folders_are_made_private_and_found_again(cache_home: Path) -> None:
    assert private_cache_folder("builds", make=False) is None
    folder = private_cache_folder("builds")
    assert folder == cache_home / "sitegen" / "builds"
    assert oct(folder.stat().st_mode & 0o777) == oct(0o700)
    assert private_cache_folder("builds", make=False) == folder
    for name in ("..", ".", "a/b"):
        assert private_cache_folder(name) is None


def test_a_linked_cache_folder_is_refused_and_nothing_written_through(
    cache_home: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    cache_home.mkdir()
    (cache_home / "sitegen").symlink_to(elsewhere)
    assert private_cache_folder("builds") is None
    assert private_cache_folder("templates") is None
    assert state_key() is None
    assert list(elsewhere.iterdir()) == []


@pytest.mark.parametrize(
    ("folder", "mode"),
    [("sitegen", 0o770), ("sitegen", 0o702), ("sitegen/builds", 0o720), ("", 0o777)],
)
def test_a_folder_others_can_write_is_refused(cache_home: Path, folder: str, mode: int) -> None:
    assert private_cache_folder("builds") is not None
    (cache_home / folder).chmod(mode)
    assert private_cache_folder("builds") is None
    assert private_cache_folder("builds", make=False) is None


def test_a_sticky_folder_others_can_write_may_hold_the_cache(cache_home: Path) -> None:
    cache_home.mkdir()
    cache_home.chmod(0o1777)  # as /tmp: no one renames another user's folder out of it
    assert private_cache_folder() == cache_home / "sitegen"


def test_a_file_with_another_name_or_mode_is_not_read(cache_home: Path, tmp_path: Path) -> None:
    folder = private_cache_folder()
    assert folder is not None
    path = folder / "kept"
    write_private(path, b"bytes")
    assert oct(path.stat().st_mode & 0o777) == oct(0o600)
    assert read_private(path, 100) == b"bytes"
    assert read_private(path, 5) is None, "as long as the limit: refused"
    os.link(path, tmp_path / "other-name")  # another user's hard link reads the same
    assert read_private(path, 100) is None
    (tmp_path / "other-name").unlink()
    path.chmod(0o620)
    assert read_private(path, 100) is None
    path.chmod(0o600)
    link = folder / "link"
    link.symlink_to(path)
    assert read_private(link, 100) is None


def test_the_key_is_made_once_and_a_hard_linked_key_is_not_trusted(
    cache_home: Path, tmp_path: Path
) -> None:
    key = state_key()
    assert key is not None and len(key) == KEY_BYTES
    assert state_key() == key
    os.link(cache_home / "sitegen" / "state.key", tmp_path / "known")
    assert state_key() is None
