"""The whole site's plan (sitegen/site/plan.py)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

import sitegen.process
import sitegen.render.render
import sitegen.site.lookup
import sitegen.site.plan
import sitegen.site.resource
import sitegen.site.verdicts
from sitegen.analysis.kernels import HeldAnalysis
from sitegen.pipeline import build_site, check_content
from sitegen.publish.incremental import State
from sitegen.site import plan
from sitegen.site.lookup import SiteLookup
from sitegen.site.plan import in_path_order, plan_site
from sitegen.site.records import LazyPage
from sitegen.site.resource import KINDS
from sitegen.superseded import Superseded, asking
from tests.analysis.test_regressions import with_commits
from tests.publish.test_incremental import cold, edit, run_files, site_content
from tests.site.planned import site_inputs
from tests.test_pipeline import tree


class Stop(Exception):
    pass


def slower(document: dict[str, Any]) -> None:
    """An edit of a run: its median latency 1 ns more."""
    document["spec"]["timing"]["latencyNs"]["median"] += 1


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


def test_a_held_state_plans_again_only_the_run_pages_of_a_changed_kernel(
    tmp_path: Path,
) -> None:
    """With a state held in memory, a kernel's run pages are the last build's very objects
    while its keys are (`held_run_pages`); only the edited run's kernel's are planned again,
    and the site is byte for byte a cold build's."""
    content, out = site_content(tmp_path), tmp_path / "public"
    state = State()
    assert build_site(content, out, state=state).out_dir is not None
    before = {key: pages for key, (_, _, pages) in state.analysis.groups["run pages"].items()}
    assert sum(map(len, before.values())) == len(state.analysis.facts) > 10
    edited = next(p for p in run_files(content) if "timing" in json.loads(p.read_text())["spec"])

    edit(edited, slower)
    assert build_site(content, out, state=state).out_dir is not None
    after = {key: pages for key, (_, _, pages) in state.analysis.groups["run pages"].items()}
    shown = f"content/{edited.relative_to(content).as_posix()}"
    (kernel,) = {k for k, pages in after.items() for p in pages if p.subject.entry.path == shown}
    assert after.keys() == before.keys()
    assert {key for key in after if after[key] is not before[key]} == {kernel}
    # Of that kernel's, a page whose run and key are as before is the last build's object.
    held = {id(page.subject): page for page in before[kernel]}
    same = [held.get(id(page.subject)) for page in after[kernel]]
    pairs = list(zip(same, after[kernel], strict=True))
    assert any(page is old for old, page in pairs)
    for old, page in pairs:
        assert (page is old) == (old is not None and old.key == page.key), page.path
    edited_page = next(p for p in after[kernel] if p.subject.entry.path == shown)
    assert all(edited_page is not old for old in before[kernel])
    assert tree(out) == cold(content, tmp_path, "edited")


