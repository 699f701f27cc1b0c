"""History pages: a kernel's series run after run, commit by commit (analysis/history.py).

Per kernel and GPU, `kernels/<kernel>/history/<gpu>/` lists the shapes measured more than once
and the steps found there; each shape's page (`…/<workload>/`) charts every series' value across
commits, each point a median with its p20–p80 band, release runs marked, the source's reference
commit drawn as a line, and the steps (analysis/regressions.py) marked where they happened,
with every run in a table below. Kernel pages draw each series' newest run and link here, so
they do not grow with the number of commits.
"""

from __future__ import annotations

import functools
import hashlib
from collections import defaultdict
from typing import Any, NamedTuple

from sitegen.analysis.history import HistoryPoint, SeriesHistory, cell_histories, in_history_order
from sitegen.analysis.kernels import Cohort, Kernel, RunFacts, derived, kernel_of_cohorts
from sitegen.analysis.regressions import Found, cause, shared_by, steps_of
from sitegen.model.digest import short
from sitegen.model.names import short_hash
from sitegen.model.wording import counted
from sitegen.site.charts import CONFIG, base_layout, plotly_text, styles_for
from sitegen.site.format import metric_name, scale_for, times, wording
from sitegen.site.lookup import SiteLookup, run_anchor
from sitegen.site.records import LazyPage, Link, Page, PageMeta, Planner, held_planner, kept_pages
from sitegen.site.urls import history_path

STEP_COLOURS = {True: "#B91C1C", False: "#047857"}  # regression, improvement


class KernelHistory(NamedTuple):
    """What a kernel's history shows, made once a build (`kernel_history`)."""

    histories: tuple[SeriesHistory, ...]
    found: tuple[Found, ...]  # newest first


def kernel_history(lookup: SiteLookup, kernel_key: str) -> KernelHistory:
    """The kernel's histories and their steps, once a build (shared by its pages)."""
    return lookup.memo(_kernel_history)(kernel_key)


def _kernel_history(lookup: SiteLookup, kernel_key: str) -> KernelHistory:
    """With a held analysis, the last build's while the kernel is the very same object, and
    of a changed kernel, each cohort's histories and steps while its runs are (~0.05 s for a
    kernel of ~2,700 runs at 100k runs, where one changed)."""
    kernel = lookup.kernels[kernel_key]
    threshold = lookup.inputs.regression_threshold
    analysis = lookup.analysis
    make = functools.partial(
        kernel_of_cohorts,
        analysis.held,
        "history",
        kernel,
        analysis.cohorts,
        functools.partial(_cohort_history, threshold),
        _history_of,
        threshold,
    )
    return derived(analysis.held, "history", kernel, threshold, make)


# A cohort's histories, each with its steps (in no order).
CohortHistory = tuple[tuple[SeriesHistory, tuple[Found, ...]], ...]


def _cohort_history(threshold: float, kernel: Kernel, runs: list[RunFacts]) -> CohortHistory:
    return tuple(
        (history, steps_of([history], threshold) if len(history.points) > 1 else ())
        for history in cell_histories(kernel, runs)
    )


def _history_of(kernel: Kernel, parts: list[tuple[Cohort, CohortHistory]]) -> KernelHistory:
    """The kernel's histories in order, and their steps newest first, as `steps_of` finds them
    in every history in that order."""
    steps = {id(history): found for _, part in parts for history, found in part}
    histories = in_history_order(kernel, (history for _, part in parts for history, _ in part))
    found = [step for history in histories for step in steps[id(history)]]
    found.sort(key=_newest, reverse=True)
    return KernelHistory(histories, tuple(found))


def _newest(item: Found) -> tuple[str, str]:
    """`steps_of`'s order of steps (newest first, reversed)."""
    return (item.first_after.when, item.first_after.run.digest)


class Steps(NamedTuple):
    """Every kernel's steps and what caused each, made once a build (`every_step`)."""

    found: tuple[tuple[Kernel, Found], ...]  # newest first
    causes: dict[tuple[str, int], str]  # (its history's series, GPU…, at) → code | machine
    after: dict[str, Found]  # run digest → the code regression it sits after, not since undone


def every_step(lookup: SiteLookup) -> Steps:
    """Every kernel's steps, newest first, each with its cause (the regressions page and its
    feed; the kernel and run pages' lines)."""
    return lookup.memo(_every_step)("")


