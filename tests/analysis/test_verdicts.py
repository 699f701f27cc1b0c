"""Who wins where (sitegen/analysis/verdicts.py): a winner only where its spread clears the
runner-up's, a tie otherwise, and the stretches of the swept axis said in one sentence."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from sitegen.analysis.kernels import Kernel, Series, analyse
from sitegen.analysis.series import Chart, passes_of
from sitegen.analysis.verdicts import (
    ChartVerdicts,
    PointVerdict,
    sentence,
    stretches,
    tally,
    verdicts_of,
)
from sitegen.content.run_summary import Shape
from sitegen.pipeline import check_content
from tests.site.planned import CONTENT

H100 = "nvidia-h100-80gb-hbm3"


def set_latency(run: Path, median: int, low: int | None, high: int | None) -> None:
    """Rewrite a run's median and p20/p80 (None: no spread recorded)."""
    document: dict[str, Any] = json.loads(run.read_text())
    spec = document["spec"]
    spec["timing"]["latencyNs"]["median"] = median
    spread = [("p20", low), ("p80", high)]
    spec["measurements"] = [
        {"metric": "latency", "unit": "ns", "statistic": name, "value": value}
        for name, value in spread
        if value is not None
    ]
    if not spec["measurements"]:
        del spec["measurements"]
    run.write_text(json.dumps(document))


def forward_runs(content: Path, provider: str, hidden: int) -> Path:
    (run,) = (content / "runs").glob(
        f"liger-layer-norm-forward-{provider}-{H100}-hidden{hidden}-rows4096-*.json"
    )
    return run


def edited(tmp_path: Path, latencies: dict[tuple[str, int], tuple[int, Any, Any]]) -> Path:
    """The fixture with LayerNorm forward on the H100 measured as `latencies` says:
    (provider, hidden) → (median, p20, p80), in ns; a (provider, hidden) given None is removed."""
    content = tmp_path / "content"
    shutil.copytree(CONTENT, content)
    for (provider, hidden), value in latencies.items():
        run = forward_runs(content, provider, hidden)
        if value is None:
            run.unlink()
        else:
            set_latency(run, *value)
    return content


def forward_chart(content: Path) -> Chart:
    catalog = check_content(content).catalog
    kernel: Kernel = next(k for k in analyse(catalog).kernels if k.title == "LayerNorm")
    forward = next(p for p in passes_of(kernel) if p.name == "forward")
    gpu = next(g for g in forward.gpus if H100 in catalog.by_digest[g.environment].name)
    (chart,) = gpu.charts
    return chart


def outcomes(verdicts: ChartVerdicts) -> list[tuple[int | None, str, str, tuple[str, ...]]]:
    return [
        (p.x, p.outcome, p.leader.label, tuple(s.label for s in p.tied)) for p in verdicts.points
    ]


# LayerNorm forward on the H100, (provider, hidden) → (median, p20, p80) in ns:
SWITCH = {
    # Transformers clearly ahead at 1024 …
    ("liger", 1024): (100_000, 95_000, 105_000),
    ("huggingface", 1024): (50_000, 48_000, 52_000),
    # … the spreads overlap at 4096 (Liger's median lower, but not beyond the noise) …
    ("liger", 4096): (100_000, 90_000, 110_000),
    ("huggingface", 4096): (105_000, 100_000, 112_000),
    # … and Liger clearly ahead at 16384.
    ("liger", 16384): (100_000, 98_000, 102_000),
    ("huggingface", 16384): (200_000, 190_000, 210_000),
}


