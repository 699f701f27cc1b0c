"""A kernel's page: the operation, its series (implementations as the runs name them), and per
pass and GPU the charts and rankings of every cohort (analysis/series.py), with a contents list
and the same data in the page's JSON twin. Every run of the kernel is linked from its page."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Any, NamedTuple
from urllib.parse import urlencode

from sitegen.analysis.frontier import frontiers_of
from sitegen.analysis.kernels import Kernel, RunFacts, Series
from sitegen.analysis.releases import ReleaseHistory, histories_of
from sitegen.analysis.series import (
    Cell,
    Chart,
    PassSection,
    metrics_of,
    passes_of,
    statistic_of,
)
from sitegen.analysis.verdicts import ChartVerdicts, verdicts_of
from sitegen.content.run_summary import LATENCY
from sitegen.model.digest import short
from sitegen.model.wording import counted
from sitegen.site.charts import chart_spec, styles_for
from sitegen.site.compare import compare_href
from sitegen.site.format import (
    Scale,
    against_baseline,
    anchor,
    metric_name,
    scale_for,
    slower_than_fastest,
    title_of,
    wording,
)
from sitegen.site.frontier import FrontierBlock, frontier_block
from sitegen.site.history import (
    cause_of,
    cell_history,
    history_href,
    kernel_history,
    regression_line,
)
from sitegen.site.lookup import SiteLookup, run_anchor
from sitegen.site.quality import MarkLine, mark_lines, mark_words, marks_of
from sitegen.site.records import Fact, Identity, Link, Page, PageMeta
from sitegen.site.releases import ReleaseBlock, release_blocks
from sitegen.site.search import chart_heading, search_tags
from sitegen.site.urls import REGRESSIONS
from sitegen.site.verdicts import (
    VerdictStrip,
    WinsLine,
    gpu_anchor,
    latency_tally,
    verdict_strip,
)

EARLIER_SHOWN = 2  # earlier runs linked beside a ranked one; the history page has them all


class RankRow(NamedTuple):
    """One series at one shape: ranked, or measured without a value."""

    anchor: str  # the row's id (`run-<16 hex>`) where this is the run's own chart; else ""
    rank: str
    series: Link  # its display name, to its implementation's page
    baseline: bool  # the chart's baseline
    value: str
    spread: str
    vs_best: str  # `fastest`, `1.25× slower`
    vs_baseline: str  # `2.34× faster`, `1.12× slower`, `baseline`, `—`
    run: Link
    earlier: tuple[Link, ...]  # older runs of the series at this cell, each linked
    earlier_anchors: tuple[str, ...]  # their ids, where this is their own chart
    note: str  # a run's status when it did not pass
    history: Link | None = None  # the series' history at this cell, where it has earlier runs
    after_regression: str = ""  # `after a regression: 1.32× slower between …`; ""
    marks: tuple[MarkLine, ...] = ()  # the run's data-quality marks


class ShapeTable(NamedTuple):
    label: str
    workload: Link
    rows: tuple[RankRow, ...]
    missing: str  # "Not measured here: …", once for the shape; "" when nothing is
    baseline_missing: bool
    compare: str = ""  # the compare page with its runs side by side; "" for fewer than two


@dataclass(frozen=True)
class ChartBlock:
    """One chart with its ranking table: the plotly spec, and a text fallback."""

    element_id: str
    title: str
    protocol: Link
    metric: str
    unit: str
    spread_label: str
    best_label: str  # the column of ratios to the best: `vs fastest`, `vs lowest`
    baseline: str  # the baseline series' display name; "" when the chart has none
    spec: dict[str, Any]
    fallback: str
    shapes: tuple[ShapeTable, ...]
    strip: VerdictStrip  # who wins at each shape, beyond the noise
    releases: tuple[ReleaseBlock, ...]  # series measured at a shape under several releases
    releases_more: int  # series and shapes under several releases not shown (the history has them)
    data: dict[str, Any]  # the chart in the page's JSON twin
    heading_id: str = ""  # its heading's id, of kernel, GPU, pass and shape words (search)
    context: str = ""  # the kernel, GPU and pass, said in the heading to readers and search
    history: Link | None = None  # the kernel's history on this GPU, where a line has one


class GpuBlock(NamedTuple):
    anchor: str
    gpu: Link
    charts: tuple[ChartBlock, ...]
    missing: tuple[str, ...]  # series measured in this pass elsewhere, not on this GPU
    baseline_missing: str  # the pass's baseline, when it is among `missing`; ""
    wins: str  # the latency charts' verdicts summed up: `Liger fastest at 5 of 8 shapes …`
    frontiers: tuple[FrontierBlock, ...]  # a full pass's speed against memory, per sweep
    history: Link | None = None  # the kernel's history on this GPU, where it has one


class PassBlock(NamedTuple):
    anchor: str
    name: str
    gpus: tuple[GpuBlock, ...]
    missing_gpus: tuple[Link, ...]
    baseline: str  # the pass's baseline series' display name; ""


class SeriesRow(NamedTuple):
    """A series in the kernel's table: its name, what the runs call it, its implementation."""

    label: str
    provider: str  # as the runs' titles spell it, when that differs from `label`; else ""
    implementation: Link
    project: Link | None
    baseline_role: bool  # its implementation has the baseline role
    baseline_of: str  # the passes it is the baseline of: `forward, backward`; ""
    runs: int


