"""analysis/kernels.py: what `sitegen serve` holds of the analysis between builds."""

from __future__ import annotations

import json
import operator
import shutil
from pathlib import Path
from typing import Any

import pytest

import sitegen.analysis.kernels
from sitegen.analysis.kernels import (
    Analysis,
    HeldAnalysis,
    Kernel,
    Same,
    kept_in_order,
    newest_first,
    per_group,
)
from sitegen.content.stretches import REPLACED_AT_MOST
from sitegen.pipeline import check_content
from sitegen.publish.incremental import State
from tests.analysis.test_regressions import with_commits
from tests.conftest import FIXTURES

SITE_CONTENT = FIXTURES / "site" / "content"


def analysed(content: Path, held: HeldAnalysis) -> Analysis:
    checked = check_content(content, held=held)
    assert checked.ok and checked.analysis is not None
    return checked.analysis


def timed_run(content: Path) -> Path:
    return next(
        p
        for p in sorted((content / "runs").rglob("*.json"))
        if "timing" in json.loads(p.read_text())["spec"]
    )


def edit_median(path: Path) -> str:
    """Moves the run's median by 1 ns; returns the run's name."""
    document = json.loads(path.read_text())
    document["spec"]["timing"]["latencyNs"]["median"] += 1
    path.write_text(json.dumps(document, indent=2) + "\n")
    return str(document["metadata"]["name"])


def test_a_rebuild_reuses_the_facts_and_kernels_of_unchanged_runs(tmp_path: Path) -> None:
    content = tmp_path / "content"
    shutil.copytree(SITE_CONTENT, content)
    held = HeldAnalysis()
    first = analysed(content, held)
    again = analysed(content, held)  # the same content, read again: new resource objects
    assert all(again.runs[d] is run for d, run in first.runs.items())
    assert all(a is b for a, b in zip(first.kernels, again.kernels, strict=True))

    name = edit_median(timed_run(content))
    edited = analysed(content, held)
    changed = [run for run in edited.runs.values() if run.entry.name == name]
    assert len(changed) == 1 and changed[0].digest not in first.runs
    kept = [run for run in edited.runs.values() if run is not changed[0]]
    assert all(first.runs[run.digest] is run for run in kept)  # counted: all but one reused
    kernels = {k.key: k for k in first.kernels}
    renewed = [k.key for k in edited.kernels if kernels.get(k.key) is not k]
    assert renewed == [changed[0].kernel_key]  # only the edited run's kernel is made again
    assert set(held.facts.values()) == set(edited.runs.values())
    # The runs newest first: the last build's order with the edited run put in its place.
    for analysis in (first, again, edited):
        assert analysis.newest == tuple(newest_first(analysis.runs.values()))
    assert edited.newest != first.newest and edited.newest.index(changed[0]) >= 0


def test_the_runs_newest_first_follow_any_change_of_their_dates(tmp_path: Path) -> None:
    """Held between builds, the order is the one a sort gives: a run moved to the newest and
    to the oldest date, a run deleted, then many new runs at once."""
    content = tmp_path / "content"
    shutil.copytree(SITE_CONTENT, content)
    held = HeldAnalysis()
    analysed(content, held)
    timed = timed_run(content)
    for date in ("2026-12-01T00:00:00Z", "1999-01-01T00:00:00Z"):
        document = json.loads(timed.read_text())
        document["spec"]["observedAt"] = date
        timed.write_text(json.dumps(document, indent=2) + "\n")
        analysis = analysed(content, held)
        assert analysis.newest == tuple(newest_first(analysis.runs.values()))
        assert (analysis.newest[0] if date > "2" else analysis.newest[-1]).entry.path.endswith(
            timed.name
        )
    timed.unlink()
    analysis = analysed(content, held)
    assert analysis.newest == tuple(newest_first(analysis.runs.values()))


def test_a_changed_resource_that_is_not_a_run_drops_what_was_held(tmp_path: Path) -> None:
    content = tmp_path / "content"
    shutil.copytree(SITE_CONTENT, content)
    held = HeldAnalysis()
    first = analysed(content, held)
    environment = sorted((content / "environments").glob("*.json"))[0]
    document = json.loads(environment.read_text())
    document["metadata"]["title"] = "Renamed host"
    environment.write_text(json.dumps(document, indent=2) + "\n")
    again = analysed(content, held)
    assert not any(again.runs[d] is run for d, run in first.runs.items())
    assert not any(a is b for a, b in zip(first.kernels, again.kernels, strict=True))


