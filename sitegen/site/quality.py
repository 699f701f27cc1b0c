"""Data-quality marks and speed-of-light figures as pages show them (analysis/quality.py,
analysis/speed_of_light.py): a run's marks and figures, made once a build, and the
data-quality page, which counts the marks by source, GPU and kernel, each linked to where the
marked runs are."""

from __future__ import annotations

import functools
import operator
from collections import Counter
from collections.abc import Callable, Hashable, Iterable
from typing import Any, NamedTuple

from sitegen.analysis.kernels import RunFacts, derived, per_group
from sitegen.analysis.quality import KINDS, OVER_LIMIT, TITLES, Mark, Quality, assess
from sitegen.analysis.speed_of_light import SINGLE_PASSES, Figures, Peak, speed_of_light, work_of
from sitegen.model.digest import short
from sitegen.model.wording import counted
from sitegen.site.history import every_step, regression_line
from sitegen.site.lookup import SiteLookup
from sitegen.site.records import Fact, Link, Page, PageMeta
from sitegen.site.urls import DATA_QUALITY, METHODOLOGY, SOURCES
from sitegen.superseded import stop_if_superseded

EXAMPLES = 25  # marked runs listed under each mark on the data-quality page, newest first
AFTER_PREFIX = "after a regression: "


def run_quality(lookup: SiteLookup) -> Quality:
    """Every run's figures and marks, once a build (the home page asks first, in the main
    process, so that render workers inherit it)."""
    return lookup.memo(_run_quality)("")


def _run_quality(lookup: SiteLookup, _: str) -> Quality:
    # With a held analysis it is never made: each series' is (`series_qualities`).
    figures = speed_of_light(lookup.analysis, lookup.catalog)
    stop_if_superseded()
    regressions = lookup.memo(_regressions)("")
    stop_if_superseded()
    return assess(lookup.analysis, lookup.catalog, figures, regressions)


def series_qualities(lookup: SiteLookup) -> dict[str, Quality]:
    """Each series' figures and marks (series key → its Quality), with `sitegen serve`'s held
    analysis: made again only for a series whose runs or regressions changed since the last
    build (~0.5 s at 100k runs for all of them)."""
    return lookup.memo(_series_qualities)("")


def _series_qualities(lookup: SiteLookup, _: str) -> dict[str, Quality]:
    by_series = lookup.memo(_runs_by_series)("")
    regressions = lookup.memo(_regressions)("")
    stop_if_superseded()
    # A regression's reason may change with another kernel's steps (its cause): each series'
    # reasons, found from the few runs after a regression, not by looking at every run.
    reasons: dict[str, list[tuple[str, str]]] = {}
    for digest, reason in sorted(regressions.items()):
        reasons.setdefault(lookup.runs[digest].series_key, []).append((digest, reason))
    # A series of a kernel unchanged since the last build is the very tuple it was then.
    groups: dict[str, tuple[tuple[Any, ...], Hashable]] = {
        key: (runs, tuple(reasons.get(key, ()))) for key, runs in by_series.items()
    }
    return per_group(lookup.analysis.held, "quality", groups, lookup.memo(_series_quality))


def marks_of(lookup: SiteLookup, digest: str) -> tuple[Mark, ...]:
    """A run's marks, in KINDS order."""
    return _quality_of(lookup, digest).of(digest)


def run_figures(lookup: SiteLookup, digest: str) -> Figures | None:
    """A run's speed-of-light figures; None where none is stated."""
    return _quality_of(lookup, digest).figures.get(digest)


def _quality_of(lookup: SiteLookup, digest: str) -> Quality:
    """A Quality that holds the run's figures and marks: the whole catalog's where it is made
    (every full build makes it first), else that of the run's series alone: the same marks
    (analysis/quality.py's `assess`), for the pages `sitegen serve` publishes ahead of the
    site, which would wait ~0.6 s on the real catalog for every run's. With a held analysis
    the whole catalog's is never made: each series' is held (`series_qualities`)."""
    run = lookup.runs.get(digest)
    if lookup.analysis.held is not None:
        if run is None:
            return NO_QUALITY
        if lookup.made(_series_qualities):
            return series_qualities(lookup)[run.series_key]
        return lookup.memo(_series_quality)(run.series_key)
    if run is None or lookup.made(_run_quality):
        return run_quality(lookup)
    return lookup.memo(_series_quality)(run.series_key)


NO_QUALITY = Quality({}, {})