class Operand(NamedTuple):
    direction: str  # input, output
    name: str
    shape: str
    dtype: str


class KernelContext(NamedTuple):
    meta: PageMeta
    description: str | None  # Markdown
    facts: tuple[Fact, ...]
    operands: tuple[Operand, ...]
    series: tuple[SeriesRow, ...]
    passes: tuple[PassBlock, ...]
    wins: tuple[WinsLine, ...]  # each pass and GPU's verdicts summed up
    source_refs: tuple[Link, ...]
    identity: Identity | None
    derived: bool  # no OperationSpec: the kernel comes from run titles
    steps: str = ""  # `3 regressions and 1 improvement found in its history`; ""
    steps_link: Link | None = None  # the regressions page, this kernel chosen


def kernel_page(lookup: SiteLookup, kernel: Kernel) -> Page:
    path = lookup.urls.path_of(kernel.key) or ""
    styles = styles_for([s.key for s in kernel.series])
    sections = passes_of(kernel)
    anchored: set[str] = set()  # runs whose row has its id already: each id once a page
    headings: set[str] = set()  # the charts' heading ids so far
    passes = tuple(
        pass_block(lookup, kernel, section, styles, anchored, headings) for section in sections
    )
    operation = kernel.operation
    facts: list[Fact] = []
    operands: list[Operand] = []
    description = None
    refs: tuple[Link, ...] = ()
    if operation is not None:
        spec, metadata = operation.spec, operation.metadata
        description = metadata.get("description")
        refs = tuple(Link(r["url"], r["url"]) for r in metadata.get("sourceRefs") or ())
        facts += operation_facts(spec)
        operands += operands_of(spec)
    facts.append(Fact("Runs", f"{len(kernel.runs):,}"))
    facts.append(Fact("GPUs", lookup.gpu_labels(kernel.environments) or "none yet"))
    counts = Counter(run.series_key for run in kernel.runs)
    baseline_of: dict[str, list[str]] = {}
    for pass_name in kernel.pass_names:  # in page order
        key = kernel.baseline_of(pass_name)
        if key is not None:
            baseline_of.setdefault(key, []).append(pass_name)
    series = tuple(
        SeriesRow(
            label=s.label,
            provider=s.provider if s.renamed else "",
            implementation=Link(
                title_of(s.entry) if s.entry else s.provider, lookup.urls.link(s.implementation)
            ),
            project=lookup.projects.get(s.implementation),
            baseline_role=s.baseline_role,
            baseline_of=", ".join(baseline_of.get(s.key, ())),
            runs=counts[s.key],
        )
        for s in kernel.series
    )
    count = len(kernel.series)
    meta = lookup.meta(
        kernel.title,
        path,
        f"{kernel.title}: benchmark results of {counted(count, 'implementation')} "
        f"on {counted(len(kernel.environments), 'GPU')}.",
        "kernels",
        kernel.runs,
        charts=any(g.charts for p in passes for g in p.gpus),
        search=search_tags(lookup, "Kernel", kernel.runs, kernel=kernel.title),
    )
    context = KernelContext(
        meta=meta,
        description=description,
        facts=tuple(facts),
        operands=tuple(operands),
        series=series,
        passes=passes,
        wins=tuple(
            WinsLine(
                Link(kernel.title, path), p.name, g.gpu, Link(g.gpu.text, f"#{g.anchor}"), g.wins
            )
            for p in passes
            for g in p.gpus
            if g.wins
        ),
        source_refs=refs,
        identity=lookup.identity(operation) if operation else None,
        derived=operation is None,
        steps=_steps_sentence(lookup, kernel),
        steps_link=Link(
            "the regressions page",
            lookup.urls.href(REGRESSIONS) + "#" + urlencode({"kernel": kernel.title}),
        ),
    )
    return Page(path, "kernel.html", context, kernel_twin(lookup, kernel, sections, passes))


