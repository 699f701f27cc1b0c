"""The regressions page and feed (sitegen/site/regressions.py)."""

from __future__ import annotations

from sitegen.site.records import Site
from sitegen.site.regressions import RegressionsContext
from tests.site.planned import fixture_site
from tests.site.test_history import page, site  # noqa: F401  (the module's fixture)


def test_every_step_is_listed_and_the_codes_regressions_fed(site: Site) -> None:  # noqa: F811
    context = page(site, "regressions/").context
    assert isinstance(context, RegressionsContext)
    (row,) = context.rows
    assert (row.kind, row.cause, row.pass_name, row.series) == (
        "regression",
        "code",
        "forward",
        "Liger",
    )
    assert row.change == "1.30× slower" and row.before.text == "0505050"
    assert row.history.href is not None and "/history/" in row.history.href
    assert context.kernels == ("LayerNorm",) and context.passes == ("forward",)
    feed = site.regressions_feed
    assert feed is not None and len(feed.entries) == 1
    assert feed.entries[0].updated == "2025-06-06T00:00:00Z"


def test_a_catalog_without_history_lists_nothing() -> None:
    _, plain = fixture_site()
    context = page(plain, "regressions/").context
    assert isinstance(context, RegressionsContext) and context.rows == ()
    assert plain.regressions_feed is not None and plain.regressions_feed.entries == ()
    assert not [p for p in plain.pages if "/history/" in p.path]
