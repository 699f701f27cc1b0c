"""History pages (sitegen/site/history.py) and the lines kernel and run pages add: LayerNorm's
Liger forward on the H100 at hidden 4096 measured at nine commits, with a 1.3× step between
the fifth and the sixth (tests/analysis/test_regressions.py `with_commits`)."""

from __future__ import annotations

from pathlib import Path

import pytest

import sitegen.analysis.kernels
import sitegen.site.history
from sitegen.analysis.history import SeriesHistory
from sitegen.analysis.regressions import Found
from sitegen.site.history import HistoryContext, every_step, kernel_history
from sitegen.site.kernel import KernelContext
from sitegen.site.records import Page, Site
from sitegen.site.run import RunContext
from tests.analysis.test_regressions import with_commits
from tests.site.planned import cohorts_made, fixture_site, held_builds

LIGER = "https://github.com/linkedin/Liger-Kernel"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Site:
    content = with_commits(
        tmp_path_factory.mktemp("history"), [50_000] * 5 + [65_000] * 4, revisions=True
    )
    return fixture_site(content)[1]


def page(site: Site, path: str) -> Page:
    return next(p for p in site.pages if p.path == path).built()


def history_paths(site: Site) -> list[str]:
    return [p.path for p in site.pages if "/history/" in p.path]


def test_a_history_page_per_gpu_and_per_shape_measured_more_than_once(site: Site) -> None:
    gpu, shape = history_paths(site)
    assert gpu == "kernels/liger-layer-norm/history/liger-bench-nvidia-h100-80gb-hbm3/"
    assert shape.startswith(gpu) and "hidden4096" in shape
    overview = page(site, gpu).context
    assert isinstance(overview, HistoryContext)
    assert [c.link.text for c in overview.shapes] == [
        "rows=4096, hidden=4096 · eps=1e-05 · fp32"
    ] or len(overview.shapes) == 1
    (step,) = overview.steps
    assert step.regression and step.cause == "code"
    assert step.text.endswith(
        "1.30× slower (regression) between 0505050 (2025-06-05) and 0606060 (2025-06-06)"
    )
    assert step.compare.href == f"{LIGER}/compare/{'05' * 20}...{'06' * 20}"


def test_the_shape_page_charts_every_run_with_its_band_and_the_step(site: Site) -> None:
    context = page(site, history_paths(site)[1]).context
    assert isinstance(context, HistoryContext)
    (chart,) = context.charts
    traces = chart.spec["data"]
    liger = next(t for t in traces if t.get("name") == "Liger")
    assert len(liger["x"]) == 9 and liger["x"][0] == "2025-06-01 00:00:00"
    assert any(t.get("fill") == "tonexty" for t in traces)  # the p20–p80 band
    (marked,) = [t for t in traces if t.get("name") == "regression"]
    assert marked["x"] == ["2025-06-06 00:00:00"]
    table = next(t for t in chart.tables if t.label == "Liger")
    assert [r.step for r in table.rows if r.step] == ["1.30× slower (regression)"]
    assert table.rows[0].commit.href == f"{LIGER}/commit/{'09' * 20}"  # newest first


def test_kernel_and_run_pages_say_a_run_sits_after_a_regression(site: Site) -> None:
    kernel = page(site, "kernels/liger-layer-norm/").context
    assert isinstance(kernel, KernelContext)
    assert kernel.steps.startswith("1 regression and 0 improvements of the code")
    rows = [
        row
        for p in kernel.passes
        for g in p.gpus
        for chart in g.charts
        for shape in chart.shapes
        for row in shape.rows
        if row.history is not None
    ]
    (liger,) = rows
    assert liger.history is not None and liger.history.text == "history (9 runs)"
    assert len(liger.earlier) == 2  # the two newest earlier runs; the rest on the history page
    assert liger.after_regression.startswith("after a regression: 1.30× slower")
    newest = liger.run.href
    run = next(p for p in site.pages if p.path and newest and newest.endswith(p.path)).built()
    assert isinstance(run.context, RunContext)
    assert run.context.after_regression.startswith("after a regression: 1.30× slower")


def test_a_held_kernel_history_is_remade_only_for_the_changed_cohort(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a held analysis, a changed kernel's histories and steps are the last build's for
    each cohort whose runs are the very same objects: after a change, only the changed run's
    cohort is read again, and every kernel's history, every step, its cause and the runs
    after a regression equal those of a lookup made from nothing, the step included."""
    content = with_commits(tmp_path, [50_000] * 5 + [65_000] * 4, revisions=True)
    made = cohorts_made(monkeypatch, sitegen.site.history, "_cohort_history")
    grouped: list[str] = []  # the kernels whose runs were grouped by cohort
    group = sitegen.analysis.kernels._runs_by_cohort
    monkeypatch.setattr(
        sitegen.analysis.kernels,
        "_runs_by_cohort",
        lambda kernel: grouped.append(kernel.key) or group(kernel),
    )
    changes = ("a run edited", "a run moved", "a run deleted")
    for change, lookup, plain in held_builds(tmp_path, monkeypatch, changes, content):
        by_build, made[:] = list(made), []
        # Grouped once a build for all its uses (wins, tallies, history), held after.
        kernels = [k.key for k in lookup.analysis.kernels]
        assert sorted(grouped) == sorted(kernels) if change == "first build" else len(grouped) == 1
        if change == "first build":
            cohorts = {(k.key, r.cohort) for k in lookup.analysis.kernels for r in k.runs}
            assert sorted(by_build) == sorted(cohorts)
        else:
            assert len(by_build) <= 1, change
        for kernel in lookup.analysis.kernels:
            held, made_whole = kernel_history(lookup, kernel.key), kernel_history(plain, kernel.key)
            assert [_history(h) for h in held.histories] == [
                _history(h) for h in made_whole.histories
            ]
            assert [_found(f) for f in held.found] == [_found(f) for f in made_whole.found]
        steps, plain_steps = every_step(lookup), every_step(plain)
        assert steps.found and steps.after and steps.causes, change
        assert [(k.key, _found(f)) for k, f in steps.found] == [
            (k.key, _found(f)) for k, f in plain_steps.found
        ]
        assert steps.causes == plain_steps.causes
        assert {d: _found(f) for d, f in steps.after.items()} == {
            d: _found(f) for d, f in plain_steps.after.items()
        }
        made.clear()  # and those the plain lookup made
        grouped.clear()


def _history(history: SeriesHistory) -> tuple[object, ...]:
    """A history as its pages show it, its runs by digest (two lookups' runs are other
    objects)."""
    points = tuple((p.run.digest, p.value, p.when) for p in history.points)
    return (history.series.key, history.series.label, *history[1:8], points)


def _found(found: Found) -> tuple[object, ...]:
    return (_history(found.history), found.step, found.before_at)