def _every_step(lookup: SiteLookup, _: str) -> Steps:
    found = [
        (kernel, item)
        for kernel in lookup.analysis.kernels
        for item in kernel_history(lookup, kernel.key).found
    ]
    found.sort(key=lambda kf: (kf[1].first_after.when, kf[1].first_after.run.digest), reverse=True)
    shared = shared_by([item for _, item in found])
    causes = {step_key(item): cause(item, shared) for _, item in found}
    after: dict[str, Found] = {}
    for kernel in lookup.analysis.kernels:
        view = kernel_history(lookup, kernel.key)
        by_history: dict[tuple[str, ...], list[Found]] = defaultdict(list)
        for item in view.found:
            by_history[item.history.key].append(item)
        for steps in by_history.values():
            steps.sort(key=lambda f: f.step.at)
            history = steps[0].history
            current: Found | None = None
            for index, point in enumerate(history.points):
                for item in steps:
                    if item.step.at == index and causes[step_key(item)] == "code":
                        current = item if item.regression else None
                if current is not None:
                    after[point.run.digest] = current
    return Steps(tuple(found), causes, after)


def step_key(item: Found) -> tuple[str, int]:
    return ("/".join(item.history.key), item.step.at)


def cause_of(lookup: SiteLookup, item: Found) -> str:
    return every_step(lookup).causes.get(step_key(item), "code")


def kind_words(lookup: SiteLookup, item: Found) -> str:
    """`regression`, `improvement`, or a shift the machine made: what a step is called."""
    kind = "regression" if item.regression else "improvement"
    if cause_of(lookup, item) == "code":
        return kind
    return f"{kind} of the machine or harness, not the code"


# --- where things are ------------------------------------------------------------------------


def history_href(lookup: SiteLookup, kernel_key: str, environment: str, workload: str = "") -> str:
    return lookup.urls.href(_history_path(lookup, kernel_key, environment, workload))


def _history_path(lookup: SiteLookup, kernel_key: str, environment: str, workload: str) -> str:
    urls = lookup.urls
    kernel_path = urls.path_of(kernel_key) or ""
    workload_path = ""
    if workload:
        workload_path = urls.path_of(workload) or short(workload)
    return history_path(kernel_path, urls.path_of(environment) or short(environment), workload_path)


def series_anchor(history: SeriesHistory) -> str:
    """The id of a series' table on a shape's history page (pass, metric and series)."""
    return anchor_of(history.pass_name, history.protocol, history.metric, history.series.key)


def anchor_of(pass_name: str, protocol: str, metric: str, series_key: str) -> str:
    return "history-" + short_hash("/".join((pass_name, protocol, metric, series_key)))


def cell_history(lookup: SiteLookup, run: RunFacts, metric: str) -> Link:
    """A series' history at the cell of `run` (a kernel page's ranking row, a run page)."""
    page = history_href(lookup, run.kernel_key, run.environment, run.workload)
    return Link(
        "history", f"{page}#{anchor_of(run.pass_name, run.protocol, metric, run.series_key)}"
    )


def found_href(lookup: SiteLookup, kernel_key: str, item: Found) -> str:
    history = item.history
    page = history_href(lookup, kernel_key, history.environment, history.workload)
    return f"{page}#{series_anchor(history)}"


def commit_link(point: HistoryPoint) -> Link:
    revision = point.run.revision
    if revision is None or not revision.commit:
        return Link("—")
    return Link(revision.commit[:7], f"{revision.repository}/commit/{revision.commit}")


def compare_link(item: Found) -> Link:
    before, after = item.last_before.run.revision, item.first_after.run.revision
    if before is None or after is None or not before.commit or not after.commit:
        return Link("")
    return Link(
        "the commits between",
        f"{after.repository}/compare/{before.commit}...{after.commit}",
    )


def step_words(item: Found) -> str:
    """`1.32× slower`, `1.25× less`."""
    words = wording(item.history.metric)
    factor = item.step.factor
    return f"{times(factor)} {words.worse}" if factor > 1 else f"{times(1 / factor)} {words.better}"


def place(point: HistoryPoint) -> str:
    """`abc1234 (2025-10-14)`, or the run's date alone where no commit is recorded."""
    commit = commit_link(point).text
    date = point.when[:10]
    return f"{commit} ({date})" if commit != "—" else date


