"""render.py: hostile content stays escaped in every file of a build; assets; the JSON files;
the parallel render's chunks."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sitegen.build import build_site
from sitegen.pages import schema_documents
from sitegen.render import (
    CHUNK_PAGES,
    SCHEMAS_DIR,
    RenderError,
    _Chunks,
    _json,
    schema_files,
    site_assets,
)
from sitegen.resources import KINDS
from tests.conftest import (
    FIXTURES,
    HOSTILE_MARKDOWN,
    HOSTILE_TITLE,
    IMG,
    NEEDLES,
    REGENERATE,
    SCRIPT,
)

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


def test_assets_are_content_hashed() -> None:
    assets = site_assets()
    for asset in assets.values():
        assert asset.path.startswith("assets/")
    assert assets["plotly"].path.startswith("assets/plotly-")
    assert len(assets["plotly"].data) > 1_000_000  # the real bundle, from the plotly package


def _json_values() -> object:

    floats = st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from(
        [1e-5, 1e-7, 5e-324, 1e16, 1e21, -0.0, 4096.0, 0.0001, 1.5e-10, 123.456]
    )
    floats |= st.sampled_from([float("nan"), float("inf"), float("-inf")])  # orjson: null
    text = st.text(max_size=12) | st.sampled_from(["rope-", "1e-5", "x0.0000y", "null", "ae-1"])
    return st.recursive(
        st.none() | st.booleans() | st.integers(-(2**70), 2**70) | floats | text,
        lambda children: (
            st.lists(children, max_size=4)
            | st.dictionaries(text, children, max_size=4)
            | st.dictionaries(st.integers(0, 9), children, max_size=2)
        ),
        max_leaves=20,
    )


def test_compact_json_equals_json_dumps() -> None:
    """The twins' orjson path writes exactly what json.dumps writes, or defers to it."""
    import json

    from hypothesis import settings

    from sitegen.render import compact_json

    @given(_json_values())
    @settings(max_examples=600, deadline=None)
    def check(value: object) -> None:
        try:
            expected = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        except (ValueError, TypeError):
            return
        try:
            expected_bytes = expected.encode()
        except UnicodeEncodeError:
            return
        assert compact_json(value, allow_nan=True) == expected_bytes
        assert compact_json(value, allow_nan=True, newline=True) == expected_bytes + b"\n"

    check()
    assert compact_json({"a": 1e-05, "b": [1, 2.5]}) == b'{"a":1e-05,"b":[1,2.5]}'
    # A null is orjson's only where it stands for None (a list page's twin has one a row).
    assert compact_json({"url": None, "v": [1, None]}) == b'{"url":null,"v":[1,null]}'
    nan = {"url": None, "v": [float("nan"), float("-inf")]}
    assert compact_json(nan, allow_nan=True) == b'{"url":null,"v":[NaN,-Infinity]}'
    with pytest.raises(ValueError, match="Out of range float"):
        compact_json(nan)  # json's refusal, not orjson's silent null
    # "e-" inside words does not stop orjson's path; a negative exponent after one does.
    for value in (
        {"gpu": "geforce-rtx", "v": [3e-07, 1.5e-06]},
        {"gpu": "geforce-rtx", "v": 2.5, "w": "e-", "x": "9e-"},
        ["compile-", 7e-10],
    ):
        assert compact_json(value) == json.dumps(value, separators=(",", ":")).encode()
    # Only numbers count: the same characters in a string keep orjson's path (a shape label in
    # every row of a list page's twin); text that looks like a number's start plays safe.
    import orjson

    from sitegen.render import _numbers_agree

    for text, agree in (
        ({"fixed": "rows=2048 · eps=1e-06 · fp32", "v": [0.5, 12]}, True),
        ({"note": "0.00001 of a second"}, True),
        ({"v": 1e-06}, False),
        ({"v": [0.5, 1e-05]}, False),
        ({"v": -1e-07}, False),
        ({"note": "x:1e-06"}, False),
    ):
        assert _numbers_agree(orjson.dumps(text)) is agree, text
        expected = json.dumps(text, ensure_ascii=False, separators=(",", ":")).encode()
        assert compact_json(text) == expected


