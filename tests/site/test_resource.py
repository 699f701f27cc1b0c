"""site/resource.py: a resource's page."""

from __future__ import annotations

from pathlib import Path

import pytest

import sitegen.site.resource
from sitegen.site.resource import KINDS, resource_page
from tests.site.planned import held_builds, kernels_made


def test_a_held_resource_pages_head_is_summed_from_its_kernels_tallies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a held analysis, a resource page's description, credits and search tags come from
    each kernel's tally of its runs, made again only for a changed run's kernel: every
    resource page's head equals the one made from its runs."""
    tallied = kernels_made(monkeypatch, sitegen.site.resource, "_resource_tallies_of_kernel")
    for change, lookup, plain in held_builds(tmp_path, monkeypatch):
        tallied.clear()
        held = {
            entry.digest: resource_page(lookup, entry).context.meta  # type: ignore[attr-defined]
            for kind in KINDS
            for entry in lookup.catalog.of_kind(kind)
        }
        # Made when a page first asks (the build's, or here): only a changed run's kernel's.
        assert len(tallied) <= (len(lookup.analysis.kernels) if change == "first build" else 1)
        assert held == {
            entry.digest: resource_page(plain, entry).context.meta  # type: ignore[attr-defined]
            for kind in KINDS
            for entry in plain.catalog.of_kind(kind)
        }, change
        assert any(len(meta.search.filters) > 1 for meta in held.values() if meta.search)
        assert any(meta.attributions for meta in held.values())