class StepLine(NamedTuple):
    text: str  # `Liger, forward, latency: 1.32× slower between abc1234 (…) and def5678 (…)`
    regression: bool
    cause: str  # code | machine
    history: Link
    before: Link
    after: Link
    compare: Link


def step_line(lookup: SiteLookup, kernel: Kernel, item: Found, shape: bool = True) -> StepLine:
    history = item.history
    at = f" at {history.shape.label()}" if shape else ""
    kind = kind_words(lookup, item)
    text = (
        f"{history.series.label}, {history.pass_name} pass, {metric_name(history.metric)}{at}: "
        f"{step_words(item)} ({kind}) between {place(item.last_before)} and "
        f"{place(item.first_after)}"
    )
    return StepLine(
        text,
        item.regression,
        cause_of(lookup, item),
        Link("history", found_href(lookup, kernel.key, item)),
        commit_link(item.last_before),
        commit_link(item.first_after),
        compare_link(item),
    )


def regression_line(lookup: SiteLookup, run: RunFacts) -> tuple[str, Link] | None:
    """Where a run sits after a regression of its series, not since undone: the words and
    the history chart (kernel and run pages)."""
    kernel = lookup.kernels[run.kernel_key]
    item = every_step(lookup).after.get(run.digest)
    if item is None:
        return None
    return (
        f"after a regression: {step_words(item)} between {place(item.last_before)} and "
        f"{place(item.first_after)}",
        Link("history", found_href(lookup, kernel.key, item)),
    )


# --- the pages -------------------------------------------------------------------------------


class ShapeChoice(NamedTuple):
    link: Link
    runs: int
    commits: int
    steps: int


class HistoryPointRow(NamedTuple):
    anchor: str
    when: str
    commit: Link
    release: str  # `0.6.4`, `0.6.4 (release run)`
    value: str
    spread: str
    run: Link
    step: str  # at the first point after a step: `1.32× slower (regression)`
    reference: bool  # at the source's reference commit


class SeriesTable(NamedTuple):
    anchor: str
    label: str
    implementation: Link
    rows: tuple[HistoryPointRow, ...]


class HistoryChart(NamedTuple):
    element_id: str
    title: str
    note: str
    spec: dict[str, Any]
    fallback: str
    steps: tuple[StepLine, ...]
    tables: tuple[SeriesTable, ...]


class HistoryContext(NamedTuple):
    meta: PageMeta
    kernel: Link
    gpu: Link
    overview: Link  # the kernel and GPU's history page
    shape: str  # "" on the GPU's page
    shapes: tuple[ShapeChoice, ...]  # every shape with a history, to choose from
    steps: tuple[StepLine, ...]  # the GPU's page: every step on this GPU, newest first
    charts: tuple[HistoryChart, ...]  # a shape's page: one per pass and metric
    reference: str  # the source's reference commit, in words; ""


def history_pages(lookup: SiteLookup) -> list[LazyPage]:
    """Each kernel's history on each GPU, and at each shape measured more than once: planned
    where they are rendered. Each shows the runs of its kernel's histories on its GPU (its
    shapes' counts) and the causes of every step (a machine's shift is told across kernels)."""
    pages: list[LazyPage] = []
    steps = lookup.memo(_steps_signature)("") if lookup.inputs.keyed else ""
    held = lookup.analysis.held if lookup.inputs.keyed else None
    if held is None:
        plan = Planner(_history_page, lookup)
        for kernel in lookup.analysis.kernels:
            pages += _kernel_history_pages(
                lookup, kernel, _history_keys(lookup, kernel, steps), plan
            )
        return pages
    # With `sitegen serve`'s held analysis, a kernel's are the last build's page objects while
    # the kernel and its keys are the very same (`_history_keys`): skipped on sight (~950
    # pages at 100k runs).
    plan = held_planner(held, "history", _history_page, lookup)
    last, now = held.pages.get("history", {}), {}
    for kernel in lookup.analysis.kernels:
        keys = _history_keys(lookup, kernel, steps)
        found = last.get(kernel.key)
        if found is None or found[0] is not kernel or found[1] is not keys:
            made = _kernel_history_pages(lookup, kernel, keys, plan)
            if found is not None:  # its pages of unchanged keys (a subject names the kernel)
                made = kept_pages(made, found[2])
            found = (kernel, keys, made)
        now[kernel.key] = found
        pages += found[2]
    held.pages["history"] = now
    return pages


