"""Incremental builds: after any change, the output is byte for byte a cold build's, and only
changed files are written."""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import shutil
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

import sitegen.analysis.regressions
import sitegen.content.load
import sitegen.content.walk
import sitegen.pipeline
import sitegen.process
import sitegen.publish.incremental
import sitegen.publish.output_watch
import sitegen.publish.write
import sitegen.render.assets
import sitegen.render.environment
import sitegen.render.render
import sitegen.site.lookup
import sitegen.site.plan
import sitegen.site.quality
from sitegen.analysis.quality import assess
from sitegen.analysis.speed_of_light import speed_of_light
from sitegen.pipeline import build_site
from sitegen.publish.incremental import (
    STATE_HEADER,
    HeldFiles,
    IncrementalOutput,
    Outputs,
    State,
    fingerprint,
    output_tree,
    read_state,
    state_path,
    write_state,
)
from sitegen.publish.output_watch import NotWatched, OutputWatch
from sitegen.render.errors import RenderError
from sitegen.render.render import Output
from sitegen.site.lookup import SiteLookup, listed_order
from sitegen.site.plan import KernelKeys
from sitegen.site.quality import marks_key, marks_of, run_figures
from sitegen.site.records import LazyPage, Page
from sitegen.site.resource import KINDS
from sitegen.site.run import run_key
from sitegen.user_cache import state_key, user_cache_dir
from tests.analysis.test_regressions import at_commits, with_commits
from tests.analysis.test_verdicts import set_latency
from tests.conftest import FIXTURES
from tests.site.planned import site_inputs
from tests.test_pipeline import tree

SITE_CONTENT = FIXTURES / "site" / "content"
LAYER_NORM = "liger-bench-layer-norm-liger.json"
ENTROPY = "liger-bench-cross-entropy-liger.json"


def cold(content: Path, tmp_path: Path, name: str) -> dict[str, bytes]:
    out = tmp_path / f"cold-{name}"
    assert build_site(content, out).out_dir is not None
    return tree(out)


def site_content(tmp_path: Path) -> Path:
    """A copy of the site fixture's content, to edit."""
    content = tmp_path / "content"
    shutil.copytree(SITE_CONTENT, content)
    return content


def inodes(root: Path) -> dict[str, tuple[int, int]]:
    return {
        p.relative_to(root).as_posix(): (p.stat().st_ino, p.stat().st_mtime_ns)
        for p in root.rglob("*")
        if p.is_file()
    }


def median_of(path: Path) -> int:
    return int(json.loads(path.read_text())["spec"]["timing"]["latencyNs"]["median"])


def run_files(content: Path) -> list[Path]:
    return sorted(p for p in (content / "runs").rglob("*.json"))


def edit(path: Path, change: object) -> None:
    document = json.loads(path.read_text())
    change(document)  # type: ignore[operator]
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n")


