"""Record histories read from `_records/` (sitegen/content/records.py): defensively."""

from __future__ import annotations

import json
from pathlib import Path

from sitegen.content.records import FORMAT, load_records

A, B, KEY = "sha256:" + "a" * 64, "sha256:" + "b" * 64, "sha256:" + "c" * 64


def write(folder: Path, name: str, data: object) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(json.dumps(data))


def test_events_are_read_from_the_tree_and_an_importer_folder(tmp_path: Path) -> None:
    events = [
        {"at": "2026-05-21T06:52:01.709Z", "cause": "new_run", "run": A},
        {"at": "2026-05-22T00:00:00.000Z", "cause": "new_run", "run": B, "previous": A},
    ]
    write(
        tmp_path / "kernelindex" / "_records",
        "x.json",
        {"format": FORMAT, "comparisons": [{"key": KEY, "events": events}]},
    )
    history, warnings = load_records(tmp_path)
    assert warnings == []
    assert [(e.run, e.previous) for e in history.comparisons[KEY]] == [(A, None), (B, A)]
    assert [key for key, _ in history.of_run(A)] == [KEY]
    assert history.of_run("sha256:" + "d" * 64) == ()


def test_malformed_files_and_events_are_dropped_with_a_warning(tmp_path: Path) -> None:
    folder = tmp_path / "_records"
    write(folder, "a.json", {"format": "something else"})
    write(
        folder,
        "b.json",
        {
            "format": FORMAT,
            "comparisons": [{"key": KEY, "events": [{"at": "yesterday", "cause": "x", "run": A}]}],
        },
    )
    (folder / "c.json").write_text("{not json")
    history, warnings = load_records(tmp_path)
    assert history.comparisons == {}
    assert warnings[0].startswith("_records/a.json: ignored (not a record history")
    assert warnings[1] == "_records/b.json: 1 malformed event(s) ignored"
    assert warnings[2].startswith("_records/c.json: ignored (")
