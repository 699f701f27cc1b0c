"""render.py: hostile content stays escaped in every file of a build; the parallel render's
chunks; an incremental build's few pages rendered beside a big site's export."""

from __future__ import annotations

import json
import os
import shutil
import threading
from pathlib import Path
from xml.etree import ElementTree

import pytest

import sitegen.process
import sitegen.render.render
from sitegen.pipeline import build_site
from sitegen.publish.incremental import IncrementalOutput
from sitegen.publish.write import Data
from sitegen.render.render import (
    CHUNK_PAGES,
    PARALLEL_MIN_PAGES,
    ChosenPages,
    Output,
    _Chunks,
    render_into,
)
from sitegen.site.records import LazyPage
from sitegen.site.urls import json_twin, output_path
from tests.conftest import (
    FIXTURES,
    HOSTILE_MARKDOWN,
    HOSTILE_TITLE,
    IMG,
    NEEDLES,
    SCRIPT,
)
from tests.test_pipeline import tree

SITE_CONTENT = FIXTURES / "site" / "content"


def test_hostile_content_never_unescaped(tmp_path: Path) -> None:
    content = tmp_path / "content"
    shutil.copytree(SITE_CONTENT, content)
    run_file = next((content / "runs").glob("liger-layer-norm-backward-liger-*hidden1024*.json"))
    run = json.loads(run_file.read_text())
    run["metadata"]["title"] = HOSTILE_TITLE
    run["metadata"]["description"] = HOSTILE_MARKDOWN
    run["metadata"]["labels"]["note"] = SCRIPT + IMG
    run_file.write_text(json.dumps(run))
    operation_file = content / "operations" / "liger-layer-norm.json"
    operation = json.loads(operation_file.read_text())
    operation["metadata"]["description"] = HOSTILE_MARKDOWN
    operation_file.write_text(json.dumps(operation))
    report = content / "_sources" / "liger-kernel.json"
    data = json.loads(report.read_text())
    data["title"] = SCRIPT
    data["repository"] = "javascript:alert(4)"
    data["skipped"] = {IMG: 3}
    report.write_text(json.dumps(data))

    out = tmp_path / "out"
    assert build_site(content, out).out_dir is not None
    checked = 0
    for path in out.rglob("*"):
        if not path.is_file() or path.name.startswith("plotly-"):
            continue
        text = path.read_text()
        for needle in NEEDLES:
            if path.suffix in (".json", ".jsonl"):
                continue  # JSON carries the title as data; browsers never render it as HTML
            assert needle not in text, f"{needle!r} unescaped in {path.relative_to(out)}"
        assert 'href="javascript:alert(4)' not in text
        checked += 1
    assert checked > 100
    run_page = next(p for p in out.glob("runs/*/index.html") if "alert(1)" in p.read_text())
    assert "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in run_page.read_text()


def test_characters_a_reader_would_not_see_are_shown_escaped(tmp_path: Path) -> None:
    """The format allows controls, separators and bidi overrides in free text (a warning):
    pages, feeds and llms.txt show each as its escape, the JSON keeps it as data."""
    content = tmp_path / "content"
    shutil.copytree(SITE_CONTENT, content)
    run_file = next((content / "runs").glob("liger-layer-norm-backward-liger-*hidden1024*.json"))
    run = json.loads(run_file.read_text())
    run["metadata"]["title"] = "Layer\x00Norm \x1b[31m \u202eevil\u2028 · liger · backward"
    run_file.write_text(json.dumps(run))
    out = tmp_path / "out"
    built = build_site(content, out, search=False)
    assert built.out_dir is not None
    assert {w.where for w in built.checked.problems} == {"metadata.title"}
    ElementTree.parse(out / "feed.xml")  # well-formed: no control character in it
    for path in out.rglob("*"):
        if path.suffix in (".html", ".xml", ".txt"):
            text = path.read_text()
            assert not any(c in text for c in "\x00\x1b\u202e\u2028"), path
    run_page = next(p for p in out.glob("runs/*/index.html") if "evil" in p.read_text())
    assert "Layer\\x00Norm \\x1b[31m \\u202eevil\\u2028" in run_page.read_text()
    twin = json.loads((run_page.parent / "index.json").read_text())
    assert "\u202eevil" in json.dumps(twin, ensure_ascii=False)


