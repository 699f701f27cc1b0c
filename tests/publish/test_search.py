"""The search index (sitegen/publish/search.py): Pagefind over the staged site, in parts, the
same bytes for the same pages whatever order they were written in, every kind of page found as
before, and a site built without it."""

from __future__ import annotations

import gzip
import itertools
import json
import os
import re
import shutil
import stat
import tempfile
from pathlib import Path
from typing import Any

import pytest

import sitegen.pipeline
import sitegen.process
import sitegen.publish.pagefind_format
import sitegen.publish.search
import sitegen.render.render
from sitegen.cli import main
from sitegen.pipeline import build_site
from sitegen.publish.incremental import IncrementalOutput, State, output_tree, read_state
from sitegen.publish.pagefind_format import PAGEFIND_VERSION, SIGNATURE, PageKey, read
from sitegen.publish.search import (
    EXCLUDED,
    FOLDER,
    HeldIndexSizes,
    IndexedAsRendered,
    SearchError,
    html_pages,
    index_copy,
    index_search,
    link_pages,
    pagefind_binary,
    pagefind_version,
    what_pagefind_reads,
)
from sitegen.render.render import Output
from tests.conftest import FIXTURES, REPOSITORY
from tests.publish.test_incremental import edit, run_files
from tests.test_pipeline import tree

SITE_CONTENT = FIXTURES / "site" / "content"
INDEXED = 48  # the fixture's kernel, run and resource pages: not lists, search/, compare/, 404


def index_of(site: Path) -> dict[str, bytes]:
    return {k: v for k, v in tree(site).items() if k.startswith(FOLDER + "/")}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("search") / "public"
    result = build_site(SITE_CONTENT, out, search=True)
    assert result.search is not None and result.search.pages == INDEXED
    return out


def test_the_pinned_pagefind_is_the_one_installed() -> None:
    project = (REPOSITORY / "pyproject.toml").read_text()
    assert f'"pagefind-bin=={PAGEFIND_VERSION}"' in project
    assert pagefind_version() == PAGEFIND_VERSION and pagefind_binary() is not None


def test_the_index_goes_live_with_the_pages(built: Path) -> None:
    entry = json.loads((built / FOLDER / "pagefind-entry.json").read_text())
    assert entry["version"] == PAGEFIND_VERSION
    assert entry["languages"]["en"]["page_count"] == INDEXED
    assert (built / FOLDER / "pagefind-ui.js").is_file()
    assert len(list((built / FOLDER / "fragment").iterdir())) == INDEXED
    # Only the pages: no work folder left in the site or beside it.
    assert not [p for p in built.rglob(".*") if p.name != ".sitegen-output"]
    assert sorted(p.name for p in built.parent.iterdir()) == [".public.sitegen-lock", "public"]


def test_the_filters_are_written_in_order(built: Path) -> None:
    (meta_file,) = (built / FOLDER).glob("*.pf_meta")
    meta = read(meta_file)
    names = [name for name, _ in meta[3]]
    assert names == ["GPU", "Implementation", "Kernel", "Page", "Pass"]
    for name, filter_hash in meta[3]:
        filter_name, values = read(built / FOLDER / "filter" / f"{filter_hash}.pf_filter")
        assert filter_name == name
        assert [value for value, _ in values] == sorted(value for value, _ in values)
    gpu = read(built / FOLDER / "filter" / f"{meta[3][0][1]}.pf_filter")
    assert [value for value, _ in gpu[1]] == ["NVIDIA A100 SXM4-80GB", "NVIDIA H100 80GB HBM3"]


def indexed_pages(index: Path) -> dict[str, tuple[str, frozenset[str]]]:
    """Each page of the index, by URL: its Page filter's value and the words it is found by
    (stemmed, as the index stores them)."""
    found: dict[str, tuple[str, frozenset[str]]] = {}
    for folder in [index]:
        (meta_file,) = folder.glob("*.pf_meta")
        meta = read(meta_file)
        urls = []
        for fragment, _ in meta[1]:
            data = gzip.decompress((folder / "fragment" / f"{fragment}.pf_fragment").read_bytes())
            urls.append(json.loads(data[len(SIGNATURE) :])["url"])
        words: dict[str, set[str]] = {url: set() for url in urls}
        for chunk in meta[2]:
            for word in read(folder / "index" / f"{chunk[2]}.pf_index")[0]:
                page = 0
                for delta, *_ in word[1]:
                    page += delta
                    words[urls[page]].add(word[0])
        kinds = {}
        for name, filter_hash in meta[3]:
            if name == "Page":
                for value, pages in read(folder / "filter" / f"{filter_hash}.pf_filter")[1]:
                    kinds.update((urls[page], value) for page in pages)
        for url in urls:
            assert url not in found, f"{url}: in two parts of the index"
            found[url] = (kinds[url], frozenset(words[url]))
    return found