@pytest.fixture(params=[False, True], ids=["serial", "parallel"])
def parallel(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    # Run lists continue on numbered pages every 4 runs, so their keys are exercised too.
    monkeypatch.setattr(sitegen.site.lookup, "RUNS_PER_PAGE", 4)
    if request.param:
        monkeypatch.setattr(sitegen.content.load, "PARALLEL_MIN_FILES", 0)  # runs held compact
        monkeypatch.setattr(sitegen.process, "usable_cpus", lambda: 2)
        monkeypatch.setattr(sitegen.render.render, "PARALLEL_MIN_PAGES", 0)
        monkeypatch.setattr(sitegen.render.render, "CHUNK_PAGES", 5)
    return bool(request.param)


def test_incremental_equals_cold_after_each_change(tmp_path: Path, parallel: bool) -> None:
    content = tmp_path / "content"
    shutil.copytree(SITE_CONTENT, content)
    out = tmp_path / "public"
    assert build_site(content, out, incremental=True).out_dir is not None  # fills the cache
    assert (state_path(out) or tmp_path).is_file()
    assert tree(out) == cold(content, tmp_path, "0")
    runs = run_files(content)

    def step(name: str) -> dict[str, tuple[int, int]]:
        before = inodes(out)
        assert build_site(content, out, incremental=True).out_dir is not None
        assert tree(out) == cold(content, tmp_path, name), name
        # The output's entries as the patch left them, noted without walking it again.
        state = read_state(out, content)
        assert state is not None and state.tree == output_tree(out.resolve()), name
        after = inodes(out)
        return {p: v for p, v in after.items() if before.get(p) != v}

    # A run's median changes: a new digest, a new page; the old page goes.
    def median(document: dict) -> None:  # type: ignore[type-arg]
        document["spec"]["timing"]["latencyNs"]["median"] += 1

    timed = next(p for p in runs if "timing" in json.loads(p.read_text())["spec"])
    edit(timed, median)
    changed = step("modified")
    untouched_runs = [p for p in inodes(out) if p.startswith("runs/") and p not in changed]
    assert untouched_runs, "every run page was rewritten"
    assert len(changed) < len(inodes(out)) / 2

    # A new run file, then a deleted one.
    added = content / "runs" / "added.json"
    shutil.copy(timed, added)
    edit(added, median)
    step("added")
    runs[-1].unlink()
    step("deleted")

    # Metadata only: same digest, another title.
    def retitle(document: dict) -> None:  # type: ignore[type-arg]
        document["metadata"]["title"] = document["metadata"]["title"] + " (again)"

    edit(added, retitle)
    step("retitled")

    # A non-run resource: every page that shows it follows.
    environment = sorted((content / "environments").glob("*.json"))[0]

    def rename_gpu(document: dict) -> None:  # type: ignore[type-arg]
        document["metadata"]["title"] = "Renamed host"

    edit(environment, rename_gpu)
    step("environment")
    # Nothing changed: nothing is written.
    assert step("unchanged") == {}


def test_template_change_rebuilds_what_it_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    content = tmp_path / "content"
    shutil.copytree(SITE_CONTENT, content)
    out = tmp_path / "public"
    build_site(content, out, incremental=True)
    templates = tmp_path / "templates"
    shutil.copytree(sitegen.render.assets.TEMPLATES_DIR, templates)
    run_template = templates / "run.html"
    run_template.write_text(run_template.read_text().replace("What was measured", "Measured"))
    original = sitegen.render.environment.make_environment
    monkeypatch.setattr(sitegen.render.environment, "make_environment", lambda: original(templates))
    monkeypatch.setattr(sitegen.publish.incremental, "TEMPLATES_DIR", templates)
    assert build_site(content, out, incremental=True).out_dir is not None
    assert tree(out) == cold(content, tmp_path, "templates")
    assert "Measured" in (out / "runs" / "f0cf6dd69e048a9b" / "index.html").read_text()


def test_a_state_held_in_memory_compiles_the_templates_again_only_when_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`sitegen serve` keeps the compiled templates between builds while no template file
    changed; an edited one is compiled and shown."""
    content = tmp_path / "content"
    shutil.copytree(SITE_CONTENT, content)
    out = tmp_path / "public"
    templates = tmp_path / "templates"
    shutil.copytree(sitegen.render.assets.TEMPLATES_DIR, templates)
    compiled: list[Path] = []
    original = sitegen.render.environment.make_environment

    def make_environment() -> object:
        compiled.append(templates)
        return original(templates)

    monkeypatch.setattr(sitegen.render.environment, "make_environment", make_environment)
    monkeypatch.setattr(sitegen.render.assets, "TEMPLATES_DIR", templates)
    monkeypatch.setattr(sitegen.publish.incremental, "TEMPLATES_DIR", templates)
    state = State()
    for _ in range(2):
        assert build_site(content, out, state=state).out_dir is not None
    assert len(compiled) == 1
    run_template = templates / "run.html"
    run_template.write_text(run_template.read_text().replace("What was measured", "Measured"))
    assert build_site(content, out, state=state).out_dir is not None
    assert len(compiled) == 2
    assert tree(out) == cold(content, tmp_path, "templates")
    assert "Measured" in (out / "runs" / "f0cf6dd69e048a9b" / "index.html").read_text()


def test_failed_incremental_build_keeps_site_and_cache(tmp_path: Path) -> None:
    content = tmp_path / "content"
    shutil.copytree(SITE_CONTENT, content)
    out = tmp_path / "public"
    build_site(content, out, incremental=True)
    before = tree(out)
    (content / "runs" / "broken.json").write_text("{")
    assert build_site(content, out, incremental=True).out_dir is None
    assert tree(out) == before
    (content / "runs" / "broken.json").unlink()
    assert build_site(content, out, incremental=True).out_dir is not None
    assert tree(out) == before


def _resign(path: Path, document: dict, documents: bytes) -> None:  # type: ignore[type-arg]
    """Write `document` and the resources' `documents` as a state signed with this user's key:
    what a state written by other sitegen code, or for other folders, would be."""
    key = state_key()
    assert key is not None
    encoded = json.dumps(document).encode()
    body = b"%d\n" % len(encoded) + encoded + documents
    signature = hmac.new(key, body, hashlib.sha256).hexdigest().encode()
    path.write_bytes(STATE_HEADER + signature + b"\n" + body)


def _parts(body: bytes) -> tuple[dict, bytes]:  # type: ignore[type-arg]
    """A state's JSON and the resources' documents after it."""
    length, rest = body.split(b"\n", 1)
    return json.loads(rest[: int(length)]), rest[int(length) :]


def test_missing_or_foreign_state_means_a_full_build(tmp_path: Path) -> None:
    content = tmp_path / "content"
    shutil.copytree(SITE_CONTENT, content)
    out = tmp_path / "public"
    assert build_site(content, out).out_dir is not None  # no state
    # The old place beside the output, which a pull request could commit: never read.
    planted = tmp_path / ".public.sitegen-cache"
    planted.mkdir()
    (planted / "state.json").write_bytes(b"\x80\x04not json at all")  # a pickle, say
    assert read_state(out, content) is None
    (out / "index.html").write_text("stale")
    assert build_site(content, out, incremental=True).out_dir is not None
    assert tree(out) == cold(content, tmp_path, "full")
    path = state_path(out)
    assert path is not None and path.is_file()
    assert tmp_path not in path.parents  # kept in the user's cache, not beside the output
    assert oct(path.stat().st_mode & 0o777) == oct(0o600)
    _, signature, body = path.read_bytes().split(b"\n", 2)
    document, documents = _parts(body)
    first = next(iter(document["loads"].values()))[1][0]  # a resource: its document's length
    assert json.loads(documents[: first[6]])["kind"] == first[3]  # bytes, not JSON strings
    assert read_state(out, content) is not None
    # Any byte changed, or signed with another key: not this user's build's, not used.
    path.write_bytes(STATE_HEADER + signature + b"\n" + body.replace(b"index.html", b"index.htm"))
    assert read_state(out, content) is None
    path.write_bytes(STATE_HEADER + b"0" * 64 + b"\n" + body)
    assert read_state(out, content) is None
    # Signed, but by other sitegen code, for other folders, or with fields of the wrong shape:
    # discarded, never half used.
    for broken in (
        {**document, "code": "other code"},
        {**document, "format": 3},
        {**document, "folders": [str(out.resolve()), str(tmp_path / "elsewhere")]},
        {**document, "outputs": []},
        {**document, "loads": {"content/x.json": [["1"], [], []]}},
        {**document, "loads": {"content/x.json": [[1], [["only", "three", "fields"]], []]}},
        {**document, "outputs": {"index.html": [None, 5]}},
        {**document, "tree": {"index.html": "x"}},
    ):
        _resign(path, broken, documents)
        assert read_state(out, content) is None, broken
    # The documents' bytes must be exactly what the lengths say: none short, none left over.
    for cut in (documents[:-1], documents + b"{}", b""):
        _resign(path, document, cut)
        assert read_state(out, content) is None
    for length in (-1, 10**12, "12", 1.5):
        loads = dict(document["loads"])
        shown, (key, packed, found) = next(iter(loads.items()))
        loads[shown] = [key, [[*packed[0][:6], length, packed[0][7]], *packed[1:]], found]
        _resign(path, {**document, "loads": loads}, documents)
        assert read_state(out, content) is None, length
    for line in (b"", b"x\n", b"99999999999999999999999\n", b"-5\n"):
        key = state_key()
        assert key is not None
        broken_body = line + body.split(b"\n", 1)[1]
        signature = hmac.new(key, broken_body, hashlib.sha256).hexdigest().encode()
        path.write_bytes(STATE_HEADER + signature + b"\n" + broken_body)
        assert read_state(out, content) is None, line
    _resign(path, document, documents)
    assert read_state(out, content) is not None
    assert build_site(content, out, incremental=True).out_dir is not None
    assert tree(out) == cold(content, tmp_path, "full again")


def test_a_key_others_could_write_is_not_trusted(tmp_path: Path) -> None:
    content = tmp_path / "content"
    shutil.copytree(SITE_CONTENT, content)
    out = tmp_path / "public"
    assert build_site(content, out, incremental=True).out_dir is not None
    assert read_state(out, content) is not None
    folder = user_cache_dir()
    assert folder is not None
    key = folder / "state.key"
    assert oct(key.stat().st_mode & 0o777) == oct(0o600)
    key.chmod(0o622)
    try:
        assert read_state(out, content) is None
    finally:
        key.chmod(0o600)


@pytest.mark.parametrize("change", ["edited", "added", "linked"])
def test_an_output_changed_since_the_last_build_is_rebuilt_whole(
    tmp_path: Path, change: str
) -> None:
    content = tmp_path / "content"
    shutil.copytree(SITE_CONTENT, content)
    out = tmp_path / "public"
    assert build_site(content, out, incremental=True).out_dir is not None
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    runs = out / "runs"
    if change == "edited":
        (out / "index.html").write_text("defaced")
    elif change == "added":
        (out / "phishing.html").write_text("<a href=https://example.org/>log in</a>")
    else:  # the next write into runs/ would follow the link out of the output
        shutil.rmtree(runs)
        runs.symlink_to(outside)
    assert build_site(content, out, incremental=True).out_dir is not None
    assert tree(out) == cold(content, tmp_path, "cold")
    assert not runs.is_symlink()
    assert sorted(p.name for p in outside.iterdir()) == ["keep.txt"]


def test_a_state_written_reads_back_equal(tmp_path: Path) -> None:
    content = tmp_path / "content"
    shutil.copytree(SITE_CONTENT, content)
    out = tmp_path / "public"
    state = State()
    assert build_site(content, out, state=state).out_dir is not None
    assert state.outputs and state.loads
    assert write_state(out, content, state) is None
    assert read_state(out, content) == state


@pytest.fixture
def held_keys_checked(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """Each held build's page keys of kernels, runs and resources, its marks and its run lists'
    order, as made from scratch; noted: (kernels whose keys were held from the last build,
    kernels)."""
    reused: list[tuple[int, int]] = []
    held_keys = sitegen.site.plan.held_keys

    def checked(lookup: SiteLookup) -> dict[str, KernelKeys] | None:
        held = lookup.analysis.held
        if held is None:  # the cold builds compared with
            return held_keys(lookup)
        last = dict(held.groups.get("keys", {}))
        keys = held_keys(lookup)
        regressions = lookup.memo(sitegen.site.quality._regressions)("")
        figures = speed_of_light(lookup.analysis, lookup.catalog)
        # Each run's marks and figures from its series' held Quality: the whole catalog's.
        whole = assess(lookup.analysis, lookup.catalog, figures, regressions)
        assert {d: (marks_of(lookup, d), run_figures(lookup, d)) for d in lookup.runs} == {
            d: (whole.of(d), whole.figures.get(d)) for d in lookup.runs
        }
        assert keys == {
            k.key: KernelKeys(
                lookup.page_key("kernel", k.key, marks_key(lookup, k.runs), runs=k.runs),
                {r.digest: run_key(lookup, r) for r in k.runs},
            )
            for k in lookup.analysis.kernels
        }
        now = held.groups["keys"]
        reused.append((sum(1 for key, item in now.items() if last.get(key) is item), len(now)))
        return keys

    held_resource_keys = sitegen.site.plan.held_resource_keys

    def checked_resources(lookup: SiteLookup) -> dict[str, list[str | None]] | None:
        keys = held_resource_keys(lookup)
        if lookup.analysis.held is not None:
            assert lookup._listed_order == sorted(lookup.runs.values(), key=listed_order)
            assert keys == {
                entry.digest: sitegen.site.plan._resource_keys(
                    lookup, entry, len(lookup.resource_page_paths(entry))
                )
                for kind in KINDS
                for entry in lookup.catalog.of_kind(kind)
            }
        return keys

    monkeypatch.setattr(sitegen.site.plan, "held_keys", checked)
    monkeypatch.setattr(sitegen.site.plan, "held_resource_keys", checked_resources)
    return reused


def test_a_state_read_from_disk_then_held_holds_every_file(tmp_path: Path) -> None:
    """The build daemon's path: its first build starts from the state `build --incremental`
    left on disk, then holds it. After that build every file's resources are held, so the
    next build takes the very same objects for every file but the edited one (what the
    analysis and the resolution keep from one build to the next is kept per object)."""
    content = site_content(tmp_path)
    out = tmp_path / "public"
    assert build_site(content, out, incremental=True).out_dir is not None
    state = read_state(out, content)
    assert state is not None and state.loads and not state.held_loads
    assert build_site(content, out, incremental=True, state=state).out_dir is not None
    assert state.held_loads.keys() == state.loads.keys()

    def objects() -> dict[str, list[int]]:
        return {
            shown: [id(resource) for resource in file.resources or []]
            for shown, file in state.held_loads.items()
        }

    before = objects()
    edited = run_files(content)[0]
    edit(edited, lambda document: document["metadata"].update(title="Retitled"))
    assert build_site(content, out, incremental=True, state=state).out_dir is not None
    after = objects()
    assert [shown for shown in before if after[shown] != before[shown]] == [
        f"content/{edited.relative_to(content).as_posix()}"
    ]
    assert tree(out) == cold(content, tmp_path, "retitled")


def test_a_state_held_in_memory_rebuilds_as_cold(
    tmp_path: Path, parallel: bool, held_keys_checked: list[tuple[int, int]]
) -> None:
    """`sitegen serve`'s path: the same pipeline, its state held between builds, none on disk.
    What it holds of each kernel's and series' runs (their pages' keys, their marks) is what a
    build of the whole would make (`held_keys_checked`)."""
    content = tmp_path / "content"
    shutil.copytree(SITE_CONTENT, content)
    out = tmp_path / "public"
    state = State()
    state_file = state_path(out)
    assert state_file is not None
    runs = run_files(content)
    timed = next(p for p in runs if "timing" in json.loads(p.read_text())["spec"])
    shown_first: list[int] = []  # the new runs whose pages were published ahead of the site

    def step(name: str, first: int = 0) -> dict[str, tuple[int, int]]:
        before = inodes(out) if out.exists() else {}
        built = build_site(content, out, state=state, shown_first=shown_first.append)
        assert shown_first == ([first] if first else []), name
        shown_first.clear()
        assert built.out_dir is not None, name
        expected = cold(content, tmp_path, name)
        assert tree(out) == expected, name
        assert built.file_count == len(expected) - 1  # the marker is not an output
        assert built.page_count == sum(1 for p in expected if p.endswith(".html"))
        assert not state_file.exists(), "nothing kept on disk"
        # What was made of runs and kernels gone is not held on (HeldAnalysis.keep).
        held = state.analysis
        alive = {id(r) for r in held.facts.values()} | {id(k) for k in held.kernels.values()}
        assert held.made and all(id(made[0]) in alive for made in held.made.values()), name
        after = inodes(out)
        return {p: v for p, v in after.items() if before.get(p) != v}

    def median(document: dict) -> None:  # type: ignore[type-arg]
        document["spec"]["timing"]["latencyNs"]["median"] += 1

    step("first")
    edit(timed, median)
    changed = step("modified", first=1)
    # The kernels of other cohorts, series and steps kept their keys.
    assert held_keys_checked[-1][0] > 0 and held_keys_checked[-1][0] < held_keys_checked[-1][1]
    assert any(p.startswith("runs/") for p in changed)
    assert [p for p in inodes(out) if p.startswith("runs/") and p not in changed]
    added = content / "runs" / "more" / "added.json"
    added.parent.mkdir()
    shutil.copy(timed, added)
    edit(added, median)
    step("added", first=1)
    runs[-1].unlink()
    step("deleted")
    # The held analysis reuses a run's facts only while its metadata and place are the same.
    edit(added, lambda d: d["metadata"].update(title=d["metadata"]["title"] + " (again)"))
    step("retitled")
    # A new run whose title pages show escaped: its page ahead of the site is escaped too.
    edit(added, lambda d: (median(d), d["metadata"].update(title="Mirrored \u202e title")))
    step("escaped", first=1)
    shown = [p.read_text() for p in (out / "runs").glob("*/index.html")]
    assert any("Mirrored \\u202e title" in page for page in shown)
    added.rename(added.parent.parent / "moved.json")
    step("moved")
    environment = sorted((content / "environments").glob("*.json"))[0]
    edit(environment, lambda d: d["metadata"].update(title="Renamed host"))
    step("environment")
    assert held_keys_checked[-1][0] == 0  # a resource that is not a run: nothing held
    # Three times as slow: its cohort's ranking and its series' marks change.
    edit(timed, lambda d: d["spec"]["timing"]["latencyNs"].update(median=3 * median_of(timed)))
    step("slower", first=1)
    # A broken file: nothing written, the state still true for the next build.
    (content / "runs" / "broken.json").write_text("{")
    before = tree(out)
    assert build_site(content, out, state=state).out_dir is None
    assert tree(out) == before
    (content / "runs" / "broken.json").unlink()
    step("mended")
    assert step("unchanged") == {}


def held_step(content: Path, tmp_path: Path) -> Callable[[str], int]:
    """A build of `content` with a state held in memory, compared with a cold build: how many
    run pages say the run sits after a regression of 1.3×."""
    out = tmp_path / "public"
    state = State()

    def step(name: str) -> int:
        assert build_site(content, out, state=state).out_dir is not None
        assert tree(out) == cold(content, tmp_path, name), name
        pages = (out / "runs").glob("*/index.html")
        return sum(1 for page in pages if "after a regression: 1.3" in page.read_text())

    return step


def test_what_is_held_follows_a_regression_made_moved_and_undone(
    tmp_path: Path, held_keys_checked: list[tuple[int, int]]
) -> None:
    """A regression changes the marks and lines of every run after it, and the ranking of its
    cohort: the held builds' keys and marks (`held_keys_checked`) and pages follow."""
    content = with_commits(tmp_path, [50_000] * 5 + [65_000] * 4, revisions=True)
    step = held_step(content, tmp_path)
    assert step("made") == 4  # the runs of commits 6 to 9
    set_latency(content / "runs" / "commit-6.json", 50_000, 49_500, 50_500)
    assert step("moved") == 3
    for day in (7, 8, 9):
        set_latency(content / "runs" / f"commit-{day}.json", 50_000, 49_500, 50_500)
    assert step("undone") == 0
    assert [held for held, _ in held_keys_checked] == [0, 2, 2]  # LayerNorm's made again


def test_a_step_another_kernel_shares_is_followed_by_the_kernel_left_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, held_keys_checked: list[tuple[int, int]]
) -> None:
    """LayerNorm steps between commits 5 and 6 on the A100: a regression of its code, marked on
    the runs after it. Then CrossEntropy steps there too: two kernels at once, the machine's
    (as four would be by default). LayerNorm's runs are untouched, yet their marks and lines go:
    what was held of them is not reused."""
    monkeypatch.setattr(sitegen.analysis.regressions, "SHARED_KERNELS", 2)
    content = tmp_path / "content"
    shutil.copytree(SITE_CONTENT, content)
    flat, step_up = [50_000] * 9, [50_000] * 5 + [65_000] * 4
    runs, implementations = content / "runs", content / "implementations"
    (norm,) = runs.glob("*layer-norm-forward-liger-*a100*hidden4096-*")
    at_commits(norm, implementations / LAYER_NORM, step_up, name="norm")
    (entropy,) = runs.glob("*cross-entropy-forward-liger-*vocab4096-*")
    at_commits(entropy, implementations / ENTROPY, flat, name="entropy")
    step = held_step(content, tmp_path)
    assert step("code") == 4  # LayerNorm's runs of commits 6 to 9
    for day in (6, 7, 8, 9):
        set_latency(runs / f"entropy-{day}.json", 65_000, 64_350, 65_650)
    assert step("machine") == 0
    assert held_keys_checked[-1] == (1, 3)  # RMSNorm's: no run shares a cohort or step
    assert step("unchanged") == 0 and held_keys_checked[-1] == (3, 3)


@pytest.mark.parametrize("cpus", [1, 2])
def test_a_watchers_word_is_taken_then_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cpus: int
) -> None:
    """`sitegen serve` hands each build the paths its watcher saw change: only those files are
    looked at before the new runs' pages are published, the whole tree after; a change the
    watcher missed is found then, and the build starts again, so the site is still a cold
    build's. With two CPUs the whole walk is made by a worker beside the planning; with one,
    in this process, where the files it looks at are counted."""
    monkeypatch.setattr(sitegen.process, "usable_cpus", lambda *_: cpus)
    content = tmp_path / "content"
    shutil.copytree(SITE_CONTENT, content)
    out = tmp_path / "public"
    state = State()
    assert build_site(content, out, state=state).out_dir is not None
    timed = [p for p in run_files(content) if "timing" in json.loads(p.read_text())["spec"]]
    looked: list[str] = []  # the files stat'ed one by one (a whole walk's)
    stat_key = sitegen.content.walk.stat_key
    for module in (sitegen.content.load, sitegen.content.walk):
        monkeypatch.setattr(
            module, "stat_key", lambda path: looked.append(str(path)) or stat_key(path)
        )
    looked_when_shown: list[int] = []

    def rebuilt(name: str, changed: set[str]) -> None:
        looked.clear()
        built = build_site(
            content,
            out,
            state=state,
            changed=changed,
            shown_first=lambda _: looked_when_shown.append(len(looked)),
        )
        assert built.out_dir is not None, name
        assert tree(out) == cold(content, tmp_path, name), name

    def median(document: dict) -> None:  # type: ignore[type-arg]
        document["spec"]["timing"]["latencyNs"]["median"] += 1

    edit(timed[0], median)
    rebuilt("told", {str(timed[0]), str(content / ".swp"), str(content / "_sources" / "x")})
    assert looked_when_shown == [0]  # the run's page published before any other file was read
    if cpus == 1:
        assert len(looked) >= len(run_files(content))  # and the whole tree looked at after
    looked_when_shown.clear()
    edit(timed[1], median)  # a save the watcher missed: told of another, unchanged file
    rebuilt("missed", {str(timed[0])})
    # Nothing new to show until the tree was walked again; then the missed run's page.
    assert len(looked_when_shown) == 1
    if cpus == 1:
        assert looked_when_shown[0] >= len(run_files(content))
    added = content / "runs" / "added.json"
    shutil.copy(timed[2], added)
    edit(added, median)
    rebuilt("added", {str(added)})  # a file not walked before: the tree is walked again
    added.unlink()
    rebuilt("deleted", {str(added)})


