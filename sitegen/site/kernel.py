"""A kernel's page: the operation, its implementations, and per pass and GPU the charts and
rankings of every cohort (analysis/series.py), with the same data in the page's JSON twin."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any, NamedTuple

from sitegen.analysis.kernels import Kernel
from sitegen.analysis.series import Cell, PassSection, Series, passes_of
from sitegen.content.run_summary import LATENCY
from sitegen.model.digest import short
from sitegen.model.wording import counted
from sitegen.site.charts import chart_spec, colours_for
from sitegen.site.format import Numbers, anchor, metric_name, ratio, title_of
from sitegen.site.lookup import SiteLookup
from sitegen.site.records import Fact, Identity, Link, Page, PageMeta


class RankRow(NamedTuple):
    """One implementation at one shape: ranked, not passed, or not measured."""

    rank: str
    implementation: Link
    baseline: bool
    value: str
    spread: str
    vs_best: str
    vs_baseline: str
    run: Link | None
    note: str


class ShapeTable(NamedTuple):
    label: str
    workload: Link
    rows: tuple[RankRow, ...]


@dataclass(frozen=True)
class ChartBlock:
    """One chart with its ranking table: the plotly spec, and a text fallback."""

    element_id: str
    title: str
    protocol: Link
    metric: str
    unit: str
    spread_label: str
    best_label: str
    spec: dict[str, Any]
    fallback: str
    shapes: tuple[ShapeTable, ...]
    data: dict[str, Any]  # the chart in the page's JSON twin


class GpuBlock(NamedTuple):
    anchor: str
    gpu: Link
    charts: tuple[ChartBlock, ...]
    missing: tuple[str, ...]  # implementations measured in this pass elsewhere, not here


class PassBlock(NamedTuple):
    anchor: str
    name: str
    gpus: tuple[GpuBlock, ...]
    missing_gpus: tuple[Link, ...]


class ImplementationRow(NamedTuple):
    implementation: Link
    label: str
    baseline: bool
    project: Link | None
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
    implementations: tuple[ImplementationRow, ...]
    passes: tuple[PassBlock, ...]
    source_refs: tuple[Link, ...]
    identity: Identity | None
    derived: bool  # no OperationSpec: the kernel comes from run titles


def kernel_page(lookup: SiteLookup, kernel: Kernel) -> Page:
    path = lookup.urls.path_of(kernel.key) or ""
    colours = colours_for([i.digest for i in kernel.implementations])
    sections = passes_of(kernel)
    passes = tuple(pass_block(lookup, section, colours) for section in sections)
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
    counts: dict[str, int] = defaultdict(int)
    for run in kernel.runs:
        counts[run.implementation] += 1
    implementations = tuple(
        ImplementationRow(
            implementation=Link(
                title_of(i.entry) if i.entry else i.label, lookup.urls.link(i.digest)
            ),
            label=i.label,
            baseline=i.baseline,
            project=lookup.projects.get(i.digest),
            runs=counts[i.digest],
        )
        for i in kernel.implementations
    )
    meta = lookup.meta(
        kernel.title,
        path,
        f"{kernel.title}: benchmark results of {len(kernel.implementations)} implementations "
        f"on {len(kernel.environments)} GPUs.",
        "kernels",
        kernel.runs,
        charts=any(g.charts for p in passes for g in p.gpus),
    )
    context = KernelContext(
        meta=meta,
        description=description,
        facts=tuple(facts),
        operands=tuple(operands),
        implementations=implementations,
        passes=passes,
        source_refs=refs,
        identity=lookup.identity(operation) if operation else None,
        derived=operation is None,
    )
    return Page(path, "kernel.html", context, kernel_twin(lookup, kernel, sections, passes))


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


def pass_block(lookup: SiteLookup, section: PassSection, colours: dict[str, str]) -> PassBlock:
    gpus = []
    for gpu in section.gpus:
        label = lookup.gpu_label(gpu.environment)
        gpus.append(
            GpuBlock(
                anchor=anchor(section.name, label, short(gpu.environment, 8)),
                gpu=Link(label, lookup.urls.link(gpu.environment)),
                charts=tuple(chart_block(lookup, s, colours) for s in gpu.series),
                missing=tuple(i.label for i in gpu.missing),
            )
        )
    return PassBlock(
        anchor=anchor(section.name),
        name=section.name,
        gpus=tuple(gpus),
        missing_gpus=tuple(
            Link(lookup.gpu_label(e), lookup.urls.link(e)) for e in section.missing_gpus
        ),
    )


def chart_block(lookup: SiteLookup, series: Series, colours: dict[str, str]) -> ChartBlock:
    numbers = Numbers(series.metric, series.unit)
    spread = _spread_names(series)
    fixed = series.fixed.label()
    measured = (
        "median " + metric_name(series.metric)
        if series.metric == LATENCY
        else metric_name(series.metric)
    )
    title = (
        f"{measured.capitalize()} against {series.swept}" if series.swept else measured.capitalize()
    )
    if fixed != "unknown shape":
        title += f" · {fixed}"
    spec = chart_spec(series, colours, lambda d: lookup.urls.link(d) or "", numbers.one)
    shapes = []
    for row in series.rows:
        label = (
            f"{series.swept} = {row.x:,}"
            if series.swept and row.x is not None
            else row.shape.label()
        )
        shapes.append(
            ShapeTable(
                label,
                lookup.link(row.workload, row.shape.label()),
                tuple(rank_row(lookup, c, numbers) for c in row.cells),
            )
        )
    points = sum(1 for row in series.rows for c in row.cells if c.value is not None)
    implementations = counted(len(series.implementations), "implementation")
    shapes_measured = f"{counted(len(series.rows), 'shape')} ({counted(points, 'measurement')})"
    fallback = (
        f"Chart of {measured} ({numbers.unit}) for {implementations} at {shapes_measured}; "
        "the table below lists every value."
    )
    return ChartBlock(
        element_id=series.element_id,
        title=title,
        protocol=lookup.link(series.protocol),
        metric=measured,
        unit=numbers.unit,
        spread_label=f"{spread[0]} – {spread[1]}" if spread else "spread",
        best_label="× fastest" if series.metric == LATENCY else "× lowest",
        spec=spec,
        fallback=fallback,
        shapes=tuple(shapes),
        data=chart_twin(lookup, series, spec),
    )


def rank_row(lookup: SiteLookup, cell: Cell, numbers: Numbers) -> RankRow:
    implementation = cell.implementation
    impl_link = Link(implementation.label, lookup.urls.link(implementation.digest))
    baseline = implementation.baseline
    if cell.run is None:
        return RankRow("—", impl_link, baseline, "not measured", "", "", "", None, "not measured")
    run_link = Link(short(cell.run.digest), lookup.urls.link(cell.run.digest))
    earlier = f"+{counted(cell.earlier, 'earlier run')}" if cell.earlier else ""
    if cell.value is None:
        note = (
            f"status: {cell.run.status}"
            if cell.run.status != "passed"
            else "no value for this metric"
        )
        notes = "; ".join(p for p in (note, earlier) if p)
        return RankRow("—", impl_link, baseline, "—", "", "", "", run_link, notes)
    centre, low, high = numbers.aligned(cell.value)
    return RankRow(
        rank=str(cell.rank),
        implementation=impl_link,
        baseline=baseline,
        value=centre,
        spread=f"{low} – {high}" if low and high else "",
        vs_best=ratio(cell.vs_best),
        vs_baseline=ratio(cell.vs_baseline)
        if cell.vs_baseline is not None
        else ("—" if not baseline else "1.00×"),
        run=run_link,
        note=earlier,
    )


def chart_twin(lookup: SiteLookup, series: Series, spec: dict[str, Any]) -> dict[str, Any]:
    def cell_json(cell: Cell) -> dict[str, Any]:
        item: dict[str, Any] = {
            "implementation": cell.implementation.digest,
            "label": cell.implementation.label,
        }
        if cell.run is None:
            item["measured"] = False
            return item
        item |= {
            "run": cell.run.digest,
            "url": lookup.urls.link(cell.run.digest),
            "status": cell.run.status,
        }
        if cell.value is not None:
            item |= {
                "rank": cell.rank,
                "value": cell.value.centre,
                "low": cell.value.low,
                "high": cell.value.high,
                "vsFastest": cell.vs_best,
                "vsBaseline": cell.vs_baseline,
            }
        return item

    return {
        "id": series.element_id,
        "protocol": series.protocol,
        "metric": series.metric,
        "unit": series.unit,
        "sweptAxis": series.swept,
        "fixed": series.fixed.label(),
        "shapes": [
            {"workload": r.workload, "x": r.x, "ranking": [cell_json(c) for c in r.cells]}
            for r in series.rows
        ],
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
            }
            for gpu, gpu_block in zip(section.gpus, block.gpus, strict=True)
        ]
        twins.append(
            {"pass": section.name, "gpus": gpus, "notMeasuredOn": list(section.missing_gpus)}
        )
    return {
        "kernel": {
            "title": kernel.title,
            "url": lookup.urls.link(kernel.key),
            "operationSpecDigest": kernel.operation.digest if kernel.operation else None,
        },
        "implementations": [
            {
                "digest": i.digest,
                "label": i.label,
                "baseline": i.baseline,
                "url": lookup.urls.link(i.digest),
            }
            for i in kernel.implementations
        ],
        "passes": twins,
    }


def _spread_names(series: Series) -> tuple[str, str] | None:
    for row in series.rows:
        for cell in row.cells:
            if cell.value is not None and cell.value.spread:
                return cell.value.spread
    return None
