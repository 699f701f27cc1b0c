"""The regressions page and its Atom feed: every step found in a series' history
(analysis/regressions.py), newest first, filterable by kernel, GPU, pass and kind, each linked
to its history chart and to the two commits it falls between."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, NamedTuple

from sitegen.analysis.kernels import Kernel, per_group
from sitegen.analysis.regressions import Found
from sitegen.model.wording import counted
from sitegen.site.feed import FEED_SIZE, Feed, FeedEntry
from sitegen.site.format import metric_name, significant
from sitegen.site.history import (
    cause_of,
    commit_link,
    compare_link,
    every_step,
    found_href,
    kernel_history,
    place,
    step_key,
    step_words,
)
from sitegen.site.lookup import SiteLookup
from sitegen.site.records import Link, Page, PageMeta
from sitegen.site.urls import REGRESSIONS, REGRESSIONS_FEED


class RegressionRow(NamedTuple):
    kind: str  # regression | improvement
    cause: str  # code | machine (analysis/regressions.py `cause`)
    when: str  # the first run after the step: its commit's date
    kernel: Link
    gpu: str
    pass_name: str
    series: str
    shape: str
    metric: str
    change: str  # `1.32× slower`
    before: Link  # the last commit before the step
    after: Link  # the first commit after it
    compare: Link  # the commits between, on GitHub
    history: Link


class RegressionsContext(NamedTuple):
    meta: PageMeta
    threshold: str  # `1.1×`
    regressions: int
    of_code: int  # regressions the code made (not the machine's)
    improvements: int
    kernels: tuple[str, ...]  # the filters' choices
    gpus: tuple[str, ...]
    passes: tuple[str, ...]
    rows: tuple[RegressionRow, ...]
    feed: str  # the feed's href


def regressions_page(lookup: SiteLookup) -> Page:
    found = every_step(lookup).found
    rows = _rows(lookup, found)
    regressions = sum(1 for row in rows if row.kind == "regression")
    of_code = sum(1 for row in rows if row.kind == "regression" and row.cause == "code")
    threshold = f"{significant(lookup.inputs.regression_threshold)}×"
    meta = lookup.meta(
        "Regressions and improvements",
        REGRESSIONS,
        f"Every step found in a series' history: {counted(regressions, 'regression')} "
        f"({of_code} of the code) and {counted(len(rows) - regressions, 'improvement')}, "
        "newest first.",
        "kernels",
    )
    context = RegressionsContext(
        meta=meta,
        threshold=threshold,
        regressions=regressions,
        of_code=of_code,
        improvements=len(rows) - regressions,
        kernels=tuple(sorted({row.kernel.text for row in rows})),
        gpus=tuple(sorted({row.gpu for row in rows})),
        passes=tuple(sorted({row.pass_name for row in rows})),
        rows=rows,
        feed=lookup.urls.href(REGRESSIONS_FEED),
    )
    twin = {
        "threshold": lookup.inputs.regression_threshold,
        "steps": [
            {
                "kind": row.kind,
                "cause": row.cause,
                "at": row.when,
                "kernel": row.kernel.text,
                "gpu": row.gpu,
                "pass": row.pass_name,
                "series": row.series,
                "shape": row.shape,
                "metric": row.metric,
                "factor": item.step.factor,
                "before": item.last_before.commit or None,
                "after": item.first_after.commit or None,
                "beforeRun": item.last_before.run.digest,
                "afterRun": item.first_after.run.digest,
                "history": row.history.href,
            }
            for row, (_, item) in zip(rows, found, strict=True)
        ],
    }
    return Page(REGRESSIONS, "regressions.html", context, twin)


def _rows(lookup: SiteLookup, found: tuple[tuple[Kernel, Found], ...]) -> tuple[RegressionRow, ...]:
    """A row of each step, in `found`'s order. With `sitegen serve`'s held analysis, a
    kernel's rows are the last build's while the kernel and its steps are the very same
    objects and the steps' causes (which another kernel's steps may change) are the same:
    an edit makes one kernel's rows (~1,400 rows at 100k runs, ~0.03 s). What else a row
    shows (a kernel's title and path, a GPU's label) is of the site-wide inputs."""
    held = lookup.analysis.held if lookup.inputs.keyed else None
    if held is None:
        return tuple(_row(lookup, kernel, item) for kernel, item in found)
    causes = every_step(lookup).causes
    kernels = {kernel.key: kernel for kernel, _ in found}
    groups: dict[str, tuple[tuple[Any, ...], Hashable]] = {}
    for key, kernel in kernels.items():
        steps = kernel_history(lookup, key).found
        groups[key] = ((kernel, *steps), tuple(causes.get(step_key(i), "code") for i in steps))

    def make(key: str) -> dict[int, RegressionRow]:
        kernel = kernels[key]  # its steps are held by its group's members: their ids hold
        return {id(item): _row(lookup, kernel, item) for item in kernel_history(lookup, key).found}

    made = per_group(held, "regression rows", groups, make)
    return tuple(made[kernel.key][id(item)] for kernel, item in found)


def _row(lookup: SiteLookup, kernel: Kernel, item: Found) -> RegressionRow:
    history = item.history
    return RegressionRow(
        kind="regression" if item.regression else "improvement",
        cause=cause_of(lookup, item),
        when=item.first_after.when[:10],
        kernel=lookup.kernel_link(kernel.key),
        gpu=lookup.gpu_label(history.environment),
        pass_name=history.pass_name,
        series=history.series.label,
        shape=history.shape.label(),
        metric=metric_name(history.metric),
        change=step_words(item),
        before=commit_link(item.last_before),
        after=commit_link(item.first_after),
        compare=compare_link(item),
        history=Link("history", found_href(lookup, kernel.key, item)),
    )


def regressions_feed(lookup: SiteLookup) -> Feed:
    """The newest regressions of the code (improvements, and what the machine did, are not
    news to watch for), at most FEED_SIZE."""
    urls = lookup.urls
    entries = []
    for kernel, item in every_step(lookup).found:
        if not item.regression or cause_of(lookup, item) != "code":
            continue
        history = item.history
        page = found_href(lookup, kernel.key, item)
        entries.append(
            FeedEntry(
                title=f"{kernel.title} · {history.series.label} · {history.pass_name}: "
                f"{step_words(item)}",
                url=urls.absolute(page.removeprefix(urls.prefix)),
                id=f"urn:kernelindex:regression:{item.last_before.run.digest}:"
                f"{item.first_after.run.digest}",
                updated=item.first_after.when[:19] + "Z",
                summary=f"{metric_name(history.metric).capitalize()} of {history.series.label} at "
                f"{history.shape.label()} on {lookup.gpu_label(history.environment)}: "
                f"{step_words(item)} between {place(item.last_before)} and "
                f"{place(item.first_after)}.",
            )
        )
        if len(entries) == FEED_SIZE:
            break
    return Feed(
        title="kernelindex: regressions",
        url=urls.absolute(REGRESSIONS),
        self_url=urls.absolute(REGRESSIONS_FEED),
        updated=entries[0].updated if entries else "1970-01-01T00:00:00Z",
        entries=tuple(entries),
    )
