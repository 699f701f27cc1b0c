"""Speed against memory: at each shape of a GPU's full pass where both were measured, each
implementation's latency beside its peak memory, and the frontier of those no other beats on
both (Pareto-optimal, on the medians).

A full pass's latency and memory are two charts of the same sweep (analysis/series.py): their
rows are paired by workload, their cells by series. Each cohort is ranked on its own protocol,
so the two values of a point may come from two runs.
"""

from __future__ import annotations

import json
from typing import NamedTuple

from sitegen.analysis.kernels import RunFacts, Series
from sitegen.analysis.series import Chart, GpuSection
from sitegen.content.run_summary import LATENCY, Shape, Value
from sitegen.model.names import short_hash

FULL = "full"


class FrontierPoint(NamedTuple):
    series: Series
    latency: Value
    memory: Value
    latency_run: RunFacts
    memory_run: RunFacts
    dominated_by: Series | None  # a frontier point at least as good on both, better on one


class ShapeFrontier(NamedTuple):
    workload: str
    x: int | None
    shape: Shape
    points: tuple[FrontierPoint, ...]  # by latency, then memory

    @property
    def frontier(self) -> tuple[FrontierPoint, ...]:
        return tuple(p for p in self.points if p.dominated_by is None)


class FrontierChart(NamedTuple):
    """One sweep of a GPU's full pass: its latency and memory charts, shape by shape."""

    element_id: str  # stable across builds
    latency: Chart
    memory: Chart
    shapes: tuple[ShapeFrontier, ...]  # by x; only shapes with at least one pair


def frontiers_of(gpu: GpuSection, pass_name: str) -> tuple[FrontierChart, ...]:
    """The speed–memory charts of a GPU section: a full pass only, each sweep measured on both
    latency and a memory metric."""
    if pass_name != FULL:
        return ()
    latency = [c for c in gpu.charts if c.metric == LATENCY]
    memory = [c for c in gpu.charts if c.metric != LATENCY]
    found = []
    for speed in latency:
        for amount in memory:
            if (amount.swept, amount.fixed) != (speed.swept, speed.fixed):
                continue
            shapes = _paired(speed, amount)
            if shapes:
                identity = json.dumps([speed.element_id, amount.element_id])
                found.append(
                    FrontierChart("frontier-" + short_hash(identity), speed, amount, shapes)
                )
    return tuple(found)


def _paired(speed: Chart, amount: Chart) -> tuple[ShapeFrontier, ...]:
    memory_rows = {row.workload: row for row in amount.rows}
    shapes = []
    for row in speed.rows:
        other = memory_rows.get(row.workload)
        if other is None:
            continue
        memory_cells = {c.series.key: c for c in other.cells if c.value is not None}
        pairs = [
            (cell, memory_cells[cell.series.key])
            for cell in row.cells
            if cell.value is not None and cell.series.key in memory_cells
        ]
        if pairs:
            points = [
                (cell.series, cell.value, mem.value, cell.run, mem.run)
                for cell, mem in pairs
                if cell.value is not None and mem.value is not None
            ]
            shapes.append(ShapeFrontier(row.workload, row.x, row.shape, pareto(points)))
    return tuple(shapes)


def pareto(
    points: list[tuple[Series, Value, Value, RunFacts, RunFacts]],
) -> tuple[FrontierPoint, ...]:
    """The points by latency, each on the frontier or dominated by the first frontier point
    that is at least as fast and as light, and strictly better on one of the two."""
    ordered = sorted(points, key=lambda p: (p[1].centre, p[2].centre, p[0].label.lower()))
    frontier: list[tuple[Series, float, float]] = []
    found = []
    for series, latency, memory, latency_run, memory_run in ordered:
        beaten_by = next(
            (
                s
                for s, time, size in frontier
                if time <= latency.centre
                and size <= memory.centre
                and (time < latency.centre or size < memory.centre)
            ),
            None,
        )
        if beaten_by is None:
            frontier.append((series, latency.centre, memory.centre))
        found.append(FrontierPoint(series, latency, memory, latency_run, memory_run, beaten_by))
    return tuple(found)