def test_derived_is_made_again_only_for_another_kernel_or_extra(tmp_path: Path) -> None:
    held = HeldAnalysis()
    analysis = analysed(SITE_CONTENT, held)
    kernel: Kernel = analysis.kernels[0]
    made: list[str] = []

    def make(word: str) -> str:
        made.append(word)
        return word

    assert held.derived("x", kernel, 1, lambda: make("a")) == "a"
    assert held.derived("x", kernel, 1, lambda: make("b")) == "a"
    assert held.derived("x", kernel, 2, lambda: make("c")) == "c"
    assert held.derived("x", kernel._replace(), 2, lambda: make("d")) == "d"  # an equal copy
    run = next(iter(analysis.runs.values()))
    assert held.derived("x", run, None, lambda: make("e")) == "e"  # its own slot
    assert held.derived("x", run, None, lambda: make("f")) == "e"
    assert held.derived("x", run._replace(), None, lambda: make("g")) == "g"
    assert made == ["a", "c", "d", "e", "g"]


def test_only_what_was_made_of_this_builds_runs_and_kernels_is_held(tmp_path: Path) -> None:
    content = tmp_path / "content"
    shutil.copytree(SITE_CONTENT, content)
    held = HeldAnalysis()
    first = analysed(content, held)
    for run in first.runs.values():
        held.derived("x", run, None, lambda: 1)
    for kernel in first.kernels:
        held.derived("x", kernel, None, lambda: 1)
    name = edit_median(timed_run(content))
    edited = analysed(content, held)
    subjects = [made[0] for made in held.made.values()]
    # The edited run's old facts and its old kernel are gone; the rest is still held.
    assert len(subjects) == len(first.runs) - 1 + len(first.kernels) - 1
    assert all(
        s is edited.runs.get(getattr(s, "digest", "")) or s in edited.kernels for s in subjects
    )
    assert not any(getattr(s, "entry", None) and s.entry.name == name for s in subjects)


def test_per_group_is_made_again_only_for_other_members_or_extra() -> None:
    held = HeldAnalysis()
    a, b, c = object(), object(), object()
    made: list[str] = []

    def make(key: str) -> str:
        made.append(key)
        return f"{key}{len(made)}"

    groups = {"x": ((a, b), 1), "y": ((c,), "same")}
    assert per_group(held, "w", groups, make) == {"x": "x1", "y": "y2"}
    assert per_group(held, "w", groups, make) == {"x": "x1", "y": "y2"}  # all held
    assert per_group(held, "other", {"x": ((a, b), 1)}, make) == {"x": "x3"}  # its own slot
    # Another member, members in another order, another extra: made again.
    assert per_group(held, "w", {"x": ((a, c), 1), "y": ((c,), "same")}, make)["x"] == "x4"
    assert per_group(held, "w", {"x": ((c, a), 1)}, make)["x"] == "x5"
    assert per_group(held, "w", {"x": ((c, a), 2)}, make)["x"] == "x6"
    # Only the last build's groups are held: "y" was not asked for last time.
    assert per_group(held, "w", {"y": ((c,), "same")}, make)["y"] == "y7"
    # Without anything held, everything is made.
    assert per_group(None, "w", {"y": ((c,), "same")}, make)["y"] == "y8"
    # The site-wide inputs changed: nothing held is used.
    held.site("another site")
    assert per_group(held, "w", {"y": ((c,), "same")}, make)["y"] == "y9"
    assert per_group(held, "w", {"y": ((c,), "same")}, make)["y"] == "y9"


def test_same_is_equal_only_to_the_very_object() -> None:
    one, equal = [1], [1]
    assert Same(one) == Same(one) and hash(Same(one)) == hash(Same(one))
    assert Same(one) != Same(equal)
    assert (Same(one), "x") != (Same(equal), "x")
    assert Same(one) != one


def test_an_order_kept_from_the_last_build_is_the_order_sorted_again() -> None:
    runs = list(analysed(SITE_CONTENT, HeldAnalysis()).runs.values())
    key = operator.attrgetter("digest")
    last = sorted(runs[:-3], key=key)
    # Some gone, some new, given in any order: as sorted.
    now = runs[2:][::-1]
    kept = kept_in_order(last, now, key)
    assert kept == sorted(now, key=key) and kept is not last
    assert all(a is b for a, b in zip(kept, sorted(now, key=key), strict=True))
    # Nothing held, or many new: sorted whole.
    assert kept_in_order([], now, key) == sorted(now, key=key)
    assert kept_in_order(last[:1], now, key) == sorted(now, key=key)


