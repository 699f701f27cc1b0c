"""lock.py: the lock file is written, so it is never a link, another file's name or a file
holding anything but a process id."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sitegen.cli import main
from sitegen.publish.errors import OutputError
from sitegen.publish.lock import locked
from tests.conftest import FIXTURES

SITE_CONTENT = FIXTURES / "site" / "content"
README = b"# A project\n\nNot a lock file.\n"
REFUSED = (
    "{path}: refusing to use it as the lock file: it is {what}, and sitegen writes into its "
    "lock file; hint: move it away if it is not sitegen's, then run again"
)
HARD_LINK = "a file with 1 other name(s) (a hard link)"


def test_a_build_never_writes_its_pid_through_a_hard_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    readme = tmp_path / "README.md"
    readme.write_bytes(README)
    os.link(readme, tmp_path / ".public.sitegen-lock")
    assert main(["build", str(SITE_CONTENT), "--out", "public"]) == 2
    lock = tmp_path / ".public.sitegen-lock"
    assert capsys.readouterr().err == (
        "sitegen build: " + REFUSED.format(path=lock, what=HARD_LINK) + "\n"
    )
    assert readme.read_bytes() == README
    assert not (tmp_path / "public").exists()


@pytest.mark.parametrize(
    ("plant", "what"),
    [
        ("hard link", HARD_LINK),
        ("symbolic link", "a symbolic link"),
        ("fifo", "not a regular file"),
        ("other text", "a file that holds something other than a process id"),
        ("long text", "a file that holds something other than a process id"),
    ],
)
def test_any_lock_that_is_not_a_lock_file_is_refused_untouched(
    tmp_path: Path, plant: str, what: str
) -> None:
    readme = tmp_path / "README.md"
    readme.write_bytes(README)
    lock = tmp_path / ".content.sitegen-lock"
    if plant == "hard link":
        os.link(readme, lock)
    elif plant == "symbolic link":
        lock.symlink_to(readme)
    elif plant == "fifo":
        os.mkfifo(lock)
    else:
        lock.write_bytes(b"12\n" if plant == "other text" else b"1" * 100)
        lock.write_bytes(lock.read_bytes() + (b"x" if plant == "other text" else b""))
    with pytest.raises(OutputError) as refused, locked(tmp_path / "content"):
        pass
    assert str(refused.value) == REFUSED.format(path=lock, what=what)
    assert readme.read_bytes() == README


def test_a_lock_file_left_by_a_command_is_taken_again(tmp_path: Path) -> None:
    lock = tmp_path / ".content.sitegen-lock"
    with locked(tmp_path / "content"):
        assert lock.read_bytes() == f"{os.getpid()}\n".ljust(24).encode()
    lock.write_bytes(b"")  # as a command killed between making it and writing its pid leaves it
    with locked(tmp_path / "content"):
        assert lock.read_bytes().startswith(f"{os.getpid()}\n".encode())
