"""Who wins where, in words (sitegen/site/verdicts.py): the strip under a chart, the tally at
the top of a kernel page, and a GPU page's summary of each kernel and pass."""

from __future__ import annotations

from pathlib import Path

import pytest

from sitegen.site.resource import ResourceContext
from sitegen.site.verdicts import gpu_wins
from tests.analysis.test_verdicts import SWITCH, edited
from tests.site.planned import cohorts_made, fixture_site, held_builds
from tests.site.test_kernel import layer_norm_page


def test_the_strip_names_each_points_winner_and_the_tally_sums_the_pass(tmp_path: Path) -> None:
    kernel = layer_norm_page(edited(tmp_path, SWITCH))
    forward = next(p for p in kernel.passes if p.name == "forward")
    h100 = next(g for g in forward.gpus if "H100" in g.gpu.text)
    (chart,) = h100.charts
    strip = chart.strip
    assert strip.axis == "hidden"
    assert [(i.at, i.outcome, i.name, i.detail) for i in strip.items] == [
        ("1,024", "win", "Transformers", "2.00× faster than Liger"),
        ("4,096", "tie", "tie", "Liger, Transformers"),
        ("16,384", "win", "Liger", "2.00× faster than Transformers"),
    ]
    # The winner's colour is its line's; a tie has none.
    colours = {
        trace["name"].removesuffix(" (baseline)"): trace["line"]["color"]
        for trace in chart.spec["data"]
    }
    assert [i.colour for i in strip.items] == [colours["Transformers"], "", colours["Liger"]]
    assert strip.sentence == (
        "Transformers fastest at hidden = 1,024 on NVIDIA H100 80GB HBM3; tie at hidden = 4,096; "
        "Liger fastest at hidden = 16,384."
    )
    assert h100.wins == "Liger fastest at 1 of 3 shapes, Transformers at 1; tie at 1."
    lines = [(w.pass_name, w.section.text, w.text) for w in kernel.wins]
    assert ("forward", "NVIDIA H100 80GB HBM3", h100.wins) in lines
    assert all(w.section.href.startswith("#") for w in kernel.wins)
    # The twin carries the verdict too.
    assert chart.data["verdict"]["sentence"] == strip.sentence


def test_memory_charts_say_lowest_and_less_not_fastest() -> None:
    kernel = layer_norm_page()
    full = next(p for p in kernel.passes if p.name == "full")
    (chart,) = full.gpus[0].charts
    assert chart.best_label == "vs lowest"
    # The fixture's two providers allocate the same at each shape.
    rows = [(r.series.text, r.vs_best, r.vs_baseline) for s in chart.shapes for r in s.rows]
    assert (
        rows
        == [
            ("Liger", "lowest", "equal"),
            ("Transformers", "equal to the lowest", "baseline"),
        ]
        * 2
    )
    assert chart.strip.sentence == (
        "Tie at all 2 points measured (hidden 4,096–16,384) on NVIDIA H100 80GB HBM3."
    )


def test_the_gpu_page_sums_up_each_kernel_and_pass_linking_to_its_section(
    tmp_path: Path,
) -> None:
    _, site = fixture_site(edited(tmp_path, SWITCH))
    page = next(p for p in site.pages if p.path == "gpus/liger-bench-nvidia-h100-80gb-hbm3/")
    context = page.built().context
    assert isinstance(context, ResourceContext)
    lines = [(w.kernel.text, w.pass_name, w.text) for w in context.wins]
    assert lines == [
        ("LayerNorm", "forward", "Liger fastest at 1 of 3 shapes, Transformers at 1; tie at 1."),
        ("LayerNorm", "backward", "Liger fastest at 2 of 3 shapes, Transformers at 1."),
    ]
    kernel = layer_norm_page(edited(tmp_path / "again", SWITCH))
    anchors = {g.anchor for p in kernel.passes for g in p.gpus}
    assert all(w.section.href.split("#")[1] in anchors for w in context.wins)
    assert all(w.section.href.startswith("/kernels/liger-layer-norm/#") for w in context.wins)


def test_held_gpu_wins_are_made_again_only_for_the_changed_cohort(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a held analysis, each kernel's GPU-page lines are the last build's while the kernel
    is the very same object, and a changed kernel's verdicts the last build's for each cohort
    whose runs are: after a change only the changed run's cohort is judged again, and every
    GPU's lines equal those of a lookup made from nothing."""
    import sitegen.site.verdicts

    made = cohorts_made(monkeypatch, sitegen.site.verdicts, "_cohort_wins")
    for change, lookup, plain in held_builds(tmp_path, monkeypatch, ("a run edited",)):
        by_build, made[:] = list(made), []
        if change == "a run edited":
            edited = {r.cohort for r in lookup.analysis.held.fresh}  # type: ignore[union-attr]
            kernels = {r.kernel_key for r in lookup.analysis.held.fresh}  # type: ignore[union-attr]
            assert len(edited) == 1 and by_build == [(kernels.pop(), edited.pop())]
        else:
            assert len(by_build) == len(
                {(k.key, r.cohort) for k in lookup.analysis.kernels for r in k.runs}
            )
        environments = [e.digest for e in lookup.catalog.of_kind("ExecutionEnvironment")]
        wins = {environment: gpu_wins(lookup, environment) for environment in environments}
        # Made by the build already, for the GPU pages it rendered.
        assert made == [], change
        assert wins == {environment: gpu_wins(plain, environment) for environment in environments}
        assert any(wins.values())
        made.clear()  # and those the plain lookup made