def _series_quality(lookup: SiteLookup, series_key: str) -> Quality:
    runs = lookup.memo(_runs_by_series)("")[series_key]
    regressions = lookup.memo(_regressions)("")
    return assess(
        lookup.analysis,
        lookup.catalog,
        speed_of_light(lookup.analysis, lookup.catalog, runs),
        {run.digest: regressions[run.digest] for run in runs if run.digest in regressions},
        runs,
    )


def _runs_by_series(lookup: SiteLookup, _: str) -> dict[str, tuple[RunFacts, ...]]:
    """Each series' runs, in digest order (as `lookup.runs` lists them)."""
    held = lookup.analysis.held
    if held is None:
        return _series_runs(lookup.runs.values())
    # Merged from each kernel's, held while the kernel is the same object: ~0.1 s at 100k
    # runs less than reading every run. A series measured on two kernels' workloads is in both.
    found: dict[str, tuple[RunFacts, ...]] = {}
    merged = set()
    for kernel in lookup.analysis.kernels:
        # The kernel's runs in digest order, as the held analysis keeps them.
        make = functools.partial(_series_runs, held.kernel_runs[kernel.key])
        for key, runs in derived(held, "series runs", kernel, None, make).items():
            if key in found:
                found[key] = found[key] + runs
                merged.add(key)
            else:
                found[key] = runs
    for key in merged:
        found[key] = tuple(sorted(found[key], key=operator.attrgetter("digest")))
    return found


def _series_runs(runs: Iterable[RunFacts]) -> dict[str, tuple[RunFacts, ...]]:
    """`runs` by series, each series' in their order."""
    found: dict[str, list[RunFacts]] = {}
    for run in runs:
        found.setdefault(run.series_key, []).append(run)
    return {key: tuple(series) for key, series in found.items()}


def _regressions(lookup: SiteLookup, _: str) -> dict[str, str]:
    """The reason of each run that sits after a regression of its series, by digest."""
    found = {}
    for digest in every_step(lookup).after:
        line = regression_line(lookup, lookup.runs[digest])
        if line is not None:
            found[digest] = line[0].removeprefix(AFTER_PREFIX)
    return found


def methodology_href(lookup: SiteLookup, kind: str = "") -> str:
    """The methodology page, at a mark's section where one is named."""
    return lookup.urls.href(METHODOLOGY) + (f"#mark-{kind}" if kind else "")


class MarkLine(NamedTuple):
    """One mark as a page shows it."""

    kind: str
    title: str  # `no spread`
    reason: str  # one line
    methodology: str  # the rule, on the methodology page
    other: Link | None  # disagrees: the other run


def mark_lines(lookup: SiteLookup, digest: str) -> tuple[MarkLine, ...]:
    return tuple(_mark_line(lookup, mark) for mark in marks_of(lookup, digest))


def _mark_line(lookup: SiteLookup, mark: Mark) -> MarkLine:
    other = None
    if mark.other:
        other = Link(f"run {short(mark.other)}", lookup.urls.link(mark.other))
    return MarkLine(mark.kind, mark.title, mark.reason, methodology_href(lookup, mark.kind), other)


def marks_key(lookup: SiteLookup, runs: Iterable[RunFacts]) -> str:
    """What a page shows of these runs' marks, for its incremental key: a mark can change
    with another run (a sweep's, a disagreeing environment's); "" unless keyed."""
    if not lookup.inputs.keyed:
        return ""
    return "\n".join(
        f"{run.digest} {mark.kind} {mark.other} {mark.reason}"
        for run in runs
        for mark in marks_of(lookup, run.digest)
    )


def mark_words(lookup: SiteLookup, digest: str) -> tuple[str, ...]:
    """`no spread: p20 = …`: each mark in a line of text (a chart's hover)."""
    return tuple(f"{mark.title}: {mark.reason}" for mark in marks_of(lookup, digest))


def marks_json(lookup: SiteLookup, digest: str) -> list[dict[str, Any]]:
    """A run's marks in its JSON twins."""
    found = []
    for mark in marks_of(lookup, digest):
        item: dict[str, Any] = {
            "kind": mark.kind,
            "reason": mark.reason,
            "methodology": methodology_href(lookup, mark.kind),
        }
        if mark.other:
            item |= {"otherRun": mark.other, "otherUrl": lookup.urls.link(mark.other)}
        found.append(item)
    return found


# --- a run's figures --------------------------------------------------------------------------


class SpeedOfLight(NamedTuple):
    """How close a run is to its GPU's limits, as its page says it."""

    facts: tuple[Fact, ...]  # bytes, GB/s, share of peak; FLOPs, TFLOP/s, share of peak
    note: str  # why nothing is stated, or how the GPU's peak was matched
    datasheet: Link | None  # the vendor document the peak is from
    methodology: str