def _steps_sentence(lookup: SiteLookup, kernel: Kernel) -> str:
    """How many steps the kernel's history shows: a line, whatever the number of commits."""
    found = kernel_history(lookup, kernel.key).found
    if not found:
        return ""
    code = [item for item in found if cause_of(lookup, item) == "code"]
    regressions = sum(1 for item in code if item.regression)
    return (
        f"{counted(regressions, 'regression')} and "
        f"{counted(len(code) - regressions, 'improvement')} of the code found in its history"
        + (
            f", and {counted(len(found) - len(code), 'step')} of the machine or harness."
            if len(found) > len(code)
            else "."
        )
    )


def operation_facts(spec: dict[str, Any]) -> list[Fact]:
    axes = [
        f"{name} ({axis['role']}"
        + (f": {axis['expression']}" if "expression" in axis else "")
        + (f" = {axis['value']}" if "value" in axis else "")
        + ")"
        for name, axis in spec["axes"].items()
    ]
    semantics = spec["semantics"]
    facts = [
        Fact("Family", spec["family"]),
        Fact("Axes", ", ".join(axes)),
        Fact("Mutation", semantics["mutation"]),
        Fact("Determinism", semantics["determinism"]),
    ]
    if "expression" in semantics:
        facts.append(Fact("Computes", semantics["expression"], code=True))
    return facts


def operands_of(spec: dict[str, Any]) -> list[Operand]:
    operands = []
    for direction, key in (("input", "inputs"), ("output", "outputs")):
        for operand in spec[key]:
            if "tensor" in operand:
                tensor = operand["tensor"]
                shape = "[" + ", ".join(str(d) for d in tensor["shape"]) + "]"
                operands.append(Operand(direction, operand["name"], shape, tensor["dtype"]))
            else:
                dtype = operand["scalar"]["dtype"]
                operands.append(Operand(direction, operand["name"], "scalar", dtype))
    return operands


def pass_block(
    lookup: SiteLookup,
    kernel: Kernel,
    section: PassSection,
    styles: dict[str, tuple[str, str]],
    anchored: set[str],
    headings: set[str] | None = None,
) -> PassBlock:
    gpus = []
    headings = set() if headings is None else headings
    with_history = {
        h.environment for h in kernel_history(lookup, kernel.key).histories if len(h.points) > 1
    }
    for gpu in section.gpus:
        label = lookup.gpu_label(gpu.environment)
        verdicts = tuple(verdicts_of(chart) for chart in gpu.charts)
        where = f" on {label}"
        heading_of = (kernel.title, label, section.name)
        gpus.append(
            GpuBlock(
                anchor=gpu_anchor(section.name, label, gpu.environment),
                gpu=Link(label, lookup.urls.link(gpu.environment)),
                charts=tuple(
                    chart_block(
                        lookup, chart, styles, anchored, judged, where, heading_of, headings
                    )
                    for chart, judged in zip(gpu.charts, verdicts, strict=True)
                ),
                missing=tuple(s.label for s in gpu.missing),
                baseline_missing=section.baseline.label
                if section.baseline is not None and section.baseline in gpu.missing
                else "",
                wins=latency_tally(verdicts),
                frontiers=tuple(
                    frontier_block(lookup, f, styles, f.latency.fixed.label())
                    for f in frontiers_of(gpu, section.name)
                ),
                history=Link(
                    f"{kernel.title} history on {label}",
                    history_href(lookup, kernel.key, gpu.environment),
                )
                if gpu.environment in with_history
                else None,
            )
        )
    return PassBlock(
        anchor=anchor(section.name),
        name=section.name,
        gpus=tuple(gpus),
        missing_gpus=tuple(
            Link(lookup.gpu_label(e), lookup.urls.link(e)) for e in section.missing_gpus
        ),
        baseline=section.baseline.label if section.baseline else "",
    )