@pytest.mark.parametrize("watched", [True, False], ids=["output-watched", "output-walked"])
def test_pages_are_chosen_before_the_walks_are_waited_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, watched: bool
) -> None:
    """The build daemon's rebuild (a state held, `incremental`, a watcher's word) chooses the
    pages to render before it asks whether the output is as the last build left it and
    whether the watcher missed a change (walks a CPU aside makes meanwhile, here made when
    asked). It renders the changed pages into its staging tree before it waits for the second
    (the walk runs beside the render) and moves nothing in before both answer: an output
    changed since is written whole (the second asked first then), a missed change starts the
    build again, the output untouched. A cold build's bytes each time. Where the output is
    watched (publish/output_watch.py), it is walked only once the watch saw it change."""
    monkeypatch.setattr(sitegen.process, "usable_cpus", lambda *_: 1)
    if not watched:
        monkeypatch.setattr(
            sitegen.pipeline.OutputWatch, "arm", lambda root: NotWatched(None, "not here")
        )
    events: list[str] = []

    def noted(name: str, call: Callable[..., object]) -> Callable[..., object]:
        def wrapped(*args: object, **kwargs: object) -> object:
            answer = call(*args, **kwargs)
            events.append(f"{name} {answer}" if isinstance(answer, bool) else name)
            return answer

        return wrapped

    unseen_change = sitegen.pipeline.unseen_change
    for name in ("choose_pages", "tree_unchanged", "unseen_change", "forget_state", "render_into"):
        monkeypatch.setattr(sitegen.pipeline, name, noted(name, getattr(sitegen.pipeline, name)))
    apply = sitegen.publish.write.Patch.apply
    monkeypatch.setattr(sitegen.publish.write.Patch, "apply", noted("apply", apply))
    content, out = site_content(tmp_path), tmp_path / "public"
    state = State()
    assert build_site(content, out, incremental=True, state=state).out_dir is not None
    assert (state.output_watch is not None) == watched
    first, second = run_files(content)[:2]

    def rebuilt(name: str, told: Path, deface: bool = False) -> list[str]:
        edit(second if name == "missed" else told, _raise_median)
        if deface:
            (out / "index.html").write_text("defaced")
        events.clear()
        built = build_site(content, out, incremental=True, state=state, changed={str(told)})
        assert built.out_dir is not None, name
        made = events[:]  # not the cold build's below
        assert tree(out) == cold(content, tmp_path, name), name
        return made

    unchanged = [] if watched else ["tree_unchanged True"]
    staged = ["choose_pages", *unchanged, "forget_state", "render_into"]
    chosen_first = [*staged, "unseen_change False", "apply"]
    assert rebuilt("told", first) == chosen_first
    assert rebuilt("defaced", first, deface=True) == [
        "choose_pages",
        "tree_unchanged False",
        "unseen_change False",
        "forget_state",
        "render_into",
    ]
    # The missed save is found before anything is moved in; then the tree is walked again.
    before = {path: path.stat().st_ino for path in out.rglob("*") if path.is_file()}
    changed: list[Path] = []

    def looked(*args: object) -> object:
        answer = unseen_change(*args)
        changed.extend(p for p, ino in before.items() if not p.is_file() or p.stat().st_ino != ino)
        return answer

    monkeypatch.setattr(sitegen.pipeline, "unseen_change", noted("unseen_change", looked))
    missed = [*staged, "unseen_change True", "choose_pages"]
    assert rebuilt("missed", first)[: len(missed)] == missed
    assert changed == []  # the output as it was when the missed change was found
    assert rebuilt("told again", first) == chosen_first