def speed_of_light_block(lookup: SiteLookup, run: RunFacts) -> SpeedOfLight:
    figures = run_figures(lookup, run.digest)
    methodology = methodology_href(lookup) + "#speed-of-light"
    if figures is None:
        return SpeedOfLight((), _why_none(lookup, run), None, methodology)
    facts = []
    work = figures.work
    if work.bytes_moved is not None and figures.achieved_gbs is not None:
        facts.append(Fact("Bytes moved at least once", byte_size(work.bytes_moved)))
        facts.append(Fact("Achieved bandwidth", f"{figures.achieved_gbs:,.1f} GB/s"))
        if figures.bandwidth_share is not None and figures.peak is not None:
            facts.append(
                Fact(
                    "Of peak memory bandwidth",
                    f"{percent(figures.bandwidth_share)} of {figures.peak.bandwidth_gbs:,.0f} GB/s",
                )
            )
    if work.flops is not None and figures.achieved_tflops is not None:
        facts.append(Fact("Work (2·M·N·K)", f"{work.flops:,} FLOP ({work.dtype})"))
        facts.append(Fact("Achieved throughput", f"{figures.achieved_tflops:,.2f} TFLOP/s"))
        if figures.throughput_share is not None and figures.peak_tflops is not None:
            facts.append(
                Fact(
                    f"Of peak dense {work.dtype} throughput",
                    f"{percent(figures.throughput_share)} of {figures.peak_tflops:,.1f} TFLOP/s",
                )
            )
    return SpeedOfLight(tuple(facts), _peak_note(figures), _datasheet(figures.peak), methodology)


def _why_none(lookup: SiteLookup, run: RunFacts) -> str:
    if run.status != "passed":
        return "No figures: the run did not pass."
    if run.pass_name not in SINGLE_PASSES:
        return (
            f"No figures for a {run.pass_name} pass: it moves what autograd keeps as well as "
            "the tensors the format lists."
        )
    work = lookup.memo(_work)(run.workload)
    if work is None:
        return "No figures: the run's workload case or operation is not in the catalog."
    reasons = [r for r in (work.why_no_bytes, work.why_no_flops) if r]
    if work.bytes_moved is not None or work.flops is not None:
        return "No figures: the run has no latency."
    return f"No figures: {reasons[0] if reasons else 'nothing stated'}."


def _work(lookup: SiteLookup, workload_digest: str) -> Any:
    workload = lookup.catalog.get(workload_digest, "WorkloadCase")
    if workload is None:
        return None
    operation = lookup.catalog.get(workload.spec["operationSpecDigest"], "OperationSpec")
    return None if operation is None else work_of(operation.spec, workload.spec)


def _peak_note(figures: Figures) -> str:
    peak = figures.peak
    if peak is None:
        return "Its GPU is not in the reviewed table: no share of peak is stated."
    if peak.matched:
        return f"Peaks of the {peak.product} {peak.form}, as its vendor's document states them."
    return (
        f"The environment names no form factor the table knows: the highest figure of the "
        f"{peak.product} ({peak.form}), so the share of peak is a lower bound."
    )


def _datasheet(peak: Peak | None) -> Link | None:
    if peak is None:
        return None
    row = peak.rows[0]
    return Link(row.title, row.url)


def byte_size(count: int) -> str:
    """`67.1 MB (67,125,248 bytes)`: decimal units, as bandwidth is."""
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if count >= size:
            return f"{count / size:,.1f} {unit} ({count:,} bytes)"
    return f"{count:,} bytes"


def percent(share: float) -> str:
    return f"{share * 100:.1f} %"


def figures_json(lookup: SiteLookup, digest: str) -> dict[str, Any] | None:
    """A run's figures in its JSON twin; None where none is stated."""
    figures = run_figures(lookup, digest)
    if figures is None:
        return None
    peak = figures.peak
    return {
        "bytesMoved": figures.work.bytes_moved,
        "flops": figures.work.flops,
        "dtype": figures.work.dtype or None,
        "achievedGBs": figures.achieved_gbs,
        "achievedTFLOPs": figures.achieved_tflops,
        "peakGBs": peak.bandwidth_gbs if peak else None,
        "peakTFLOPs": figures.peak_tflops,
        "bandwidthShare": figures.bandwidth_share,
        "throughputShare": figures.throughput_share,
        "gpu": {"product": peak.product, "form": peak.form, "matched": peak.matched}
        if peak
        else None,
    }


