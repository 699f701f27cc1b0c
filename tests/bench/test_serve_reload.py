"""bench/serve_reload.py: a one-run edit served, found at the run's new page, then undone."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from bench.serve_reload import edited, first_timed_run, measure
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
    assert target.read_bytes() == before
