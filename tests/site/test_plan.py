"""The whole site's plan (sitegen/site/plan.py)."""

from __future__ import annotations

import pytest

from sitegen.site import plan
from sitegen.site.plan import plan_site
from sitegen.site.resource import KINDS
from sitegen.superseded import Superseded, asking
from tests.site.planned import site_inputs


class Stop(Exception):
    pass


def test_planning_asks_whether_a_newer_change_waits_and_may_stop_there(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Under `asking` (`sitegen serve`, once the saved run's page is published), planning
    asks first, after the home page and within its rating of every run, after the kernels,
    each batch of run pages, each resource and each kind of resource, the lists, the
    histories and the last pages, and before the feeds and the sitemap; asking changes no
    page, and what the question raises stops the planning."""
    inputs = site_inputs(keyed=True)
    paths = [page.path for page in plan_site(inputs).pages]
    resources = sum(len(inputs.catalog.of_kind(kind)) for kind in KINDS)
    asked = 0

    def superseded() -> bool:
        nonlocal asked
        asked += 1
        return False

    with asking(superseded):
        assert [page.path for page in plan_site(inputs).pages] == paths
    # first, home (after 4 in its rating), kernels, one batch of runs, each resource and
    # each of the 6 kinds, lists, search and the like, histories, the last pages, the feeds,
    # the sitemap
    assert asked == 1 + 4 + 1 + 1 + 1 + resources + len(KINDS) + 6
    monkeypatch.setattr(plan, "RUNS_BETWEEN", 10)  # the fixture's runs in batches of 10
    runs = len(inputs.analysis.runs)
    asked = 0
    with asking(superseded):
        assert [page.path for page in plan_site(inputs).pages] == paths
    expected = 1 + 4 + 1 + -(-runs // 10) + 1 + resources + len(KINDS) + 6
    assert asked == expected
    plan_site(inputs)  # outside `asking`: never asks
    assert asked == expected
    with asking(lambda: True), pytest.raises(Superseded):
        plan_site(inputs)