# --- the data-quality page --------------------------------------------------------------------


class CountRow(NamedTuple):
    where: Link  # a source, GPU or kernel, linked to where its runs are
    runs: int
    counts: tuple[int, ...]  # marked runs of each kind, in KINDS order
    unmarked: str  # the share of its runs with no mark


class MarkedRun(NamedTuple):
    run: Link
    kernel: Link
    gpu: str
    shape: str
    reason: str
    other: Link | None


class MarkSection(NamedTuple):
    kind: str
    title: str
    methodology: str
    total: int
    runs: tuple[MarkedRun, ...]  # the newest EXAMPLES (every one for over the limit)


class QualityContext(NamedTuple):
    meta: PageMeta
    kinds: tuple[tuple[str, str, str], ...]  # (kind, title, methodology href)
    runs: int
    unmarked: int
    unmarked_share: str
    totals: tuple[int, ...]
    by_source: tuple[CountRow, ...]
    by_gpu: tuple[CountRow, ...]
    by_kernel: tuple[CountRow, ...]
    sections: tuple[MarkSection, ...]
    methodology: str


def unmarked_share(lookup: SiteLookup) -> tuple[int, int]:
    """(runs with no mark, runs)."""
    if lookup.analysis.held is not None:  # counted a series at a time: no run is read
        marked = sum(len(quality.marks) for quality in series_qualities(lookup).values())
    else:
        marked = len(run_quality(lookup).marks)
    return len(lookup.runs) - marked, len(lookup.runs)


def quality_page(lookup: SiteLookup) -> Page:
    unmarked, total = unmarked_share(lookup)
    if lookup.analysis.held is None:
        quality = run_quality(lookup)
        counted_by = tuple(_tally(quality, lookup.runs.values(), key) for key in _COUNTED_BY)
    else:
        quality, counted_by = _held_tallies(lookup)
    sources_href = lookup.urls.href(SOURCES)
    by_source = _rows(counted_by[0], lambda s: Link(s or "no source", sources_href))
    by_gpu = _rows(counted_by[1], _environment_link(lookup))
    by_kernel = _rows(counted_by[2], lookup.kernel_link)
    # Each kind's marked runs, in the marks' order: one pass over them all, not one a kind.
    by_kind: dict[str, list[tuple[str, Mark]]] = {kind: [] for kind in KINDS}
    for digest, marks in quality.marks.items():
        for mark in marks:
            by_kind.setdefault(mark.kind, []).append((digest, mark))
    totals = {kind: len(marked) for kind, marked in by_kind.items()}
    sections = tuple(_section(lookup, kind, by_kind[kind]) for kind in KINDS)
    meta = lookup.meta(
        "Data quality",
        DATA_QUALITY,
        f"Data-quality marks of the catalog's {counted(total, 'run')}: "
        f"{share(unmarked, total)} carry no mark.",
        "kernels",
    )
    context = QualityContext(
        meta=meta,
        kinds=tuple((kind, TITLES[kind], methodology_href(lookup, kind)) for kind in KINDS),
        runs=total,
        unmarked=unmarked,
        unmarked_share=share(unmarked, total),
        totals=tuple(totals[kind] for kind in KINDS),
        by_source=by_source,
        by_gpu=by_gpu,
        by_kernel=by_kernel,
        sections=sections,
        methodology=methodology_href(lookup),
    )
    twin = {
        "runs": total,
        "unmarked": unmarked,
        "marks": {kind: totals[kind] for kind in KINDS},
        "bySource": [_row_json(row) for row in by_source],
        "byGpu": [_row_json(row) for row in by_gpu],
        "byKernel": [_row_json(row) for row in by_kernel],
        "runsMarked": {
            kind: [
                {"run": digest, "url": lookup.urls.link(digest), "reason": mark.reason}
                for digest, mark in by_kind[kind]
            ]
            for kind in KINDS
        },
    }
    return Page(DATA_QUALITY, "quality.html", context, twin)


def _environment_link(lookup: SiteLookup) -> Callable[[str], Link]:
    """An environment by its GPU's label, and its name where two share the label (two hosts
    of one GPU: upstream's CI runner and a machine measured for this catalog)."""
    labels = Counter(
        lookup.gpu_label(e.digest) for e in lookup.catalog.of_kind("ExecutionEnvironment")
    )

    def link(digest: str) -> Link:
        label = lookup.gpu_label(digest)
        entry = lookup.catalog.get(digest)
        if labels[label] > 1 and entry is not None:
            label = f"{label} ({entry.name})"
        return Link(label, lookup.urls.link(digest))

    return link


