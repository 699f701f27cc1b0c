"""The lookups pages share (sitegen/site/lookup.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sitegen.pipeline import build_site
from sitegen.publish.incremental import State
from sitegen.site.lookup import SiteLookup, _relisted, listed_order
from sitegen.site.plan import plan_site
from sitegen.site.records import LazyPage
from sitegen.site.resource import KINDS
from tests.publish.test_incremental import cold, edit, run_files, site_content
from tests.site.planned import held_builds, site_inputs
from tests.test_pipeline import tree


def test_resource_run_lists_are_ordered_where_their_pages_are_planned(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Planning the site (one CPU, before the render workers fork) only counts a resource's
    runs for its pages' paths; ordering them waits for the page, in a render worker. An
    incremental build's keys need the order, so it is made there; both plan the same pages."""
    import sitegen.site.lookup

    monkeypatch.setattr(sitegen.site.lookup, "RUNS_PER_PAGE", 4)  # continuations in the fixture
    ordered: list[int] = []
    original = SiteLookup._resource_runs

    def resource_runs(self: Any, entry: Any) -> Any:
        ordered.append(1)
        return original(self, entry)

    monkeypatch.setattr(SiteLookup, "_resource_runs", resource_runs)
    plain = plan_site(site_inputs())
    assert ordered == []
    keyed = plan_site(site_inputs(keyed=True))
    assert ordered
    assert [p.path for p in plain.pages] == [p.path for p in keyed.pages]
    continuations = [p for p in plain.pages if "/runs/" in p.path and isinstance(p, LazyPage)]
    assert continuations, "the fixture's resources list more runs than one page holds"
    ordered.clear()
    page = continuations[0]
    twin = next(p for p in keyed.pages if p.path == page.path)
    assert page.built().context == twin.built().context
    assert ordered


def test_a_resources_run_count_is_its_users_count_a_projects_through_its_implementations() -> None:
    inputs = site_inputs()
    lookup = SiteLookup(inputs)
    catalog = inputs.catalog
    counted = {
        entry.digest: lookup.resource_run_count(entry)
        for entry in catalog.by_digest.values()
        if entry.kind != "BenchmarkRun"
    }
    expected = {
        digest: sum(
            1
            for source in lookup.run_sources(catalog.by_digest[digest])
            for user in catalog.users(source)
            if user.kind == "BenchmarkRun"
        )
        for digest in counted
    }
    assert counted == expected
    assert 0 in counted.values() and max(counted.values()) > 4
    projects = [e for e in catalog.of_kind("SoftwareProject") if counted[e.digest]]
    assert projects, "a project counts its implementations' runs"


def test_a_resources_runs_are_its_run_users_in_listed_order() -> None:
    """The lists made in one pass over the runs are what sorting each resource's run users
    (a project's: its implementations') by `listed_order` gives."""
    inputs = site_inputs()
    lookup = SiteLookup(inputs)
    catalog = inputs.catalog
    resources = [e for e in catalog.by_digest.values() if e.kind != "BenchmarkRun"]
    for entry in resources:
        users = [
            lookup.runs[user.digest]
            for source in lookup.run_sources(entry)
            for user in catalog.users(source)
            if user.kind == "BenchmarkRun"
        ]
        assert lookup.resource_runs(entry) == sorted(users, key=listed_order), entry.path
    listed = [e for e in resources if len(lookup.resource_runs(e)) > 1]
    assert {e.kind for e in listed} >= {"SoftwareProject", "ExecutionEnvironment"}
    merged = [
        e
        for e in catalog.of_kind("SoftwareProject")
        if sum(1 for d in lookup.run_sources(e) if catalog.users(d, "BenchmarkRun")) > 1
    ]
    assert merged, "a project whose implementations' lists are merged"