def _kernel_history_pages(
    lookup: SiteLookup, kernel: Kernel, keys: dict[str, str | None], plan: Planner
) -> list[LazyPage]:
    """A kernel's history page on each GPU, and at each shape measured more than once."""
    pages = []
    for environment, histories in lookup.memo(_gpu_histories)(kernel.key).items():
        where = (kernel.key, environment)
        key = keys[environment]
        workloads = sorted({h.workload for h in histories})
        for workload in ("", *workloads):  # "": the GPU's page, of every shape
            pages.append(
                LazyPage(
                    _history_path(lookup, kernel.key, environment, workload),
                    "history.html",
                    plan,
                    key and (f"{key}/{workload}" if workload else key),
                    subject=(where, workload),
                )
            )
    return pages


def _history_page(lookup: SiteLookup, page: tuple[tuple[str, str], str]) -> Page:
    where, workload = page
    return _shape_page(lookup, where, workload) if workload else _gpu_page(lookup, where)


def _history_keys(lookup: SiteLookup, kernel: Kernel, steps: str) -> dict[str, str | None]:
    """The key of the kernel's history page on each GPU: its runs and every step's cause;
    with `sitegen serve`'s held analysis, the last build's while the kernel is the very same
    object and its series' names are the same (~0.05 s at 100k runs for every kernel)."""

    def make() -> dict[str, str | None]:
        return {
            environment: lookup.page_key(
                "history",
                steps,
                kernel.key,
                environment,
                runs=[p.run for h in histories for p in h.points] if lookup.inputs.keyed else (),
            )
            for environment, histories in lookup.memo(_gpu_histories)(kernel.key).items()
        }

    held = lookup.analysis.held
    if held is None or not lookup.inputs.keyed:
        return make()
    return held.derived("history keys", kernel, (steps, lookup.kernel_signature(kernel.key)), make)


def _gpu_histories(lookup: SiteLookup, kernel_key: str) -> dict[str, list[SeriesHistory]]:
    """A kernel's histories of more than one point, by GPU, in GPU order."""
    by_gpu: dict[str, list[SeriesHistory]] = defaultdict(list)
    for history in kernel_history(lookup, kernel_key).histories:
        if len(history.points) > 1:
            by_gpu[history.environment].append(history)
    return dict(sorted(by_gpu.items()))


def _steps_signature(lookup: SiteLookup, _: str) -> str:
    causes = sorted(every_step(lookup).causes.items())
    return hashlib.sha256(repr(causes).encode()).hexdigest()


def _choices(lookup: SiteLookup, where: tuple[str, str]) -> tuple[ShapeChoice, ...]:
    """The shapes of a kernel's history on a GPU, as its pages list them (made once)."""
    kernel_key, environment = where
    histories = lookup.memo(_gpu_histories)(kernel_key)[environment]
    by_workload: dict[str, list[SeriesHistory]] = defaultdict(list)
    for history in histories:
        by_workload[history.workload].append(history)
    steps: dict[str, int] = defaultdict(int)
    for item in kernel_history(lookup, kernel_key).found:
        if item.history.environment == environment:
            steps[item.history.workload] += 1
    ordered = sorted(by_workload.items(), key=lambda i: (i[1][0].shape.axes, i[0]))
    return tuple(
        ShapeChoice(
            Link(
                same[0].shape.label(),
                history_href(lookup, kernel_key, environment, workload),
            ),
            len({p.run.digest for h in same for p in h.points}),
            len({p.commit for h in same for p in h.points if p.commit}),
            steps[workload],
        )
        for workload, same in ordered
    )


def _reference(histories: list[SeriesHistory]) -> str:
    for history in histories:
        reference = history.reference
        if reference:
            commit, at = reference
            return (
                f"Upstream's reference (golden) commit for this kernel is {commit[:7]} "
                f"({at[:10]}), drawn as a dashed line on each chart measured around it."
            )
    return ""