# What the fixture site's index found before it was made in parts and before a run page
# indexed only its title and what was measured (issue 38): a search per kind of page (words as
# the index stores them, stemmed), and the pages of that kind it found.
FOUND_BEFORE = {
    "GPU": ("a100 nvidia", {"/gpus/liger-bench-nvidia-a100-sxm4-80gb/"}),
    "Implementation": ("layernorm bsd", {"/implementations/liger-bench-layer-norm-liger/"}),
    "Kernel": ("layernorm", {"/kernels/liger-layer-norm/"}),
    "Project": ("linkedin", {"/projects/liger-kernel/"}),
    "Protocol": ("gradient", {"/protocols/liger-bench-do-bench-backward/"}),
    "Run": ("vocab131072 a100 huggingfac", {"/runs/b657da4d741ad73c/"}),
    "Workload": ("vocab131072", {"/workloads/liger-cross-entropy-tokens16384-vocab131072-fp32/"}),
}
KINDS_BEFORE = {
    "GPU": 2,
    "Implementation": 4,
    "Kernel": 3,
    "Project": 2,
    "Protocol": 3,
    "Run": 28,
    "Workload": 6,
}


def test_the_index_finds_each_kind_of_page_it_found_before(built: Path) -> None:
    pages = indexed_pages(built / FOLDER)
    kinds: dict[str, int] = {}
    for kind, _ in pages.values():
        kinds[kind] = kinds.get(kind, 0) + 1
    assert kinds == KINDS_BEFORE
    for kind, (words, expected) in FOUND_BEFORE.items():
        wanted = set(words.split())
        hits = {url for url, (k, found) in pages.items() if k == kind and wanted <= found}
        assert hits == expected, kind
    # A run is found by its kernel, implementation, pass, GPU, dtype and shape words.
    run_words = pages["/runs/b657da4d741ad73c/"][1]
    assert {"crossentropi", "huggingfac", "forward", "a100", "fp32", "vocab131072"} <= run_words