def test_a_held_state_makes_again_only_the_keys_of_the_changed_runs_resources(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a state held in memory, a resource's page keys are made again only where its
    runs include a run new, changed or gone since they were made (`held_resource_keys`):
    the edited run's implementation, workload, protocol and GPU, and its project; every
    other resource's are the last build's, and of those made again, only the slices of its
    list (a page's runs) that are not the very same runs are signed again. The site is a
    cold build's, byte for byte."""
    monkeypatch.setattr(sitegen.site.lookup, "RUNS_PER_PAGE", 2)  # lists of several pages
    content, out = site_content(tmp_path), tmp_path / "public"
    state = State()
    assert build_site(content, out, state=state).out_dir is not None
    before = dict(state.analysis.groups["resources"])
    signed: list[int] = []
    runs_signature = SiteLookup.runs_signature

    def counted(self: SiteLookup, runs: Any) -> str:
        runs = list(runs)
        signed.append(len(runs))
        return runs_signature(self, runs)

    monkeypatch.setattr(SiteLookup, "runs_signature", counted)
    edited = next(p for p in run_files(content) if "timing" in json.loads(p.read_text())["spec"])
    spec = json.loads(edited.read_text())["spec"]

    edit(edited, slower)
    assert build_site(content, out, state=state).out_dir is not None
    after = state.analysis.groups["resources"]
    assert after.keys() == before.keys() and not state.analysis.unlisted
    remade = {digest for digest in after if after[digest] is not before[digest]}
    references = {
        spec[f"{kind}Digest"] for kind in ("implementation", "workload", "protocol", "environment")
    }
    assert references <= remade
    catalog = check_content(content).catalog
    assert {catalog.by_digest[digest].kind for digest in remade - references} <= {"SoftwareProject"}
    assert len(remade) < len(after) // 2
    _, slices = state.analysis.slices
    pages = sum(len(slices[digest]) for digest in remade)
    assert pages > len(remade)  # several pages each
    # A cohort's ranking and the run's own page sign a few; the lists' slices far fewer.
    assert 0 < len([n for n in signed if n <= 2]) < pages
    monkeypatch.setattr(SiteLookup, "runs_signature", runs_signature)
    assert tree(out) == cold(content, tmp_path, "edited")  # with pages of two runs too


def test_a_held_state_sorts_the_pages_from_the_order_that_sorted_the_last_builds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`in_path_order` with a held analysis: the pages in path order build after build, as
    a sort from nothing orders them, whatever came, went or moved in the planned order."""
    shuffled = random.Random(38)

    def page(path: str) -> LazyPage:
        return LazyPage(path, "run.html", lambda: None, "k")

    def run() -> LazyPage:
        return page(f"runs/{shuffled.getrandbits(64):016x}/")

    pages = [run() for _ in range(3000)] + [page(""), page("kernels/a/"), page("kernels/b/")]
    shuffled.shuffle(pages)
    held = HeldAnalysis()
    patched: list[bool] = []
    patch = sitegen.site.plan.path_order_patched
    monkeypatch.setattr(
        sitegen.site.plan,
        "path_order_patched",
        lambda *args: patched.append((order := patch(*args)) is not None) or order,
    )
    for build in range(9):
        if build == 6:  # the same objects but a few: one of the same path, edited runs' new
            pages = pages.copy()  # paths, two pages swapped in the planned order
            pages[3] = page(pages[3].path)
            pages[11], pages[12] = run(), run()
            pages[20], pages[30] = pages[30], pages[20]
        elif build == 7:  # an edited run's path where another page's was (a clash)
            pages = pages.copy()
            pages[40] = page(pages[41].path)
        elif build == 1:  # the same paths, new objects and an edited run's new path
            pages = [page(p.path) for p in pages]
            pages[7] = run()
        elif build == 2:  # pages added among the others
            for _ in range(25):
                pages.insert(shuffled.randrange(len(pages)), run())
        elif build == 3:  # pages gone
            gone = set(shuffled.sample(range(len(pages)), 40))
            pages = [p for n, p in enumerate(pages) if n not in gone]
        elif build == 4:  # moved in the planned order, and as many come as gone
            pages = pages[1000:] + pages[:1000]
            pages[5:15] = [run() for _ in range(10)]
        elif build == 5:  # all new
            pages = [run() for _ in range(2000)]
        ordered = in_path_order(list(pages), held)
        assert [id(p) for p in ordered] == [id(p) for p in sorted(pages, key=lambda p: p.path)]
        assert [pages[n] for n in held.path_order] == ordered
        assert held.path_sorted == [p.path for p in ordered]
        # The last order patched where the same pages come, but for a few (and at first none).
        assert patched.pop() == (build in (6, 7, 8)), build
    assert in_path_order(list(pages), None) == sorted(pages, key=lambda p: p.path)


def test_a_held_state_keeps_the_pages_of_resources_lists_and_histories_that_did_not_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a state held in memory, a resource's pages, a page of the list of runs and a
    kernel's history pages are the last build's very objects (skipped on sight) while what
    their keys are made of is: after one run is edited, only the pages of its resources, of
    the list's pages that showed it and of its kernel's histories are planned again. The
    site is a cold build's, byte for byte."""
    monkeypatch.setattr(sitegen.site.lookup, "RUNS_PER_PAGE", 2)  # lists of several pages
    content, out = site_content(tmp_path), tmp_path / "public"
    state = State()
    assert build_site(content, out, state=state).out_dir is not None

    def held_pages(kind: str) -> dict[Any, list[LazyPage]]:
        held = state.analysis.pages[kind]
        return {
            key: found[2] if isinstance(found, tuple) else [found] for key, found in held.items()
        }

    kinds = ("resources", "run lists")
    before = {kind: held_pages(kind) for kind in kinds}
    edited = next(p for p in run_files(content) if "timing" in json.loads(p.read_text())["spec"])
    spec = json.loads(edited.read_text())["spec"]

    edit(edited, slower)
    assert build_site(content, out, state=state).out_dir is not None
    after = {kind: held_pages(kind) for kind in kinds}
    remade = {}
    for kind in kinds:
        assert after[kind].keys() == before[kind].keys(), kind
        # Kept: the very objects, not equal ones; of those planned again, a page of the same
        # key is kept too, any other is new.
        pairs = {
            key: list(zip(after[kind][key], before[kind][key], strict=True)) for key in after[kind]
        }
        remade[kind] = {key for key, pages in pairs.items() if any(a is not b for a, b in pages)}
        for key in remade[kind]:
            assert all((a is b) == (a.key == b.key) for a, b in pairs[key]), (kind, key)
        assert 0 < len(remade[kind]) < len(after[kind]), kind
    references = {
        spec[f"{kind}Digest"] for kind in ("implementation", "workload", "protocol", "environment")
    }
    assert references <= remade["resources"]
    assert tree(out) == cold(content, tmp_path, "edited")


def test_a_held_state_keeps_a_kernels_history_pages_while_its_keys_are_the_same(
    tmp_path: Path,
) -> None:
    """With a state held in memory, a kernel's history pages are the last build's very
    objects (skipped on sight) while the kernel and its history keys are: an edit of another
    kernel's run keeps them, an edit of one of its own runs plans them all again. The site is
    a cold build's, byte for byte."""
    content, out = with_commits(tmp_path, [50_000] * 3 + [65_000] * 3), tmp_path / "public"
    state = State()
    assert build_site(content, out, state=state).out_dir is not None
    held = dict(state.analysis.pages["history"])
    (kernel,) = {key for key, (_, _, pages) in held.items() if pages}  # LayerNorm's
    other = next(p for p in run_files(content) if "cross-entropy" in p.name)

    edit(other, slower)
    assert build_site(content, out, state=state).out_dir is not None
    assert state.analysis.pages["history"][kernel] is held[kernel]
    edit(content / "runs" / "commit-3.json", slower)
    assert build_site(content, out, state=state).out_dir is not None
    again = state.analysis.pages["history"][kernel][2]
    assert len(again) == len(held[kernel][2]) > 1
    assert state.analysis.pages["history"][kernel] is not held[kernel]
    # A page of the same key is the very object; the edited GPU's are new.
    pairs = list(zip(again, held[kernel][2], strict=True))
    assert all((page is old) == (page.key == old.key) for page, old in pairs)
    assert any(page is not old for page, old in pairs)
    assert tree(out) == cold(content, tmp_path, "edited")


def test_a_held_first_build_keeps_what_its_render_workers_would_have_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The GPU pages' wins and the resource pages' tallies, held per kernel across builds, are
    made as the site is planned where a held analysis holds none yet: the forked workers that
    render those pages would make them and lose them, and the first edit after would make
    every kernel's again. The next build, one run edited, makes only that kernel's."""
    monkeypatch.setattr(sitegen.process, "usable_cpus", lambda *_: 2)
    monkeypatch.setattr(sitegen.render.render, "PARALLEL_MIN_PAGES", 1)  # workers render
    content, out, state = site_content(tmp_path), tmp_path / "public", State()
    assert build_site(content, out, state=state).out_dir is not None
    held = state.analysis.groups
    assert {sitegen.site.verdicts.WINS, sitegen.site.resource.TALLIES} <= held.keys()
    wins = dict(held[sitegen.site.verdicts.WINS])
    assert len(wins) > 1
    edited = next(p for p in run_files(content) if "timing" in json.loads(p.read_text())["spec"])
    edit(edited, slower)
    made: list[str] = []
    kernel_wins = sitegen.site.verdicts._kernel_wins
    monkeypatch.setattr(
        sitegen.site.verdicts,
        "_kernel_wins",
        lambda lookup, kernel, parts: made.append(kernel.key) or kernel_wins(lookup, kernel, parts),
    )
    monkeypatch.setattr(sitegen.render.render, "PARALLEL_MIN_PAGES", 10**6)  # this process
    assert build_site(content, out, state=state).out_dir is not None
    assert len(made) == 1 and made[0] in wins
    assert tree(out) == cold(content, tmp_path, "edited")