def _gpu_page(lookup: SiteLookup, where: tuple[str, str]) -> Page:
    kernel_key, environment = where
    kernel = lookup.kernels[kernel_key]
    histories = lookup.memo(_gpu_histories)(kernel_key)[environment]
    path = _history_path(lookup, kernel.key, environment, "")
    gpu = lookup.gpu_label(environment)
    found = kernel_history(lookup, kernel_key).found
    here = [item for item in found if item.history.environment == environment]
    shapes = lookup.memo(_choices)(where)
    regressions = sum(1 for item in here if item.regression)
    meta = lookup.meta(
        f"{kernel.title} history on {gpu}",
        path,
        f"{kernel.title} on {gpu}, commit by commit: {counted(len(shapes), 'shape')} measured "
        f"more than once, {counted(regressions, 'regression')} and "
        f"{counted(len(here) - regressions, 'improvement')} found.",
        "kernels",
    )
    context = HistoryContext(
        meta=meta,
        kernel=lookup.kernel_link(kernel.key),
        gpu=Link(gpu, lookup.urls.link(environment)),
        overview=Link(f"{kernel.title} history on {gpu}", lookup.urls.href(path)),
        shape="",
        shapes=shapes,
        steps=tuple(step_line(lookup, kernel, item) for item in here),
        charts=(),
        reference=_reference(histories),
    )
    twin = {
        "kernel": kernel.title,
        "environment": environment,
        "shapes": [
            {"shape": c.link.text, "url": c.link.href, "runs": c.runs, "commits": c.commits}
            for c in shapes
        ],
        "steps": [_step_json(item) for item in here],
    }
    return Page(path, "history.html", context, twin)


def _shape_page(lookup: SiteLookup, where: tuple[str, str], workload: str) -> Page:
    kernel_key, environment = where
    kernel = lookup.kernels[kernel_key]
    histories = lookup.memo(_gpu_histories)(kernel_key)[environment]
    found = kernel_history(lookup, kernel_key).found
    path = _history_path(lookup, kernel.key, environment, workload)
    gpu = lookup.gpu_label(environment)
    at_shape = [h for h in histories if h.workload == workload]
    shape = at_shape[0].shape.label()
    styles = styles_for([s.key for s in kernel.series])
    groups: dict[tuple[str, str, str, str], list[SeriesHistory]] = defaultdict(list)
    for history in at_shape:
        groups[(history.pass_name, history.protocol, history.metric, history.unit)].append(history)
    charts = tuple(
        _chart(lookup, kernel, same, styles, [f for f in found if f.history.key in keys])
        for same in groups.values()
        for keys in [{h.key for h in same}]
    )
    meta = lookup.meta(
        f"{kernel.title} history on {gpu} · {shape}",
        path,
        f"{kernel.title} on {gpu} at {shape}, every series commit by commit.",
        "kernels",
        charts=True,
    )
    context = HistoryContext(
        meta=meta,
        kernel=lookup.kernel_link(kernel.key),
        gpu=Link(gpu, lookup.urls.link(environment)),
        overview=Link(
            f"{kernel.title} history on {gpu}",
            history_href(lookup, kernel.key, environment),
        ),
        shape=shape,
        shapes=lookup.memo(_choices)(where),
        steps=(),
        charts=charts,
        reference=_reference(at_shape),
    )
    twin = {
        "kernel": kernel.title,
        "environment": environment,
        "workload": workload,
        "series": [
            {
                "series": h.series.key,
                "label": h.series.label,
                "pass": h.pass_name,
                "metric": h.metric,
                "unit": h.unit,
                "points": [
                    {
                        "run": p.run.digest,
                        "commit": p.commit or None,
                        "at": p.when,
                        "release": p.run.release or None,
                        "releaseRun": p.tag or None,
                        "value": p.value.centre,
                        "low": p.value.low,
                        "high": p.value.high,
                    }
                    for p in h.points
                ],
            }
            for h in at_shape
        ],
        "steps": [_step_json(f) for f in found if f.history.key in {h.key for h in at_shape}],
    }
    return Page(path, "history.html", context, twin)


def _step_json(item: Found) -> dict[str, Any]:
    history = item.history
    return {
        "kind": "regression" if item.regression else "improvement",
        "series": history.series.key,
        "label": history.series.label,
        "pass": history.pass_name,
        "metric": history.metric,
        "workload": history.workload,
        "factor": item.step.factor,
        "before": {"run": item.last_before.run.digest, "commit": item.last_before.commit or None},
        "after": {"run": item.first_after.run.digest, "commit": item.first_after.commit or None},
    }