def test_export_lines_equal_compact_json_for_compact_and_whole_documents() -> None:
    """The export splices a run's orjson bytes in; its bytes must be compact_json's anyway,
    including for the numbers where orjson and json differ (which take json's path)."""
    import orjson

    from sitegen.load import DocumentStore, LoadedResource
    from sitegen.render import KeptDocuments, _export, compact_json

    documents = [
        {"kind": "BenchmarkRun", "metadata": {"name": "a", "title": "A · ü"}, "spec": {"v": 0.5}},
        {"kind": "BenchmarkRun", "metadata": {"name": "b"}, "spec": {"v": 1e-05, "w": 1e-07}},
        {"kind": "BenchmarkRun", "metadata": {"name": "c"}, "spec": {"v": 123456789.125}},
        {"kind": "WorkloadCase", "metadata": {"name": "d"}, "spec": {"v": 0.00001234}},
    ]
    resources = []
    store = DocumentStore()
    for number, document in enumerate(documents):
        digest = f"sha256:{number:064x}"
        raw = orjson.dumps(document)
        meta = document["metadata"]
        compact = LoadedResource.compact(
            "p", "", digest, raw, document["kind"], meta["name"], meta.get("title")
        )
        stored = LoadedResource.compact(
            "p", "", digest, raw, document["kind"], meta["name"], None, None, store
        )
        whole = LoadedResource("p", "", None, digest, document)
        resources += [(digest, compact), (digest, stored), (digest, whole)]
    expected = b"".join(
        compact_json({"digest": d, "resource": e.document}, allow_nan=True) + b"\n"
        for d, e in resources
    )
    entries = tuple(e for _, e in resources)
    assert _export(entries, KeptDocuments(keep=False)) == expected
    memo = KeptDocuments()
    assert _export(entries, memo) == expected
    assert _export(entries, memo) == expected  # the kept lines, spliced again
    fewer = entries[1:]  # a shorter document, written over the longer one's buffer
    assert _export(fewer, memo) == expected[expected.index(b"\n") + 1 :]
    assert json.loads(expected.splitlines()[3])["resource"]["spec"] == {"v": 1e-05, "w": 1e-07}


def test_manifest_written_entry_by_entry_equals_the_whole_document() -> None:

    from sitegen.build import manifest_of_content
    from sitegen.manifest import manifest_document
    from sitegen.render import KeptDocuments, _json, _manifest_json

    manifest = manifest_of_content(SITE_CONTENT).manifest
    assert manifest is not None and len(manifest.entries) > 2
    kept = KeptDocuments()
    for lines in (KeptDocuments(keep=False), kept, kept):  # the last splices the lines it kept
        assert _manifest_json(manifest, lines) == _json(manifest_document(manifest))
    # The first entry's line opens the list: gone, then back before the line that replaced it.
    fewer = manifest._replace(entries=manifest.entries[1:])
    for shown in (fewer, manifest, fewer):
        assert _manifest_json(shown, kept) == _json(manifest_document(shown))
    # An entry whose numbers orjson and json spell differently takes json's path alone.
    run = next(e for e in manifest.entries if e.run is not None)
    tiny = replace(run, run=replace(run.run, value=1e-07))
    odd = manifest._replace(entries=(tiny, *manifest.entries[1:]))
    assert _manifest_json(odd, kept) == _json(manifest_document(odd))
    assert b"1e-07" in bytes(_manifest_json(odd, kept))