def test_held_run_lists_are_patched_to_what_all_runs_would_list(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a held analysis, each resource's run list (a project's included) is the last
    build's with the runs new, changed, moved or gone since put in or taken out: after each
    kind of change, every list is the one made from all runs, run for run, though the held
    lists were made from all runs only once; and a list not as the patch expects it is made
    again from all runs."""
    content, out = site_content(tmp_path), tmp_path / "public"
    state = State()
    made_whole = 0
    every_list = SiteLookup._every_list

    def counted(self: SiteLookup) -> Any:
        nonlocal made_whole
        made_whole += self.analysis.held is not None
        return every_list(self)

    monkeypatch.setattr(SiteLookup, "_every_list", counted)
    files = run_files(content)
    timed = [p for p in files if "timing" in json.loads(p.read_text())["spec"]]

    def slower(document: dict[str, Any]) -> None:
        document["spec"]["timing"]["latencyNs"]["median"] += 1

    def changes() -> Iterator[str]:
        yield "first build"
        edit(timed[0], slower)
        yield "a run edited"
        timed[1].rename(timed[1].with_name("moved.json"))
        yield "a run moved"
        timed[2].unlink()
        yield "a run deleted"
        copy = json.loads(timed[3].read_text())
        copy["metadata"]["name"] += "-again"
        copy["spec"]["timing"]["latencyNs"]["median"] += 7
        (timed[3].parent / "again.json").write_text(json.dumps(copy))
        yield "a run added"
        edit(timed[0], slower)
        edit(timed[3], slower)
        yield "two runs edited"

    for change in changes():
        assert build_site(content, out, state=state).out_dir is not None, change
        held = state.analysis.listed_by
        assert held, change
        plain = SiteLookup(site_inputs(content, keyed=True))
        catalog = plain.catalog
        for kind in KINDS:
            for entry in catalog.of_kind(kind):
                expected = [run.digest for run in plain.resource_runs(entry)]
                assert [run.digest for run in held.get(entry.digest, [])] == expected, change
        assert tree(out) == cold(content, tmp_path, change.replace(" ", "-"))
    assert made_whole == 1
    # A run to take out that is not where the lists' order puts it: every list made again.
    gone = next(iter(state.analysis.facts.values()))
    lists = {digest: list(runs) for digest, runs in state.analysis.listed_by.items()}
    assert not _relisted(lists, [(False, gone), (False, gone)], {})


def test_held_site_wide_tallies_are_summed_from_the_kernels_held(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a held analysis, the runs referencing each resource, each source's tally and every
    run's credits are summed from each kernel's tally, made again only for a kernel whose runs
    changed: after each kind of change they equal those made from all runs."""
    import sitegen.site.lookup

    tallied: list[str] = []
    kernel_tally = sitegen.site.lookup.kernel_tally
    monkeypatch.setattr(
        sitegen.site.lookup,
        "kernel_tally",
        lambda kernel: tallied.append(kernel.key) or kernel_tally(kernel),
    )
    for change, lookup, plain in held_builds(tmp_path, monkeypatch):
        kernels = len(lookup.analysis.kernels)
        if change == "first build":
            assert len(tallied) == kernels > 2
        else:
            assert 0 < len(tallied) <= 1 < kernels, change  # the changed run's kernel only
        tallied.clear()
        assert lookup.run_counts == plain.run_counts, change
        assert lookup.sources == plain.sources and list(lookup.sources) == sorted(plain.sources)
        assert list(lookup.source_counts.items()) == list(plain.source_counts.items())
        assert lookup.every_attribution() == plain.attributions(plain.runs.values())
        assert sum(tally.runs for tally in plain.sources.values()) == len(plain.runs)


def test_a_held_lookup_lists_each_resources_users_as_a_fresh_one_keeping_unchanged_items(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    last: dict[str, dict[str, str | None]] = {}
    for change, lookup, plain in held_builds(tmp_path, monkeypatch):
        gpu = lookup.catalog.of_kind("ExecutionEnvironment")[0].digest
        for entry in lookup.catalog.resources:
            users = lookup.used_by(entry.digest)
            expected = [
                {"kind": u.kind, "digest": u.digest, "url": plain.urls.link(u.digest)}
                for u in plain.catalog.users(entry.digest)
            ]
            assert users == expected, change
        items = {str(item["digest"]): item for item in lookup.used_by(gpu)}
        kept = items.keys() & last.keys()
        assert not last or (kept and all(items[d] is last[d] for d in kept)), change
        assert plain.used_by(gpu) == list(items.values())  # held nowhere: made each time
        last = items
