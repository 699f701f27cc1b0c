"""The whole site's plan (sitegen/site/plan.py)."""

from __future__ import annotations

import pytest

from sitegen.site import plan
from sitegen.site.plan import plan_site
from tests.site.planned import site_inputs


class Stop(Exception):
    pass


def test_planning_asks_between_kinds_of_page_and_may_stop_there(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`between` is called first, after the home page, the kernels, each batch of run pages,
    each kind of resource, the lists and the histories; it changes nothing it does not stop,
    and what it raises stops the planning."""
    inputs = site_inputs(keyed=True)
    paths = [page.path for page in plan_site(inputs).pages]
    asked = 0

    def between() -> None:
        nonlocal asked
        asked += 1

    assert [page.path for page in plan_site(inputs, between=between).pages] == paths
    assert asked == 12  # first, home, kernels, one batch of runs, 6 kinds, lists, histories
    monkeypatch.setattr(plan, "RUNS_BETWEEN", 10)  # the fixture's runs in batches of 10
    runs = len(inputs.analysis.runs)
    asked = 0
    assert [page.path for page in plan_site(inputs, between=between).pages] == paths
    assert asked == 11 + -(-runs // 10)

    def stop() -> None:
        raise Stop

    with pytest.raises(Stop):
        plan_site(inputs, between=stop)
