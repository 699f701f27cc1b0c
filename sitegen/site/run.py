"""A run's page: its values spelled out, what was measured, how and where, its provenance and
identity, with the normalised document and derived links in its JSON twin."""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from sitegen.analysis.kernels import RunFacts
from sitegen.analysis.series import Cell, metrics_of, rank_cohort, statistic_of
from sitegen.analysis.verdicts import PointVerdict, judge
from sitegen.content.run_summary import LATENCY, Value
from sitegen.model.digest import short
from sitegen.model.text import neutralised
from sitegen.model.wording import counted
from sitegen.site.compare import compare_hrefs
from sitegen.site.credits import attribution_for
from sitegen.site.facts import scalar_facts
from sitegen.site.format import (
    against_baseline,
    display_unit,
    exact,
    metric_name,
    scale_for,
    times,
    when,
    wording,
)
from sitegen.site.history import cell_history, regression_line
from sitegen.site.lookup import SiteLookup, run_anchor
from sitegen.site.quality import (
    MarkLine,
    SpeedOfLight,
    figures_json,
    mark_lines,
    marks_json,
    marks_key,
    speed_of_light_block,
)
from sitegen.site.records import Fact, FactGroup, Identity, Link, Page, PageMeta
from sitegen.site.search import search_tags


class Headline(NamedTuple):
    """One metric of a run, spelled out: value, exact raw value, spread."""

    metric: str
    value: str
    exact: str
    spread: str


class Tensor(NamedTuple):
    name: str
    shape: str
    dtype: str


class Competitor(NamedTuple):
    """A run at the same workload, protocol and GPU, as the run page ranks it."""

    rank: str
    series: Link  # its display name, to its implementation
    value: str
    versus: str  # against the page's run: `1.25× slower`, `2.34× faster`, `this run`
    run: Link
    this: bool  # the page's own run (or the newer run that replaces it)
    compare: str = ""  # the compare page with the page's run and this one; "" for its own


class Ranking(NamedTuple):
    """Is this run the fastest here? Its rank among the newest run of each implementation at
    the same workload, protocol and GPU (one cohort: FORMAT.md §3)."""

    verdict: str  # one sentence: `Fastest of 3 …`, `2nd of 3: 1.25× slower than Liger …`
    measured: str  # `median latency (µs)`
    rows: tuple[Competitor, ...]
    chart: Link  # the run's row in its chart on the kernel page
    newer: Link | None  # a newer run of the same implementation here, which the chart shows
    question: str  # `Is this the fastest here?`; `the lowest` for memory


class RecordLine(NamedTuple):
    """One change of a comparison's record: from `since`, `holder`'s run held it."""

    since: str
    holder: Link
    run: Link
    this: bool  # the page's own run took the record here
    previous: Link | None  # whose record it took


class RunContext(NamedTuple):
    records: tuple[tuple[RecordLine, ...], ...]  # each comparison the run is in, newest first
    meta: PageMeta
    headlines: tuple[Headline, ...]
    ranking: Ranking | None
    status: str
    observed: str
    observed_iso: str
    summary: tuple[Fact, ...]
    labels: tuple[Fact, ...]
    tensors: tuple[Tensor, ...]
    scalars: tuple[Fact, ...]
    provenance: tuple[Fact, ...]
    groups: tuple[FactGroup, ...]
    description: str | None
    identity: Identity
    after_regression: str = ""  # `after a regression: 1.32× slower between …`; ""
    history: Link | None = None  # that regression in its history chart
    marks: tuple[MarkLine, ...] = ()  # its data-quality marks
    speed: SpeedOfLight | None = None  # how close to its GPU's limits


