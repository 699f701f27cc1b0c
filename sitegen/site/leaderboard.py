"""An operation's page as leaderboards (analysis/leaderboards.py): for each protocol, GPU,
metric and statistic, a chart of the best few implementations, the distribution of all of them
where there are many, and per workload a ranked table of every implementation (the best few
shown, the rest one click away), the runs that did not pass with their status, and who held the
record since when. Every run of the operation is linked from its page."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from typing import Any, NamedTuple

from sitegen.analysis.kernels import Kernel, RunFacts, Series
from sitegen.analysis.leaderboards import Board, Cohort, Entry, boards_of, distribution
from sitegen.analysis.series import measured_words
from sitegen.content.records import RecordEvent
from sitegen.model.digest import short
from sitegen.model.wording import counted
from sitegen.site.charts import CONFIG, PALETTE, base_layout, log_range, log_ticks, plotly_text
from sitegen.site.compare import compare_href
from sitegen.site.format import Scale, anchor, scale_for, times, title_of, when
from sitegen.site.kernel import Operand, operands_of, operation_facts
from sitegen.site.lookup import SiteLookup, run_anchor
from sitegen.site.records import Fact, Identity, Link, Page, PageMeta
from sitegen.site.search import search_tags
from sitegen.site.verdicts import WinsLine, leaderboard_kernel

ROWS_SHOWN = 10  # a cohort's best, in view; the rest behind a disclosure
COMPACT_ROWS = 3  # workloads of at most this many runs share one table (a trace's calls)
DISTRIBUTION_FROM = 20  # implementations in a cohort from which their distribution is drawn


class EntryRow(NamedTuple):
    anchor: str  # the best run's row id: its run page links here
    rank: int
    implementation: Link
    author: str  # the implementation's authors, as its metadata names them; ""
    project: Link | None
    value: str
    vs_best: str  # `best`, `1.25× the best`
    run: Link
    others: tuple[Link, ...]  # its other runs in the cohort, each linked
    other_anchors: tuple[str, ...]


class FailedRow(NamedTuple):
    anchor: str
    status: str
    implementation: Link
    run: Link
    observed: str


class RecordRow(NamedTuple):
    since: str
    holder: Link  # the implementation that took the record
    run: Link
    value: str
    previous: Link | None  # the implementation it took it from


class CohortBlock(NamedTuple):
    anchor: str
    label: str  # the workload's shape
    workload: Link
    ranked: int
    rows: tuple[EntryRow, ...]  # the best `ROWS_SHOWN`
    rest: tuple[EntryRow, ...]
    failed: tuple[FailedRow, ...]
    unvalued: tuple[Link, ...]  # passed runs without this board's value
    records: tuple[RecordRow, ...]  # newest first
    compare: str  # the best few side by side; ""
    authors: bool  # whether any implementation here names its authors (else no such column)


class BoardBlock(NamedTuple):
    element_id: str
    title: str
    gpu: Link
    protocol: Link
    measured: str  # `mean latency (µs)`, `geomean score (µs)`
    statistic: str
    chart: dict[str, Any] | None
    best_count: int  # the implementations the chart draws
    chart_summary: str
    distribution: dict[str, Any] | None
    distribution_summary: str
    cohorts: tuple[CohortBlock, ...]
    runs: str  # how many, written out
    compact: bool = False  # one table for every workload: each holds a few runs
    authors: bool = False  # whether any implementation here names its authors


class LeaderboardContext(NamedTuple):
    meta: PageMeta
    description: str | None  # Markdown
    facts: tuple[Fact, ...]
    operands: tuple[Operand, ...]
    boards: tuple[BoardBlock, ...]
    source_refs: tuple[Link, ...]
    identity: Identity | None
    derived: bool


def leaderboard_page(lookup: SiteLookup, kernel: Kernel) -> Page:
    path = lookup.urls.path_of(kernel.key) or ""
    boards = boards_of(kernel, lookup.records)
    anchored: set[str] = set()  # runs whose row has its id already: each id once a page
    blocks = _told_apart(
        lookup, boards, [board_block(lookup, kernel, board, anchored) for board in boards]
    )
    operation = kernel.operation
    facts: list[Fact] = []
    operands: list[Operand] = []
    description = None
    refs: tuple[Link, ...] = ()
    if operation is not None:
        description = operation.metadata.get("description")
        refs = tuple(Link(r["url"], r["url"]) for r in operation.metadata.get("sourceRefs") or ())
        facts += operation_facts(operation.spec)
        operands += operands_of(operation.spec)
    facts.append(Fact("Runs", f"{len(kernel.runs):,}"))
    facts.append(Fact("Implementations", f"{len(kernel.series):,}"))
    facts.append(Fact("Workloads", f"{len({run.workload for run in kernel.runs}):,}"))
    facts.append(Fact("GPUs", lookup.gpu_labels(kernel.environments) or "none yet"))
    failed = sum(1 for run in kernel.runs if run.status != "passed")
    if failed:
        facts.append(Fact("Runs that did not pass", f"{failed:,}"))
    meta = lookup.meta(
        kernel.title,
        path,
        f"{kernel.title}: {counted(len(kernel.series), 'implementation')} ranked on "
        f"{counted(len(kernel.environments), 'GPU')}, {counted(len(kernel.runs), 'run')}.",
        "kernels",
        kernel.runs,
        charts=any(b.chart or b.distribution for b in blocks),
        search=search_tags(lookup, "Kernel", kernel.runs, kernel=kernel.title),
    )
    context = LeaderboardContext(
        meta=meta,
        description=description,
        facts=tuple(facts),
        operands=tuple(operands),
        boards=blocks,
        source_refs=refs,
        identity=lookup.identity(operation) if operation else None,
        derived=operation is None,
    )
    return Page(path, "leaderboard.html", context, leaderboard_twin(lookup, kernel, boards))


def _told_apart(
    lookup: SiteLookup, boards: tuple[Board, ...], blocks: list[BoardBlock]
) -> tuple[BoardBlock, ...]:
    """Boards whose titles would read the same (one GPU under two environments, two protocols)
    get the environment's and the protocol's names."""
    alike: dict[str, list[Board]] = {}
    for board, block in zip(boards, blocks, strict=True):
        alike.setdefault(block.title, []).append(board)
    told = []
    for board, block in zip(boards, blocks, strict=True):
        same = alike[block.title]
        parts = [block.title]
        if len({b.environment for b in same}) > 1:
            # Environments of one GPU differ in their software: their names say which.
            environment = lookup.catalog.get(board.environment)
            parts.append(environment.name if environment else short(board.environment))
        if len({b.protocol for b in same}) > 1:
            parts.append(block.protocol.text)
        told.append(block._replace(title=" · ".join(parts)))
    return tuple(told)


def board_block(
    lookup: SiteLookup, kernel: Kernel, board: Board, anchored: set[str] | None = None
) -> BoardBlock:
    values = [e.value.centre for c in board.cohorts for e in c.entries]
    scale = scale_for(board.unit, values)
    gpu = lookup.gpu_label(board.environment)
    protocol = lookup.catalog.get(board.protocol, "BenchmarkProtocol")
    measured = measured_words(board.metric, board.statistic)
    anchored = set() if anchored is None else anchored
    cohorts = tuple(cohort_block(lookup, board, c, scale, anchored) for c in board.cohorts)
    chart, chart_summary = best_chart(lookup, board, scale, measured)
    spread, spread_summary = distribution_chart(board, scale, measured)
    return BoardBlock(
        element_id=board.element_id,
        title=f"{measured.capitalize()} on {gpu}",
        gpu=Link(gpu, lookup.urls.link(board.environment)),
        protocol=Link(
            title_of(protocol) if protocol else short(board.protocol),
            lookup.urls.link(board.protocol),
        ),
        measured=f"{measured} ({scale.unit})",
        statistic=board.statistic,
        chart=chart,
        best_count=len(board.best),
        chart_summary=chart_summary,
        distribution=spread,
        distribution_summary=spread_summary,
        cohorts=cohorts,
        runs=f"{board.runs:,}",
        compact=len(cohorts) > 1 and all(c.ranked + len(c.failed) <= COMPACT_ROWS for c in cohorts),
        authors=any(c.authors for c in cohorts),
    )


def _authors(lookup: SiteLookup, series: Series) -> str:
    entry = series.entry
    if entry is None:
        return ""
    names = [a.get("name") or a.get("github") or "" for a in entry.metadata.get("authors") or ()]
    return ", ".join(name for name in names if name)


def _run_link(lookup: SiteLookup, run: RunFacts) -> Link:
    return Link(short(run.digest), lookup.urls.link(run.digest))


def _implementation(lookup: SiteLookup, series: Series) -> Link:
    text = title_of(series.entry) if series.entry is not None else series.label
    return Link(text, lookup.urls.link(series.implementation))


def entry_row(lookup: SiteLookup, entry: Entry, scale: Scale, anchored: set[str]) -> EntryRow:
    def own(run: RunFacts) -> str:
        name = run_anchor(run.digest)
        if name in anchored:
            return ""
        anchored.add(name)
        return name

    return EntryRow(
        anchor=own(entry.run),
        rank=entry.rank,
        implementation=_implementation(lookup, entry.series),
        author=_authors(lookup, entry.series),
        project=lookup.projects.get(entry.series.implementation),
        value=scale.number(entry.value.centre),
        vs_best="best" if entry.rank == 1 else f"{times(entry.vs_best)} the best",
        run=_run_link(lookup, entry.run),
        others=tuple(_run_link(lookup, run) for run in entry.others),
        other_anchors=tuple(own(run) for run in entry.others),
    )


def cohort_block(
    lookup: SiteLookup, board: Board, cohort: Cohort, scale: Scale, anchored: set[str]
) -> CohortBlock:
    rows = tuple(entry_row(lookup, e, scale, anchored) for e in cohort.entries)
    label = cohort.shape.label()
    workload = lookup.catalog.get(cohort.workload)
    failed = tuple(
        FailedRow(
            anchor=_once(run_anchor(run.digest), anchored),
            status=run.status.replace("_", " "),
            implementation=_implementation(lookup, lookup.series_of(run)),
            run=_run_link(lookup, run),
            observed=when(run.observed_at),
        )
        for run in cohort.failed
    )
    records = tuple(
        record_row(lookup, board, event, scale)
        for _, events in cohort.records
        for event in sorted(events, key=lambda e: (e.at, e.run), reverse=True)
    )
    best = [e.run for e in cohort.entries[:4]]
    return CohortBlock(
        anchor=anchor(board.element_id, label, short(cohort.workload, 8)),
        label=label,
        workload=Link(
            "workload" if workload else short(cohort.workload), lookup.urls.link(cohort.workload)
        ),
        ranked=len(cohort.entries),
        rows=rows[:ROWS_SHOWN],
        rest=rows[ROWS_SHOWN:],
        failed=failed,
        unvalued=tuple(_run_link(lookup, run) for run in cohort.unvalued),
        records=records,
        compare=compare_href(lookup, best),
        authors=any(row.author for row in rows),
    )


def _once(name: str, anchored: set[str]) -> str:
    """`name` as an id, unless the page gave it already ("")."""
    if name in anchored:
        return ""
    anchored.add(name)
    return name


def record_row(lookup: SiteLookup, board: Board, event: RecordEvent, scale: Scale) -> RecordRow:
    held = lookup.runs.get(event.run)
    previous = lookup.runs.get(event.previous) if event.previous else None
    value = held.value(board.metric, board.unit) if held is not None else None
    return RecordRow(
        since=when(event.at),
        holder=_implementation(lookup, lookup.series_of(held))
        if held
        else Link(short(event.run), ""),
        run=Link(short(event.run), lookup.urls.link(event.run)),
        value=scale.text(value.centre) if value is not None else "—",
        previous=_implementation(lookup, lookup.series_of(previous)) if previous else None,
    )


def best_chart(
    lookup: SiteLookup, board: Board, scale: Scale, measured: str
) -> tuple[dict[str, Any] | None, str]:
    """The best few implementations: bars at one workload, lines across several."""
    if not board.best:
        return None, ""
    unit = plotly_text(scale.unit)
    if len(board.cohorts) == 1:
        entries = [e for e in board.cohorts[0].entries if e.series in board.best]
        labels = [plotly_text(_short_label(lookup, e.series)) for e in entries]
        trace = {
            "type": "bar",
            "orientation": "h",
            "x": [e.value.centre / scale.per for e in entries],
            "y": labels,
            "customdata": [lookup.urls.link(e.run.digest) for e in entries],
            "marker": {"color": PALETTE[0]},
            "hovertemplate": f"%{{y}}: %{{x:.4g}} {unit}<extra></extra>",
        }
        layout = base_layout(
            {"title": {"text": f"{plotly_text(measured)} ({unit})"}, "rangemode": "tozero"},
            {"autorange": "reversed", "automargin": True, "type": "category"},
        )
        layout["showlegend"] = False
        layout["height"] = 80 + 32 * len(entries)
        summary = "; ".join(
            f"{_short_label(lookup, e.series)} {scale.text(e.value.centre)}" for e in entries
        )
        return {"data": [trace], "layout": layout, "config": CONFIG}, summary
    labels = _axis_labels(board)
    traces = []
    ys: list[float] = []
    for number, series in enumerate(board.best):
        x, y, custom = [], [], []
        for label, cohort in zip(labels, board.cohorts, strict=True):
            entry = next((e for e in cohort.entries if e.series.key == series.key), None)
            if entry is None:
                continue
            x.append(plotly_text(label))
            y.append(entry.value.centre / scale.per)
            custom.append(lookup.urls.link(entry.run.digest))
        ys += y
        colour = PALETTE[number % len(PALETTE)]
        traces.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": plotly_text(_short_label(lookup, series)),
                "x": x,
                "y": y,
                "customdata": custom,
                "line": {"color": colour},
                "marker": {"color": colour},
                "hovertemplate": f"%{{x}}: %{{y:.4g}} {unit}<extra>%{{fullData.name}}</extra>",
            }
        )
    yaxis: dict[str, Any] = {
        "title": {"text": f"{plotly_text(measured)} ({unit})"},
        "automargin": True,
    }
    positive = [v for v in ys if v > 0]
    # Workloads of different sizes: a log axis keeps the small ones' lines apart.
    if positive and max(positive) / min(positive) > 5:
        ticks = log_ticks(min(positive), max(positive))
        yaxis |= {
            "type": "log",
            "tickvals": ticks,
            "ticktext": [f"{t:g}" for t in ticks],
            "range": log_range(ticks),
        }
    layout = base_layout({"type": "category", "automargin": True, "tickangle": -30}, yaxis)
    layout["height"] = 460
    summary = (
        f"The {len(board.best)} implementations ranked at the most workloads, best first: "
        + ", ".join(_short_label(lookup, s) for s in board.best)
    )
    return {"data": traces, "layout": layout, "config": CONFIG}, summary


def _axis_labels(board: Board) -> list[str]:
    """Each workload as the chart's axis names it: only what tells it from the board's other
    workloads (the axes, scalars and dtype that vary), so that a label stays short."""
    shapes = [c.shape for c in board.cohorts]
    axes = [dict(s.axes) for s in shapes]
    varying = {name for found in axes for name in found if len({a.get(name) for a in axes}) > 1}
    scalars = len({s.scalars for s in shapes}) > 1
    dtypes = len({s.dtype for s in shapes}) > 1
    labels = []
    for shape in shapes:
        shown = shape._replace(
            axes=tuple(a for a in shape.axes if a[0] in varying),
            scalars=shape.scalars if scalars else (),
            dtype=shape.dtype if dtypes else "",
        )
        labels.append(shown.label())
    return labels


def distribution_chart(
    board: Board, scale: Scale, measured: str
) -> tuple[dict[str, Any] | None, str]:
    """Where every implementation stands: at one workload, their values; across several, each
    one's geometric mean of its ratio to the best, over the workloads it was ranked at."""
    if len(board.cohorts) == 1:
        entries = board.cohorts[0].entries
        if len(entries) < DISTRIBUTION_FROM:
            return None, ""
        values = [e.value.centre / scale.per for e in entries]
        axis = f"{plotly_text(measured)} ({plotly_text(scale.unit)})"
        said = (
            f"{len(values)} implementations' {measured}, "
            f"from {min(values):.4g} to {max(values):.4g} {scale.unit}"
        )
    else:
        ratios: dict[str, list[float]] = {}
        for cohort in board.cohorts:
            for entry in cohort.entries:
                ratios.setdefault(entry.series.key, []).append(entry.vs_best)
        if len(ratios) < DISTRIBUTION_FROM:
            return None, ""
        values = [
            math.exp(math.fsum(math.log(r) for r in found) / len(found))
            for found in ratios.values()
        ]
        axis = "geometric mean of × the best, over the workloads ranked"
        said = f"{len(values)} implementations, each one's geometric mean of its ratio to the best"
    bins = distribution(values)
    logarithmic = len(bins) > 1 and bins[-1][1] / bins[0][0] > 20
    centres = [math.sqrt(low * high) if logarithmic else (low + high) / 2 for low, high, _ in bins]
    trace = {
        "type": "bar",
        "x": centres,
        "y": [count for _, _, count in bins],
        "width": [high - low for low, high, _ in bins],
        "marker": {"color": PALETTE[5]},
        "customdata": [f"{low:.4g}–{high:.4g}" for low, high, _ in bins],
        "hovertemplate": "%{customdata}: %{y}<extra></extra>",
    }
    xaxis: dict[str, Any] = {"title": {"text": axis}}
    if logarithmic:
        ticks = log_ticks(bins[0][0], bins[-1][1])
        xaxis |= {
            "type": "log",
            "tickvals": ticks,
            "ticktext": [f"{t:g}" for t in ticks],
            "range": log_range(ticks),
        }
    layout = base_layout(xaxis, {"title": {"text": "implementations"}, "rangemode": "tozero"})
    layout["showlegend"] = False
    layout["height"] = 260
    layout["bargap"] = 0.05
    return {"data": [trace], "layout": layout, "config": CONFIG}, said


