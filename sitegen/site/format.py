"""Display strings shared by every page and the changes report: numbers in their unit, times,
ratios, kinds, anchors."""

from __future__ import annotations

import math
import re

from sitegen.content.catalog import Catalog
from sitegen.content.loaded import LoadedResource
from sitegen.content.run_summary import LATENCY, Value
from sitegen.model.digest import short
from sitegen.model.values import source_date

NS_PER_MS = 1_000_000
UNIT_NAMES = {
    "ns": "ns",
    "ms": "ms",
    "us": "µs",
    "mib": "MiB",
    "mb": "MB",
    "gib": "GiB",
    "gb": "GB",
    "bytes": "bytes",
}


def metric_name(metric: str) -> str:
    return "latency" if metric == LATENCY else metric.replace("_", " ")


def display_unit(metric: str, unit: str) -> str:
    """Latency is shown in milliseconds whatever it was stored in; other units as recorded."""
    if metric == LATENCY and unit == "ns":
        return "ms"
    return UNIT_NAMES.get(unit, unit)


def scale(metric: str, unit: str) -> float:
    return NS_PER_MS if metric == LATENCY and unit == "ns" else 1.0


KIND_WORDS = {
    "OperationSpec": "kernel",
    "WorkloadCase": "workload",
    "ImplementationRevision": "implementation",
    "SoftwareProject": "project",
    "BenchmarkProtocol": "protocol",
    "ExecutionEnvironment": "GPU environment",
    "BenchmarkRun": "run",
}


def decimals_for(value: float, least: int = 3) -> int:
    """At least `least` decimals and three significant digits: 0.578, 0.00812, 46.833."""
    if value <= 0 or not math.isfinite(value):
        return least
    return max(least, 2 - math.floor(math.log10(value)))


class Numbers:
    """Display of one metric's raw values in its display unit, centre and spread aligned."""

    def __init__(self, metric: str, unit: str) -> None:
        self.unit = display_unit(metric, unit)
        self.divisor = scale(metric, unit)
        self.least = 3 if self.divisor != 1.0 else 2

    def one(self, raw: float) -> str:
        shown = raw / self.divisor
        return f"{shown:,.{decimals_for(shown, self.least)}f}"

    def aligned(self, value: Value) -> tuple[str, str, str]:
        """(centre, low, high) with the centre's decimals, low/high "" when absent."""
        places = decimals_for(value.centre / self.divisor, self.least)

        def text(raw: float | None) -> str:
            return "" if raw is None else f"{raw / self.divisor:,.{places}f}"

        return text(value.centre), text(value.low), text(value.high)


def title_of(entry: LoadedResource) -> str:
    return entry.title or entry.name


def environment_label(catalog: Catalog, digest_value: str) -> str:
    """A GPU environment as the pages name it: product and form factor."""
    entry = catalog.get(digest_value, "ExecutionEnvironment")
    if entry is None:
        return "environment " + short(digest_value)
    hardware = entry.spec["hardware"]
    return " ".join(p for p in (hardware["product"], hardware.get("formFactor", "")) if p)


def exact(value: float, unit: str) -> str:
    if isinstance(value, int) or float(value).is_integer():
        return f"{int(value):,} {unit}"
    return f"{value:,} {unit}"


def when(instant: str) -> str:
    """`2025-07-17T18:18:16.000Z` → `2025-07-17 18:18:16 UTC` (observations are all UTC)."""
    return instant[:10] + " " + instant[11:19] + " UTC"


def ratio(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}×"


def describe(metric: str, unit: str, value: Value) -> str:
    numbers = Numbers(metric, unit)
    return f"{numbers.one(value.centre)} {numbers.unit}"


def anchor(*parts: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", "-".join(parts).lower()).strip("-")


def build_date_from_epoch(value: str | None) -> str | None:
    """SOURCE_DATE_EPOCH → `2025-07-17 18:18 UTC`; unset or empty → no date printed at all.
    Raises EpochError for anything else (model/values.py)."""
    date = source_date(value)
    return None if date is None else date.strftime("%Y-%m-%d %H:%M UTC")
