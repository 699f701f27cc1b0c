"""Display strings shared by the pages and the changes report: numbers in their unit, kinds."""

from __future__ import annotations

import math

from sitegen.catalog import Catalog
from sitegen.charts import display_unit, scale
from sitegen.digest import short
from sitegen.load import LoadedResource
from sitegen.run_summary import Value

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
