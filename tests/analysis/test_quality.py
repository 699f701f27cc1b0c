"""Data-quality marks (sitegen/analysis/quality.py): each mark on a fixture made to earn it,
and none on a case just inside its threshold."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from sitegen.analysis.kernels import RunFacts
from sitegen.analysis.quality import (
    AFTER_REGRESSION,
    DISAGREES,
    HOST_BOUND,
    NO_SPREAD,
    OVER_LIMIT,
    disagreements,
    host_bound,
    no_spread,
    over_limit,
)
from sitegen.analysis.speed_of_light import Figures, Peak, Work
from sitegen.content.run_summary import Shape, Value


def latency(
    median_ns: float, low: float | None = None, high: float | None = None, spread: str = "p20"
) -> Value:
    """A median latency; p20/p80 (or p05/p95) at ±2 % unless given."""
    low = median_ns * 0.98 if low is None else low
    high = median_ns * 1.02 if high is None else high
    names = ("p20", "p80") if spread == "p20" else ("p05", "p95")
    return Value("latency", "ns", "median", median_ns, low, high, names)


def run_facts(
    name: str,
    value: Value,
    *,
    environment: str = "env-a",
    source: str = "source-a",
    axes: tuple[tuple[str, int], ...] = (("rows", 1024), ("hidden", 4096)),
    observed_at: str = "2026-01-01T00:00:00.000Z",
) -> RunFacts:
    entry: Any = SimpleNamespace(digest=f"sha256:{name}", title=name, name=name)
    return RunFacts(
        entry=entry,
        digest=entry.digest,
        kernel_key="kernel",
        kernel_title="Kernel",
        kernel_slug="kernel",
        pass_name="forward",
        provider="liger",
        shape=Shape(axes, "bf16", ()),
        values=(value,),
        observed_at=observed_at,
        status="passed",
        implementation="impl",
        workload="workload-" + "-".join(f"{a}{v}" for a, v in axes),
        protocol="protocol",
        environment=environment,
        source=source,
        release="",
        lineage="impl",
        revision=None,
    )


PEAK = Peak("GPU X", "SXM", True, 1000.0, (("fp16", 100.0),), ())


def figures(gbs: float | None = None, tflops: float | None = None, bytes_moved: int = 1) -> Figures:
    work = Work(bytes_moved if gbs is not None else None, 1 if tflops else None, "fp16", "", "")
    return Figures(
        work,
        PEAK,
        1.0,
        gbs,
        tflops,
        100.0 if tflops else None,
        gbs / 1000 if gbs is not None else None,
        tflops / 100 if tflops is not None else None,
    )


def test_a_run_over_the_peak_bandwidth_or_throughput_is_marked() -> None:
    mark = over_limit(figures(gbs=1010))
    assert mark is not None and mark.kind == OVER_LIMIT
    assert "1,010 GB/s" in mark.reason and "1,000 GB/s" in mark.reason
    mark = over_limit(figures(tflops=101))
    assert mark is not None and "101.0 TFLOP/s of fp16" in mark.reason


def test_just_under_the_peak_is_not_marked() -> None:
    assert over_limit(figures(gbs=999)) is None
    assert over_limit(figures(tflops=99.9)) is None
    assert over_limit(figures(gbs=1000)) is None  # at the peak, not above it


def test_identical_quantiles_are_no_spread() -> None:
    mark = no_spread(run_facts("a", latency(140_000, 140_000, 140_000)))
    assert mark is not None and mark.kind == NO_SPREAD
    assert mark.reason.startswith("p20 = median = p80 = 140 µs")
    mark = no_spread(run_facts("b", latency(140_000, 139_000, 139_000, spread="p05")))
    assert mark is not None and mark.reason.startswith("p05 = p95 = 139 µs")


def test_one_nanosecond_of_spread_is_a_spread() -> None:
    assert no_spread(run_facts("a", latency(140_000, 140_000, 140_001))) is None
    assert no_spread(run_facts("b", latency(140_000, 139_999, 140_000))) is None
    # p20 = p80 around a different median: a spread of zero width, not one timing repeated
    assert no_spread(run_facts("c", latency(140_000, 139_000, 139_000))) is None


def sweep(medians: list[float], bytes_moved: list[int], spread: float = 0.02) -> dict[str, Any]:
    """Runs of one series along `rows`, with their figures."""
    runs, found = [], {}
    for index, (median, moved) in enumerate(zip(medians, bytes_moved, strict=True)):
        value = latency(median, median * (1 - spread), median * (1 + spread))
        run = run_facts(f"r{index}", value, axes=(("rows", 1024 * 2**index), ("hidden", 4096)))
        runs.append(run)
        found[run.digest] = figures(gbs=1.0, bytes_moved=moved)._replace(
            work=Work(moved, None, "", "", "")
        )
    return {"runs": runs, "figures": found}


def test_a_flat_sweep_whose_traffic_grows_8x_is_host_bound() -> None:
    # LayerNorm forward on the H200, as issue 37 found it: ~0.14 ms from 1,024 to 8,192 rows.
    case = sweep(
        [141_000, 140_000, 142_000, 143_000], [16_793_600, 33_570_816, 67_125_248, 134_234_112]
    )
    marked = dict(host_bound(case["runs"], case["figures"]))
    assert sorted(marked) == [r.digest for r in case["runs"]]
    reason = marked[case["runs"][0].digest].reason
    assert marked[case["runs"][0].digest].kind == HOST_BOUND
    assert "rows = 1,024 … 8,192" in reason and "grow 8×" in reason


def test_a_sweep_just_short_of_8x_or_growing_beyond_its_noise_is_not() -> None:
    # The bytes grow 7.5×: short of the threshold.
    case = sweep([140_000, 140_000, 141_000, 140_000], [1_000, 2_000, 4_000, 7_500])
    assert host_bound(case["runs"], case["figures"]) == []
    # 8× the bytes, but the latency grows 12 % with spreads of ±2 %: beyond its noise.
    case = sweep([140_000, 145_000, 150_000, 156_800], [1_000, 2_000, 4_000, 8_000])
    assert host_bound(case["runs"], case["figures"]) == []
    # The same 12 % inside spreads of ±8 % (16 % wide) is flat.
    case = sweep([140_000, 145_000, 150_000, 156_800], [1_000, 2_000, 4_000, 8_000], spread=0.08)
    assert len(host_bound(case["runs"], case["figures"])) == 4


def test_a_sweep_that_falls_as_its_data_grows_is_host_bound_one_that_climbs_back_is_not() -> None:
    # LayerNorm forward measured again on an H200: 237, 189, 186, 177 µs over 8× the bytes.
    case = sweep([237_200, 189_000, 186_000, 177_300], [1_000, 2_000, 4_000, 8_000])
    assert len(host_bound(case["runs"], case["figures"])) == 4
    # Falls, then ends 15 % above where it started (beyond ±2 % spreads): it grows with the data.
    case = sweep([100_000, 50_000, 60_000, 115_000], [1_000, 2_000, 4_000, 8_000])
    assert host_bound(case["runs"], case["figures"]) == []


def test_two_environments_disagreeing_beyond_both_spreads_link_each_other() -> None:
    ours = run_facts("ours", latency(300_000), environment="env-a", source="measured")
    theirs = run_facts("theirs", latency(100_000), environment="env-b", source="upstream")
    products = {"env-a": ("GPU X", ""), "env-b": ("GPU X", "SXM")}
    titles = {"env-a": "Host A", "env-b": "Host B"}
    found = dict(disagreements([ours, theirs], products, titles))
    assert found[ours.digest].kind == DISAGREES and found[ours.digest].other == theirs.digest
    assert found[theirs.digest].other == ours.digest
    assert found[ours.digest].reason.startswith("3.0× slower than the same implementation")
    assert "Host B" in found[ours.digest].reason
    assert found[theirs.digest].reason.startswith("3.0× faster")


def test_the_newest_run_of_each_environment_is_the_one_compared() -> None:
    old = run_facts(
        "old", latency(300_000), environment="env-a", observed_at="2025-01-01T00:00:00.000Z"
    )
    new = run_facts(
        "new", latency(110_000), environment="env-a", observed_at="2026-06-01T00:00:00.000Z"
    )
    theirs = run_facts("theirs", latency(100_000), environment="env-b")
    products = {"env-a": ("GPU X", ""), "env-b": ("GPU X", "")}
    assert disagreements([old, new, theirs], products, {}) == []


def test_no_disagreement_within_2x_across_overlapping_spreads_or_gpu_products() -> None:
    products = {"env-a": ("GPU X", ""), "env-b": ("GPU X", ""), "env-c": ("GPU Y", "")}
    ours = run_facts("ours", latency(190_000), environment="env-a")
    theirs = run_facts("theirs", latency(100_000), environment="env-b")
    assert disagreements([ours, theirs], products, {}) == []  # 1.9×
    wide = run_facts("wide", latency(250_000, 90_000, 400_000), environment="env-a")
    assert disagreements([wide, theirs], products, {}) == []  # 2.5×, but its p20 is below
    other_gpu = run_facts("other", latency(300_000), environment="env-c")
    assert disagreements([other_gpu, theirs], products, {}) == []
    # Two named forms of one product are two GPUs: an A100 of 40 GB is not one of 80 GB.
    forms = {"env-a": ("GPU X", "40GB"), "env-b": ("GPU X", "80GB")}
    far = run_facts("far", latency(300_000), environment="env-a")
    assert disagreements([far, theirs], forms, {}) == []


def test_a_regression_is_marked_after_it_and_every_mark_keeps_its_run() -> None:
    from sitegen.analysis.quality import assess
    from sitegen.pipeline import check_content
    from tests.site.planned import CONTENT

    checked = check_content(CONTENT)
    assert checked.analysis is not None
    first = next(iter(checked.analysis.runs))
    quality = assess(checked.analysis, checked.catalog, {}, {first: "1.32× slower between a and b"})
    assert [m.kind for m in quality.of(first)] == [AFTER_REGRESSION]
    assert quality.of(first)[0].reason == "1.32× slower between a and b"
    assert set(quality.marks) <= set(checked.analysis.runs)  # a mark never adds or drops a run
