"""site/lists.py: the list of runs' page keys under a held analysis."""

from __future__ import annotations

from pathlib import Path

import pytest

import sitegen.site.lists
import sitegen.site.lookup
from sitegen.site.lists import list_pages
from sitegen.site.lookup import SiteLookup
from sitegen.site.records import LazyPage
from tests.site.planned import held_builds


def run_list_keys(lookup: SiteLookup) -> dict[str, str | None]:
    return {
        page.path: page.key
        for page in list_pages(lookup)
        if isinstance(page, LazyPage) and page.path.startswith("runs/")
    }


def test_held_run_list_keys_are_made_again_only_for_pages_whose_runs_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each page of the list of runs keeps its key while its runs are the very same objects
    (`sitegen serve`) and the count of runs is the same; after an edit, a move and a deletion
    the keys equal those a lookup made from nothing gives."""
    monkeypatch.setattr(sitegen.site.lookup, "RUNS_PER_PAGE", 4)  # the fixture's runs: 7 pages
    keyed: list[int] = []
    page_key = SiteLookup.page_key

    def counted(lookup: SiteLookup, *parts: str, **runs: object) -> str | None:
        if parts[0].startswith("runs") and parts[0][4:].isdigit():
            keyed.append(int(parts[0][4:]))
        return page_key(lookup, *parts, **runs)  # type: ignore[arg-type]

    monkeypatch.setattr(SiteLookup, "page_key", counted)
    for change, lookup, plain in held_builds(tmp_path, monkeypatch):
        pages = lookup.page_count(len(lookup.analysis.newest))
        assert pages > 4, change
        during = sorted(set(keyed))  # the pages the build keyed
        if change == "a run deleted":  # one run fewer: in every page's key
            assert during == list(range(1, pages + 1))
        elif change != "first build":  # the pages from the run's old place to its new one
            assert 0 < len(during) < pages, change
        keyed.clear()
        held = run_list_keys(lookup)
        assert keyed == [], change  # planned by the build: listed again, nothing keyed again
        assert held == run_list_keys(plain), change
        assert all(held.values()) and len(set(held.values())) == pages, change
        if change == "first build":
            keyed.clear()
            continue
        keyed.clear()
        lookup.analysis.held.groups["run lists"].clear()  # type: ignore[union-attr]
        run_list_keys(lookup)
        assert sorted(keyed) == list(range(1, pages + 1)), change  # all, once nothing is held
        keyed.clear()
