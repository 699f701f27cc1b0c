"""Across releases (sitegen/analysis/releases.py): one series at one cell under several
releases, in version order, each change flagged where the spreads part."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from sitegen.analysis.releases import histories_of, release_order
from sitegen.analysis.verdicts import verdicts_of
from tests.analysis.test_verdicts import forward_chart, forward_runs, set_latency
from tests.site.planned import CONTENT


def with_earlier_releases(root: Path) -> Path:
    """The fixture plus `add_earlier_releases`."""
    content = root / "content"
    shutil.copytree(CONTENT, content)
    add_earlier_releases(content)
    return content


def add_earlier_releases(content: Path) -> None:
    """Liger's LayerNorm forward on the H100 at hidden 4096 measured again under two earlier
    releases: 0.5.10 (slower, beyond the spread of 0.6.0's run) and 0.5.8 (within 0.5.10's
    spread), each a month apart."""
    current = forward_runs(content, "liger", 4096)
    document: dict[str, Any] = json.loads(current.read_text())
    median = document["spec"]["timing"]["latencyNs"]["median"]
    for release, month, factor in (("0.5.10", "06", 1.5), ("0.5.8", "05", 1.52)):
        earlier = json.loads(json.dumps(document))
        earlier["metadata"]["name"] += f"-{release.replace('.', '-')}"
        earlier["metadata"]["labels"]["liger_version"] = release
        earlier["spec"]["observedAt"] = f"2025-{month}-01T00:00:00.000Z"
        earlier["spec"]["sourceNative"]["externalId"] += f"/{release}"
        path = content / "runs" / f"earlier-{release}.json"
        path.write_text(json.dumps(earlier))
        slower = int(median * factor)
        set_latency(path, slower, slower - 2_000, slower + 2_000)


def test_one_cell_across_releases_in_version_order_with_changes_flagged(tmp_path: Path) -> None:
    chart = forward_chart(with_earlier_releases(tmp_path))
    (history,) = histories_of(chart)
    assert (history.series.label, history.x) == ("Liger", 4096)
    assert [p.release for p in history.points] == ["0.5.8", "0.5.10", "0.6.0"]  # not by name
    first, second = history.changes
    assert (first.before, first.after, first.beyond_noise) == ("0.5.8", "0.5.10", False)
    assert first.ratio < 1  # 0.5.10 is a little faster than 0.5.8, within the spread
    assert (second.before, second.after, second.beyond_noise) == ("0.5.10", "0.6.0", True)
    assert round(second.ratio, 2) == round(1 / 1.5, 2)
    # The chart ranks the newest run: 0.6.0's; the verdicts are unchanged by the history.
    row = next(r for r in chart.rows if r.x == 4096)
    liger = next(c for c in row.cells if c.series.label == "Liger")
    assert liger.run.release == "0.6.0" and len(liger.earlier) == 2
    assert verdicts_of(chart).points[1].leader.label == "Liger"


def test_a_cell_under_one_release_has_no_history() -> None:
    assert histories_of(forward_chart(CONTENT)) == ()


def test_release_order_puts_versions_in_order_and_names_after() -> None:
    releases = ["0.10.0", "main", "0.5.10", "0.5.8", "1.0.0rc1", "1.0.0"]
    assert sorted(releases, key=release_order) == [
        "0.5.8",
        "0.5.10",
        "0.10.0",
        "1.0.0rc1",
        "1.0.0",
        "main",
    ]
