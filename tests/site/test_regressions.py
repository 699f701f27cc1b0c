"""The regressions page and feed (sitegen/site/regressions.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

import sitegen.site.regressions
from sitegen.analysis.kernels import Kernel
from sitegen.analysis.regressions import Found
from sitegen.pipeline import build_site
from sitegen.publish.incremental import State
from sitegen.site.lookup import SiteLookup
from sitegen.site.records import Site
from sitegen.site.regressions import RegressionRow, RegressionsContext
from sitegen.site.urls import REGRESSIONS
from tests.analysis.test_regressions import at_commits, with_commits
from tests.analysis.test_verdicts import set_latency
from tests.publish.test_incremental import ENTROPY
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


def test_a_held_build_makes_again_the_rows_of_a_kernel_whose_steps_changed_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With `sitegen serve`'s held analysis, an edit makes again the rows of the kernel whose
    run changed, not those of a kernel left as it was; the page is a cold build's."""
    content = with_commits(tmp_path, [50_000] * 5 + [65_000] * 4, revisions=True)
    (entropy,) = (content / "runs").glob("*cross-entropy-forward-liger-*vocab4096-*")
    implementations = content / "implementations"
    at_commits(entropy, implementations / ENTROPY, [50_000] * 3 + [70_000] * 6, name="entropy")
    made: list[str] = []
    row = sitegen.site.regressions._row

    def counted(lookup: SiteLookup, kernel: Kernel, item: Found) -> RegressionRow:
        made.append(kernel.title)
        return row(lookup, kernel, item)

    monkeypatch.setattr(sitegen.site.regressions, "_row", counted)
    state, out = State(), tmp_path / "public"
    assert build_site(content, out, state=state).out_dir is not None
    assert sorted(made) == ["Cross-entropy loss", "LayerNorm"]
    made.clear()
    set_latency(content / "runs" / "entropy-9.json", 70_100, 69_400, 70_800)
    assert build_site(content, out, state=state).out_dir is not None
    assert made == ["Cross-entropy loss"]
    cold = tmp_path / "cold"
    assert build_site(content, cold).out_dir is not None
    for name in ("index.html", "index.json"):
        assert (out / REGRESSIONS / name).read_bytes() == (cold / REGRESSIONS / name).read_bytes()
