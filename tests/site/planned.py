"""The fixture site as planned, for the site model's tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from sitegen.analysis.kernels import Analysis, HeldAnalysis, analyse
from sitegen.content.records import load_records
from sitegen.content.reports import load_reports
from sitegen.pipeline import check_content
from sitegen.site.lookup import SiteInputs, SiteLookup
from sitegen.site.plan import plan_site
from sitegen.site.records import Site
from sitegen.site.urls import plan_urls
from tests.conftest import FIXTURES

CONTENT = FIXTURES / "site" / "content"


def site_inputs(
    content: Path = CONTENT, keyed: bool = False, held: HeldAnalysis | None = None
) -> SiteInputs:
    """The inputs of planning the site of `content`, analysed with `held` if given."""
    catalog = check_content(content).catalog
    analysis = analyse(catalog, held)
    urls = plan_urls(catalog, analysis.kernels, None)
    reports, _ = load_reports(content)
    records, _ = load_records(content)
    return SiteInputs(catalog, analysis, urls, reports, None, keyed=keyed, records=records)


def fixture_site(content: Path = CONTENT) -> tuple[Analysis, Site]:
    inputs = site_inputs(content)
    return inputs.analysis, plan_site(inputs)


HELD_CHANGES = ("a run edited", "a run moved", "a run deleted")


def kernels_made(monkeypatch: pytest.MonkeyPatch, module: ModuleType, name: str) -> list[str]:
    """The kernel keys `module.name(lookup, key)` is called with from now on, in order."""
    made: list[str] = []
    function = getattr(module, name)
    monkeypatch.setattr(module, name, lambda lookup, key: made.append(key) or function(lookup, key))
    return made


def cohorts_made(
    monkeypatch: pytest.MonkeyPatch, module: ModuleType, name: str
) -> list[tuple[str, tuple[str, str, str]]]:
    """The (kernel key, cohort) `module.name(bound, kernel, runs)` is called with from now on,
    in order: a part of a kernel's value (`kernel_of_cohorts`)."""
    made: list[tuple[str, tuple[str, str, str]]] = []
    function = getattr(module, name)

    def part(bound: Any, kernel: Any, runs: Any) -> Any:  # bound: the lookup, or a threshold
        made.append((kernel.key, runs[0].cohort))
        return function(bound, kernel, runs)

    monkeypatch.setattr(module, name, part)
    return made


def held_builds(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    changes: tuple[str, ...] = HELD_CHANGES,
    content: Path | None = None,
) -> Iterator[tuple[str, SiteLookup, SiteLookup]]:
    """Builds of a copy of the fixture content (or of `content`, changed in place) with a
    state held in memory (`sitegen serve`): the first, then one after each change named
    (`HELD_CHANGES`); each yields the change, the lookup the held build planned its site
    with, and one made from nothing (no held analysis) of the same content."""
    import json

    import sitegen.site.plan
    from sitegen.pipeline import build_site
    from sitegen.publish.incremental import State
    from tests.publish.test_incremental import edit, run_files, site_content

    content = content or site_content(tmp_path)
    out = tmp_path / "public"
    lookups: list[SiteLookup] = []
    sources_page = sitegen.site.plan.sources_page
    monkeypatch.setattr(
        sitegen.site.plan,
        "sources_page",
        lambda lookup: lookups.append(lookup) or sources_page(lookup),
    )
    timed = [p for p in run_files(content) if "timing" in json.loads(p.read_text())["spec"]]

    def slower(document: dict[str, Any]) -> None:
        document["spec"]["timing"]["latencyNs"]["median"] += 1

    state = State()
    for change in ("first build", *changes):
        if change == "a run edited":
            edit(timed[0], slower)
        elif change == "a run moved":
            timed[1].rename(timed[1].with_name("moved.json"))
        elif change == "a run deleted":
            timed[2].unlink()
        elif change != "first build":
            raise ValueError(change)
        assert build_site(content, out, state=state).out_dir is not None, change
        lookup = lookups[-1]
        assert lookup.analysis.held is not None
        plain = SiteLookup(site_inputs(content, keyed=True))
        assert plain.analysis.held is None
        yield change, lookup, plain
