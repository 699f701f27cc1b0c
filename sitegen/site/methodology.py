"""The methodology page: how the speed-of-light figures and the data-quality marks are
computed, with their thresholds and the reviewed GPU table; and that table's rows for one GPU
(its page)."""

from __future__ import annotations

from typing import NamedTuple

from sitegen.analysis import quality
from sitegen.analysis.speed_of_light import (
    DTYPE_BYTES,
    THROUGHPUT_COLUMN,
    GpuRow,
    gpu_table,
    peak_of,
)
from sitegen.site.format import significant
from sitegen.site.lookup import SiteLookup
from sitegen.site.records import Link, Page, PageMeta
from sitegen.site.urls import DATA_QUALITY, METHODOLOGY, REGRESSIONS

COLUMNS = ("fp32", "tf32", "bf16", "fp16", "fp8")  # the table's throughput columns, in order


class PeakRow(NamedTuple):
    product: str
    form: str
    form_factors: str  # the environments' formFactor values that name it
    bandwidth: str  # `4,800 GB/s`
    throughput: tuple[str, ...]  # TFLOP/s per COLUMNS; "—" where none
    source: Link  # the vendor document
    note: str


class GpuPeaks(NamedTuple):
    """The table's figures for one GPU page."""

    rows: tuple[PeakRow, ...]  # the rows its peak was made of; () for a GPU not in the table
    note: str  # how the environment matched, or that the GPU is not in the table
    methodology: str
    columns: tuple[str, ...] = COLUMNS


class MethodologyContext(NamedTuple):
    meta: PageMeta
    columns: tuple[str, ...]
    gpus: tuple[PeakRow, ...]
    dtype_bytes: tuple[tuple[str, int], ...]
    matmul_columns: tuple[tuple[str, str], ...]
    growth: str  # `8×`
    flat: str  # `10 %`
    disagreement: str  # `2×`
    regression_threshold: str  # `1.1×`
    data_quality: str
    regressions: str


def peak_row(row: GpuRow) -> PeakRow:
    figures = dict(row.throughput_tflops)
    return PeakRow(
        product=row.product,
        form=row.form,
        form_factors=", ".join(row.form_factors) or "—",
        bandwidth=f"{row.bandwidth_gbs:,.0f} GB/s",
        throughput=tuple(f"{figures[c]:,.1f}" if c in figures else "—" for c in COLUMNS),
        source=Link(row.title, row.url),
        note=row.note,
    )


def gpu_peaks(lookup: SiteLookup, environment_digest: str) -> GpuPeaks:
    entry = lookup.catalog.get(environment_digest, "ExecutionEnvironment")
    methodology = lookup.urls.href(METHODOLOGY) + "#gpu-table"
    hardware = entry.spec["hardware"] if entry else {}
    peak = peak_of(hardware)
    product = hardware.get("product", "this GPU")
    if peak is None:
        return GpuPeaks(
            (),
            f"{product} is not in the reviewed GPU table: its runs get no speed-of-light "
            "share of peak, and no over-the-limit mark.",
            methodology,
        )
    if peak.matched:
        named = hardware.get("formFactor")
        note = f"This environment names the form factor {named!r}: the {peak.form} row."
    else:
        named = hardware.get("formFactor")
        said = f"names the form factor {named!r}, which" if named else "names no form factor:"
        note = (
            f"This environment {said} no row of the table names: its runs are held to the "
            "highest figure of these rows, each, so their share of peak is a lower bound."
        )
    return GpuPeaks(tuple(peak_row(r) for r in peak.rows), note, methodology)


def methodology_page(lookup: SiteLookup) -> Page:
    meta = lookup.meta(
        "Methodology: speed-of-light figures and data-quality marks",
        METHODOLOGY,
        "How close to the hardware, and can this number be trusted: how the catalog computes "
        "achieved bandwidth and throughput, and when it marks a measurement.",
        "kernels",
    )
    gpus = tuple(peak_row(row) for row in gpu_table())
    context = MethodologyContext(
        meta=meta,
        columns=COLUMNS,
        gpus=gpus,
        dtype_bytes=tuple(DTYPE_BYTES.items()),
        matmul_columns=tuple(THROUGHPUT_COLUMN.items()),
        growth=f"{quality.GROWTH:g}×",
        flat=f"{quality.FLAT * 100:.0f} %",
        disagreement=f"{quality.DISAGREEMENT:g}×",
        regression_threshold=f"{significant(lookup.inputs.regression_threshold)}×",
        data_quality=lookup.urls.href(DATA_QUALITY),
        regressions=lookup.urls.href(REGRESSIONS),
    )
    twin = {
        "thresholds": {
            "hostBoundGrowth": quality.GROWTH,
            "flat": quality.FLAT,
            "disagreement": quality.DISAGREEMENT,
            "regression": lookup.inputs.regression_threshold,
        },
        "dtypeBytes": DTYPE_BYTES,
        "gpus": [
            {
                "product": row.product,
                "form": row.form,
                "formFactors": list(row.form_factors),
                "bandwidthGBs": row.bandwidth_gbs,
                "throughputTFLOPs": dict(row.throughput_tflops),
                "source": {"title": row.title, "url": row.url},
                "note": row.note,
            }
            for row in gpu_table()
        ],
    }
    return Page(METHODOLOGY, "methodology.html", context, twin)
