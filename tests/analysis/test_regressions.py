"""Regressions and improvements (sitegen/analysis/regressions.py): a step beyond the series' own
noise, at the commit it happened, and nothing for noise, a single run or a lone outlier."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any

import pytest

from sitegen.analysis.history import histories_of
from sitegen.analysis.kernels import analyse
from sitegen.analysis.regressions import (
    DEFAULT_THRESHOLD,
    cause,
    find_steps,
    shared_by,
    steps_of,
)
from sitegen.content.run_summary import Value
from sitegen.model.digest import digest
from sitegen.pipeline import check_content
from tests.analysis.test_verdicts import forward_runs, set_latency
from tests.site.planned import CONTENT


def values(*medians: float, spread: float = 0.02) -> list[Value]:
    """Latencies with a p20–p80 spread of ±`spread` around each median."""
    return [
        Value("latency", "ns", "median", m, m * (1 - spread), m * (1 + spread), ("p20", "p80"))
        for m in medians
    ]


def test_a_step_regression_is_found_where_it_happened() -> None:
    (step,) = find_steps(values(100, 101, 99, 100, 100, 130, 131, 129, 130))
    assert step.at == 5 and step.regression
    assert round(step.factor, 2) == 1.30


def test_an_improvement_is_reported_as_an_improvement() -> None:
    (step,) = find_steps(values(130, 131, 129, 130, 100, 101, 99, 100))
    assert step.at == 4 and not step.regression
    assert round(1 / step.factor, 2) == 1.30


def test_noise_within_the_spread_is_never_reported() -> None:
    # A 15% move, beyond the threshold, inside runs whose p20–p80 spread is ±20%.
    assert find_steps(values(100, 101, 99, 100, 115, 116, 114, 115, spread=0.2)) == ()
    # Random medians, each within the others' spreads, at any threshold.
    noise = random.Random(35)
    series = values(*(100 * noise.uniform(0.97, 1.03) for _ in range(40)), spread=0.05)
    assert find_steps(series, 1.01) == ()


def test_a_series_with_one_measurement_reports_nothing() -> None:
    assert find_steps(values(100)) == ()
    assert find_steps(values(100, 200)) == ()  # nor two: a step must hold on both sides


def test_a_lone_outlier_and_an_unconfirmed_newest_run_are_not_steps() -> None:
    assert find_steps(values(100, 100, 100, 180, 100, 100, 100)) == ()
    assert find_steps(values(100, 100, 100, 100, 180)) == ()
    # Once the next run confirms it, it is.
    assert [s.at for s in find_steps(values(100, 100, 100, 100, 180, 181))] == [4]


def test_the_threshold_is_the_maintainers() -> None:
    series = values(100, 100, 101, 100, 108, 108, 109, 108, spread=0.01)
    assert find_steps(series) == ()  # 8% is below the default 10%
    assert [s.at for s in find_steps(series, 1.05)] == [4]
    with pytest.raises(ValueError):
        find_steps(series, 0.9)
    assert DEFAULT_THRESHOLD == 1.10


def test_a_series_that_jumps_at_every_commit_needs_a_bigger_step() -> None:
    # Medians that swing 20% run to run (spreads narrow): a 25% step is within that variation.
    swinging = values(100, 120, 100, 120, 100, 125, 150, 125, 150, 125, spread=0.01)
    assert find_steps(swinging) == ()


def with_commits(
    root: Path, medians: list[int], commits: list[int] | None = None, revisions: bool = False
) -> Path:
    """The fixture's Liger LayerNorm forward on the H100 at hidden 4096, measured once per
    commit (`at_commits`: runs/commit-1.json, …)."""
    content = root / "content"
    shutil.copytree(CONTENT, content)
    implementation = content / "implementations" / "liger-bench-layer-norm-liger.json"
    run = forward_runs(content, "liger", 4096)
    at_commits(run, implementation, medians, commits, revisions, "commit")
    return content


def at_commits(
    run: Path,
    implementation: Path,
    medians: list[int],
    commits: list[int] | None = None,
    revisions: bool = True,
    name: str = "commit",
) -> None:
    """A run file measured again once per commit instead (one a day in June 2025; `commits`
    numbers each run's commit if not), with the medians given, p20/p80 at ±1%: its folder's
    `<name>-<day>.json`; with `revisions`, each commit's run names the implementation at that
    commit (its own ImplementationRevision, `<name>-at-<commit>.json`), as the history's do."""
    document: dict[str, Any] = json.loads(run.read_text())
    run.unlink()
    revision = json.loads(implementation.read_text())
    for day, median in enumerate(medians, start=1):
        measured = json.loads(json.dumps(document))
        measured["metadata"]["name"] += f"-{day}"
        commit = commits[day - 1] if commits else day
        measured["metadata"]["labels"] |= {
            "liger_commit": f"{commit:02d}" * 20,
            "liger_commit_date": f"2025-06-{commit:02d}T00:00:00.000Z",
        }
        if revisions:
            at = json.loads(json.dumps(revision))
            at["metadata"]["name"] += f"-{commit:02d}"
            at["spec"]["projectRevision"] = {"commit": f"{commit:02d}" * 20}
            (implementation.parent / f"{name}-at-{commit}.json").write_text(json.dumps(at))
            measured["spec"]["implementationDigest"] = digest("ImplementationRevision", at["spec"])
        measured["spec"]["observedAt"] = f"2025-06-{day:02d}T06:00:00.000Z"
        measured["spec"]["sourceNative"]["externalId"] += f"/{day}"
        path = run.parent / f"{name}-{day}.json"
        path.write_text(json.dumps(measured))
        set_latency(path, median, median - median // 100, median + median // 100)


def test_a_step_in_the_catalog_is_located_between_two_commits(tmp_path: Path) -> None:
    content = with_commits(tmp_path, [50_000] * 5 + [65_000] * 4)
    analysis = analyse(check_content(content).catalog)
    kernel = next(k for k in analysis.kernels if k.title == "LayerNorm")
    (found,) = steps_of(histories_of(kernel))
    assert found.regression and round(found.step.factor, 2) == 1.3
    assert found.history.series.label == "Liger" and found.history.pass_name == "forward"
    assert (found.last_before.commit, found.first_after.commit) == ("05" * 20, "06" * 20)
    # Every other series of the kernel has one run a cell: nothing else is reported.
    assert all(len(h.points) == 1 for h in histories_of(kernel) if h.key != found.history.key)


def test_runs_of_one_commit_are_one_point(tmp_path: Path) -> None:
    # A step seen at two runs of the newest commit (a CI run and a release run) is one commit:
    # not yet a step that holds.
    content = with_commits(tmp_path / "a", [50_000] * 5 + [65_000] * 2, [1, 2, 3, 4, 5, 6, 6])
    kernel = next(
        k for k in analyse(check_content(content).catalog).kernels if k.title == "LayerNorm"
    )
    assert steps_of(histories_of(kernel)) == ()
    # The next commit confirms it; the step falls before the first run of commit 6.
    content = with_commits(tmp_path / "b", [50_000] * 5 + [65_000] * 3, [1, 2, 3, 4, 5, 6, 6, 7])
    kernel = next(
        k for k in analyse(check_content(content).catalog).kernels if k.title == "LayerNorm"
    )
    (found,) = steps_of(histories_of(kernel))
    assert (found.last_before.commit, found.first_after.commit) == ("05" * 20, "06" * 20)
    assert found.history.points[found.step.at - 1].commit == "05" * 20


def test_a_step_of_an_implementation_the_commits_do_not_change_is_not_the_codes(
    tmp_path: Path,
) -> None:
    # The fixture's runs name one ImplementationRevision at every commit (no projectRevision):
    # what moved was not its code.
    content = with_commits(tmp_path, [50_000] * 5 + [65_000] * 4)
    kernel = next(
        k for k in analyse(check_content(content).catalog).kernels if k.title == "LayerNorm"
    )
    found = steps_of(histories_of(kernel))
    shared = shared_by(found)
    assert list(shared.values()) == [1]  # one kernel stepped there
    assert [cause(item, shared) for item in found] == ["machine"]


def test_a_step_of_liger_at_its_commits_is_the_codes(tmp_path: Path) -> None:
    content = with_commits(tmp_path, [50_000] * 5 + [65_000] * 4, revisions=True)
    analysis = analyse(check_content(content, strict=True).catalog)
    kernel = next(k for k in analysis.kernels if k.title == "LayerNorm")
    # Nine revisions of one implementation: one line of the chart.
    assert [s.label for s in kernel.series] == ["Liger", "Transformers"]
    found = steps_of(histories_of(kernel))
    assert [cause(item, shared_by(found)) for item in found] == ["code"]