@pytest.mark.parametrize("page_count", [1, 15, 300, 4384, 20_000])
def test_page_chunks_are_claimed_once_from_both_ends_and_shrink(page_count: int) -> None:
    import multiprocessing

    chunks = _Chunks(multiprocessing.get_context("fork"), page_count, processes=2)
    front: list[tuple[int, int]] = []
    back: list[tuple[int, int]] = []
    while True:  # the two ends alternate, as a worker and this process would
        claimed = chunks.claim(from_back=len(back) < len(front))
        if claimed is None:
            break
        (back if len(back) < len(front) else front).append(claimed)
    spans = sorted(front + back)
    assert [i for start, end in spans for i in range(start, end)] == list(range(page_count))
    sizes = [end - start for start, end in front]
    assert max(sizes) <= CHUNK_PAGES and sizes == sorted(sizes, reverse=True)
    if page_count >= 8 * CHUNK_PAGES:
        assert max(e - s for s, e in front[-1:] + back[-1:]) < CHUNK_PAGES / 4
    assert chunks.claim() is None and chunks.claim(from_back=True) is None


@pytest.mark.parametrize("big", [True, False], ids=["big files", "small files"])
def test_few_changed_pages_render_here_while_a_thread_writes_the_big_files(
    big: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An incremental build's few changed pages are rendered by this process, no worker
    forked; the files from BEHIND_MIN_BYTES (the export and the manifest at 100k runs) are
    hashed and written by a thread meanwhile, the others here. The same bytes as a cold build
    either way."""
    content = tmp_path / "content"
    shutil.copytree(SITE_CONTENT, content)
    out = tmp_path / "public"
    assert build_site(content, out, incremental=True).out_dir is not None
    monkeypatch.setattr(sitegen.process, "usable_cpus", lambda: 2)
    # Every file that is not a page is "big" in the fixture's site, or none.
    monkeypatch.setattr(sitegen.render.render, "BEHIND_MIN_BYTES", 1 if big else 10**12)
    rendered_by = tmp_path / "rendered-by"
    render_page = sitegen.render.render._render_page
    pages: set[str] = set()

    def noted(page: LazyPage, *args: object) -> None:
        with rendered_by.open("a") as note:  # appended by whichever process renders it
            note.write(f"{os.getpid()}\n")
        pages.update((output_path(page.path), json_twin(page.path)))
        render_page(page, *args)  # type: ignore[arg-type]

    written_by: dict[str, str] = {}
    write = IncrementalOutput.write

    def noted_write(self: IncrementalOutput, path: str, data: Data, key: str | None = None) -> None:
        written_by[path] = threading.current_thread().name
        write(self, path, data, key)

    monkeypatch.setattr(sitegen.render.render, "_render_page", noted)
    monkeypatch.setattr(IncrementalOutput, "write", noted_write)
    run_file = next((content / "runs").glob("liger-layer-norm-backward-liger-*hidden1024*.json"))
    run = json.loads(run_file.read_text())
    run["spec"]["timing"]["latencyNs"]["median"] += 1
    run_file.write_text(json.dumps(run, indent=2))
    assert build_site(content, out, incremental=True).out_dir is not None

    pids = rendered_by.read_text().split()
    assert 0 < len(pids) < PARALLEL_MIN_PAGES  # a few pages, not every page
    assert set(pids) == {str(os.getpid())}
    main = threading.main_thread().name
    beside = {path for path, thread in written_by.items() if thread != main}
    assert beside == (written_by.keys() - pages if big else set())
    assert {"export/resources.jsonl", "manifest.json"} <= written_by.keys() - pages
    cold = tmp_path / "cold"
    monkeypatch.undo()
    assert build_site(content, cold).out_dir is not None
    assert tree(out) == tree(cold)


def test_pages_chosen_by_another_output_are_refused() -> None:
    """The pages `choose_pages` chose were asked of one output, which noted what it skips:
    rendered through another, those notes would be lost, so render_into refuses them."""
    chosen = ChosenPages(Output(lambda *_: None), [], set())
    with pytest.raises(ValueError, match="another output"):
        render_into(None, None, Output(lambda *_: None), None, None, chosen=chosen)  # type: ignore[arg-type]