def _kernel_view(kernel: Kernel) -> tuple[object, ...]:
    """A kernel as its pages read it, its resources by digest (loaded anew, not equal objects)."""
    series = tuple((s.key, s.label, s.renamed, s.baseline_role) for s in kernel.series)
    runs = tuple(run.digest for run in kernel.runs)
    return (kernel.key, kernel.title, runs, series, kernel.pass_names, kernel.environments)


def test_a_changed_kernels_order_is_patched_and_equals_a_fresh_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A held analysis looks up by place only the resources beside a change (the rest are
    compared as pointers, a stretch at a time), patches its groups by kernel and by cohort, and
    puts a changed kernel's new runs in the last build's order of its runs (`_in_kernel_order`),
    reading a few runs' sort keys rather than every run's; after an edit, a new run and a run
    deleted, its runs, cohorts and kernels are what analysing anew makes of them."""
    content = tmp_path / "content"
    shutil.copytree(SITE_CONTENT, content)
    state = State()  # as `sitegen serve` holds it: an unchanged file's resources are kept

    def held_analysis() -> Analysis:
        checked = check_content(
            content,
            load_cache=state.loads,
            held_loads=state.held_loads,
            held=state.analysis,
            held_resolution=state.resolution,
        )
        assert checked.ok and checked.analysis is not None
        return checked.analysis

    held_analysis()
    layer_norm = sorted((content / "runs").glob("liger-layer-norm-*.json"))
    keys_read = []
    kernel_order = sitegen.analysis.kernels._kernel_order

    def counted(run: sitegen.analysis.kernels.RunFacts) -> tuple[str, str]:
        keys_read.append(run.digest)
        return kernel_order(run)

    monkeypatch.setattr(sitegen.analysis.kernels, "_kernel_order", counted)
    places: list[str] = []
    place = sitegen.analysis.kernels._place

    def looked_up(entry: sitegen.analysis.kernels.LoadedResource) -> tuple[str, str, str, str]:
        places.append(entry.digest)
        return place(entry)

    monkeypatch.setattr(sitegen.analysis.kernels, "_place", looked_up)

    def added() -> None:
        document = json.loads(layer_norm[1].read_text())
        document["metadata"]["name"] += "-again"
        document["spec"]["timing"]["latencyNs"]["median"] += 7
        (layer_norm[1].parent / "added-run.json").write_text(json.dumps(document))

    for change in (
        lambda: edit_median(layer_norm[0]),
        added,
        lambda: layer_norm[2].unlink(),
        lambda: edit_median(layer_norm[0]),
    ):
        change()
        keys_read.clear()
        places.clear()
        now = held_analysis()
        read = len(keys_read)
        # Only the resources beside a change are looked up by place, not every run.
        assert 0 < len(places) <= 2 * REPLACED_AT_MOST + 4 < len(now.runs)
        runs = max(len(k.runs) for k in now.kernels)
        assert 0 < read < runs  # a few runs' keys (by bisection), not a sort of them all
        fresh = check_content(content).analysis
        assert fresh is not None
        assert [_kernel_view(k) for k in now.kernels] == [_kernel_view(k) for k in fresh.kernels]
        # The runs and their cohorts, patched: in the order analysing anew gives.
        assert list(now.runs) == list(fresh.runs)
        assert {c: [r.digest for r in runs] for c, runs in now.cohorts.items()} == {
            c: [r.digest for r in runs] for c, runs in fresh.cohorts.items()
        }
        assert now.newest == tuple(newest_first(now.runs.values()))


def test_a_gone_kernels_cohort_parts_are_dropped(tmp_path: Path) -> None:
    """What was made of a kernel's cohorts (`kernel_of_cohorts`) is held while the kernel is,
    for every use, and nothing of it once the kernel is gone (with its operation: a change
    of a resource that is not a run, which drops all that was held)."""
    content = tmp_path / "content"
    shutil.copytree(SITE_CONTENT, content)
    held = HeldAnalysis()
    first = analysed(content, held)

    def parts(analysis: Analysis) -> dict[str, int]:
        return sitegen.analysis.kernels.per_kernel_of_cohorts(
            analysis, "count", lambda kernel, runs: len(runs), lambda kernel, got: len(got)
        )

    def history(analysis: Analysis) -> None:  # a use of one kernel at a time, as history's
        for kernel in analysis.kernels:
            sitegen.analysis.kernels.kernel_of_cohorts(
                held, "history", kernel, analysis.cohorts, lambda k, runs: 0, lambda k, got: 0
            )

    counted = parts(first)
    assert counted and history(first) is None
    keys = {kernel.key for kernel in first.kernels}
    assert set(held.cohort_parts["count"]) == set(held.cohort_parts["history"]) == keys
    # The kernel with runs first in order goes: its operation, and every resource that
    # names it or one of those (its implementations, workloads and runs).
    gone = next(kernel.key for kernel in first.kernels if kernel.runs)
    resources = check_content(content).catalog.resources
    named, files = {gone}, set()
    while grown := {
        r for r in resources if r.digest not in named and any(d.encode() in r.raw for d in named)
    }:
        named |= {r.digest for r in grown}
        files |= {r.path for r in grown}
    files |= {r.path for r in resources if r.digest == gone}
    for shown in files:
        (content / shown.split("/", 1)[1]).unlink()
    after = analysed(content, held)
    assert gone not in {kernel.key for kernel in after.kernels}
    assert gone not in held.cohort_parts.get("count", {})
    assert parts(after) == {key: count for key, count in counted.items() if key != gone}
    assert history(after) is None
    for use in ("count", "history"):
        assert set(held.cohort_parts[use]) == keys - {gone}, use


def test_the_resources_stretches_are_found_once_a_build_for_their_three_uses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A held build compares its resources with the last build's once (`HeldAnalysis.
    stretches`): the analysis, the manifest's entries and the export share what it found.
    Other pairs of sequences are compared each time they are asked."""
    from sitegen.pipeline import build_site
    from tests.publish.test_incremental import cold
    from tests.test_pipeline import tree

    content = tmp_path / "content"
    shutil.copytree(SITE_CONTENT, content)
    out = tmp_path / "public"
    asked: list[tuple[int, int]] = []
    same_stretches = sitegen.analysis.kernels.same_stretches

    def counted(last: Any, now: Any, *rest: Any) -> Any:
        asked.append((id(last), id(now)))
        return same_stretches(last, now, *rest)

    monkeypatch.setattr(sitegen.analysis.kernels, "same_stretches", counted)
    state = State()
    assert build_site(content, out, state=state).out_dir is not None
    held = state.analysis
    last = held.resources
    edit_median(timed_run(content))
    asked.clear()
    assert build_site(content, out, state=state).out_dir is not None
    assert asked == [(id(last), id(held.resources))]
    assert held.found_stretches is not None and held.found_stretches[1] is held.resources
    one, two = (object(), object()), (object(),)
    asked.clear()
    assert held.stretches(one, two) == held.stretches(one, two) == []
    assert len(asked) == 1  # asked again: found once
    held.stretches(one, (object(),))
    assert len(asked) == 2  # another tuple: found anew
    assert tree(out) == cold(content, tmp_path, "edited")


