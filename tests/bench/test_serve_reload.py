"""bench/serve_reload.py: a one-run edit served, found at the run's new page, then undone."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from bench.serve_reload import digest_of, edited, first_timed_run, measure
from sitegen.content.load import load_files
from tests.conftest import FIXTURES


def test_an_edit_moves_the_median_by_one_more_nanosecond_each_time() -> None:
    run = first_timed_run(FIXTURES / "site" / "content")
    original = run.read_bytes()
    median = json.loads(original)["spec"]["timing"]["latencyNs"]["median"]
    assert [edited(original, n)[1] for n in range(3)] == [median + 1, median + 2, median + 3]
    assert json.loads(edited(original, 1)[0])["spec"]["timing"]["latencyNs"]["median"] == (
        median + 2
    )


def test_the_new_version_is_found_served_and_the_file_is_put_back(tmp_path: Path) -> None:
    content = tmp_path / "content"
    shutil.copytree(FIXTURES / "site" / "content", content)
    target = first_timed_run(content)
    before = target.read_bytes()
    result = measure(content, 2, None)
    assert result["file"] == target.relative_to(content).as_posix()
    assert len(result["reloaded_s_all"]) == 2
    # Each edit's whole build ended after its run's page was shown (published ahead of it).
    pairs = zip(result["reloaded_s_all"], result["rebuilt_s_all"], strict=True)
    assert all(0 < shown <= whole for shown, whole in pairs)
    assert target.read_bytes() == before


def test_the_new_digest_is_read_without_touching_the_content_tree(tmp_path: Path) -> None:
    """A probe file inside the tree would start a rebuild of its own, before the edit's."""
    content = tmp_path / "content"
    shutil.copytree(FIXTURES / "site" / "content", content)
    target = first_timed_run(content)
    before = {p: p.stat().st_mtime_ns for p in content.rglob("*")}
    parent = target.parent.stat().st_mtime_ns
    data, _ = edited(target.read_bytes(), 0)
    found = digest_of(data)
    assert {p: p.stat().st_mtime_ns for p in content.rglob("*")} == before
    assert target.parent.stat().st_mtime_ns == parent  # nothing made and deleted beside it
    target.write_bytes(data)
    (run,) = load_files([target]).resources
    assert found == run.digest