def _source(run: RunFacts) -> str:
    return run.source


def _environment(run: RunFacts) -> str:
    return run.environment


def _kernel(run: RunFacts) -> str:
    return run.kernel_key


_COUNTED_BY = (_source, _environment, _kernel)


def share(part: int, whole: int) -> str:
    return f"{part / whole * 100:.1f} %" if whole else "—"


class _Tally(NamedTuple):
    """Runs, marked runs and marks of each kind, per source, environment or kernel."""

    runs: Counter[str]
    marked: Counter[str]
    kinds: dict[str, Counter[str]]


def _tally(quality: Quality, runs: Iterable[RunFacts], key: Callable[[RunFacts], str]) -> _Tally:
    totals: Counter[str] = Counter()
    marked_runs: Counter[str] = Counter()
    kinds: dict[str, Counter[str]] = {}
    for run in runs:
        where = key(run)
        totals[where] += 1
        marks = quality.of(run.digest)
        if marks:
            marked_runs[where] += 1
        for mark in marks:
            kinds.setdefault(where, Counter())[mark.kind] += 1
    return _Tally(totals, marked_runs, kinds)


def _held_tallies(lookup: SiteLookup) -> tuple[Quality, tuple[_Tally, ...]]:
    """With a held analysis: the marked runs' Quality (every marked run's marks, by digest,
    without the figures) and `_tally` by each of `_COUNTED_BY`, summed from each series'
    tallies, held while its Quality is the very same object (made again whenever its runs
    or regressions change: `series_qualities`). ~0.3 s less at 100k runs than reading every
    run."""
    qualities = series_qualities(lookup)
    held = lookup.analysis.held

    def make(series: str) -> tuple[_Tally, ...]:
        runs = lookup.memo(_runs_by_series)("")[series]
        return tuple(_tally(qualities[series], runs, key) for key in _COUNTED_BY)

    groups: dict[str, tuple[tuple[Any, ...], Hashable]] = {
        series: ((quality,), None) for series, quality in qualities.items()
    }
    summed = tuple(_Tally(Counter(), Counter(), {}) for _ in _COUNTED_BY)
    marks: dict[str, tuple[Mark, ...]] = {}
    for series, tallies in per_group(held, "quality tallies", groups, make).items():
        marks.update(qualities[series].marks)
        for into, tally in zip(summed, tallies, strict=True):
            into.runs.update(tally.runs)
            into.marked.update(tally.marked)
            for where, kinds in tally.kinds.items():
                into.kinds.setdefault(where, Counter()).update(kinds)
    return Quality({}, {digest: marks[digest] for digest in sorted(marks)}), summed


def _rows(tally: _Tally, link: Callable[[str], Link]) -> tuple[CountRow, ...]:
    """Runs, marks of each kind and the share unmarked, per place; most marked first."""
    rows = []
    for where, count in tally.runs.items():
        marked = tally.kinds.get(where, Counter())
        unmarked = share(count - tally.marked[where], count)
        rows.append(CountRow(link(where), count, tuple(marked[k] for k in KINDS), unmarked))
    # Then by href: two places of one name keep one order, whatever order their runs came in.
    return tuple(sorted(rows, key=lambda r: (-sum(r.counts), r.where.text.lower(), r.where.href)))


def _row_json(row: CountRow) -> dict[str, Any]:
    return {
        "name": row.where.text,
        "url": row.where.href,
        "runs": row.runs,
        "marks": dict(zip(KINDS, row.counts, strict=True)),
    }


def _section(lookup: SiteLookup, kind: str, of_kind: list[tuple[str, Mark]]) -> MarkSection:
    """A kind's section: `of_kind`, its marked runs (digest, mark)."""
    total = len(of_kind)
    marked = [(lookup.runs[digest], mark) for digest, mark in of_kind]
    marked.sort(key=lambda rm: (rm[0].observed_at, rm[0].digest), reverse=True)
    shown = marked if kind == OVER_LIMIT else marked[:EXAMPLES]
    return MarkSection(
        kind,
        TITLES[kind],
        methodology_href(lookup, kind),
        total,
        tuple(
            MarkedRun(
                Link(short(run.digest), lookup.urls.link(run.digest)),
                lookup.kernel_link(run.kernel_key),
                lookup.gpu_label(run.environment),
                f"{run.pass_name} · {lookup.series_of(run).label} · {run.shape.label()}",
                mark.reason,
                Link(f"run {short(mark.other)}", lookup.urls.link(mark.other))
                if mark.other
                else None,
            )
            for run, mark in shown
        ),
    )