def run_page(lookup: SiteLookup, run: RunFacts) -> Page:
    entry = run.entry
    path = lookup.urls.path_of(run.digest) or ""
    document = entry.document  # a run's is parsed on each read: once here
    spec, metadata = document["spec"], document["metadata"]
    headlines = tuple(headline(value) for value in run.values)
    tensors, scalars = lookup.memo(workload_tables)(run.workload)
    kernel = lookup.kernel_of(run)
    gpu = lookup.gpu_label(run.environment)
    series = lookup.series_of(run)
    named = f"{series.label} ({run.provider})" if series.renamed else series.label
    summary = (
        Fact("Kernel", kernel.title, lookup.urls.link(kernel.key)),
        reference(lookup, "Implementation", run.implementation, named),
        Fact("Pass", run.pass_name),
        reference(lookup, "GPU", run.environment, gpu),
        reference(lookup, "Workload", run.workload, run.shape.label()),
        reference(lookup, "Protocol", run.protocol),
    )
    labels = tuple(Fact(k, v) for k, v in sorted((metadata.get("labels") or {}).items()))
    groups = [
        FactGroup("Protocol", lookup.protocol_facts(run.protocol)),
        FactGroup("Environment", lookup.environment_facts(run.environment)),
    ]
    native = spec.get("sourceNative") or {}
    if native.get("metrics"):
        # Named and written as the source wrote them: its own words, its exact numbers.
        metrics = tuple(Fact(k, repr(v), code=True) for k, v in sorted(native["metrics"].items()))
        groups.insert(0, FactGroup(f"Metrics as {native['source']} reports them", metrics))
    if "correctness" in spec:
        groups.append(FactGroup("Correctness", tuple(flat_facts(spec["correctness"]))))
    if "evidence" in spec:
        groups.append(FactGroup("Evidence", evidence_facts(spec["evidence"])))
    meta = lookup.meta(
        run.title,
        path,
        f"{run.title}: {headlines[0].value if headlines else run.status} "
        f"on {gpu}, {run.shape.label()}.",
        "runs",
        [run],
        # A replaced run is found through the newer one and its history, not by itself: the
        # index holds one run a cell, not a per-commit history of look-alike results.
        search=None
        if lookup.replaced(run)
        else search_tags(
            lookup, "Run", [run], title=f"{run.title} · {gpu} · {run.shape.label()}"
        )._replace(whole=False),
    )
    regression = regression_line(lookup, run)
    context = RunContext(
        records=record_history(lookup, run),
        meta=meta,
        headlines=headlines,
        ranking=ranking(lookup, run),
        status=run.status,
        observed=when(run.observed_at),
        observed_iso=run.observed_at,
        summary=summary,
        labels=labels,
        provenance=provenance_facts(lookup, run, spec, metadata),
        tensors=tensors,
        scalars=scalars,
        groups=tuple(g for g in groups if g.facts),
        description=metadata.get("description"),
        identity=lookup.identity(entry, spec),
        after_regression=regression[0] if regression else "",
        history=regression[1] if regression else None,
        marks=mark_lines(lookup, run.digest),
        speed=speed_of_light_block(lookup, run),
    )
    links = {
        "implementation": lookup.urls.link(run.implementation),
        "workload": lookup.urls.link(run.workload),
        "protocol": lookup.urls.link(run.protocol),
        "environment": lookup.urls.link(run.environment),
    }
    twin = lookup.resource_twin(
        entry,
        document,
        derived={
            "kernel": {"title": kernel.title, "url": lookup.urls.link(kernel.key)},
            "pass": run.pass_name,
            "implementationLabel": series.label,
            "provider": run.provider,
            "gpu": gpu,
            "shape": run.shape.label(),
            "values": list(map(value_json, run.values, headlines)),
            "speedOfLight": figures_json(lookup, run.digest),
            "marks": marks_json(lookup, run.digest),
            "links": links,
        },
    )
    return Page(path, "run.html", context, twin)


def run_key(lookup: SiteLookup, run: RunFacts) -> str | None:
    """What a run's page shows besides the run: its cohort ranked (the newest run of each
    series, as `ranking` ranks them), the regression it sits after, if any, and its marks."""
    if not lookup.inputs.keyed:
        return None
    regression = regression_line(lookup, run)
    after = (regression[0], regression[1].href or "") if regression else ("", "")
    return lookup.run_page_key(run, run.digest, *after, marks_key(lookup, (run,)))


def headline(value: Value) -> Headline:
    scale = scale_for(value.unit, (value.centre,))
    spread = ""
    if value.spread and value.low is not None and value.high is not None:
        low, high = scale.number(value.low), scale.number(value.high)
        spread = f"{value.spread[0]} {low} / {value.spread[1]} {high} {scale.unit}"
    stored = display_unit("", value.unit)
    return Headline(
        metric=f"{value.statistic} {metric_name(value.metric)}",
        value=scale.text(value.centre),
        exact=exact(value.centre, stored) if scale.unit != stored else "",
        spread=spread,
    )


def value_json(value: Value, shown: Headline) -> dict[str, Any]:
    """A value in the run's JSON twin: as stored, and as its page shows it (`shown`: `578 µs`,
    `p20 575 / p80 580 µs`)."""
    return {
        "metric": value.metric,
        "unit": value.unit,
        "statistic": value.statistic,
        "value": value.centre,
        "low": value.low,
        "high": value.high,
        "spread": list(value.spread) if value.spread else None,
        "text": shown.value,
        "spreadText": shown.spread or None,
    }


