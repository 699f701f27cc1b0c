"""`sitegen build` end to end: golden output of the fixture site, determinism, acceptance facts.

Regenerate the golden tree with `SITEGEN_REGENERATE=1 .venv/bin/pytest tests/test_pipeline.py`
and read the diff.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest

from sitegen.cli import main
from sitegen.pipeline import Progress, build_site, manifest_of_content
from sitegen.publish.manifest import manifest_document
from tests.conftest import FIXTURES, REFERENCE, REGENERATE, REPOSITORY, beside

SITE_CONTENT = FIXTURES / "site" / "content"
GOLDEN = REPOSITORY / "tests" / "golden" / "site"
SEED_RUN = "sha256:f0cf6dd69e048a9b8a36f49fe2ac18abee9a512e48d2f92dd7cfd4d03a280b86"
PLOTLY_PREFIX = "assets/plotly-"


def tree(root: Path) -> dict[str, bytes]:
    """Every file under `root` by relative path; plotly's 4.8 MB stand in as name and sha256."""
    files = {}
    for path in sorted(root.rglob("*")):
        if path.is_file():
            relative = path.relative_to(root).as_posix()
            data = path.read_bytes()
            if relative.startswith(PLOTLY_PREFIX) and relative.endswith(".min.js"):
                relative += ".sha256"
                data = (hashlib.sha256(data).hexdigest() + "\n").encode()
            files[relative] = data
    return files


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site") / "public"
    built = build_site(SITE_CONTENT, out)
    assert built.out_dir == out.resolve(), built.checked.problems
    return out


def test_golden_site(site: Path) -> None:
    actual = tree(site)
    if REGENERATE:
        shutil.rmtree(GOLDEN, ignore_errors=True)
        for relative, data in actual.items():
            path = GOLDEN / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
    expected = tree(GOLDEN)
    assert sorted(actual) == sorted(expected), "files differ: SITEGEN_REGENERATE=1 to update"
    changed = [path for path in actual if actual[path] != expected[path]]
    assert not changed, f"{len(changed)} files differ from tests/golden/site, e.g. {changed[:5]}"


def test_seed_run_page(site: Path) -> None:
    page = (site / "runs" / "f0cf6dd69e048a9b" / "index.html").read_text()
    assert "<title>LayerNorm · liger · backward · kernelindex</title>" in page
    assert "<h1 data-pagefind-body>LayerNorm · liger · backward</h1>" in page
    assert "578 µs" in page
    assert "577,632 ns" in page
    assert "p20 575 / p80 580 µs" in page
    assert "Fastest of 2 implementations at this workload, pass and GPU" in page
    assert 'href="/kernels/liger-layer-norm/#run-f0cf6dd69e048a9b"' in page
    assert 'href="/protocols/liger-bench-do-bench-backward/"' in page
    assert 'href="/gpus/liger-bench-nvidia-h100-80gb-hbm3/"' in page
    assert 'href="/workloads/liger-layer-norm-hidden16384-rows4096-fp32/"' in page
    assert 'href="/implementations/liger-bench-layer-norm-liger/"' in page
    assert 'href="/kernels/liger-layer-norm/"' in page
    assert SEED_RUN in page and f'data-copy="{SEED_RUN}"' in page
    assert "layer_norm/backward/liger/nvidia-h100-80gb-hbm3/" in page  # provenance
    assert "Liger-Kernel, BSD-2-Clause, Copyright 2024 LinkedIn Corporation" in page
    assert (
        '<link rel="alternate" type="application/json" href="/runs/f0cf6dd69e048a9b/index.json"'
        in page
    )
    twin = json.loads((site / "runs" / "f0cf6dd69e048a9b" / "index.json").read_text())
    assert twin["digest"] == SEED_RUN
    assert twin["document"]["metadata"]["title"] == "LayerNorm · liger · backward"


