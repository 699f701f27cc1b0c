"""The lookups pages share (sitegen/site/lookup.py)."""

from __future__ import annotations

from typing import Any

import pytest

from sitegen.site.lookup import SiteLookup, listed_order
from sitegen.site.plan import plan_site
from sitegen.site.records import LazyPage
from tests.site.planned import site_inputs


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