def chart_scale(chart: Chart) -> Scale:
    """The one unit of a chart and its table: the one that suits its largest value."""
    values = [
        v
        for row in chart.rows
        for cell in row.cells
        if cell.value is not None
        for v in (cell.value.centre, cell.value.low, cell.value.high)
        if v is not None
    ]
    return scale_for(chart.unit, values)


def measured_name(chart: Chart) -> str:
    """What a chart plots: `median latency`, `peak memory allocated`."""
    name = metric_name(chart.metric)
    statistic = statistic_of(cell for row in chart.rows for cell in row.cells)
    return f"{statistic} {name}" if chart.metric == LATENCY and statistic else name


def chart_title(chart: Chart) -> str:
    fixed = chart.fixed.label()
    measured = measured_name(chart).capitalize()
    title = f"{measured} against {chart.swept}" if chart.swept else measured
    return title + (f" · {fixed}" if fixed != "unknown shape" else "")


def chart_block(
    lookup: SiteLookup,
    chart: Chart,
    styles: dict[str, tuple[str, str]],
    anchored: set[str] | None = None,
    verdicts: ChartVerdicts | None = None,
    where: str = "",
    heading_of: tuple[str, str, str] | None = None,
    headings: set[str] | None = None,
) -> ChartBlock:
    """`anchored`: the runs given their row's id so far on the page (a crossed sweep shows a
    workload in two charts; its rows get their id in the first). `where`: the GPU, for the
    verdict's sentence (` on NVIDIA H100 80GB HBM3`). `heading_of`: the chart's kernel, GPU
    and pass, for its heading's id (search); `headings`, the ids given on the page so far."""
    anchored = set() if anchored is None else anchored
    verdicts = verdicts_of(chart) if verdicts is None else verdicts
    strip = verdict_strip(verdicts, styles, where)
    scale = chart_scale(chart)
    spread = _spread_names(chart)
    measured = measured_name(chart)
    spec = chart_spec(
        chart, styles, lambda d: lookup.urls.link(d) or "", scale, lambda d: mark_words(lookup, d)
    )
    shapes = []
    for row in chart.rows:
        label = (
            f"{chart.swept} = {row.x:,}" if chart.swept and row.x is not None else row.shape.label()
        )
        missing = ", ".join(s.label for s in row.missing)
        shapes.append(
            ShapeTable(
                label,
                lookup.link(row.workload, row.shape.label()),
                tuple(rank_row(lookup, chart, c, scale, anchored) for c in row.cells),
                f"Not measured at this shape: {missing}." if missing else "",
                row.baseline_missing,
                compare_href(lookup, [c.run for c in row.cells if c.value is not None]),
            )
        )
    across = histories_of(chart)
    shown_releases = _largest_changes(across)
    drawn = len(spec["data"])
    points = sum(len(trace["x"]) for trace in spec["data"])
    fallback = (
        f"Chart of {measured} ({scale.unit}): {counted(drawn, 'implementation')} "
        f"at {counted(len(chart.rows), 'shape')}, {counted(points, 'measurement')}; "
        "the table below lists every value."
    )
    heading = None
    if heading_of is not None:
        words = (metric_name(chart.metric), chart.swept or "", chart.fixed.label())
        heading = chart_heading(*heading_of, words, set() if headings is None else headings)
    return ChartBlock(
        element_id=chart.element_id,
        title=chart_title(chart),
        protocol=lookup.link(chart.protocol),
        metric=measured,
        unit=scale.unit,
        spread_label=f"{spread[0]} – {spread[1]}" if spread else "spread",
        best_label=f"vs {wording(chart.metric).best}",
        baseline=chart.baseline.label if chart.baseline else "",
        spec=spec,
        fallback=fallback,
        shapes=tuple(shapes),
        strip=strip,
        releases=release_blocks(chart, shown_releases, styles, lambda d: lookup.urls.link(d) or ""),
        releases_more=len(across) - len(shown_releases),
        data=chart_twin(lookup, chart, spec, scale, strip),
        heading_id=heading.id if heading else "",
        context=heading.context if heading else "",
        history=_chart_history(lookup, chart),
    )