def _rgba(colour: str, alpha: float) -> str:
    red, green, blue = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({red}, {green}, {blue}, {alpha})"


def _x(point: HistoryPoint) -> str:
    """Plotly's date form (it reads no zone): the instant's UTC date and time."""
    return point.when[:10] + " " + point.when[11:19]


def _chart(
    lookup: SiteLookup,
    kernel: Kernel,
    histories: list[SeriesHistory],
    styles: dict[str, tuple[str, str]],
    found: list[Found],
) -> HistoryChart:
    first = histories[0]
    values = [v for h in histories for p in h.points for v in (p.value.centre, p.value.low)]
    scale = scale_for(first.unit, [v for v in values if v is not None])
    words = metric_name(first.metric)
    measured = ("median " if first.metric == "latency" else "") + words
    run_href = lookup.urls.link
    traces: list[dict[str, Any]] = []
    tables = []
    for history in histories:
        colour = styles.get(history.series.key, ("#0072B2", "solid"))[0]
        points = history.points
        x = [_x(p) for p in points]
        banded = all(p.value.low is not None and p.value.high is not None for p in points)
        if banded:
            traces.append(
                {
                    "type": "scatter",
                    "mode": "lines",
                    "x": x,
                    "y": [p.value.high / scale.per for p in points],  # type: ignore[operator]
                    "line": {"width": 0, "color": colour},
                    "hoverinfo": "skip",
                    "showlegend": False,
                    "legendgroup": history.series.key,
                }
            )
            traces.append(
                {
                    "type": "scatter",
                    "mode": "lines",
                    "x": x,
                    "y": [p.value.low / scale.per for p in points],  # type: ignore[operator]
                    "line": {"width": 0, "color": colour},
                    "fill": "tonexty",
                    "fillcolor": _rgba(colour, 0.18),
                    "hoverinfo": "skip",
                    "showlegend": False,
                    "legendgroup": history.series.key,
                }
            )
        traces.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": plotly_text(history.series.label),
                "legendgroup": history.series.key,
                "x": x,
                "y": [p.value.centre / scale.per for p in points],
                "customdata": [run_href(p.run.digest) for p in points],
                "text": [plotly_text(_hover(p, scale)) for p in points],
                "hovertemplate": "%{text}<extra>click for the run</extra>",
                "line": {"color": colour, "width": 2},
                "marker": {
                    "color": colour,
                    "size": [10 if p.tag else 6 for p in points],
                    "symbol": ["diamond" if p.tag else "circle" for p in points],
                },
            }
        )
        steps_here = {f.step.at: f for f in found if f.history is history}
        tables.append(
            SeriesTable(
                series_anchor(history),
                history.series.label,
                lookup.link(history.series.implementation, history.series.label),
                tuple(
                    _row(lookup, point, scale, steps_here.get(index))
                    for index, point in reversed(list(enumerate(points)))
                ),
            )
        )
    for regression, by_code in ((True, True), (False, True), (True, False), (False, False)):
        marked = [
            f
            for f in found
            if f.regression is regression and (cause_of(lookup, f) == "code") is by_code
        ]
        if marked:
            name = "regression" if regression else "improvement"
            traces.append(
                {
                    "type": "scatter",
                    "mode": "markers",
                    "name": name if by_code else f"{name} (machine)",
                    "x": [_x(f.first_after) for f in marked],
                    "y": [f.first_after.value.centre / scale.per for f in marked],
                    "customdata": [run_href(f.first_after.run.digest) for f in marked],
                    "text": [
                        plotly_text(f"{f.history.series.label}: {step_words(f)}") for f in marked
                    ],
                    "hovertemplate": "%{text}<extra>click for the run</extra>",
                    "marker": {
                        "symbol": "triangle-up" if regression else "triangle-down",
                        "size": 16,
                        "color": "rgba(0, 0, 0, 0)",
                        "line": {
                            "color": STEP_COLOURS[regression] if by_code else "#6B7280",
                            "width": 2.5,
                        },
                    },
                }
            )
    shapes, annotations = _marks(histories)
    layout = base_layout(
        {"title": {"text": "commit date"}, "type": "date", "automargin": True},
        {
            "title": {"text": scale.unit},
            "automargin": True,
            "rangemode": "tozero",
            "ticksuffix": f" {scale.unit}",
        },
    ) | {
        "shapes": shapes,
        "annotations": annotations,
        "margin": {"l": 64, "r": 16, "t": 48, "b": 56},
    }
    identity = "/".join(
        [
            kernel.key,
            first.environment,
            first.workload,
            first.pass_name,
            first.protocol,
            first.metric,
        ]
    )
    count = sum(len(h.points) for h in histories)
    fallback = (
        f"Chart of {measured} ({scale.unit}) at each commit: "
        f"{counted(len(histories), 'implementation')}, {counted(count, 'run')}; "
        "the tables below list every value."
    )
    return HistoryChart(
        element_id="history-" + short_hash(identity),
        title=f"{first.pass_name.capitalize()} pass · {measured}",
        note=f"{measured.capitalize()} in {scale.unit} at each commit, band p20 – p80 · "
        "diamonds: release runs · dotted lines: releases · triangles: steps found",
        spec={"data": traces, "layout": layout, "config": CONFIG},
        fallback=fallback,
        steps=tuple(step_line(lookup, kernel, f, shape=False) for f in found),
        tables=tuple(tables),
    )


