"""site/lists.py: the list of runs' page keys under a held analysis."""

from __future__ import annotations

from pathlib import Path

import pytest

import sitegen.site.lists
import sitegen.site.lookup
from sitegen.content.loaded import LoadedResource
from sitegen.site.lists import list_pages
from sitegen.site.lookup import SiteLookup
from sitegen.site.records import LazyPage, Link, Page
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


def kind_lists(lookup: SiteLookup) -> dict[str, Page]:
    """The list pages of the kinds of resources (GPUs, implementations, projects, protocols,
    workloads), by path."""
    return {
        page.path: page
        for page in list_pages(lookup)
        if isinstance(page, Page) and page.path not in ("kernels/", "runs/")
    }


def test_held_kind_lists_are_the_last_builds_pages_while_their_run_counts_are(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a held analysis (`sitegen serve`), a kind's list page is the last build's very
    page while each of its resources has as many runs: an edited or moved run makes no row.
    A deleted run makes again the lists of the kinds it counted in. Each is the page a lookup
    made from nothing plans."""
    made: list[str] = []
    list_row = sitegen.site.lists.list_row

    def counted(lookup: SiteLookup, entry: LoadedResource) -> tuple[Link, ...]:
        made.append(entry.kind)
        return list_row(lookup, entry)

    monkeypatch.setattr(sitegen.site.lists, "list_row", counted)
    last: dict[str, Page] = {}
    for change, lookup, plain in held_builds(tmp_path, monkeypatch):
        kinds = set(made)
        made.clear()
        held = kind_lists(lookup)
        assert made == [], change  # the build's pages, held
        assert len(held) == 5 and held == kind_lists(plain), change
        made.clear()
        if change == "first build":
            assert len(kinds) == 5, kinds
        elif change == "a run deleted":
            counted_in = {"ExecutionEnvironment", "ImplementationRevision", "BenchmarkProtocol"}
            assert counted_in | {"WorkloadCase"} <= kinds, kinds
            assert [path for path in held if held[path] is last[path]] == ["projects/"]
        else:
            assert kinds == set(), change
            assert all(held[path] is last[path] for path in held), change
        last = held