def test_sitemap_escapes_what_xml_needs() -> None:
    from xml.etree import ElementTree

    from sitegen.render import _sitemap

    urls = ("https://example.org/a/", "https://example.org/?q=1&r='2'<>\"")
    root = ElementTree.fromstring(_sitemap(urls))
    assert [loc.text for loc in root.iter("{http://www.sitemaps.org/schemas/sitemap/0.9}loc")] == [
        *urls
    ]
    assert b"&amp;r=&#39;2&#39;&lt;&gt;&#34;" in _sitemap(urls)


def test_kept_documents_equal_documents_written_whole() -> None:
    """Lines kept by identity: after any edit of the items, the same bytes as a fresh write."""
    from hypothesis import settings
    from hypothesis import strategies as st

    from sitegen.render import KeptDocuments

    class Item:
        def __init__(self, text: str) -> None:
            self.text = text

    def write(item: Item) -> bytes:
        return item.text.encode() + b"\n"

    edits = st.lists(
        st.tuples(
            st.sampled_from(["insert", "delete", "replace", "move"]), st.integers(0, 50), st.text()
        ),
        max_size=6,
    )

    named: dict[str, bytes] = {}  # every version seen → the bytes it named

    @settings(max_examples=150, deadline=None)
    @given(st.lists(st.text(), max_size=40), st.lists(edits, max_size=4), st.binary(max_size=3))
    def check(texts: list[str], rounds: list[list[tuple[str, int, str]]], head: bytes) -> None:
        items = [Item(t) for t in texts]
        kept = KeptDocuments()
        opened = KeptDocuments()
        for edit_round in [[], *rounds]:
            for action, place, text in edit_round:
                place = min(place, len(items))
                if action == "insert":
                    items.insert(place, Item(text))
                elif action == "move" and items:  # an item that stays, elsewhere
                    items.insert(len(text) % len(items), items.pop(min(place, len(items) - 1)))
                elif items and place < len(items):
                    if action == "delete":
                        del items[place]
                    else:
                        items[place] = Item(text)
            expected = head + b"".join(write(i) for i in items) + b"]"
            assert kept.document("d", head, list(items), write, b"]") == expected
            assert KeptDocuments(keep=False).document("d", head, items, write, b"]") == expected
            # Lines led by a separator, the first one's written over: as a JSON list is.
            listed = head + b"".join(b"," + write(i) for i in items) + b"]"
            if items:
                listed = listed[: len(head)] + b"[" + listed[len(head) + 1 :]
            for lines in (opened, KeptDocuments(keep=False)):
                got = lines.document("l", head, list(items), lambda i: b"," + write(i), b"]", 91)
                assert got == listed
            # The version names these bytes: never other bytes, in this instance or another.
            version = kept.version("d")
            assert version is not None and named.setdefault(version, expected) == expected

    check()


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


def test_the_shipped_json_schemas_are_the_models() -> None:
    """sitegen/schemas/<Kind>.json, published as schemas/<Kind>.json, are what the models say
    (`SITEGEN_REGENERATE=1` rewrites them after a model changes)."""
    expected = {kind: _json(schema) for kind, schema in schema_documents().items()}
    if REGENERATE:
        SCHEMAS_DIR.mkdir(exist_ok=True)
        for stale in SCHEMAS_DIR.glob("*.json"):
            stale.unlink()
        for kind, data in expected.items():
            (SCHEMAS_DIR / f"{kind}.json").write_bytes(data)
    assert sorted(path.stem for path in SCHEMAS_DIR.glob("*.json")) == sorted(KINDS)
    assert schema_files() == expected, "a model changed: SITEGEN_REGENERATE=1 to rewrite"


def test_a_missing_json_schema_fails_the_build_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shipped = tmp_path / "schemas"
    shutil.copytree(SCHEMAS_DIR, shipped)
    (shipped / "WorkloadCase.json").unlink()
    monkeypatch.setattr("sitegen.render.SCHEMAS_DIR", shipped)
    with pytest.raises(RenderError, match="JSON Schema of WorkloadCase is missing"):
        build_site(FIXTURES / "site" / "content", tmp_path / "out")
    assert not (tmp_path / "out").exists()