def _short_label(lookup: SiteLookup, series: Series) -> str:
    """An implementation as a chart names it: its title, and its author where there is one."""
    author = _authors(lookup, series)
    text = title_of(series.entry) if series.entry is not None else series.label
    return f"{text} ({author})" if author and author not in text else text


def leaderboard_twin(lookup: SiteLookup, kernel: Kernel, boards: Iterable[Board]) -> dict[str, Any]:
    link = lookup.urls.link
    return {
        "kernel": {
            "title": kernel.title,
            "url": link(kernel.key),
            "operationSpecDigest": kernel.operation.digest if kernel.operation else None,
        },
        "leaderboards": [
            {
                "id": board.element_id,
                "protocol": board.protocol,
                "environment": board.environment,
                "metric": board.metric,
                "unit": board.unit,
                "statistic": board.statistic,
                "cohorts": [
                    {
                        "workload": cohort.workload,
                        "ranked": [
                            {
                                "rank": entry.rank,
                                "implementation": entry.series.implementation,
                                "run": entry.run.digest,
                                "url": link(entry.run.digest),
                                "value": entry.value.centre,
                                "otherRuns": [run.digest for run in entry.others],
                            }
                            for entry in cohort.entries
                        ],
                        "notPassed": [
                            {"run": run.digest, "status": run.status, "url": link(run.digest)}
                            for run in cohort.failed
                        ],
                        "withoutValue": [run.digest for run in cohort.unvalued],
                        "records": [
                            {
                                "comparison": key,
                                "events": [
                                    {
                                        "at": e.at,
                                        "cause": e.cause,
                                        "run": e.run,
                                        "previous": e.previous,
                                    }
                                    for e in events
                                ],
                            }
                            for key, events in cohort.records
                        ],
                    }
                    for cohort in board.cohorts
                ],
            }
            for board in boards
        ],
    }