def test_an_index_made_in_parts_is_the_index_made_at_once(
    built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pages in the order they were rendered, PART_PAGES to a Pagefind run, the runs' indexes
    merged: the same pages with the same word counts and fragments, the same words and
    filters as one run over them all; only the chunks the word index is cut into differ."""
    monkeypatch.setattr(sitegen.publish.search, "PART_PAGES", 20)
    runs = []
    start = sitegen.publish.search._start_pagefind

    def counted(binary: Path, pages: Path, output: Path, work: Path, number: int) -> object:
        runs.append(len(list(pages.rglob("*.html"))))
        return start(binary, pages, output, work, number)

    monkeypatch.setattr(sitegen.publish.search, "_start_pagefind", counted)
    read_ahead: list[int] = []  # each part's pages whose URLs were read once it ended
    keys_of = sitegen.publish.search.fragment_keys

    def reading(index: Path) -> dict[str, PageKey]:
        read_ahead.append(len(found := keys_of(index)))
        return found

    monkeypatch.setattr(sitegen.publish.search, "fragment_keys", reading)
    out = tmp_path / "public"
    result = build_site(SITE_CONTENT, out, search=True)
    assert result.search is not None and result.search.pages == INDEXED
    # Only the INDEXED pages of the 63 HTML files: lists, search/ and 404.html not handed over.
    assert runs == [20, 20, 8]
    assert read_ahead == runs  # every part's, for the merge
    # Its word index fits one chunk, as Pagefind's own did: the very same bytes.
    assert index_of(out) == index_of(built)
    monkeypatch.setattr(sitegen.publish.pagefind_format, "CHUNK_ENTRIES", 100)
    monkeypatch.setattr(sitegen.publish.pagefind_format, "CHUNK_SPREAD", 7)
    chunked = tmp_path / "chunked"
    build_site(SITE_CONTENT, chunked, search=True)
    assert len(list((chunked / FOLDER / "index").iterdir())) > 10
    assert indexed_pages(chunked / FOLDER) == indexed_pages(built / FOLDER)
    (merged,), (whole,) = (chunked / FOLDER).glob("*.pf_meta"), (built / FOLDER).glob("*.pf_meta")
    merged_meta, whole_meta = read(merged), read(whole)
    assert merged_meta[1] == whole_meta[1]  # pages by key: fragment, word count
    assert merged_meta[3:] == whole_meta[3:]  # filters (their files named by content), fields
    chunks = merged_meta[2]  # each word in one chunk, the chunks in word order
    assert all(a[1] < b[0] for a, b in itertools.pairwise(chunks))
    again = tmp_path / "again"
    build_site(SITE_CONTENT, again, search=True)
    assert index_of(again) == index_of(chunked)  # the same pages, the same bytes


def word_pages(index: Path) -> dict[tuple[str, str], set[str]]:
    """(word, form) → the URLs of its pages: form "" for the word's own pages, else a variant
    (a form with diacritics, indexed under the word without them)."""
    (meta_file,) = index.glob("*.pf_meta")
    meta = read(meta_file)
    urls = []
    for fragment, _ in meta[1]:
        data = gzip.decompress((index / "fragment" / f"{fragment}.pf_fragment").read_bytes())
        urls.append(json.loads(data[len(SIGNATURE) :])["url"])
    found: dict[tuple[str, str], set[str]] = {}
    for chunk in meta[2]:
        for word, pages, variants in read(index / "index" / f"{chunk[2]}.pf_index")[0]:
            for form, listed in [("", pages), *variants]:
                page = 0
                for delta, *_ in listed:
                    page += delta
                    found.setdefault((word, form), set()).add(urls[page])
    return found


def test_words_with_diacritics_keep_their_pages_through_parts_and_renumbering(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pagefind files `ağaç` under `agac` as a variant with pages of its own: renumbered by
    URL and merged from parts like a word's."""
    binary = pagefind_binary()
    assert binary is not None
    site = tmp_path / "site"
    texts = {"d": "ağaç tree", "c": "agac plain", "b": "ağaç forest", "a": "plain"}
    for name, text in texts.items():
        (site / name).mkdir(parents=True)
        (site / name / "index.html").write_text(
            f'<html lang="en"><body><main data-pagefind-body><p>{text}</p></main></body></html>'
        )
    indexes = []
    for part_pages in (100, 1):
        monkeypatch.setattr(sitegen.publish.search, "PART_PAGES", part_pages)
        into = tmp_path / f"index-{part_pages}"
        index_search(site, into, tmp_path / "work", binary)
        indexes.append(word_pages(into))
    assert indexes[0] == indexes[1]
    assert indexes[0][("agac", "ağaç")] == {"/b/", "/d/"}
    assert indexes[0][("agac", "")] == {"/c/"}
    assert indexes[0][("plain", "")] == {"/a/", "/c/"}


def linking_in(order: str) -> object:
    """`link_pages`, making the links in path order or its reverse: on tmpfs a folder lists
    its entries in the order they were made, so Pagefind walks the pages in that order (as ext4
    walks them in an order seeded per file system: another machine's)."""

    def link(site: Path, pages: Path, paths: list[str]) -> int:
        for path in paths if order == "forward" else paths[::-1]:
            (pages / path).parent.mkdir(parents=True, exist_ok=True)
            os.link(site / path, pages / path)
        return len(paths)

    return link


def raw_index(parts: list[Path], into: Path) -> None:
    """Pagefind's index of one part, as it wrote it: not merged, not canonicalised."""
    (part,) = parts
    part.rename(into)


def test_the_same_pages_walked_in_another_order_give_the_same_index(
    built: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pagefind numbers pages as it walks the folder, and writes filters in a hash map's order
    that changes every run: neither reaches the bytes."""
    shm = Path("/dev/shm")
    mounts = [line.split()[1:3] for line in Path("/proc/mounts").read_text().splitlines()]
    assert [str(shm), "tmpfs"] in mounts, "the test walks pages on tmpfs, in the order made"
    binary = pagefind_binary()
    assert binary is not None
    with tempfile.TemporaryDirectory(dir=shm) as root:
        site = Path(root) / "site"
        shutil.copytree(built, site, ignore=shutil.ignore_patterns(FOLDER))
        indexes = {}
        for canonical in (False, True):
            if not canonical:  # Pagefind's own bytes: the order shows through
                monkeypatch.setattr(sitegen.publish.search, "merge_parts", raw_index)
            else:
                monkeypatch.undo()
            for order in ("forward", "backward"):
                monkeypatch.setattr(sitegen.publish.search, "link_pages", linking_in(order))
                index_search(site, site / FOLDER, Path(root) / "work", binary)
                indexes[(canonical, order)] = index_of(site)
                shutil.rmtree(site / FOLDER)
        raw_forward, raw_backward = indexes[(False, "forward")], indexes[(False, "backward")]
        assert raw_forward != raw_backward  # the test walks two orders indeed
        assert indexes[(True, "forward")] == indexes[(True, "backward")] == index_of(built)


def test_the_pages_are_linked_in_path_order_never_an_old_index(tmp_path: Path) -> None:
    site = tmp_path / "site"
    for path in ("b/index.html", "a/index.html", "index.html", "a/index.json", "pagefind/x.html"):
        (site / path).parent.mkdir(parents=True, exist_ok=True)
        (site / path).write_text(path)
    (site / ".work").mkdir()
    (site / ".work" / "y.html").write_text("")
    found = html_pages(site)
    assert found == ["a/index.html", "b/index.html", "index.html"]
    assert link_pages(site, tmp_path / "links", found) == 3
    links = tmp_path / "links"
    linked = sorted(p.relative_to(links).as_posix() for p in links.rglob("*.html"))
    assert linked == ["a/index.html", "b/index.html", "index.html"]
    assert (
        os.stat(tmp_path / "links" / "a" / "index.html").st_ino
        == os.stat(site / "a" / "index.html").st_ino
    )  # a hard link, not a copy


def test_only_the_pages_pagefind_would_index_are_handed_to_it(tmp_path: Path) -> None:
    """A page without `data-pagefind-body` is one Pagefind skips once another has it, after
    parsing it: it is not handed over. A site where no page has it is indexed whole."""
    site = tmp_path / "site"
    pages = {
        "a/index.html": "<main data-pagefind-body><p>kernel</p></main>",
        "b/index.html": "<main><p>a replaced run</p></main>",
        "c/index.html": "<main><h1 data-pagefind-body>a run</h1></main>",
    }
    for path, text in pages.items():
        (site / path).parent.mkdir(parents=True, exist_ok=True)
        (site / path).write_text(f'<html lang="en"><body>{text}</body></html>')
    assert sitegen.publish.search.indexed_pages(site) == ["a/index.html", "c/index.html"]
    binary = pagefind_binary()
    assert binary is not None
    assert index_search(site, tmp_path / "index", tmp_path / "work", binary).pages == 2
    for path in ("a/index.html", "c/index.html"):
        (site / path).write_text("<html><body><main>plain</main></body></html>")
    assert sitegen.publish.search.indexed_pages(site) == sorted(pages)


def test_pages_of_any_path_wait_for_their_part_in_one_folder(tmp_path: Path) -> None:
    """The copies of the pages rendered wait in one flat folder, each under a name of its own
    (a path past a file name's length under its hash), and reach Pagefind at their paths."""
    binary = pagefind_binary()
    assert binary is not None
    site = tmp_path / "site"
    site.mkdir()
    paths = ["a/index.html", "a%2Fb/index.html", f"{'x' * 150}/{'y' * 150}/index.html"]
    with IndexedAsRendered(Output(lambda path, data: None), site, binary) as indexing:
        for number, path in enumerate(paths):
            body = f'<h1 data-pagefind-body>w{number}<span data-pagefind-filter="Page">Run</span>'
            indexing.write(path, f"<html><body>{body}</h1></body></html>".encode())
        copies = list((site / sitegen.publish.search.WORK / "copies").iterdir())
        assert len(copies) == 3 and all(p.is_file() and len(p.name) <= 200 for p in copies)
        index = indexing.finish(tmp_path / "index")
    assert index.pages == 3
    urls = sorted("/" + path.removesuffix("index.html") for path in paths)
    assert sorted(indexed_pages(tmp_path / "index")) == urls
    assert not (site / sitegen.publish.search.WORK).exists()


@pytest.mark.parametrize("forked", [False, True])
def test_the_pages_indexed_while_rendering_are_those_read_back(
    forked: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The build hands Pagefind the pages its render noted as marked (`IndexedAsRendered`), in
    one process or from forked workers, in parts started while the render goes on: exactly
    the pages `indexed_pages` finds by reading the site, and an index byte for byte the one
    `index_search` makes from the pages read back."""
    if forked:
        index_while_rendering(monkeypatch)
    handed: list[list[str]] = []
    finish, start = IndexedAsRendered.finish, IndexedAsRendered._start
    events = []

    def noted(self: IndexedAsRendered, into: Path) -> object:
        events.append("finish")
        index = finish(self, into)
        handed.append(self.marked)
        return index

    def started(self: IndexedAsRendered, pages: list[str]) -> None:
        events.append(f"part of {len(pages)}")
        start(self, pages)

    monkeypatch.setattr(IndexedAsRendered, "finish", noted)
    monkeypatch.setattr(IndexedAsRendered, "_start", started)
    out = tmp_path / "public"
    build_site(SITE_CONTENT, out, search=True)
    (marked,) = handed
    assert len(marked) == INDEXED
    if forked:  # a part was indexed while pages were rendered
        assert events[0] == "part of 8" and events.count("part of 8") == INDEXED // 8
    else:  # rendered in this process: indexed, in one part, as soon as all were written
        assert events == [f"part of {INDEXED}", "finish"]
    assert marked == sitegen.publish.search.indexed_pages(out)
    read_back = tmp_path / "read-back"
    binary = pagefind_binary()
    assert binary is not None
    index_search(out, read_back, tmp_path / "work", binary)
    assert tree(read_back) == {k.removeprefix(FOLDER + "/"): v for k, v in index_of(out).items()}


def test_pagefind_indexes_the_index_copies_as_it_indexes_the_pages(
    built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What Pagefind is handed of most pages is their `index_copy`: the index made from the
    whole pages is the same, byte for byte."""
    pages = sitegen.publish.search.indexed_pages(built)
    copies = [index_copy((built / page).read_bytes()) for page in pages]
    assert len(pages) == INDEXED
    sizes = {page: (built / page).stat().st_size for page in pages}
    for page, copy in zip(pages, copies, strict=True):
        assert copy is not None and len(copy) < sizes[page]
        if page.startswith("runs/"):  # a run page's index body is its title and one section
            assert len(copy) < sizes[page] / 2
    # The run tables and charts' JSON inside marked elements are cut from the copies.
    for cut in (b'<table class="runs">', b'<script type="application/json"'):
        holding = [n for n, page in enumerate(pages) if cut in (built / page).read_bytes()]
        assert holding and not any(cut in (copies[n] or b"") for n in holding), cut
    monkeypatch.setattr(sitegen.publish.search, "index_copy", lambda page: None)
    binary = pagefind_binary()
    assert binary is not None
    whole = tmp_path / "whole"
    index_search(built, whole, tmp_path / "work", binary)  # reads the same `pages`
    assert tree(whole) == {k.removeprefix(FOLDER + "/"): v for k, v in index_of(built).items()}


HEAD = b'<!doctype html>\n<html lang="en">\n<head><title>t</title></head>\n<body class="x">'


@pytest.mark.parametrize(
    ("body", "copy"),
    [
        (
            b"<header><a>nav</a></header><h1 data-pagefind-body>T</h1><p>numbers</p>"
            b"<section id=s data-pagefind-body><h2>W</h2><dl><dd>k</dd></dl></section>"
            b"<table><tr><td>9</td></tr></table>"
            b'<div hidden data-pagefind-ignore><span data-pagefind-filter="GPU">H200</span></div>'
            b"<footer>f</footer></body></html>",
            b"<h1 data-pagefind-body>T</h1>\n"
            b"<section id=s data-pagefind-body><h2>W</h2><dl><dd>k</dd></dl></section>\n"
            b'<div hidden data-pagefind-ignore><span data-pagefind-filter="GPU">H200</span></div>',
        ),
        (
            b"<main data-pagefind-body><p>all</p></main><footer>f</footer>",
            b"<main data-pagefind-body><p>all</p></main>",
        ),
        (b"<main><p>no marker</p></main>", None),
        (b"<section data-pagefind-body><section>inner</section>t</section>", None),
        (b'<main data-pagefind-body>t</main><img data-pagefind-meta="image[src]" src=a>', None),
        (b"<img src=logo.png><main data-pagefind-body>t</main>", None),
        (b"<main data-pagefind-body>t</main><p><img src=a></p>", None),
        (b"<p>data-pagefind-body, as words</p><main data-pagefind-body>t</main>", None),
        (b"<main data-pagefind-body>t", None),
        (b"", None),
        (
            b'<main data-pagefind-body><p>a</p>\n<table class="runs"><tr><td>r</td></tr></table>'
            b'\n<script type="application/json">{"x":1}</script><p>b</p></main>',
            b"<main data-pagefind-body><p>a</p>\n\n<p>b</p></main>",
        ),
        (
            b'<main data-pagefind-body><p>a</p><table class="runs"><tr><td>r</td></tr></table>'
            b"<p>b</p><script>1</script><span>c</span><scripts>d</scripts> <script>2</script>"
            b"</main>",
            b'<main data-pagefind-body><p>a</p><table class="runs"><tr><td>r</td></tr></table>'
            b"<p>b</p><script>1</script><span>c</span><scripts>d</scripts> </main>",
        ),
        (
            b'<main data-pagefind-body>\n<table class="runs"><tr><td><table></table></td></tr>'
            b'</table>\n<table class="runs"><tr><td data-pagefind-weight="2">w</td></tr></table>'
            b'\n<table class="runs"><tr><td><img src=a></td></tr></table>\n</main>',
            b'<main data-pagefind-body>\n<table class="runs"><tr><td><table></table></td></tr>'
            b'</table>\n<table class="runs"><tr><td data-pagefind-weight="2">w</td></tr></table>'
            b'\n<table class="runs"><tr><td><img src=a></td></tr></table>\n</main>',
        ),
        (
            b'<main data-pagefind-body>\n<table class="runs"><tr><td><table></table></td></tr>'
            b'</table>\n<table class="runs"><tr><td data-pagefind-weight="2">w</td></tr></table>'
            b'\n<table class="runs"><tr><td>unclosed\n</main>',
            b'<main data-pagefind-body>\n<table class="runs"><tr><td><table></table></td></tr>'
            b'</table>\n<table class="runs"><tr><td data-pagefind-weight="2">w</td></tr></table>'
            b'\n<table class="runs"><tr><td>unclosed\n</main>',
        ),
    ],
    ids=[
        "run",
        "whole",
        "unmarked",
        "nested",
        "void",
        "image-before",
        "image-after",
        "text",
        "unclosed",
        "no-body-end",
        "run-table-and-script-cut",
        "kept-where-words-would-join",
        "kept-nested-attribute-image",
        "kept-unclosed",
    ],
)
def test_an_index_copy_is_the_head_and_the_marked_elements_or_none(
    body: bytes, copy: bytes | None
) -> None:
    page = HEAD + body if body else HEAD.removesuffix(b'class="x">') + b"data-pagefind-body"
    found = index_copy(page)
    assert found == (None if copy is None else HEAD + b"\n" + copy + b"\n</body></html>")


def test_pages_are_copied_where_hard_links_fail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("home")

    def no_links(source: object, target: object) -> None:
        raise OSError("no hard links here")

    monkeypatch.setattr(os, "link", no_links)
    assert link_pages(site, tmp_path / "links", ["index.html"]) == 1
    assert (tmp_path / "links" / "index.html").read_text() == "home"


def test_every_selector_left_out_is_one_the_templates_make() -> None:
    """A renamed class would silently put back into the index what it left out."""
    templates = "".join(p.read_text() for p in (REPOSITORY / "templates").glob("*.html"))
    for selector in EXCLUDED:
        for name in re.findall(r"\.([a-z][\w-]*)", selector):
            assert re.search(rf'class="[^"]*\b{name}\b', templates), selector
        for tag in re.findall(r"(?:^|[\s>])([a-z][a-z0-9]*)(?=[.\[\s]|$)", selector):
            assert f"<{tag}" in templates, selector
    assert re.search(r'<h2 id="[a-z]+-heading"', templates)


def test_without_pagefind_the_site_is_built_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sitegen.pipeline, "pagefind_binary", lambda: None)
    out = tmp_path / "public"
    assert main(["build", str(SITE_CONTENT), "--out", str(out)]) == 0
    said = capsys.readouterr()
    assert said.err.count("pagefind is not installed") == 1
    assert (
        "warning: no search index: pagefind is not installed (pip install 'sitegen[search]')"
        in (said.err)
    )
    assert "search index" not in said.out
    assert not (out / FOLDER).exists() and (out / "search" / "index.html").is_file()


def pagefind_script(folder: Path, script: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The build's Pagefind replaced by `folder`/pagefind, a shell script of `script`."""
    binary = folder / "pagefind"
    binary.write_text(f"#!/bin/sh\n{script}\n")
    binary.chmod(binary.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setattr(sitegen.pipeline, "pagefind_binary", lambda: binary)


def index_while_rendering(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fixture site rendered as a big one is: by a forked worker beside this process, in
    small chunks, parts of the index started while pages render, and the files that are not
    pages written after them (`Output.rendered`)."""
    monkeypatch.setattr(sitegen.render.render, "PARALLEL_MIN_PAGES", 1)
    monkeypatch.setattr(sitegen.render.render, "CHUNK_PAGES", 4)
    monkeypatch.setattr(sitegen.render.render, "OVERLAP_EXTRAS_MAX_PAGES", 1)
    monkeypatch.setattr(sitegen.process, "usable_cpus", lambda: 2)
    monkeypatch.setattr(sitegen.publish.search, "PART_PAGES", 8)


@pytest.mark.parametrize("while_rendering", [False, True])
def test_a_failing_pagefind_fails_the_build_and_keeps_the_old_site(
    while_rendering: bool, built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if while_rendering:
        index_while_rendering(monkeypatch)
    out = tmp_path / "public"
    shutil.copytree(built, out)
    before = tree(out)
    pagefind_script(tmp_path, "echo 'Error: something broke' >&2\nexit 3", monkeypatch)
    with pytest.raises(SearchError, match=r"pagefind exited 3: Error: something broke"):
        build_site(SITE_CONTENT, out, search=True)
    assert tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".public.sitegen-lock",
        "pagefind",
        "public",
    ]


def test_a_build_stopped_while_pagefind_runs_stops_it_and_leaves_nothing(
    built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C once the pages are written, a part of the index still being made: Pagefind is
    stopped, the old site kept, no work folder or staging tree left."""
    index_while_rendering(monkeypatch)
    out = tmp_path / "public"
    shutil.copytree(built, out)
    before = tree(out)
    pids = tmp_path / "pids"
    pagefind_script(tmp_path, f"echo $$ >> {pids}\nexec sleep 60", monkeypatch)
    rendered = IndexedAsRendered.rendered

    def interrupted(self: IndexedAsRendered) -> None:
        rendered(self)
        raise KeyboardInterrupt

    monkeypatch.setattr(IndexedAsRendered, "rendered", interrupted)
    with pytest.raises(KeyboardInterrupt):
        build_site(SITE_CONTENT, out, search=True)
    assert tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".public.sitegen-lock",
        "pagefind",
        "pids",
        "public",
    ]
    (pid,) = pids.read_text().split()  # one part at a time: the first still ran
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid), 0)


def test_pagefind_reads_no_configuration_of_the_machine(
    built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PAGEFIND_EXCLUDE_SELECTORS", "h1")
    monkeypatch.setenv("PAGEFIND_FORCE_LANGUAGE", "pt")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pagefind.yml").write_text("force_language: pt\n")
    out = tmp_path / "public"
    build_site(SITE_CONTENT, out, search=True)
    assert index_of(out) == index_of(built)


def _indexed_copy(page: bytes | None) -> bytes | None:
    return None if page is None else what_pagefind_reads(page)


def test_incremental_builds_splice_into_the_index_only_the_pages_that_changed(
    built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a run's title changes, a run is removed, one added, and a run's value changes:
    Pagefind indexes exactly the pages whose indexed copy changed, and their published
    versions, the index is never made again whole, and the site, index included, is the full
    build's byte for byte each time. The value changed keeps every page's number (a run's
    title orders it, not its digest): only the chunks about the words of the pages changed
    are made again."""
    monkeypatch.setattr(sitegen.publish.pagefind_format, "CHUNK_ENTRIES", 100)
    monkeypatch.setattr(sitegen.publish.pagefind_format, "CHUNK_SPREAD", 7)
    content = tmp_path / "content"
    shutil.copytree(SITE_CONTENT, content)
    out = tmp_path / "public"
    first = build_site(content, out, incremental=True, search=True)
    assert first.search is not None
    whole: list[object] = []
    indexed: dict[str, set[str]] = {}
    index = sitegen.pipeline.index_search
    start_pagefind = sitegen.publish.search._start_pagefind
    spliced: list[int] = []  # chunks made again where every page kept its number
    spliced_chunks = sitegen.publish.pagefind_format._spliced_chunks

    def counted(*args: object) -> object:
        whole.append(args)
        return index(*args)  # type: ignore[arg-type]

    starts: list[str] = []

    def looked_at(binary: Path, pages: Path, *rest: Any) -> Any:
        if not pages.name.startswith("site-") or pages.name == "site-published":
            starts.append(pages.name)
            indexed[pages.name] = set(html_pages(pages))
        return start_pagefind(binary, pages, *rest)

    def chunked(*args: Any) -> Any:
        chunks = spliced_chunks(*args)
        spliced.append(
            len([c for c in chunks if (args[3] / "index" / f"{c[2]}.pf_index").exists()])
        )
        return chunks

    monkeypatch.setattr(sitegen.pipeline, "index_search", counted)
    monkeypatch.setattr(sitegen.publish.search, "_start_pagefind", looked_at)
    monkeypatch.setattr(sitegen.publish.pagefind_format, "_spliced_chunks", chunked)
    started: list[bool] = []  # whether Pagefind was started as the build's files were told apart
    finish = IncrementalOutput.finish

    def told_apart(self: IncrementalOutput, *args: Any) -> None:
        started.append(bool(starts))
        finish(self, *args)

    monkeypatch.setattr(IncrementalOutput, "finish", told_apart)
    same = build_site(content, out, incremental=True, search=True)
    assert whole == [] and indexed == {} and same.search is None
    assert len(list((out / FOLDER / "index").iterdir())) > 10
    runs = run_files(content)
    kept = tmp_path / "removed.json"  # a run taken out, then put back under another name
    shutil.copyfile(runs[1], kept)
    changes = [
        lambda: edit(runs[0], lambda d: d["metadata"].update(title=d["metadata"]["title"] + "!")),
        runs[1].unlink,
        lambda: shutil.copyfile(kept, content / "runs" / "added.json"),
        lambda: edit(runs[0], lambda d: d["spec"]["timing"]["latencyNs"].update(median=7)),
    ]
    for number, change in enumerate(changes):
        before = tree(out)
        change()
        indexed.clear()
        starts.clear()
        started.clear()
        changed = build_site(content, out, incremental=True, search=True)
        cold = tmp_path / f"cold-{number}"
        made = build_site(content, cold, search=True)
        after = tree(cold)
        assert tree(out) == after  # pages and index, as a full build writes them
        assert whole == [] and changed.search is not None and changed.search.pages > 0
        # What the build says of the index (its sizes read from the held tree) is a walk's.
        assert made.search is not None and changed.search[:3] == made.search[:3]
        moved = {
            path
            for path, page in after.items()
            if path.endswith(".html") and _indexed_copy(page) is not None
            if _indexed_copy(page) != _indexed_copy(before.get(path))
        }
        published = {
            path
            for path, page in before.items()
            if path.endswith(".html") and _indexed_copy(page) is not None
            if _indexed_copy(page) != _indexed_copy(after.get(path))
        }
        # One Pagefind run over exactly the new versions, one over the published ones (the
        # pages removed among them: a run's), each started once, as the pages were staged.
        assert moved and indexed == {"site": moved, "site-published": published}
        assert sorted(starts) == ["site", "site-published"]
        assert started == [True]  # before the build's files were told apart
        state = read_state(out, content)  # the index's changed files looked at again
        assert state is not None and state.tree == output_tree(out.resolve())
    # Built without the index, an incremental build leaves none behind.
    build_site(content, out, incremental=True, search=False)
    assert not (out / FOLDER).exists()
    left = sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith("-lock"))
    assert left == ["cold-0", "cold-1", "cold-2", "cold-3", "content", "public", "removed.json"]
    # The value changed: every page kept its number, the chunks made again from the words of
    # the pages changed (here its kernel's page holds most words: test_pagefind_format.py
    # counts how few are made again on a bigger index).
    assert len(spliced) == 1 and spliced[0] > 0


def test_a_held_state_patches_the_index_sizes_with_its_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Builds that hold their state (the build daemon's) splice the index and tell its sizes
    from the held tree: summed from it once, then changed by the index's files each splice
    changes, through an edit, a run removed and one added; each time what a cold build of
    the same content says, and its very files."""
    content = tmp_path / "content"
    shutil.copytree(SITE_CONTENT, content)
    out = tmp_path / "public"
    state = State()
    build_site(content, out, state=state, incremental=True, search=True)
    summed: list[int] = []
    of = HeldIndexSizes.of

    def counted(cls: type[HeldIndexSizes], tree: Any) -> HeldIndexSizes:
        summed.append(len(tree))
        return of(tree)

    monkeypatch.setattr(HeldIndexSizes, "of", classmethod(counted))
    runs = run_files(content)
    kept = tmp_path / "removed.json"
    shutil.copyfile(runs[1], kept)
    changes = [
        lambda: edit(runs[0], lambda d: d["spec"]["timing"]["latencyNs"].update(median=7)),
        runs[1].unlink,
        lambda: shutil.copyfile(kept, content / "runs" / "added.json"),
        lambda: edit(runs[0], lambda d: d["metadata"].update(title="Renamed")),
    ]
    for number, change in enumerate(changes):
        change()
        built = build_site(content, out, state=state, incremental=True, search=True)
        cold = tmp_path / f"cold-{number}"
        made = build_site(content, cold, search=True)
        assert built.search is not None and made.search is not None
        assert built.search[:3] == made.search[:3]
        assert tree(out) == tree(cold)
    assert len(summed) == 1


def test_a_pagefind_failing_over_the_published_pages_fails_the_build_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A splice runs Pagefind over the new versions and the published ones at once: the one
    over the published pages failing is said from its own log, and the site is kept."""
    content = tmp_path / "content"
    shutil.copytree(SITE_CONTENT, content)
    out = tmp_path / "public"
    build_site(content, out, incremental=True, search=True)
    before = tree(out)
    real = sitegen.publish.search.pagefind_binary()
    script = (
        'case "$2" in *site-published) echo "Error: published pages broke" >&2; exit 4;; esac\n'
        f'exec {real} "$@"'
    )
    pagefind_script(tmp_path, script, monkeypatch)
    edit(run_files(content)[0], lambda d: d["spec"]["timing"]["latencyNs"].update(median=7))
    with pytest.raises(SearchError, match=r"pagefind exited 4: Error: published pages broke"):
        build_site(content, out, incremental=True, search=True)
    assert tree(out) == before


def test_an_index_that_cannot_be_spliced_is_made_again_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An index the splice refuses (here: of two languages) is made again whole, as a full
    build makes it."""
    content = tmp_path / "content"
    shutil.copytree(SITE_CONTENT, content)
    out = tmp_path / "public"
    build_site(content, out, incremental=True, search=True)
    refused = sitegen.publish.pagefind_format.IndexFormatError("an index of several languages")

    def refuse(*args: object) -> list[str]:
        raise refused

    monkeypatch.setattr(sitegen.publish.search, "splice_index", refuse)
    edit(run_files(content)[0], lambda d: d["metadata"].update(title="Another title"))
    changed = build_site(content, out, incremental=True, search=True)
    assert changed.search is not None
    cold = tmp_path / "cold"
    build_site(content, cold, search=True)
    assert tree(out) == tree(cold)
    assert not [p for p in tmp_path.iterdir() if "staging" in p.name]


def test_a_merge_process_that_dies_fails_the_index_in_one_line(
    built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The word index's stretches are joined by forked processes (`CUT_BEFORE`): one that dies
    (killed for memory, say) fails the index with a SearchError, not a traceback."""
    monkeypatch.setattr(sitegen.publish.pagefind_format, "CUT_FROM_PAGES", 1)
    monkeypatch.setattr(sitegen.process, "usable_cpus", lambda: 2)
    parent = os.getpid()
    joined = sitegen.publish.pagefind_format._stretch_written

    def dying(*args: object) -> object:
        if os.getpid() != parent:
            os._exit(9)
        return joined(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(sitegen.publish.pagefind_format, "_stretch_written", dying)
    binary = pagefind_binary()
    assert binary is not None
    with pytest.raises(SearchError) as raised:
        index_search(built, tmp_path / "index", tmp_path / "work", binary)
    assert str(raised.value) == (
        "search index: the index pagefind wrote: a worker died (exit code 9); "
        "hint: --no-search builds the site without it"
    )
    # No work folder left; `into` is its caller's, staged by a build and removed with the stage.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index"]


def test_a_splice_never_reads_through_a_link_nor_takes_a_whole_site_s_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page of the output that is a link (planted since the last build) is never read: the
    index is made again whole, and the patch then refuses the link. More changed pages than a
    part holds (a template changed) are indexed whole, in parts, too."""
    site, staged, outside = tmp_path / "site", tmp_path / "staged", tmp_path / "secret.html"
    (site / FOLDER).mkdir(parents=True)
    (site / FOLDER / "pagefind-entry.json").write_text("{}")
    page = b"<html><head></head><body><main data-pagefind-body>words</main></body></html>"
    for number in (1, 2):
        (staged / f"k{number}").mkdir(parents=True)
        (staged / f"k{number}" / "index.html").write_bytes(page)
    binary = pagefind_binary()
    assert binary is not None

    def never(*args: object) -> None:
        raise AssertionError("Pagefind run")

    monkeypatch.setattr(sitegen.publish.search, "_run_pagefind", never)
    (site / "k1").mkdir()
    outside.write_bytes(page.replace(b"words", b"secret"))
    (site / "k1" / "index.html").symlink_to(outside)
    assert sitegen.publish.search.spliced_index(site, staged, [], binary) is None
    (site / "k1" / "index.html").unlink()
    monkeypatch.setattr(sitegen.publish.search, "PART_PAGES", 1)
    assert sitegen.publish.search.spliced_index(site, staged, [], binary) is None
    assert sorted(p.name for p in staged.iterdir()) == ["k1", "k2"]  # nothing staged