def test_layer_norm_kernel_page(site: Path) -> None:
    page = (site / "kernels" / "liger-layer-norm" / "index.html").read_text()
    twin = json.loads((site / "kernels" / "liger-layer-norm" / "index.json").read_text())
    backward = next(p for p in twin["passes"] if p["pass"] == "backward")
    h100 = next(g for g in backward["gpus"] if "H100" in g["label"])
    chart = h100["charts"][0]["chart"]
    assert sorted(t["name"] for t in chart["data"]) == ["Liger", "Transformers (baseline)"]
    liger = next(t for t in chart["data"] if t["name"] == "Liger")
    assert liger["x"] == [1024, 4096, 16384]
    assert liger["customdata"][-1] == "/runs/f0cf6dd69e048a9b/"
    assert liger["error_y"]["symmetric"] is False
    assert "plotly-" in page and 'class="chart-spec"' in page
    assert "Not measured in this pass on" in page  # A100 has no backward runs
    assert "Peak memory allocated" in page or "Peak memory" in page
    assert 'id="run-f0cf6dd69e048a9b"' in page  # the run page's link lands on its row
    assert "0.00×" not in page
    assert "Liger-Kernel, BSD-2-Clause, Copyright 2024 LinkedIn Corporation" in page


def test_machine_readable_outputs(site: Path) -> None:
    lines = (site / "export" / "resources.jsonl").read_text().splitlines()
    digests = [json.loads(line)["digest"] for line in lines]
    assert (
        digests == sorted(digests) and len(digests) == len(set(digests)) == 48
    )  # 50 read, 2 repeated in the bundle
    for kind in ("BenchmarkRun", "OperationSpec", "ExecutionEnvironment"):
        schema = json.loads((site / "schemas" / f"{kind}.json").read_text())
        assert "apiVersion" in schema["properties"]
    for html in site.rglob("index.html"):
        assert (html.parent / "index.json").is_file(), html
    feed = ElementTree.parse(site / "feed.xml").getroot()
    ns = {"a": "http://www.w3.org/2005/Atom"}
    entries = feed.findall("a:entry", ns)
    assert len(entries) == 28
    updated = [e.findtext("a:updated", namespaces=ns) for e in entries]
    assert updated == sorted(updated, reverse=True)
    sitemap = ElementTree.parse(site / "sitemap.xml").getroot()
    locations = [u.findtext("{http://www.sitemaps.org/schemas/sitemap/0.9}loc") for u in sitemap]
    assert "https://kernelindex.dev/runs/f0cf6dd69e048a9b/" in locations
    assert "Sitemap: https://kernelindex.dev/sitemap.xml" in (site / "robots.txt").read_text()
    assert (site / "404.html").is_file() and (site / ".sitegen-output").is_file()


def test_every_page_has_its_open_graph_meta(site: Path) -> None:
    pages = sorted(site.rglob("*.html"))
    assert len(pages) == 63  # the sources, regressions, methodology and data-quality pages
    for path in pages:
        html = path.read_text()
        meta = dict(re.findall(r'<meta property="og:(\w+)" content="([^"]*)">', html))
        assert sorted(meta) == ["description", "site_name", "title", "type", "url"], path
        canonical = re.search(r'<link rel="canonical" href="([^"]+)">', html)
        assert canonical and meta["url"] == canonical.group(1), path
        description = re.search(r'<meta name="description" content="([^"]+)">', html)
        assert description and meta["description"] == description.group(1), path
        assert len(meta["description"]) > 30 and meta["site_name"] == "kernelindex", path


def test_only_the_search_page_may_run_webassembly(site: Path) -> None:
    """Pagefind's index is WebAssembly: the site's header policy allows it (netlify.toml, for
    its worker), and every page's own policy but the search page's forbids it again."""
    for path in sorted(site.rglob("*.html")):
        policy = re.search(r'Content-Security-Policy" content="([^"]+)"', path.read_text())
        assert policy, path
        allowed = "script-src 'self' 'wasm-unsafe-eval';" in policy.group(1)
        assert allowed == (path == site / "search" / "index.html"), path


def test_llms_txt_links_only_files_the_site_has(site: Path) -> None:
    text = (site / "llms.txt").read_text()
    for url in re.findall(r"\]\((https://kernelindex\.dev/[^)]*)\)", text):
        path = url.removeprefix("https://kernelindex.dev/")
        assert (site / path).is_file() or (site / path / "index.html").is_file(), url