def test_an_output_short_of_watches_is_walked_said_once_and_watched_once_they_are_free(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A held build whose output wants more inotify watches than are free (another daemon's
    output holds them) says so once and walks the output; a later build arms the watch once
    as many are free, and lists the output's folders to do so only then."""
    monkeypatch.setattr(sitegen.process, "usable_cpus", lambda *_: 1)  # the walk made here
    content, out = site_content(tmp_path), tmp_path / "public"
    held = {"count": 10**9}
    monkeypatch.setattr(sitegen.publish.output_watch, "watches_held", lambda: held["count"])
    listed: list[Path] = []
    folders = sitegen.publish.output_watch._folders
    monkeypatch.setattr(
        sitegen.publish.output_watch, "_folders", lambda root: listed.append(root) or folders(root)
    )
    state = State()
    built = build_site(content, out, incremental=True, state=state)
    assert state.output_watch is None and state.output_unwatched is not None
    (warning,) = [w for w in built.warnings if "not watched" in w]
    assert warning.startswith("the output is not watched: its ")
    assert "folders want more inotify watches than this user has free" in warning
    assert warning.endswith("until it is, each build walks the output to find what changed there")
    assert listed == [out.resolve()]
    first = run_files(content)[0]
    walks: list[bool] = []
    walk = sitegen.pipeline.tree_unchanged
    monkeypatch.setattr(
        sitegen.pipeline, "tree_unchanged", lambda *a: walks.append(walk(*a)) or walks[-1]
    )
    edit(first, _raise_median)
    built = build_site(content, out, incremental=True, state=state, changed={str(first)})
    assert not [w for w in built.warnings if "not watched" in w]  # said once
    assert walks == [True] and state.output_watch is None
    assert listed == [out.resolve()]  # still short: the folders not listed again
    held["count"] = 0  # the other daemon ended
    edit(first, _raise_median)
    built = build_site(content, out, incremental=True, state=state, changed={str(first)})
    assert walks == [True, True] and isinstance(state.output_watch, OutputWatch)
    assert state.output_unwatched is None and len(listed) == 2
    assert tree(out) == cold(content, tmp_path, "watched again")
    edit(first, _raise_median)
    built = build_site(content, out, incremental=True, state=state, changed={str(first)})
    assert walks == [True, True]  # the watch saw nothing else: no walk
    assert tree(out) == cold(content, tmp_path, "watched")


def test_an_output_falling_short_of_watches_is_said_once_each_time_it_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a held build says of its output's watch: that it is short of watches, where the
    last build did not say so already (a folder unreadable for a build does not hide it),
    and nothing where no watch could be trusted or the watch is armed."""
    short = NotWatched(9, "its 9 folders want more inotify watches than this user has free")
    answers: list[OutputWatch | NotWatched] = [
        NotWatched(0, "its folders could not be read"),
        short,
        short,
        NotWatched(0, "its folders could not be read"),
        short,
        NotWatched(None, "its file system's inotify may not see every change"),
    ]
    monkeypatch.setattr(sitegen.pipeline.OutputWatch, "arm", lambda root: answers.pop(0))
    monkeypatch.setattr(sitegen.publish.output_watch, "_watch_budget", lambda: 100)
    state = State()
    said = [sitegen.pipeline._watch_output(state, tmp_path) for _ in range(6)]
    told = f"the output is not watched: {short.reason}; until it is, each build walks the output"
    told += " to find what changed there"
    assert said == [None, told, None, None, told, None]
    assert answers == [] and state.output_unwatched is not None
    assert sitegen.pipeline._watch_output(state, tmp_path) is None  # never tried again


def _raise_median(document: dict) -> None:  # type: ignore[type-arg]
    document["spec"]["timing"]["latencyNs"]["median"] += 1


def test_a_held_state_looks_up_each_pages_full_key_and_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a state held in memory, a page's full key and its two files are looked up in the
    last builds' `HeldFiles`: only the pages whose key changed are hashed again, and a new
    site key (another base URL) hashes every page again. Either way, a cold build's bytes."""
    content, out = site_content(tmp_path), tmp_path / "public"
    hashed: list[str] = []
    full_key = IncrementalOutput.full_key

    def counted(self: IncrementalOutput, key: str) -> str:
        hashed.append(key)
        return full_key(self, key)

    monkeypatch.setattr(IncrementalOutput, "full_key", counted)
    state = State()
    assert build_site(content, out, state=state).out_dir is not None
    pages = len(state.files.files)
    assert pages > 40 and len(state.files.full_keys) == pages
    assert all(
        state.outputs[page_file][0] is not None for page_file, _ in state.files.files.values()
    )
    edited = next(p for p in run_files(content) if "timing" in json.loads(p.read_text())["spec"])
    edit(edited, lambda document: document["spec"]["timing"]["latencyNs"].update(median=7))
    hashed.clear()
    known = set(state.files.full_keys)
    assert build_site(content, out, state=state).out_dir is not None
    # Hashed: the keys of the pages that show the edited run (rendered, then written), alone.
    assert set(hashed) == set(state.files.full_keys) - known
    assert 0 < len(set(hashed)) < pages // 2
    # Added to, not made again: the edited run's old page is still there (until emptied).
    assert len(state.files.files) == pages + 1
    assert tree(out) == cold(content, tmp_path, "edited")
    hashed.clear()
    assert build_site(content, out, "https://elsewhere.example/", state=state).out_dir
    assert len(hashed) >= pages


def test_a_page_made_whole_is_rendered_with_a_held_state_only_where_its_bytes_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a state held in memory, a page made whole every build (home, the lists of kinds,
    data quality, regressions…) is rendered again only where what it shows changed: one
    equal to the last build's is skipped, its files kept. Either way, a cold build's bytes."""
    monkeypatch.setattr(sitegen.process, "usable_cpus", lambda: 1)  # rendered in this process
    rendered: list[Page | LazyPage] = []
    render_page = sitegen.render.render._render_page

    def recorded(page: Page | LazyPage, *rest: object) -> None:
        rendered.append(page)
        render_page(page, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(sitegen.render.render, "_render_page", recorded)
    content, out = site_content(tmp_path), tmp_path / "public"
    state = State()
    assert build_site(content, out, state=state).out_dir is not None
    whole = {page.path for page in rendered if isinstance(page, Page)}
    assert {"", "kernels/", "data-quality/", "regressions/"} <= whole
    skipped: set[str] = set()
    shown: set[str] = set()
    runs = [p for p in run_files(content) if "timing" in json.loads(p.read_text())["spec"]]
    for number, change in enumerate((runs[0], runs[-1], runs[len(runs) // 2])):
        before = tree(out)
        if number == 2:
            change.unlink()  # one run fewer: the home page's counts change
        else:
            edit(change, _raise_median)
        rendered.clear()
        assert build_site(content, out, state=state).out_dir is not None
        now = {page.path for page in rendered if isinstance(page, Page)}
        after = tree(out)
        assert after == cold(content, tmp_path, f"edit {number}")
        changed = {
            path
            for path in whole
            if before.get(f"{path}index.html") != after.get(f"{path}index.html")
            or before.get(f"{path}index.json") != after.get(f"{path}index.json")
        }
        assert now == changed
        skipped |= whole - now
        shown |= now
    assert "" in shown and skipped


def test_a_page_made_whole_is_skipped_where_equal_to_the_last_builds_and_its_files_kept() -> None:
    """A page made whole is skipped where it is equal to the one the last build rendered at
    its path, its twin written the same, its files' items handed on by that build's outputs
    under the same site key. Another context, a twin of equal numbers written apart (`1` and
    `1.0`) or of equal dicts in two orders, other outputs or another site key, and it is
    rendered. A twin orjson refuses (an integer past 64 bits) is compared as the site writes
    it."""
    held = HeldFiles()

    def page(context: object = "context", count: object = 1, first: str = "count") -> Page:
        twin = {"count": count, "other": 2}
        return Page("", "home.html", context, {key: twin[key] for key in (first, *twin)})

    def build(made: Page, previous: Outputs, site: str = "site") -> bool:
        output = IncrementalOutput(previous, site, held)
        output.sink(lambda path, data: None)
        found = output.skip(made)
        if not found:
            output.write("index.html", repr(made.context).encode())
            output.write("index.json", repr(made.twin).encode())
        output.finish({"index.html", "index.json"})
        assert set(output.outputs) == {"index.html", "index.json"}
        return found

    def last() -> Outputs:
        assert held.outputs is not None
        return held.outputs

    assert not build(page(), {})
    assert build(page(), last())
    assert build(page(), last())
    assert not build(page("another context"), last())
    assert not build(page(), last())  # the last build's was the other
    assert not build(page(count=1.0), last())
    assert build(page(count=1.0), last())
    assert not build(page(count=1.0), dict(last()))  # other outputs: their files unknown
    assert not build(page(count=1.0), last(), "another site")
    assert build(page(count=1.0), last(), "another site")
    assert not IncrementalOutput(last(), "another site").skip(page(count=1.0))  # no held state
    assert not build(page(count=1.0, first="other"), last(), "another site")
    assert build(page(count=1.0, first="other"), last(), "another site")
    assert not build(page(count=2**70), last())
    assert build(page(count=2**70), last())
    assert not build(page(count=2**70 + 1), last())


def test_held_files_are_kept_for_their_site_key_and_emptied_once_outgrown() -> None:
    """`HeldFiles` is added to by each build and held at its end: its full keys only under
    the site key they were made with, and all of it emptied once it holds more than the
    site's outputs (by 1,000), so pages gone or rekeyed are not held forever."""
    held = HeldFiles("site", {"a": "full a"}, {"p/": ("p/index.html", "p/index.json")})
    output = IncrementalOutput({}, "site", held)
    output.sink(lambda path, data: None)
    output.write("404.html", b"x")
    output.finish()
    assert held.full_keys == {"a": "full a"} and held.files
    output = IncrementalOutput({}, "another site", held)
    output.finish()
    assert (held.site_key, held.full_keys) == ("another site", {}) and held.files
    held.full_keys = {f"key {n}": "full" for n in range(1001)}
    output = IncrementalOutput({}, "another site", held)
    output.finish()
    assert held.full_keys == {} and held.files == {}


def test_a_held_page_skipped_by_a_build_whose_outputs_are_handed_on_is_skipped_on_sight() -> None:
    """A page object held from a build that skipped it is skipped again on sight (not looked
    up, so not marked again) while the outputs handed to the build are the very dict that
    build (or one after it, handing them on) left, under the same site key: its items are
    kept, the files gone dropped. Any other outputs, another site key, or a mark of a build
    that did not finish, and the page is looked up again."""
    page = LazyPage("p/", "run.html", lambda: None, "k")
    key = IncrementalOutput({}, "site").full_key("k")
    items = {"p/index.html": (key, "sha a"), "p/index.json": (key, "sha b")}
    files = set(items)
    held = HeldFiles()

    def skipped(previous: Outputs, site: str = "site", finish: bool = True) -> tuple[bool, bool]:
        mark = page.skipped
        output = IncrementalOutput(previous, site, held)
        found = output.skip(page)
        if finish:
            output.finish(files)
            assert output.outputs == (items if found else {})
            assert held.outputs is output.outputs
        return found, found and mark is not None and page.skipped is mark

    def last() -> Outputs:
        assert held.outputs is not None
        return held.outputs

    assert skipped(items) == (True, False)  # never skipped before: looked up
    assert skipped(last()) == (True, True)
    assert skipped(last()) == (True, True)  # by the mark of two builds ago
    assert skipped({**last(), "gone/index.html": (None, "sha c")}) == (True, False)
    assert skipped(last()) == (True, True)
    gone = {**last(), "gone/index.html": (None, "sha c")}
    held.outputs = gone  # handed on, as pipeline.py's new runs first does
    assert skipped(gone) == (True, True)  # and "gone/index.html" is dropped
    assert skipped(last(), finish=False) == (True, True)
    assert skipped(last(), "another site") == (False, False)
    assert skipped(items) == (True, False)
    assert skipped(items, finish=False) == (True, False)  # marked by a build left unfinished
    assert skipped(last()) == (True, False)
    output = IncrementalOutput(last(), "site", held)
    assert output.skip(page)
    with pytest.raises(ValueError, match="the build's files"):
        output.finish()


def test_a_held_state_checks_the_pages_files_for_clashes_as_a_cold_build_does() -> None:
    """With a held state, the pages' files (each LazyPage's looked up in `HeldFiles`, made
    once) are those a cold build finds, and a file two pages would write fails the build,
    named, as it does in a cold build."""
    held = HeldFiles()
    twin = {"a": 1}
    pages: list[Page | LazyPage] = [
        LazyPage(f"p{n}/", "run.html", lambda: None, "k") for n in range(3)
    ]
    pages += [Page("", "home.html", None, twin), Page("search/", "search.html", None, None)]
    cold = sitegen.render.render.page_files(pages)
    assert cold == {
        *(f"p{n}/index.{kind}" for n in range(3) for kind in ("html", "json")),
        "index.html",
        "index.json",
        "search/index.html",
    }
    assert IncrementalOutput({}, "site", held).page_files(pages) == cold
    assert set(held.files) == {"p0/", "p1/", "p2/"}
    held.files["p0/"] = ("looked up/index.html", "looked up/index.json")
    held.pages = ()  # not patched from the last call's pages: each page looked up
    assert "looked up/index.html" in IncrementalOutput({}, "site", held).page_files(pages)
    for clash in (
        LazyPage("p1/", "run.html", lambda: None, "k"),
        Page("p2/", "list.html", None, None),
        Page("search/", "list.html", None, twin),
    ):
        with pytest.raises(RenderError, match="two outputs would be written to"):
            IncrementalOutput({}, "site", held).page_files([*pages, clash])


def test_unskipped_pages_are_those_skip_does_not_skip_with_marks_or_without() -> None:
    """`unskipped`, which tells marked held pages apart in one pass, chooses the pages that
    asking `skip` of each would, in order, and keeps the skipped pages' items as it would."""
    keyed = IncrementalOutput({}, "site")
    pages: list[Page | LazyPage] = [
        LazyPage(f"p{n}/", "run.html", lambda: None, f"k{n}") for n in range(6)
    ]
    pages.insert(2, Page("", "home.html", None, {"a": 1}))
    pages.insert(4, LazyPage("unkeyed/", "run.html", lambda: None, None))
    items: Outputs = {}
    for n in range(6):
        key = keyed.full_key(f"k{n}")
        items |= {f"p{n}/index.html": (key, f"sha {n}"), f"p{n}/index.json": (key, f"sha {n}'")}
    items["p3/index.html"] = ("another key", "sha 3")  # p3 changed since
    files = sitegen.render.render.page_files(pages)
    held = HeldFiles()
    for build in range(3):
        previous = held.outputs if held.outputs is not None else items
        output = IncrementalOutput(previous, "site", held)
        asked: list[Page | LazyPage] = []
        output.skip = functools.partial(_asked, asked, output.skip)  # type: ignore[method-assign]
        one_by_one = IncrementalOutput(previous, "site")
        expected = [page for page in pages if not one_by_one.skip(page)]
        assert output.unskipped(pages) == expected
        # After the first build, only the pages that bear no mark are asked.
        assert len(asked) == (len(pages) if build == 0 else 3)
        assert [p.path for p in expected] == ["", "unkeyed/", "p3/"]
        output.finish(files)
        one_by_one.finish()
        assert output.outputs == one_by_one.outputs
        marked = [p for p in pages if isinstance(p, LazyPage) and p.skipped is not None]
        assert len(marked) == 5


def _asked(
    asked: list[Page | LazyPage], skip: Callable[[Page | LazyPage], bool], page: Page | LazyPage
) -> bool:
    asked.append(page)
    return skip(page)


def test_the_site_fingerprint_reads_every_pages_path_but_the_runs() -> None:
    inputs = site_inputs(SITE_CONTENT)
    kernels = [k.key for k in inputs.analysis.kernels]

    def printed(paths: dict[str, str]) -> str:
        return fingerprint(inputs.catalog, replace(inputs.urls, paths=paths), kernels)

    paths = inputs.urls.paths
    run = inputs.catalog.of_kind("BenchmarkRun")[0].digest
    gpu = inputs.catalog.of_kind("ExecutionEnvironment")[0].digest
    assert printed(paths) == printed(dict(paths))
    assert printed(paths) == printed({**paths, run: "runs/elsewhere/"})  # the runs: their own keys
    assert printed(paths) != printed({**paths, gpu: "gpus/elsewhere/"})
    assert printed(paths) != printed({**paths, kernels[0]: "kernels/elsewhere/"})


@pytest.mark.parametrize("indexed", [True, False])
def test_a_patched_tree_is_the_output_tree_after_the_patch_made_in_place(
    tmp_path: Path, indexed: bool
) -> None:
    """The tree is patched in place: the changed paths looked at again, the search index's
    folder walked again, its old files dropped where the tree held an index (its entry file)."""
    root = tmp_path / "out"
    (root / "pages").mkdir(parents=True)
    (root / "pages" / "a.html").write_bytes(b"a")
    (root / "pages" / "b.html").write_bytes(b"b")
    (root / "pagefind").mkdir()
    if indexed:
        (root / "pagefind" / "pagefind-entry.json").write_bytes(b"{}")
        (root / "pagefind" / "old.pf_fragment").write_bytes(b"old")
    before = output_tree(root)
    assert before is not None
    (root / "pages" / "a.html").write_bytes(b"a, longer")
    (root / "pages" / "b.html").unlink()
    (root / "pages" / "c.html").write_bytes(b"c")
    shutil.rmtree(root / "pagefind")
    (root / "pagefind").mkdir()
    if indexed:
        (root / "pagefind" / "pagefind-entry.json").write_bytes(b'{"new": 1}')
        (root / "pagefind" / "new.pf_fragment").write_bytes(b"new")
    changed = ["pages/a.html", "pages/b.html", "pages/c.html"]
    patched = sitegen.publish.incremental.patched_tree(root, before, changed, "pagefind")
    assert patched is before
    assert patched == output_tree(root)
    assert ("pagefind/old.pf_fragment" in patched) is False


def test_held_page_files_are_patched_where_pages_are_not_the_same_objects() -> None:
    """With `HeldFiles`, the files of the pages that are not the last call's very objects
    are taken out and put in: every call answers what checking every page answers (a page
    made whole without a twin, a run's page moved, pages gone and added), a clash is
    refused, and the call after a refusal checks every page again."""
    pages = [LazyPage(f"runs/{n:03d}/", "run.html", lambda: None, "k") for n in range(40)]
    whole = Page("404-like/", "list.html", None, None)  # no twin: one file

    def files(listed: list[Page | LazyPage]) -> set[str]:
        return Output(lambda path, data: None).page_files(listed)

    held = HeldFiles()

    def checked(listed: list[Page | LazyPage]) -> set[str]:
        found = IncrementalOutput({}, "site", held).page_files(tuple(listed))
        assert found == files(listed)
        return found

    checked([whole, *pages])
    moved = LazyPage("runs/zzz/", "run.html", lambda: None, "k")
    checked([Page("404-like/", "list.html", None, None), *pages[1:], moved])
    assert held.pages and len(held.page_files) == 1 + 2 * 40
    checked([*pages[:20], *pages[25:]])
    clash = LazyPage("runs/005/", "run.html", lambda: None, "k")
    with pytest.raises(RenderError, match="two outputs would be written to runs/005/"):
        IncrementalOutput({}, "site", held).page_files((*pages[:20], *pages[25:], clash))
    assert not held.pages  # made anew by the next call
    checked(pages[:30])