def ranking(lookup: SiteLookup, run: RunFacts) -> Ranking | None:
    """The run's cohort ranked on its first metric, as the kernel page's chart ranks it."""
    kernel = lookup.kernel_of(run)
    metric, unit = metrics_of(run)[0]
    ranked = lookup.memo(ranked_cohort)((run.cohort, run.kernel_key, metric, unit))
    cells = ranked.cells
    if not any(cell.rank for cell in cells):
        return None  # nothing here passed with a value: there is no ranking to be placed in
    place = next(i for i, c in enumerate(cells) if c.series.key == run.series_key)
    own = cells[place]
    newer = None if own.run.digest == run.digest else own.run
    mine = own.value
    words = wording(metric)
    compares = compare_hrefs(lookup, run, [cell.run for cell in cells])
    rows = []
    # Each row made whole rather than `_replace`d: ~9 rows on each of ~90,000 run pages.
    for number, (cell, row, compare) in enumerate(zip(cells, ranked.rows, compares, strict=True)):
        value = cell.value
        if number == place:
            versus = "this run" if newer is None else "the newer run"
            compare = ""
        elif value is None or mine is None:
            versus = "—"
        else:
            ratio = mine.centre / value.centre if value.centre else None
            versus = against_baseline(ratio, words)
        rows.append(
            Competitor(row.rank, row.series, row.value, versus, row.run, number == place, compare)
        )
    count = ranked.contenders
    where = f"{counted(count, 'implementation')} at this workload, pass and GPU"
    judged = ranked.judged
    tied = judged is not None and judged.outcome == "tie" and own.series in judged.tied
    if newer is not None:
        verdict = "A newer run of this implementation at this workload replaces this one."
    elif own.rank is None:
        verdict = f"Not ranked (status {run.status}) among {where}."
    elif count == 1:
        verdict = f"The only one of {where}."
    elif own.rank == 1 and judged is not None and judged.outcome == "win":
        runner_up = cells[1]
        verdict = (
            f"{words.best.capitalize()} of {where}, {times(runner_up.vs_best or 0)} "
            f"{words.better} than {runner_up.series.label}: beyond the recorded spread."
        )
    elif tied:
        others = [s.label for s in judged.tied if s.key != own.series.key]  # type: ignore[union-attr]
        standing = (
            words.best
            if own.rank == 1
            else f"{ordinal(own.rank)} by its {own.value.statistic if own.value else 'value'}"
        )
        verdict = (
            f"{standing.capitalize()} of {where}, but within the recorded spread of "
            f"{', '.join(others)}: a tie."
        )
    elif own.rank == 1:
        verdict = (
            f"{words.best.capitalize()} of {where}; no spread was recorded to tell it from noise."
        )
    else:
        fastest = cells[0]
        clear = (
            mine is not None
            and mine.low is not None
            and fastest.value is not None
            and fastest.value.high is not None
            and mine.low > fastest.value.high
        )
        verdict = (
            f"{ordinal(own.rank)} of {where}: {times(own.vs_best or 0)} {words.worse} than "
            f"{fastest.series.label}, the {words.best}"
            + (", beyond the recorded spread." if clear else ".")
        )
    chart = Link(
        "See it on the kernel page",
        (lookup.urls.link(kernel.key) or "") + "#" + run_anchor(run.digest),
    )
    if newer is not None and run.status == "passed":  # the chart draws the newer one
        page = cell_history(lookup, run, metrics_of(run)[0][0]).href or ""
        chart = Link(
            "See it in its series' history", page.split("#")[0] + "#" + run_anchor(run.digest)
        )
    return Ranking(
        verdict=verdict,
        measured=ranked.measured,
        rows=tuple(rows),
        chart=chart,
        newer=Link(short(newer.digest), lookup.urls.link(newer.digest)) if newer else None,
        question=f"Is this the {words.best} here?",
    )


class RankedCohort(NamedTuple):
    """A cohort ranked on one metric, as each of its runs' pages shows it (made once)."""

    cells: tuple[Cell, ...]
    rows: tuple[Competitor, ...]  # each cell's row, `versus` and `this` left for the page
    contenders: int  # the cells ranked (with a value)
    measured: str  # `median latency (µs)`
    judged: PointVerdict | None  # who wins here, beyond the recorded spread


def ranked_cohort(
    lookup: SiteLookup, key: tuple[tuple[str, str, str], str, str, str]
) -> RankedCohort:
    cohort, kernel_key, metric, unit = key
    runs = [r for r in lookup.analysis.cohorts[cohort] if r.kernel_key == kernel_key]
    cells = rank_cohort(runs, lookup.series_by_key(kernel_key), metric, unit, None)
    scale = scale_for(unit, [c.value.centre for c in cells if c.value is not None])
    link = lookup.urls.link
    rows = tuple(
        Competitor(
            rank=str(cell.rank) if cell.rank else "—",
            series=Link(cell.series.label, link(cell.series.implementation)),
            value=scale.text(cell.value.centre)
            if cell.value is not None
            else f"status: {cell.run.status}",
            versus="",
            run=Link(short(cell.run.digest), link(cell.run.digest)),
            this=False,
        )
        for cell in cells
    )
    statistic = statistic_of(cells)
    prefix = f"{statistic} " if metric == LATENCY and statistic else ""
    measured = f"{prefix}{metric_name(metric)} ({scale.unit})"
    judged = judge(cells, runs[0].workload, None, runs[0].shape)
    return RankedCohort(cells, rows, sum(1 for c in cells if c.rank), measured, judged)