def kernel_boards(lookup: SiteLookup, key: str) -> tuple[Board, ...]:
    """A leaderboard kernel's boards, made once a build (a GPU page reads its GPU's)."""
    return boards_of(lookup.kernels[key], lookup.records)


def gpu_leaders(lookup: SiteLookup, environment: str) -> tuple[WinsLine, ...]:
    """A GPU page's summary of the leaderboards measured on it: per board, the implementation
    ranked first at the most workloads."""
    lines = []
    gpu = Link(lookup.gpu_label(environment), lookup.urls.link(environment))
    for kernel in lookup.analysis.kernels:
        if environment not in kernel.environments:
            continue
        if not lookup.memo(leaderboard_kernel)(kernel.key):
            continue
        href = lookup.urls.link(kernel.key) or ""
        for board in lookup.memo(kernel_boards)(kernel.key):
            if board.environment != environment:
                continue
            firsts = Counter(c.entries[0].series.key for c in board.cohorts if c.entries)
            measured = measured_words(board.metric, board.statistic)
            if not firsts:
                text = "no run passed"
            else:
                leader = min(firsts, key=lambda k: (-firsts[k], k))
                entry = next(
                    e for c in board.cohorts for e in c.entries[:1] if e.series.key == leader
                )
                name = _short_label(lookup, entry.series)
                if len(board.cohorts) == 1:
                    scale = scale_for(board.unit, [entry.value.centre])
                    ranked = len(board.cohorts[0].entries)
                    text = f"{name}: {scale.text(entry.value.centre)}, best of {ranked}"
                else:
                    text = f"{name}: best at {firsts[leader]} of {len(board.cohorts)} workloads"
            lines.append(
                WinsLine(
                    lookup.kernel_link(kernel.key),
                    measured,
                    gpu,
                    Link(measured, f"{href}#{board.element_id}"),
                    text,
                )
            )
    return tuple(lines)
