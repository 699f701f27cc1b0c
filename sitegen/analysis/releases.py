"""Across releases: where one series was measured at the same cell (workload, protocol, GPU)
under several releases of the measured code, its value release by release, and each change
between consecutive releases beyond the noise the runs recorded.

A run's release is what its importer reads of its labels (Liger's `liger_version`:
importers/registry.py `release_of`); runs without one take no part.
"""

from __future__ import annotations

import itertools
from typing import NamedTuple

from packaging.version import InvalidVersion, Version

from sitegen.analysis.kernels import RunFacts, Series
from sitegen.analysis.series import Cell, Chart
from sitegen.content.run_summary import Shape, Value


class ReleasePoint(NamedTuple):
    release: str
    run: RunFacts  # the newest run of the series at the cell under this release
    value: Value


class Change(NamedTuple):
    """From one release to the next: the ratio of the medians, and whether the spreads part."""

    before: str
    after: str
    ratio: float  # after / before: above 1 is slower (or more memory)
    beyond_noise: bool  # the two p20–p80 spreads do not overlap


class ReleaseHistory(NamedTuple):
    series: Series
    workload: str
    x: int | None
    shape: Shape
    points: tuple[ReleasePoint, ...]  # oldest release first
    changes: tuple[Change, ...]  # between consecutive points


def histories_of(chart: Chart) -> tuple[ReleaseHistory, ...]:
    """Every series and shape of a chart measured under two releases or more."""
    found = []
    for row in chart.rows:
        for cell in row.cells:
            if not cell.earlier:  # one run: one release at most
                continue
            points = release_points(cell, chart.metric, chart.unit)
            if len(points) > 1:
                found.append(
                    ReleaseHistory(
                        cell.series, row.workload, row.x, row.shape, points, changes(points)
                    )
                )
    return tuple(found)


def release_points(cell: Cell, metric: str, unit: str) -> tuple[ReleasePoint, ...]:
    """The newest passed run with a value under each release, by release order."""
    newest: dict[str, ReleasePoint] = {}
    for run in (cell.run, *cell.earlier):  # newest first
        if not run.release or run.release in newest or run.status != "passed":
            continue
        value = run.value(metric, unit)
        if value is not None:
            newest[run.release] = ReleasePoint(run.release, run, value)
    return tuple(sorted(newest.values(), key=lambda p: release_order(p.release)))


def release_order(release: str) -> tuple[int, Version | None, str]:
    """Releases by version where they are versions (`0.5.8` before `0.5.10`), then by name."""
    try:
        return (0, Version(release), release)
    except InvalidVersion:
        return (1, None, release)


def changes(points: tuple[ReleasePoint, ...]) -> tuple[Change, ...]:
    found = []
    for before, after in itertools.pairwise(points):
        old, new = before.value, after.value
        ratio = new.centre / old.centre if old.centre else float("inf")
        apart = (
            old.low is not None
            and old.high is not None
            and new.low is not None
            and new.high is not None
            and (new.low > old.high or new.high < old.low)
        )
        found.append(Change(before.release, after.release, ratio, apart))
    return tuple(found)
