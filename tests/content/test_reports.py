"""Import reports, read defensively (sitegen/content/reports.py)."""

from __future__ import annotations

import json
from pathlib import Path

from sitegen.content.reports import load_reports


def test_reports_are_read_defensively(tmp_path: Path) -> None:
    sources = tmp_path / "_sources"
    sources.mkdir()
    (sources / "a.json").write_text("[1, 2]")
    (sources / "b.json").write_text("{not json")
    (sources / "c.json").write_text(
        json.dumps(
            {
                "title": "X" * 5000,
                "repository": "javascript:alert(1)",
                "snapshot": "not-hex",
                "licence": {"spdx": ["weird"]},
                "files": "nope",
                "skipped": {"a reason": 2, "bad": "3"},
            }
        )
    )
    reports, warnings = load_reports(tmp_path)
    assert sorted(reports) == ["c.json"] and len(warnings) == 2
    report = reports["c.json"]
    assert report.repository is None and report.commit is None and report.licence is None
    assert len(report.name or "") <= 300
    assert report.reasons == (("a reason", 2),) and report.skipped == 2