def _hover(point: HistoryPoint, scale: Any) -> str:
    parts = [point.commit[:7] if point.commit else "no commit recorded", point.when[:10]]
    if point.run.release:
        parts.append(f"v{point.run.release}" + (" release run" if point.tag else ""))
    value = point.value
    spread = (
        f" ({scale.number(value.low)} – {scale.number(value.high)})"
        if value.low is not None and value.high is not None
        else ""
    )
    return " · ".join(parts) + f": {scale.text(value.centre)}{spread}"


def _row(
    lookup: SiteLookup, point: HistoryPoint, scale: Any, item: Found | None
) -> HistoryPointRow:
    value = point.value
    revision = point.run.revision
    return HistoryPointRow(
        anchor=run_anchor(point.run.digest),
        when=point.when[:10],
        commit=commit_link(point),
        release=(point.run.release or "—") + (" (release run)" if point.tag else ""),
        value=scale.number(value.centre),
        spread=f"{scale.number(value.low)} – {scale.number(value.high)}"
        if value.low is not None and value.high is not None
        else "",
        run=Link(short(point.run.digest), lookup.urls.link(point.run.digest)),
        step=f"{step_words(item)} ({kind_words(lookup, item)})" if item else "",
        reference=bool(revision and revision.commit and revision.commit == revision.reference),
    )


def _marks(histories: list[SeriesHistory]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Vertical lines: each release run (dotted) and the source's reference commit (dashed)."""
    releases: dict[str, str] = {}
    for history in histories:
        for point in history.points:
            if point.tag:
                releases.setdefault(point.tag, _x(point))
    shapes: list[dict[str, Any]] = []
    annotations: list[dict[str, Any]] = []
    for tag, x in sorted(releases.items(), key=lambda item: item[1]):
        shapes.append(_vertical(x, "#6B7280", "dot"))
        annotations.append(_label(x, f"v{tag}", "#374151"))
    reference = next((h.reference for h in histories if h.reference), None)
    first = min(_x(h.points[0]) for h in histories)
    last = max(_x(h.points[-1]) for h in histories)
    if reference is not None:
        commit, at = reference
        x = at[:10] + " " + at[11:19]
        # Drawn where the chart has runs around it: a reference from before this series was
        # first measured would only stretch the axis (the page says where it is).
        if first <= x <= last:
            shapes.append(_vertical(x, "#7C3AED", "dash"))
            annotations.append(_label(x, f"golden {commit[:7]}", "#7C3AED"))
    return shapes, annotations


def _vertical(x: str, colour: str, dash: str) -> dict[str, Any]:
    return {
        "type": "line",
        "xref": "x",
        "yref": "paper",
        "x0": x,
        "x1": x,
        "y0": 0,
        "y1": 1,
        "line": {"color": colour, "width": 1.5, "dash": dash},
    }


def _label(x: str, text: str, colour: str) -> dict[str, Any]:
    """A line's label, upright beside it inside the plot: neighbouring releases do not
    overwrite each other."""
    return {
        "x": x,
        "xref": "x",
        "y": 1,
        "yref": "paper",
        "yanchor": "top",
        "xanchor": "right",
        "textangle": -90,
        "text": plotly_text(text),
        "showarrow": False,
        "font": {"size": 11, "color": colour},
    }
