"""Walking and reading the content tree: file-system cases a committed fixture cannot hold."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from sitegen.content.documents import MAX_FILE_BYTES
from sitegen.content.load import load_content
from sitegen.content.walk import read_bytes
from sitegen.model.problems import Problem
from sitegen.pipeline import build_site
from tests.content.test_load import lines, write_example


def test_huge_file_is_refused_without_reading_it(
    tmp_path: Path, example_bundle: dict[str, Any]
) -> None:
    content = write_example(tmp_path, example_bundle)
    with open(content / "huge.json", "wb") as handle:
        handle.truncate(MAX_FILE_BYTES + 1)  # sparse: costs no disk
    result = load_content(content)
    assert lines(result.problems) == [
        f"content/huge.json: -: file is {MAX_FILE_BYTES + 1:,} bytes, over the limit of "
        f"{MAX_FILE_BYTES:,}"
    ]
    assert len(result.resources) == 3


def test_fifo_and_other_special_files_are_refused(
    tmp_path: Path, example_bundle: dict[str, Any]
) -> None:
    content = write_example(tmp_path, example_bundle)
    os.mkfifo(content / "pipe.json")  # opening it for reading would block forever
    result = load_content(content)
    assert lines(result.problems) == ["content/pipe.json: -: not a regular file"]


def test_a_file_swapped_after_the_walk_is_refused_when_read(tmp_path: Path) -> None:
    # The read checks the file it opened, not what the walk saw: a FIFO must not block it, a
    # symlink must not be followed, and a file that grows is cut off at the limit.
    os.mkfifo(tmp_path / "pipe.json")
    (tmp_path / "target.json").write_text("{}")
    (tmp_path / "link.json").symlink_to(tmp_path / "target.json")
    (tmp_path / "small.json").write_bytes(b"x" * 10)
    problems: list[Problem] = []
    assert read_bytes(tmp_path / "pipe.json", "pipe.json", 100, problems) is None
    assert read_bytes(tmp_path / "link.json", "link.json", 100, problems) is None
    assert read_bytes(tmp_path / "small.json", "small.json", 5, problems) is None
    assert read_bytes(tmp_path / "small.json", "small.json", 10, problems) == b"x" * 10
    assert [p.line() for p in problems] == [
        "pipe.json: -: not a regular file",
        "link.json: -: cannot read file: Too many levels of symbolic links",
        "small.json: -: file is 10 bytes, over the limit of 5",
    ]


def test_a_file_growing_while_read_is_read_to_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "growing.json"
    path.write_bytes(b"[1]")
    real_fstat = os.fstat

    def fstat_then_grow(descriptor: int) -> os.stat_result:
        found = real_fstat(descriptor)
        with open(path, "ab") as handle:  # appended after the size was taken
            handle.write(b" " * 20)
        return found

    monkeypatch.setattr(os, "fstat", fstat_then_grow)
    problems: list[Problem] = []
    assert read_bytes(path, "growing.json", 10, problems) is None
    assert [p.line() for p in problems] == ["growing.json: -: file grew over the limit of 10 bytes"]
    assert read_bytes(path, "growing.json", 100, []) == b"[1]" + b" " * 40


def test_symlinked_content_root_is_followed_but_not_links_inside(
    tmp_path: Path, example_bundle: dict[str, Any]
) -> None:
    content = write_example(tmp_path, example_bundle)
    (content / "escape").symlink_to(tmp_path)
    result = load_content(content)
    assert lines(result.problems) == [
        "content/escape: -: symbolic links are not allowed in content"
    ]


def test_missing_content_directory_is_one_problem(tmp_path: Path) -> None:
    result = load_content(tmp_path / "nowhere")
    assert result.problems[0].message.startswith("cannot read content directory")


def test_a_content_root_that_is_a_link_is_one_problem_saying_so(
    tmp_path: Path, example_bundle: dict[str, Any]
) -> None:
    content = write_example(tmp_path, example_bundle)
    (tmp_path / "linked").symlink_to(content)
    result = load_content(tmp_path / "linked")
    assert lines(result.problems) == ["content: -: content path is a symbolic link, never followed"]


def test_a_name_that_is_not_utf8_is_one_problem_and_neither_read_nor_walked_into(
    tmp_path: Path, example_bundle: dict[str, Any]
) -> None:
    """A file or folder whose name is not UTF-8 (the manifest, the export and every link name
    a file in UTF-8) is an error naming it, printably; its resources are not read. A content
    folder so named is shown with U+FFFD, and builds."""
    content = write_example(tmp_path, example_bundle)
    first = sorted(content.glob("*.json"))[0]
    root = os.fsencode(content)
    os.link(first, os.path.join(root, b"copy-\xff.json"))
    os.mkdir(os.path.join(root, b"folder-\xfe"))
    os.link(first, os.path.join(root, b"folder-\xfe", b"inside.json"))
    result = load_content(content)
    message = "a name that is not UTF-8: neither read nor walked into; hint: rename it in UTF-8"
    assert lines(result.problems) == [
        f"content/copy-\\udcff.json: -: {message}",
        f"content/folder-\\udcfe: -: {message}",
    ]
    assert len(result.resources) == 3
    for name in (b"copy-\xff.json", b"folder-\xfe"):
        path = os.path.join(root, name)
        (shutil.rmtree if os.path.isdir(path) else os.unlink)(path)
    renamed = os.path.join(os.fsencode(tmp_path), b"content-\xff")
    os.rename(root, renamed)
    built = build_site(Path(os.fsdecode(renamed)), tmp_path / "public")
    assert built.out_dir is not None and built.checked.ok
    assert b"content-\xef\xbf\xbd/" in (tmp_path / "public" / "manifest.json").read_bytes()