def test_a_revisions_lineage_is_held_while_its_digest_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Held between builds, a revision's lineage is made once: again only for a revision new
    (or changed: a new digest), and the series are those an analysis from scratch gives."""
    content = with_commits(tmp_path, [50_000] * 5 + [65_000] * 4, revisions=True)
    lineage = sitegen.analysis.kernels._lineage
    made: list[str] = []

    def counted(revision: Any) -> str:
        made.append(revision.metadata["name"])
        return lineage(revision)

    monkeypatch.setattr(sitegen.analysis.kernels, "_lineage", counted)
    held = HeldAnalysis()
    analysed(content, held)
    assert len(made) == 9  # a revision at each commit
    made.clear()
    edit_median(timed_run(content))
    again = analysed(content, held)
    assert made == []
    implementations = content / "implementations"
    at = json.loads((implementations / "commit-at-1.json").read_text())
    at["metadata"]["name"] += "-again"
    at["spec"]["projectRevision"] = {"commit": "ab" * 20}
    (implementations / "again.json").write_text(json.dumps(at))
    added = analysed(content, held)
    assert made == [at["metadata"]["name"]]
    scratch = sitegen.analysis.kernels.analyse(check_content(content).catalog)
    for analysis in (again, added):
        lineages = {digest: run.lineage for digest, run in analysis.runs.items()}
        assert lineages.items() <= {d: r.lineage for d, r in scratch.runs.items()}.items()
    assert {d: r.lineage for d, r in added.runs.items()} == {
        d: r.lineage for d, r in scratch.runs.items()
    }