def _chart_history(lookup: SiteLookup, chart: Chart) -> Link | None:
    """Where a chart's lines go commit by commit: the kernel's history on its GPU, if any
    line at any shape was measured more than once."""
    cells = [cell for row in chart.rows for cell in row.cells]
    if not any(cell.earlier for cell in cells):
        return None
    return Link(
        "every line commit by commit",
        history_href(lookup, cells[0].run.kernel_key, chart.environment),
    )


RELEASES_SHOWN = 4  # across-release charts under a chart: those that changed the most


def _largest_changes(histories: tuple[ReleaseHistory, ...]) -> tuple[ReleaseHistory, ...]:
    """The series and shapes whose value changed the most from one release to the next beyond
    the spread, in the chart's order: a chart's block stays the same size whatever the
    releases and shapes measured; the history pages show every one."""

    def largest(history: ReleaseHistory) -> float:
        steps = [abs(math.log(c.ratio)) for c in history.changes if c.beyond_noise and c.ratio > 0]
        return max(steps, default=0.0)

    ranked = sorted(range(len(histories)), key=lambda i: (-largest(histories[i]), i))
    chosen = sorted(i for i in ranked[:RELEASES_SHOWN] if largest(histories[i]) > 0)
    return tuple(histories[i] for i in chosen)


def _anchor(chart: Chart, run: RunFacts, anchored: set[str]) -> str:
    """The id of a run's row: in the first chart of its first metric on the page, else ""."""
    if run.digest in anchored or metrics_of(run)[0] != (chart.metric, chart.unit):
        return ""
    anchored.add(run.digest)
    return run_anchor(run.digest)


def rank_row(
    lookup: SiteLookup, chart: Chart, cell: Cell, scale: Scale, anchored: set[str]
) -> RankRow:
    series = cell.series
    series_link = Link(series.label, lookup.urls.link(series.implementation))
    baseline = chart.baseline is not None and chart.baseline.key == series.key
    run = cell.run
    run_link = Link(short(run.digest), lookup.urls.link(run.digest))
    own = _anchor(chart, run, anchored)
    # The newest earlier runs only: the rest are on the history page, so that the kernel page
    # does not grow with the number of commits measured. A run that did not pass is evidence:
    # its status is said beside it, never ranked.
    shown = cell.earlier[:EARLIER_SHOWN]
    earlier = tuple(
        Link(
            short(r.digest) + ("" if r.status == "passed" else f" ({r.status.replace('_', ' ')})"),
            lookup.urls.link(r.digest),
        )
        for r in shown
    )
    earlier_anchors = tuple(_anchor(chart, r, anchored) for r in shown)
    history = (
        cell_history(lookup, run, chart.metric)._replace(
            text=f"history ({len(cell.earlier) + 1} runs)"
        )
        if cell.earlier
        else None
    )
    regression = regression_line(lookup, run)

    if cell.value is None:
        note = f"status: {run.status}" if run.status != "passed" else "no value for this metric"
        return RankRow(
            own,
            "—",
            series_link,
            baseline,
            "—",
            "",
            "",
            "",
            run_link,
            earlier,
            earlier_anchors,
            note,
            history,
            marks=mark_lines(lookup, run.digest),
        )
    value = cell.value
    low, high = value.low, value.high
    if baseline:
        vs_baseline = "baseline"
    elif chart.baseline is None:
        vs_baseline = ""
    else:
        vs_baseline = against_baseline(cell.vs_baseline, wording(chart.metric))
    return RankRow(
        anchor=own,
        rank=str(cell.rank),
        series=series_link,
        baseline=baseline,
        value=scale.number(value.centre),
        spread=f"{scale.number(low)} – {scale.number(high)}"
        if low is not None and high is not None
        else "",
        vs_best=slower_than_fastest(cell.vs_best, cell.rank, wording(chart.metric)),
        vs_baseline=vs_baseline,
        run=run_link,
        earlier=earlier,
        earlier_anchors=earlier_anchors,
        note="",
        history=history,
        after_regression=regression[0] if regression else "",
        marks=mark_lines(lookup, run.digest),
    )