def test_no_absolute_paths_or_cdn(site: Path) -> None:
    for path in site.rglob("*"):
        if path.is_file() and not path.name.startswith("plotly-"):
            text = path.read_bytes()
            assert str(REPOSITORY).encode() not in text, path
            assert b"cdn.plot.ly" not in text and b"cdn.jsdelivr" not in text, path


def test_export_only_tree_gets_a_kernel_page_ranking_its_run(tmp_path: Path) -> None:
    content = tmp_path / "content"
    content.mkdir()
    shutil.copy(REFERENCE / "layer-norm-backward-liger-h100.json", content)
    built = build_site(content, tmp_path / "out")
    assert built.out_dir is not None
    twin = json.loads((tmp_path / "out" / "kernels" / "layer-norm" / "index.json").read_text())
    assert twin["kernel"]["title"] == "LayerNorm"
    # One workload: a ranked table (a leaderboard), not a chart of one point.
    (board,) = twin["leaderboards"]
    (cohort,) = board["cohorts"]
    assert board["metric"] == "latency" and board["statistic"] == "median"
    assert [entry["rank"] for entry in cohort["ranked"]] == [1]
    html = (tmp_path / "out" / "kernels" / "layer-norm" / "index.html").read_text()
    assert "hidden=16384" in html  # the shape, from the externalId's caseKey
    assert "Median latency on NVIDIA H100" in html


def test_base_url(tmp_path: Path) -> None:
    build_site(SITE_CONTENT, tmp_path / "out", base_url="https://example.org/bench/")
    page = (tmp_path / "out" / "runs" / "f0cf6dd69e048a9b" / "index.html").read_text()
    assert 'href="/bench/protocols/liger-bench-do-bench-backward/"' in page
    assert '<link rel="canonical" href="https://example.org/bench/runs/f0cf6dd69e048a9b/">' in page
    feed = (tmp_path / "out" / "feed.xml").read_text()
    assert "https://example.org/bench/runs/" in feed