def test_a_win_a_tie_and_a_switch_of_winner(tmp_path: Path) -> None:
    content = edited(tmp_path, SWITCH)
    verdicts = verdicts_of(forward_chart(content))
    assert outcomes(verdicts) == [
        (1024, "win", "Transformers", ()),
        (4096, "tie", "Liger", ("Liger", "Transformers")),
        (16384, "win", "Liger", ()),
    ]
    assert [p.margin for p in verdicts.points] == [2.0, None, 2.0]
    assert sentence(verdicts, "fastest", " on NVIDIA H100") == (
        "Transformers fastest at hidden = 1,024 on NVIDIA H100; tie at hidden = 4,096; "
        "Liger fastest at hidden = 16,384."
    )
    summary = tally([verdicts])
    assert (summary.points, summary.ties, summary.unjudged) == (3, 1, 0)
    assert [(s.label, n) for s, n in summary.wins] == [("Liger", 1), ("Transformers", 1)]


def test_touching_spreads_are_a_tie_and_clear_ones_a_win_at_every_point(tmp_path: Path) -> None:
    touching = {
        ("liger", 1024): (90_000, 80_000, 100_000),
        ("huggingface", 1024): (110_000, 100_000, 120_000),  # its p20 is Liger's p80
    }
    clear = {("liger", hidden): (10_000, 9_000, 11_000) for hidden in (4096, 16384)} | {
        ("huggingface", hidden): (30_000, 29_000, 31_000) for hidden in (4096, 16384)
    }
    verdicts = verdicts_of(forward_chart(edited(tmp_path, touching | clear)))
    assert [p.outcome for p in verdicts.points] == ["tie", "win", "win"]
    assert sentence(verdicts, "fastest") == (
        "Tie at hidden = 1,024; Liger fastest for hidden ≥ 4,096."
    )


def test_no_spread_is_no_verdict_and_one_implementation_is_alone(tmp_path: Path) -> None:
    content = edited(
        tmp_path,
        {
            ("liger", 1024): (10_000, None, None),  # a median alone
            ("huggingface", 1024): (50_000, 40_000, 60_000),
            ("huggingface", 16384): None,  # Liger alone at 16384
        },
    )
    verdicts = verdicts_of(forward_chart(content))
    assert [p.outcome for p in verdicts.points] == ["unknown", "win", "alone"]
    assert sentence(verdicts, "fastest") == (
        "No verdict at hidden = 1,024 (no spread recorded); Liger fastest at hidden = 4,096; "
        "only Liger measured at hidden = 16,384."
    )
    assert tally([verdicts]).unjudged == 2


# --- the sentence over longer sweeps, from verdicts made up -------------------------------------


def series(label: str) -> Series:
    return Series(f"sha256:{label}/{label}", f"sha256:{label}", label, label, False, False, None)


A, B = series("A"), series("B")
SHAPE = Shape((), "", ())


def made_up(*outcomes: tuple[str, Series]) -> ChartVerdicts:
    chart = Chart("chart-x", "", "", "latency", "ns", "T", Shape((), "", ()), (), (A, B), None)
    points = tuple(
        PointVerdict(
            f"w{x}", 2**x, SHAPE, outcome, leader, (A, B) if outcome == "tie" else (), 1.5, B
        )
        for x, (outcome, leader) in enumerate(outcomes, start=10)
    )
    return ChartVerdicts(chart, points)


def test_stretches_read_as_ranges_and_an_outcome_is_named_once() -> None:
    win_a, win_b, tie = ("win", A), ("win", B), ("tie", A)
    verdicts = made_up(win_a, win_a, tie, win_b, win_b, win_a)
    assert [(s.outcome, s.first, s.last) for s in stretches(verdicts.points)] == [
        ("win", 0, 1),
        ("tie", 2, 2),
        ("win", 3, 4),
        ("win", 5, 5),
    ]
    assert sentence(verdicts, "fastest") == (
        "A fastest for T ≤ 2,048 and at T = 32,768; tie at T = 4,096; B fastest for T 8,192–16,384."
    )
    assert sentence(made_up(win_b, win_b, win_b), "lowest") == (
        "B lowest at all 3 points measured (T 1,024–4,096)."
    )
    assert sentence(made_up(), "fastest") == ""