def chart_twin(
    lookup: SiteLookup, chart: Chart, spec: dict[str, Any], scale: Scale, strip: VerdictStrip
) -> dict[str, Any]:
    def cell_json(cell: Cell) -> dict[str, Any]:
        item: dict[str, Any] = {
            "series": cell.series.key,
            "label": cell.series.label,
            "implementation": cell.series.implementation,
            "run": cell.run.digest,
            "url": lookup.urls.link(cell.run.digest),
            "status": cell.run.status,
            "earlier": [{"run": r.digest, "url": lookup.urls.link(r.digest)} for r in cell.earlier],
            "marks": [mark.kind for mark in marks_of(lookup, cell.run.digest)],
        }
        if cell.value is not None:
            item |= {
                "rank": cell.rank,
                "value": cell.value.centre,
                "low": cell.value.low,
                "high": cell.value.high,
                "slowerThanFastest": cell.vs_best,
                "speedupVsBaseline": cell.vs_baseline,
            }
        return item

    return {
        "id": chart.element_id,
        "protocol": chart.protocol,
        "metric": chart.metric,
        "unit": chart.unit,
        "displayUnit": scale.unit,
        "sweptAxis": chart.swept,
        "fixed": chart.fixed.label(),
        "baseline": chart.baseline.key if chart.baseline else None,
        "shapes": [
            {
                "workload": r.workload,
                "x": r.x,
                "ranking": [cell_json(c) for c in r.cells],
                "notMeasured": [s.key for s in r.missing],
            }
            for r in chart.rows
        ],
        "verdict": {
            "sentence": strip.sentence,
            "points": [
                {"at": item.at, "outcome": item.outcome, "name": item.name, "detail": item.detail}
                for item in strip.items
            ],
        },
        "chart": spec,
    }


def kernel_twin(
    lookup: SiteLookup,
    kernel: Kernel,
    sections: tuple[PassSection, ...],
    passes: tuple[PassBlock, ...],
) -> dict[str, Any]:
    twins = []
    for section, block in zip(sections, passes, strict=True):
        gpus = [
            {
                "environment": gpu.environment,
                "label": gpu_block.gpu.text,
                "charts": [chart.data for chart in gpu_block.charts],
                "wins": gpu_block.wins,
                "speedAgainstMemory": [f.data for f in gpu_block.frontiers],
                "notMeasured": [s.key for s in gpu.missing],
            }
            for gpu, gpu_block in zip(section.gpus, block.gpus, strict=True)
        ]
        twins.append(
            {
                "pass": section.name,
                "baseline": section.baseline.key if section.baseline else None,
                "gpus": gpus,
                "notMeasuredOn": list(section.missing_gpus),
            }
        )
    return {
        "kernel": {
            "title": kernel.title,
            "url": lookup.urls.link(kernel.key),
            "operationSpecDigest": kernel.operation.digest if kernel.operation else None,
        },
        "series": [series_json(lookup, s) for s in kernel.series],
        "passes": twins,
    }


def series_json(lookup: SiteLookup, series: Series) -> dict[str, Any]:
    return {
        "key": series.key,
        "label": series.label,
        "provider": series.provider,
        "implementation": series.implementation,
        "baselineRole": series.baseline_role,
        "url": lookup.urls.link(series.implementation),
    }


def _spread_names(chart: Chart) -> tuple[str, str] | None:
    for row in chart.rows:
        for cell in row.cells:
            if cell.value is not None and cell.value.spread:
                return cell.value.spread
    return None