def test_build_refuses_invalid_content(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    content = tmp_path / "content"
    shutil.copytree(SITE_CONTENT, content)
    (content / "broken.json").write_text('{"apiVersion": "kernelindex.dev/v1alpha1"')
    out = tmp_path / "out"
    assert main(["build", str(content), "--out", str(out)]) == 1
    report = capsys.readouterr().out
    assert main(["check", str(content)]) == 1
    assert report == capsys.readouterr().out  # the same report as `sitegen check`
    assert not out.exists()


def test_cli_summary_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "public"
    assert main(["build", str(SITE_CONTENT), "--out", str(out)]) == 0
    line = capsys.readouterr().out.strip()
    # The search index's time apart, its pages, and the size of its files.
    assert re.fullmatch(
        r"built 63 pages \(28 runs\) in \d+\.\d s, of which the search index \d+\.\d s "
        rf"\(48 pages, \d+\.\d MiB\) → {re.escape(str(out))}",
        line,
    ), line
    assert main(["build", str(SITE_CONTENT), "--out", str(out), "--no-search"]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith("built 63 pages (28 runs) in ") and line.endswith(f" s → {out}")
    assert not (out / "pagefind").exists()


def _shuffled_copy(source: Path, target: Path, seed: int) -> None:
    """The same resources under other file names and folders, written in another order."""
    files = sorted(p for p in source.rglob("*.json") if "_sources" not in p.parts)
    random.Random(seed).shuffle(files)
    for number, path in enumerate(files):
        destination = target / f"d{number % 3}" / f"{seed}-{number}-{path.name}"
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, destination)
    shutil.copytree(source / "_sources", target / "_sources")


def test_deterministic_across_processes(tmp_path: Path) -> None:
    outputs = []
    for seed, (hash_seed, zone) in enumerate((("1", "UTC"), ("4242", "Asia/Kolkata"))):
        content = tmp_path / f"checkout-{seed}" / "content"
        _shuffled_copy(SITE_CONTENT, content, seed)
        out = tmp_path / f"out-{seed}"
        env = {**os.environ, "PYTHONHASHSEED": hash_seed, "TZ": zone}
        env.pop("SOURCE_DATE_EPOCH", None)
        command = [sys.executable, "-m", "sitegen", "build", str(content), "--out", str(out)]
        subprocess.run(command, check=True, env=env, cwd=tmp_path, capture_output=True)
        outputs.append(_without_sources(tree(out)))
    # The search index too: its pages were written in another order, by other processes.
    assert any(path.startswith("pagefind/fragment/") for path in outputs[0])
    assert outputs[0] == outputs[1]
    pages = {path: data for path, data in outputs[0].items() if not path.startswith("pagefind/")}
    assert pages == _without_sources(tree(GOLDEN))  # the golden tree is built without an index


def _without_sources(files: dict[str, bytes]) -> dict[str, bytes]:
    """The manifest names each resource's file: the one output that depends on file names."""
    manifest = json.loads(files["manifest.json"])
    for entry in manifest["resources"]:
        entry["source"] = entry["source"].split("/")[0]
    return {**files, "manifest.json": json.dumps(manifest).encode()}


def test_source_date_epoch_is_the_only_clock(tmp_path: Path) -> None:
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1752775200"}
    out = tmp_path / "out"
    command = [sys.executable, "-m", "sitegen", "build", str(SITE_CONTENT), "--out", str(out)]
    subprocess.run(command, check=True, env=env, capture_output=True)
    assert "Built 2025-07-17 18:00 UTC" in (out / "index.html").read_text()


def test_parallel_render_writes_the_golden_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Forked workers loading the content (runs held compact) and writing into the staging tree
    give the same bytes as one process."""
    import sitegen.content.load
    import sitegen.process
    import sitegen.render.render

    monkeypatch.setattr(sitegen.content.load, "PARALLEL_MIN_FILES", 0)
    monkeypatch.setattr(sitegen.process, "usable_cpus", lambda: 2)
    monkeypatch.setattr(sitegen.render.render, "PARALLEL_MIN_PAGES", 0)
    monkeypatch.setattr(sitegen.render.render, "CHUNK_PAGES", 7)
    out = tmp_path / "public"
    progress = Heard()
    built = build_site(SITE_CONTENT, out, progress=progress)
    assert built.out_dir == out.resolve()
    assert tree(out) == tree(GOLDEN)
    assert progress.pages_seen[-1][0] == progress.pages_seen[-1][1] == built.page_count - 1
    assert progress.stages == ["load", "resolve", "analyse", "plan", "render", "publish"]


class Heard(Progress):
    """What a build reported, in order."""

    def __init__(self) -> None:
        self.stages: list[str] = []
        self.pages_seen: list[tuple[int, int]] = []

    def stage(self, name: str, seconds: float) -> None:
        assert seconds >= 0
        self.stages.append(name)

    def pages(self, done: int, total: int) -> None:
        self.pages_seen.append((done, total))


@pytest.mark.parametrize("where", ["worker", "parent", "worker dies"])
def test_a_failing_page_stops_a_parallel_render_and_keeps_the_old_site(
    where: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whichever process meets it, a page error ends the build with the page named; a worker
    that dies without a word ends it too; either way the previous site is untouched."""
    import sitegen.process
    import sitegen.render.render
    from sitegen.render.errors import RenderError

    out = tmp_path / "public"
    build_site(SITE_CONTENT, out)
    before = tree(out)
    monkeypatch.setattr(sitegen.render.render, "PARALLEL_MIN_PAGES", 0)
    monkeypatch.setattr(sitegen.render.render, "CHUNK_PAGES", 3)
    monkeypatch.setattr(sitegen.process, "usable_cpus", lambda: 2)
    parent = os.getpid()
    rendered = sitegen.render.render.html

    def html(template: Any, page: Any, chrome: Any) -> bytes:
        if template.name == "404.html":  # not a page: the parent renders it with the extras
            pass
        elif os.getpid() == parent:
            if where == "parent":
                raise ValueError("boom in the parent")
            time.sleep(0.02)  # leave pages for the worker
        elif where == "worker":
            raise ValueError("boom in a worker")
        elif where == "worker dies":
            os._exit(3)
        return rendered(template, page, chrome)

    monkeypatch.setattr(sitegen.render.render, "html", html)
    with pytest.raises(RenderError) as raised:
        build_site(SITE_CONTENT, out)
    message = str(raised.value)
    if where == "worker dies":
        assert message == "a render worker died (exit code 3)"
    else:
        said = "boom in a worker" if where == "worker" else "boom in the parent"
        assert re.fullmatch(r"rendering \S*: ValueError: " + said, message), message
    assert tree(out) == before
    assert beside(tmp_path) == ["public"]  # no staging tree left behind


@pytest.mark.parametrize(("workers", "overlap"), [(1, False), (2, True), (2, False)])
def test_an_extra_file_on_a_page_path_fails_the_build_and_keeps_the_old_site(
    workers: int, overlap: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The extras (manifest, export, feed, …) are rendered before the pages, or on a small
    site while the worker renders pages: a clash with a page's path is found either way, and
    nothing is swapped in."""
    import sitegen.process
    import sitegen.render.render
    from sitegen.render.errors import RenderError

    out = tmp_path / "public"
    build_site(SITE_CONTENT, out)
    before = tree(out)
    monkeypatch.setattr(sitegen.render.render, "PARALLEL_MIN_PAGES", 0)
    monkeypatch.setattr(sitegen.render.render, "OVERLAP_EXTRAS_MAX_PAGES", 10**9 if overlap else 0)
    monkeypatch.setattr(sitegen.process, "usable_cpus", lambda: workers)
    extras = sitegen.render.render.site_files

    def clashing(*args: Any) -> Any:
        yield from extras(*args)
        yield "runs/index.html", b"not the run list"

    monkeypatch.setattr(sitegen.render.render, "site_files", clashing)
    with pytest.raises(RenderError, match=r"two outputs would be written to runs/index\.html"):
        build_site(SITE_CONTENT, out)
    assert tree(out) == before
    assert beside(tmp_path) == ["public"]


@pytest.mark.parametrize("incremental", [False, True])
def test_the_manifest_is_planned_beside_the_page_worker_unless_needed_first(
    incremental: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plain build plans the manifest once the page worker is forked (one CPU had idled
    through it); an incremental one keeps it for the next build, so plans it first. The
    manifest written is the same either way."""
    import sitegen.pipeline
    import sitegen.process
    import sitegen.render.render
    from sitegen.render.compact_json import compact_json

    monkeypatch.setattr(sitegen.render.render, "PARALLEL_MIN_PAGES", 0)
    monkeypatch.setattr(sitegen.process, "usable_cpus", lambda: 2)
    planned_while_rendering = []
    plan = sitegen.pipeline.plan_manifest

    def spy(*args: Any) -> Any:
        planned_while_rendering.append(sitegen.render.render._JOB is not None)
        return plan(*args)

    monkeypatch.setattr(sitegen.pipeline, "plan_manifest", spy)
    out = tmp_path / "public"
    build_site(SITE_CONTENT, out, incremental=incremental)
    assert planned_while_rendering == [not incremental]
    expected = manifest_of_content(SITE_CONTENT).manifest
    assert expected is not None
    written = (out / "manifest.json").read_bytes()
    assert written == compact_json(manifest_document(expected), newline=True)


def test_long_run_lists_continue_on_numbered_pages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No page grows with the catalog: run lists past RUNS_PER_PAGE go on in `…/runs/2/`."""
    import re

    import sitegen.site.lookup

    monkeypatch.setattr(sitegen.site.lookup, "RUNS_PER_PAGE", 5)
    out = tmp_path / "public"
    built = build_site(SITE_CONTENT, out)
    assert built.out_dir is not None
    # The runs list: pages 1..6 for 28 runs, every run on exactly one of them, newest first.
    listed = []
    for number in range(1, 7):
        folder = out / "runs" if number == 1 else out / "runs" / "page" / str(number)
        twin = json.loads((folder / "index.json").read_text())
        assert twin["page"] == number and len(twin["pages"]) == 6
        listed += [item["Run"]["url"] for item in twin["items"]]
        html = (folder / "index.html").read_text()
        assert '<nav class="pager"' in html and f'<span aria-current="page">{number}</span>' in html
    assert len(listed) == len(set(listed)) == 28
    assert not (out / "runs" / "page" / "7").exists()
    # A GPU with more runs than a page: its page shows the first five and the total.
    gpu = out / "gpus" / "liger-bench-nvidia-h100-80gb-hbm3"
    html = (gpu / "index.html").read_text()
    total = int(re.search(r"Runs \((\d+)\)", html).group(1))  # type: ignore[union-attr]
    assert total > 5 and html.count('<tr><td><a href="/runs/') == 5
    pages = -(-total // 5)
    rows = sum(
        len(json.loads((gpu / "runs" / str(n) / "index.json").read_text())["items"])
        for n in range(2, pages + 1)
    )
    assert rows == total - 5
    twin = json.loads((gpu / "index.json").read_text())
    assert sum(1 for u in twin["usedBy"] if u["kind"] == "BenchmarkRun") == total


# --- check and build agree ------------------------------------------------------------------------

INVALID = sorted(
    case
    for case in (FIXTURES / "invalid").iterdir()
    if case.is_dir() and not (case / "args.txt").exists()  # build has no --strict
)


@pytest.fixture(scope="module")
def good_site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, bytes]]:
    out = tmp_path_factory.mktemp("good") / "public"
    assert build_site(SITE_CONTENT, out).out_dir is not None
    return out, tree(out)


@pytest.mark.parametrize("case", INVALID, ids=[c.name for c in INVALID])
def test_build_refuses_exactly_what_check_refuses(
    case: Path,
    good_site: tuple[Path, dict[str, bytes]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Every invalid tree: `build` prints `check`'s report, exits as it does, and the previous
    site is byte-identical; nothing `check` passes can make `build` fail (page paths included)."""
    out = tmp_path / "public"
    shutil.copytree(good_site[0], out)
    monkeypatch.chdir(case)
    checked = main(["check", "content"])
    report = capsys.readouterr().out
    built = main(["build", "content", "--out", str(out)])
    captured = capsys.readouterr()
    if checked:
        assert (built, captured.out) == (checked, report)
        assert captured.err.splitlines()[-1] == "build failed: nothing was written"
        assert tree(out) == good_site[1]
    else:  # warnings only: the build goes on, and prints them
        assert built == 0, captured
        assert set(report.splitlines()[:-1]) <= set(captured.err.splitlines())


@pytest.mark.parametrize(
    ("epoch", "reason"),
    [
        ("1e9", "not a whole number of seconds since 1970: '1e9'"),
        (" 1752775200", "not a whole number of seconds since 1970: ' 1752775200'"),
        ("\u0661\u0662\u0663", "not a whole number of seconds since 1970: '\u0661\u0662\u0663'"),
        ("-1", "not a whole number of seconds since 1970: '-1'"),
        ("999999999999", "out of range: '999999999999'"),
    ],
)
@pytest.mark.parametrize("command", ["check", "build"])
def test_an_odd_source_date_epoch_is_one_line(
    epoch: str,
    reason: str,
    command: str,
    good_site: tuple[Path, dict[str, bytes]],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out, before = good_site
    monkeypatch.setenv("SOURCE_DATE_EPOCH", epoch)
    arguments = [command, str(SITE_CONTENT)] + (["--out", str(out)] if command == "build" else [])
    assert main(arguments) == 2
    assert capsys.readouterr().err == f"sitegen {command}: SOURCE_DATE_EPOCH: {reason}\n"
    assert tree(out) == before


@pytest.mark.parametrize("epoch", ["253402300799", "253402214400", "0"])
def test_the_last_and_first_source_date_epochs_check(
    epoch: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """9999-12-31T23:59:59Z is a valid epoch: its day after is past `datetime`, which is no
    content file's fault (a run of 2025 is no later than it)."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", epoch)
    expected = 0 if epoch != "0" else 1  # 1970: every run is in its future
    assert main(["check", str(SITE_CONTENT)]) == expected
    out = capsys.readouterr().out
    assert "OverflowError" not in out and "sitegen failed" not in out
