"""site/resource.py: a resource's page."""

from __future__ import annotations

from pathlib import Path

import pytest

import sitegen.site.resource
from sitegen.site.resource import KINDS, resource_page
from tests.site.planned import cohorts_made, held_builds


def test_a_held_resource_pages_head_is_summed_from_its_kernels_tallies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a held analysis, a resource page's description, credits and search tags come from
    each kernel's tally of its runs, made again only for a changed run's kernel, and of it
    only for the changed run's cohort: every resource page's head equals the one made from
    its runs."""
    tallied = cohorts_made(monkeypatch, sitegen.site.resource, "_cohort_tallies")
    for change, lookup, plain in held_builds(tmp_path, monkeypatch):
        held = {
            entry.digest: resource_page(lookup, entry).context.meta  # type: ignore[attr-defined]
            for kind in KINDS
            for entry in lookup.catalog.of_kind(kind)
        }
        # Made when a page first asks (the build's, or here): every cohort of every kernel at
        # first, then the changed run's alone (none where its cohort is gone with it).
        if change == "first build":
            cohorts = {(k.key, r.cohort) for k in lookup.analysis.kernels for r in k.runs}
            assert sorted(tallied) == sorted(cohorts)
        else:
            assert len(tallied) <= 1, change
        assert held == {
            entry.digest: resource_page(plain, entry).context.meta  # type: ignore[attr-defined]
            for kind in KINDS
            for entry in plain.catalog.of_kind(kind)
        }, change
        assert any(len(meta.search.filters) > 1 for meta in held.values() if meta.search)
        assert any(meta.attributions for meta in held.values())
        tallied.clear()  # and those the plain lookup made