def ordinal(number: int) -> str:
    """`1st`, `2nd`, `3rd`, `4th`, `11th`, `21st`."""
    if 10 <= number % 100 <= 20:
        return f"{number}th"
    return f"{number}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(number % 10, 'th') }"


def workload_tables(
    lookup: SiteLookup, digest_value: str
) -> tuple[tuple[Tensor, ...], tuple[Fact, ...]]:
    """A workload's tensors and scalars, as each of its runs' pages shows them."""
    workload = lookup.catalog.get(digest_value, "WorkloadCase")
    if workload is None:
        return (), ()
    spec = workload.spec
    tensors = tuple(
        Tensor(name, " × ".join(str(d) for d in t["shape"]) or "scalar", t["dtype"])
        for name, t in spec["tensors"].items()
    )
    return tensors, scalar_facts(spec)


def reference(lookup: SiteLookup, label: str, digest_value: str, text: str | None = None) -> Fact:
    """A link to a referenced resource, or its digest when the catalog lacks it (exports)."""
    href = lookup.urls.link(digest_value)
    if href is None:
        return Fact(label, f"{digest_value} (not in this catalog)", code=True)
    return Fact(label, text or lookup.link(digest_value).text, href)


def flat_facts(value: dict[str, Any], prefix: str = "") -> list[Fact]:
    """A nested object as facts: `logs digest: sha256:…`; URLs linked, digests as code."""
    facts: list[Fact] = []
    for key, item in value.items():
        label = f"{prefix}{key}"
        if isinstance(item, dict):
            facts += flat_facts(item, f"{label} ")
            continue
        text = item if isinstance(item, str) else json.dumps(item)
        link = text if text.startswith("https://") else None
        facts.append(Fact(label, text, link, code=text.startswith("sha256:")))
    return facts


def record_history(lookup: SiteLookup, run: RunFacts) -> tuple[tuple[RecordLine, ...], ...]:
    """Who held the record of each comparison this run took part in, and since when, as the
    source published it; newest change first."""
    found = []
    for _, events in lookup.records.of_run(run.digest):
        lines = []
        for event in sorted(events, key=lambda e: (e.at, e.run), reverse=True):
            held = lookup.runs.get(event.run)
            previous = lookup.runs.get(event.previous) if event.previous else None
            holder = (
                Link(lookup.series_of(held).label, lookup.urls.link(held.implementation))
                if held
                else Link(short(event.run), None)
            )
            taken_from = (
                Link(lookup.series_of(previous).label, lookup.urls.link(previous.digest))
                if previous
                else None
            )
            lines.append(
                RecordLine(
                    since=when(event.at),
                    holder=holder,
                    run=Link(short(event.run), lookup.urls.link(event.run)),
                    this=event.run == run.digest,
                    previous=taken_from,
                )
            )
        found.append(tuple(lines))
    return tuple(found)


def provenance_facts(
    lookup: SiteLookup, run: RunFacts, spec: dict[str, Any], metadata: dict[str, Any]
) -> tuple[Fact, ...]:
    native = spec.get("sourceNative")
    facts: list[Fact] = []
    if native is not None:
        facts.append(Fact("Source", native["source"], code=True))
        repository = attribution_for(native["source"], lookup.reports).repository
        if repository:
            facts.append(Fact("Upstream repository", repository, repository))
        # Free text from the source, shown as every title is (model/text.py).
        if "benchmark" in native:
            facts.append(Fact("Benchmark", neutralised(native["benchmark"]), code=True))
        if "externalId" in native:
            facts.append(Fact("External id", neutralised(native["externalId"]), code=True))
    facts.append(Fact("Name", run.entry.name, code=True))
    for ref in metadata.get("sourceRefs") or ():
        facts.append(Fact("Source reference", ref["url"], ref["url"]))
    return tuple(facts)


def evidence_facts(evidence: dict[str, Any]) -> tuple[Fact, ...]:
    """A run's evidence: each artifact by its digest, linked where its address is https; the
    harness by repository and commit."""
    facts = []
    for key, label in (("logs", "Logs"), ("rawSamples", "Raw samples")):
        if key in evidence:
            artifact = evidence[key]
            uri = artifact["uri"]
            facts.append(
                Fact(label, artifact["digest"], uri if uri.startswith("https://") else None, True)
            )
    if "harness" in evidence:
        harness = evidence["harness"]
        facts.append(Fact("Harness", f"{harness['repository']} @ {harness['commit']}", code=True))
    return tuple(facts)
