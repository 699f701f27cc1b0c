"""A run's page (sitegen/site/run.py)."""

from __future__ import annotations

from sitegen.site.run import RunContext
from tests.site.planned import fixture_site


def test_run_context_spells_out_its_value_and_credits_its_source() -> None:
    _, site = fixture_site()
    pages = {p.path: p for p in site.pages}
    run = pages["runs/f0cf6dd69e048a9b/"].context
    assert isinstance(run, RunContext)
    assert run.meta.title == "LayerNorm · liger · backward"
    (headline,) = run.headlines
    assert (headline.value, headline.exact, headline.spread) == (
        "0.578 ms",
        "577,632 ns",
        "p20 0.575 / p80 0.580 ms",
    )
    assert [a.text for a in run.meta.attributions] == [
        "Liger-Kernel, BSD-2-Clause, Copyright 2024 LinkedIn Corporation"
    ]
