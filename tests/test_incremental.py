"""Incremental builds: after any change, the output is byte for byte a cold build's, and only
changed files are written."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

import sitegen.cpus
import sitegen.incremental
import sitegen.load
import sitegen.pages
import sitegen.render
import sitegen.templating
from sitegen.build import build_site, rebuild_runs
from sitegen.digest import digest
from sitegen.incremental import cache_dir, read_state, write_state
from sitegen.kernels import passes_of
from tests.conftest import FIXTURES
from tests.test_build_site import tree

SITE_CONTENT = FIXTURES / "site" / "content"


def cold(content: Path, tmp_path: Path, name: str) -> dict[str, bytes]:
    out = tmp_path / f"cold-{name}"
    assert build_site(content, out).out_dir is not None
    return tree(out)


def inodes(root: Path) -> dict[str, tuple[int, int]]:
    return {
        p.relative_to(root).as_posix(): (p.stat().st_ino, p.stat().st_mtime_ns)
        for p in root.rglob("*")
        if p.is_file()
    }


def run_files(content: Path) -> list[Path]:
    return sorted(p for p in (content / "runs").rglob("*.json"))


def edit(path: Path, change: object) -> None:
    document = json.loads(path.read_text())
    change(document)  # type: ignore[operator]
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n")


@pytest.fixture(params=[False, True], ids=["serial", "parallel"])
def parallel(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    # Run lists continue on numbered pages every 4 runs, so their keys are exercised too.
    monkeypatch.setattr(sitegen.pages, "RUNS_PER_PAGE", 4)
    if request.param:
        monkeypatch.setattr(sitegen.load, "PARALLEL_MIN_FILES", 0)  # runs held compact
        monkeypatch.setattr(sitegen.cpus, "usable_cpus", lambda: 2)
        monkeypatch.setattr(sitegen.render, "PARALLEL_MIN_PAGES", 0)
        monkeypatch.setattr(sitegen.render, "CHUNK_PAGES", 5)
    return bool(request.param)


def test_incremental_equals_cold_after_each_change(tmp_path: Path, parallel: bool) -> None:
    content = tmp_path / "content"
    shutil.copytree(SITE_CONTENT, content)
    out = tmp_path / "public"
    assert build_site(content, out, incremental=True).out_dir is not None  # fills the cache
    assert (cache_dir(out) / "state.pickle").is_file()
    assert tree(out) == cold(content, tmp_path, "0")
    runs = run_files(content)

    def step(name: str) -> dict[str, tuple[int, int]]:
        before = inodes(out)
        assert build_site(content, out, incremental=True).out_dir is not None
        assert tree(out) == cold(content, tmp_path, name), name
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
    shutil.copytree(sitegen.render.TEMPLATES_DIR, templates)
    run_template = templates / "run.html"
    run_template.write_text(run_template.read_text().replace("What was measured", "Measured"))
    original = sitegen.templating.make_environment
    monkeypatch.setattr(sitegen.templating, "make_environment", lambda: original(templates))
    monkeypatch.setattr(sitegen.incremental, "TEMPLATES_DIR", templates)
    assert build_site(content, out, incremental=True).out_dir is not None
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


def test_missing_or_foreign_cache_means_a_full_build(tmp_path: Path) -> None:
    content = tmp_path / "content"
    shutil.copytree(SITE_CONTENT, content)
    out = tmp_path / "public"
    build_site(content, out)  # no cache
    (cache_dir(out)).mkdir()
    (cache_dir(out) / "state.pickle").write_bytes(b"not a pickle")
    assert build_site(content, out, incremental=True).out_dir is not None
    assert tree(out) == cold(content, tmp_path, "full")
    # A cache written by other sitegen code, its loads shaped otherwise: not used.
    state = read_state(out)
    assert state is not None
    state.code = "other code"
    state.loads = {shown: ((0,), [("?",)], []) for shown in state.loads}  # type: ignore[misc]
    write_state(out, state)
    assert read_state(out) is None
    assert build_site(content, out, incremental=True).out_dir is not None
    assert tree(out) == cold(content, tmp_path, "full again")


def test_held_rebuild_of_run_files_equals_cold(tmp_path: Path, parallel: bool) -> None:
    """`sitegen serve`'s path: the last build held in memory, rebuilt from the changed files."""
    content = tmp_path / "content"
    shutil.copytree(SITE_CONTENT, content)
    out = tmp_path / "public"
    held = build_site(content, out, keep=True).held
    assert held is not None and not (cache_dir(out) / "state.pickle").exists()  # in memory
    runs = run_files(content)
    timed = next(p for p in runs if "timing" in json.loads(p.read_text())["spec"])

    def step(name: str, changed: list[Path], runs_only: bool = True) -> dict[str, object]:
        nonlocal held
        assert held is not None
        before = inodes(out)
        built = rebuild_runs(held, changed)
        assert (built is not None) == runs_only, name
        if built is None:
            built = build_site(content, out, keep=True, previous=held)
        assert built.out_dir is not None and built.held is not None
        held = built.held
        expected = cold(content, tmp_path, name)
        assert tree(out) == expected, name
        assert built.file_count == len(expected) - 1  # the marker is not an output
        assert built.page_count == sum(1 for p in expected if p.endswith(".html"))
        assert built.run_count == len(held.inputs.analysis.runs)
        after = inodes(out)
        return {p: v for p, v in after.items() if before.get(p) != v}

    def median(document: dict) -> None:  # type: ignore[type-arg]
        document["spec"]["timing"]["latencyNs"]["median"] += 1

    edit(timed, median)
    changed = step("modified", [timed])
    assert any(p.startswith("runs/") for p in changed)
    assert [p for p in inodes(out) if p.startswith("runs/") and p not in changed]
    # A kernel's charts are kept: the next edit plans and renders only the edited run's again.
    assert held is not None
    analysis = held.inputs.analysis
    kernels = {
        k.key
        for k in analysis.kernels
        if sum(len(g.series) for p in passes_of(k) for g in p.gpus) > 1
    }
    charted = next(
        path
        for path in runs
        if "timing" in (document := json.loads(path.read_text()))["spec"]
        and analysis.runs[digest(document["kind"], document["spec"])].kernel_key in kernels
    )
    kernel = analysis.runs[digest(document["kind"], document["spec"])].kernel_key
    edit(charted, median)
    step("modified in a kernel of many charts", [charted])
    charts = dict(held.plans.charts[kernel])
    assert len(charts) > 1 and all(c.rendered.markup for c in charts.values())
    edit(charted, median)
    step("modified again", [charted])
    now = held.plans.charts[kernel]
    assert len(now) == len(charts)
    assert sum(chart is not charts.get(key) for key, chart in now.items()) == 1
    added = content / "runs" / "more" / "added.json"
    added.parent.mkdir()
    shutil.copy(timed, added)
    edit(added, median)
    edit(added, median)
    step("added", [added])
    runs[-1].unlink()
    step("deleted", [runs[-1]])

    def retitle(document: dict) -> None:  # type: ignore[type-arg]
        document["metadata"]["title"] = document["metadata"]["title"] + " (again)"

    edit(added, retitle)
    step("retitled", [added])
    (content / ".added.json.swp").write_text("editor state")
    assert step("dot-file", [content / ".added.json.swp"]) == {}
    assert step("come and gone", [content / "runs" / "added.json~"]) == {}
    (content / "runs" / "notes.txt").write_text("not content")  # the full build reports it
    assert held is not None and rebuild_runs(held, [content / "runs" / "notes.txt"]) is None
    (content / "runs" / "notes.txt").unlink()
    # Not runs alone: a full incremental build from the held state.
    environment = sorted((content / "environments").glob("*.json"))[0]
    edit(environment, lambda d: d["metadata"].update(title="Renamed host"))
    step("environment", [environment], runs_only=False)
    shutil.copy(timed, added)  # the same run twice: a duplicate to resolve and report
    step("duplicate", [added], runs_only=False)
    (content / "runs" / "broken.json").write_text("{")
    before = tree(out)
    assert held is not None
    assert rebuild_runs(held, [content / "runs" / "broken.json"]) is None
    assert build_site(content, out, keep=True, previous=held).out_dir is None
    assert tree(out) == before
    (content / "runs" / "broken.json").unlink()
    step("mended", [content / "runs" / "broken.json"])


def test_a_rebuild_patches_the_last_builds_run_counts(tmp_path: Path) -> None:
    """The runs counted by resource and by source (the home page, the list pages) are the last
    build's, patched with the runs that went: not counted again over every run. Doctored
    counts show through a rebuild; counted afresh they would not."""
    content = tmp_path / "content"
    shutil.copytree(SITE_CONTENT, content)
    out = tmp_path / "public"
    held = build_site(content, out, keep=True).held
    assert held is not None and held.plans.tallies is not None
    kept = held.plans.tallies
    assert kept.of is held.inputs.analysis.newest

    def counted() -> dict[str, int]:
        home = json.loads((out / "index.json").read_text())
        return {block["source"]: block["runs"] for block in home["sources"]}

    before = counted()
    source = next(iter(before))
    held.plans.tallies = kept._replace(by_source=kept.by_source + Counter({source: 1000}))
    gone = run_files(content)[-1]
    gone.unlink()
    built = rebuild_runs(held, [gone])
    assert built is not None and built.held is not None
    assert counted()[source] - before[source] in (999, 1000)  # the deleted run may be its
    assert built.held.plans.tallies is not None
    assert built.held.plans.tallies.of is built.held.inputs.analysis.newest
