"""Display strings shared by every page and the changes report: numbers in their unit, times,
ratios, kinds, anchors."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import NamedTuple

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
    "WorkloadSuite": "workload suite",
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


def significant(value: float, digits: int = 3) -> str:
    """`value` to three significant digits, thousands separated: 268, 1.25, 0.0517, 1,230."""
    if not math.isfinite(value):
        return "—"
    if value == 0:
        return "0"
    if digits == 3 and abs(value) < 1000:
        shown = f"{value:#.3g}"  # `#` keeps the zeros: 5.00, not 5
        if "e" not in shown:
            return shown.removesuffix(".")  # 268. is 268
    rounded = float(f"{value:.{digits - 1}e}")  # 99.96 is 100, whose magnitude is 2
    magnitude = math.floor(math.log10(abs(rounded)))
    return f"{rounded:,.{max(0, digits - 1 - magnitude)}f}"


def times(value: float) -> str:
    """A ratio as people read it: `268×`, `1.25×`."""
    return f"{significant(value)}×"


class Wording(NamedTuple):
    """How a metric's comparisons read: lower is better for each, in its own words."""

    best: str  # the lowest at a shape: `fastest`, `lowest`
    better: str  # `2.34× faster`, `2.34× less`
    worse: str  # `1.25× slower`, `1.25× more`


TIME_WORDS = Wording("fastest", "faster", "slower")
AMOUNT_WORDS = Wording("lowest", "less", "more")


def wording(metric: str) -> Wording:
    """Latency reads as speed; any other metric (peak memory) as an amount."""
    return TIME_WORDS if metric == LATENCY else AMOUNT_WORDS


def slower_than_fastest(
    vs_best: float | None, rank: int | None, words: Wording = TIME_WORDS
) -> str:
    """How far a value is from the best at its shape, in words: `fastest`, `1.25× slower`."""
    if vs_best is None or not math.isfinite(vs_best):
        return "—"
    if rank == 1:
        return words.best
    if vs_best == 1:
        return f"equal to the {words.best}"
    return f"{times(vs_best)} {words.worse}"


def against_baseline(speedup: float | None, words: Wording = TIME_WORDS) -> str:
    """A speedup over the baseline (its value over this one's), in words: `2.34× faster`."""
    if speedup is None or not math.isfinite(speedup) or speedup <= 0:
        return "—"
    if speedup == 1:
        return "equal"
    if speedup > 1:
        return f"{times(speedup)} {words.better}"
    return f"{times(1 / speedup)} {words.worse}"


class Scale(NamedTuple):
    """A display unit for one metric: its name, and how many stored units make one."""

    unit: str  # µs, MiB …
    per: float  # stored units in one display unit

    def number(self, raw: float) -> str:
        return significant(raw / self.per)

    def text(self, raw: float) -> str:
        return f"{self.number(raw)} {self.unit}"


# Each family's display units, smallest first, in its base unit (nanoseconds, bytes).
_TIME_UNITS = (("ns", 1.0), ("µs", 1e3), ("ms", 1e6), ("s", 1e9))
_BYTE_UNITS = (("B", 1.0), ("KiB", 2.0**10), ("MiB", 2.0**20), ("GiB", 2.0**30), ("TiB", 2.0**40))
# A stored unit's family and size in the family's base unit.
_STORED = {
    "ns": (_TIME_UNITS, 1.0),
    "us": (_TIME_UNITS, 1e3),
    "ms": (_TIME_UNITS, 1e6),
    "s": (_TIME_UNITS, 1e9),
    "bytes": (_BYTE_UNITS, 1.0),
    "b": (_BYTE_UNITS, 1.0),
    "kib": (_BYTE_UNITS, 2.0**10),
    "mib": (_BYTE_UNITS, 2.0**20),
    "gib": (_BYTE_UNITS, 2.0**30),
}


def scale_for(unit: str, values: Iterable[float]) -> Scale:
    """The unit that suits the largest of `values` (stored in `unit`): the largest unit in
    which it is at least 1, so one chart or table reads `18.8 … 307 µs`. A unit sitegen does
    not know is shown as stored."""
    family = _STORED.get(unit)
    if family is None:
        return Scale(UNIT_NAMES.get(unit, unit), 1.0)
    units, size = family
    largest = max((abs(v) for v in values if math.isfinite(v)), default=0.0) * size
    name, per = units[0]
    for candidate, candidate_per in units:
        if largest >= candidate_per:
            name, per = candidate, candidate_per
    return Scale(name, per / size)


def describe(metric: str, unit: str, value: Value) -> str:
    """One value in the unit that suits it: `18.8 µs`."""
    return scale_for(unit, (value.centre,)).text(value.centre)


def anchor(*parts: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", "-".join(parts).lower()).strip("-")


def build_date_from_epoch(value: str | None) -> str | None:
    """SOURCE_DATE_EPOCH → `2025-07-17 18:18 UTC`; unset or empty → no date printed at all.
    Raises EpochError for anything else (model/values.py)."""
    date = source_date(value)
    return None if date is None else date.strftime("%Y-%m-%d %H:%M UTC")
