"""The site-wide files that are not pages (sitegen/render/outputs.py)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace

import pytest

from sitegen.analysis.kernels import HeldAnalysis
from sitegen.content.loaded import LoadedResource
from sitegen.publish.manifest import Manifest
from sitegen.publish.write import Pieces, data_digest
from sitegen.render.compact_json import compact_json
from sitegen.render.outputs import export_jsonl, manifest_json, sitemap_xml
from sitegen.site.records import Sitemap
from tests.conftest import FIXTURES

SITE_CONTENT = FIXTURES / "site" / "content"


def test_export_lines_equal_compact_json_for_compact_and_whole_documents() -> None:
    """The export splices a run's orjson bytes in; its bytes must be compact_json's anyway,
    including for the numbers where orjson and json differ (which take json's path)."""
    import orjson

    from sitegen.content.loaded import DocumentStore

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
    assert export_jsonl(entries) == expected
    # Each resource is tested once and remembers it (`serve` writes the export at every
    # rebuild): the numbers json spells otherwise are remembered as not verbatim.
    assert [e.verbatim for e in entries] == [True] * 3 + [False] * 3 + [True] * 3 + [False] * 3
    assert export_jsonl(entries) == expected
    assert json.loads(expected.splitlines()[3])["resource"]["spec"] == {"v": 1e-05, "w": 1e-07}


def test_manifest_written_entry_by_entry_equals_the_whole_document() -> None:

    from sitegen.pipeline import manifest_of_content
    from sitegen.publish.manifest import manifest_document

    def whole(manifest: Manifest) -> bytes:
        return compact_json(manifest_document(manifest), newline=True)

    manifest = manifest_of_content(SITE_CONTENT).manifest
    assert manifest is not None and len(manifest.entries) > 2
    for shown in (manifest, manifest._replace(entries=manifest.entries[1:])):
        assert manifest_json(shown) == whole(shown)
    assert manifest_json(manifest._replace(entries=())) == whole(manifest._replace(entries=()))
    # An entry whose numbers orjson and json spell differently takes json's path alone.
    run = next(e for e in manifest.entries if e.run is not None)
    assert run.run is not None
    tiny = replace(run, run=replace(run.run, value=1e-07))
    odd = manifest._replace(entries=(tiny, *manifest.entries[1:]))
    assert manifest_json(odd) == whole(odd)
    assert b"1e-07" in bytes(manifest_json(odd))


def test_sitemap_escapes_what_xml_needs() -> None:
    from xml.etree import ElementTree

    paths = ("a/", "?q=1&r='2'<>\"")
    root = ElementTree.fromstring(sitemap_xml(Sitemap("https://example.org/", paths)))
    found = [loc.text for loc in root.iter("{http://www.sitemaps.org/schemas/sitemap/0.9}loc")]
    assert found == ["https://example.org/a/", "https://example.org/?q=1&r='2'<>\""]
    assert b"&amp;r=&#39;2&#39;&lt;&gt;&#34;" in sitemap_xml(Sitemap("https://example.org/", paths))
    # A base URL that needs escaping: each URL escaped whole.
    based = sitemap_xml(Sitemap("https://example.org/?s=1&t=2/", ("a/", "b/")))
    root = ElementTree.fromstring(based)
    found = [loc.text for loc in root.iter("{http://www.sitemaps.org/schemas/sitemap/0.9}loc")]
    assert found == ["https://example.org/?s=1&t=2/a/", "https://example.org/?s=1&t=2/b/"]
    assert sitemap_xml(Sitemap("https://example.org/", ())).count(b"<url>") == 0
    plain = sitemap_xml(Sitemap("https://example.org/", ("a/", "b/c/")))
    assert plain.count(b"<url><loc>https://example.org/") == 2


def test_a_held_sitemap_is_the_last_builds_bytes_while_its_urls_are() -> None:
    """`sitegen serve`, the build daemon: the same sitemap is the last build's bytes under
    the last build's name (neither joined nor hashed again); another is made anew under a name
    never given before; either is byte for byte the sitemap made whole."""
    from sitegen.analysis.kernels import HeldAnalysis
    from sitegen.publish.write import data_digest

    held = HeldAnalysis()
    paths = ("a/", "b/c/")
    first = sitemap_xml(Sitemap("https://example.org/", paths), held)
    again = sitemap_xml(Sitemap("https://example.org/", tuple(p for p in paths)), held)
    assert again is first and bytes(first) == sitemap_xml(Sitemap("https://example.org/", paths))
    for other in (Sitemap("https://example.org/", ("a/",)), Sitemap("https://example.net/", paths)):
        made = sitemap_xml(other, held)
        assert bytes(made) == sitemap_xml(other)
        assert data_digest(made) not in (data_digest(first), data_digest(again))
        first = made


def test_a_held_sitemap_takes_the_lines_of_the_same_paths_from_the_last() -> None:
    """An edit moves a run's page (its path is its digest's): the held sitemap takes every
    other URL's line from the last build's bytes, as views of them, not joined again; a new
    base URL makes every line anew. Either is byte for byte the sitemap made whole."""
    from sitegen.analysis.kernels import HeldAnalysis
    from sitegen.publish.write import Pieces

    held = HeldAnalysis()
    paths = tuple(f"runs/{number:04d}/" for number in range(1000))
    last = sitemap_xml(Sitemap("https://example.org/", paths), held)
    moved = (*paths[:500], "runs/0500x/", *paths[501:])
    made = sitemap_xml(Sitemap("https://example.org/", moved), held)
    assert isinstance(made, Pieces) and isinstance(last, Pieces)
    assert bytes(made) == sitemap_xml(Sitemap("https://example.org/", moved))

    def buffers(pieces: Pieces) -> set[int]:
        return {id(part.obj if isinstance(part, memoryview) else part) for part in pieces.parts}

    assert buffers(last) & buffers(made)  # the other lines: views of the last bytes
    elsewhere = sitemap_xml(Sitemap("https://example.net/", moved), held)
    assert bytes(elsewhere) == sitemap_xml(Sitemap("https://example.net/", moved))
    assert b"example.org" not in bytes(elsewhere)


def test_a_held_manifest_takes_the_lines_of_its_unchanged_entries_from_the_last(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`sitegen serve`: the same bytes as written whole, with only the entries that are not the
    very objects of the last build's manifest written again."""
    import sitegen.render.outputs
    from sitegen.pipeline import manifest_of_content

    manifest = manifest_of_content(SITE_CONTENT).manifest
    assert manifest is not None and len(manifest.entries) > 2
    held = HeldAnalysis()
    assert manifest_json(manifest, held) == manifest_json(manifest)
    written: list[str] = []
    entry_document = sitegen.render.outputs.entry_document
    monkeypatch.setattr(
        sitegen.render.outputs,
        "entry_document",
        lambda entry: written.append(entry.digest) or entry_document(entry),
    )
    first = manifest.entries[0]
    changed = replace(first, title=first.title + " (again)")
    second = manifest._replace(entries=(changed, *manifest.entries[2:]))
    assert manifest_json(second, held) == manifest_json(second)
    assert written == [changed.digest] + [e.digest for e in second.entries]
    # Back to the first: its first two entries are not the second's objects.
    written.clear()
    assert manifest_json(manifest, held) == manifest_json(manifest)
    assert written == [e.digest for e in manifest.entries[:2] + manifest.entries]
    # An equal copy is not the very object: written again.
    written.clear()
    copy = manifest._replace(entries=(replace(first), *manifest.entries[1:]))
    assert manifest_json(copy, held) == manifest_json(manifest)
    assert written[0] == first.digest and len(written) == 1 + len(manifest.entries)


def test_a_held_export_takes_the_lines_of_its_unchanged_resources_from_the_last(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`sitegen serve`, the build daemon: the same bytes as written whole, with only the
    resources that are not the very objects of the last build's export written again."""
    import sitegen.render.outputs

    first = tuple(resource(n, n + 0.5) for n in range(8))
    held = HeldAnalysis()
    assert export_jsonl(first, held) == export_jsonl(first)
    written: list[str] = []
    line = sitegen.render.outputs._export_line
    monkeypatch.setattr(
        sitegen.render.outputs, "_export_line", lambda e: written.append(e.digest) or line(e)
    )
    edited, added = resource(3, 1e-7), resource(9, 9.5)
    for now, made in [
        ((*first[:3], edited, *first[4:]), [edited]),  # one changed
        ((added, *first[:3], edited, *first[4:]), [added]),  # one added first
        ((first[6], *first[:3], edited, first[4], first[7]), [first[6]]),  # moved, one gone
        ((), []),
        (first, list(first)),  # after an empty export, nothing to take from
    ]:
        written.clear()
        assert export_jsonl(now, held) == b"".join(line(e) for e in now)
        assert written == [e.digest for e in made]


def test_a_held_export_views_the_last_builds_bytes_rather_than_copying_them() -> None:
    """The build daemon's export and manifest are made of views of the last build's bytes
    where their items are unchanged (no copy of ~250 MB a build at 100k runs), and the bytes
    are the same as written whole every time, through edits, growth and a join."""

    runs = [resource(n, n + 0.5) for n in range(20)]
    held = HeldAnalysis()
    first = export_jsonl(tuple(runs), held)
    assert isinstance(first, Pieces) and len(first.parts) == 1
    base, first_bytes = first.parts[0], bytes(first)
    for build in range(1, 6):
        if build == 4:  # more runs than before: added lines
            runs += [resource(n, 0.25, "-added-with-a-long-name") for n in range(20, 60)]
        else:
            runs[build * 3] = resource(build * 3, build + 0.75)
        data = export_jsonl(tuple(runs), held)
        assert data == export_jsonl(tuple(runs))
        assert held.export.data is data
        assert isinstance(data, Pieces)
        # The unchanged lines are views of the first build's buffer, not copies of it.
        viewed = [p for p in data.parts if isinstance(p, memoryview) and p.obj is base.obj]
        assert sum(map(len, viewed)) > len(first) // 2
    assert bytes(first) == first_bytes  # never written over: a writer thread may hold it


def test_a_held_file_is_joined_again_when_its_parts_are_many(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each edit adds a few parts; past MOST_PARTS the file is joined into one buffer again,
    the same bytes, and the buffers of before are no longer viewed."""
    import sitegen.render.outputs

    monkeypatch.setattr(sitegen.render.outputs, "MOST_PARTS", 6)
    runs = [resource(n, n + 0.5) for n in range(40)]
    held = HeldAnalysis()
    export_jsonl(tuple(runs), held)
    counts = []
    for build in range(1, 8):
        runs[build * 5] = resource(build * 5, build + 0.25)
        data = export_jsonl(tuple(runs), held)
        assert isinstance(data, Pieces) and data == export_jsonl(tuple(runs))
        counts.append(len(data.parts))
    assert max(counts) <= 6 and 1 in counts[1:]  # grew, then joined: one part again


def test_pieces_are_their_parts_bytes_in_order() -> None:
    pieces = Pieces([b"ab", b"", bytearray(b"cde"), memoryview(b"xfgx")[1:3]])
    assert len(pieces) == 7 and bytes(pieces) == b"abcdefg"
    assert pieces == b"abcdefg" and pieces != b"abcdefh" and pieces == Pieces([b"abcdefg"])
    assert [bytes(v) for v in pieces.views(1, 6)] == [b"b", b"cde", b"f"]
    assert [bytes(v) for v in pieces.views(2, 5)] == [b"cde"]
    assert data_digest(pieces) == hashlib.sha256(b"abcdefg").hexdigest()


def test_a_held_files_name_stands_for_its_bytes_kept_while_they_are_the_same() -> None:
    """A held export or manifest is named, not hashed (`data_digest`): the last build's name
    while every line is taken from it in place (and the manifest's head is the same), a new
    one whenever a line is made, moved or gone, or the head changed."""
    from sitegen.pipeline import manifest_of_content

    runs = tuple(resource(n, n + 0.5) for n in range(6))
    held = HeldAnalysis()
    names = []
    for now in [runs, runs, (*runs[:2], resource(2, 9.5), *runs[3:]), (runs[1], runs[0])]:
        data = export_jsonl(now, held)
        assert isinstance(data, Pieces) and data.name is not None
        assert data_digest(data) == data.name and data == export_jsonl(now)
        names.append(data.name)
    assert names[1] == names[0] and len(set(names)) == 3
    assert export_jsonl((runs[1], runs[0]), held).name == names[3]  # the same again
    moved = export_jsonl((runs[0], runs[1]), held)
    assert isinstance(moved, Pieces) and moved.name != names[3]  # moved lines: other bytes
    unheld = export_jsonl(runs)
    assert isinstance(unheld, Pieces) and unheld.name is None
    assert data_digest(unheld) == hashlib.sha256(bytes(unheld)).hexdigest()

    manifest = manifest_of_content(SITE_CONTENT).manifest
    assert manifest is not None
    first = manifest_json(manifest, held)
    again = manifest_json(manifest, held)
    assert isinstance(first, Pieces) and isinstance(again, Pieces)
    assert again.name == first.name is not None
    # Entries made again, equal (those of the resources that are not runs, each build).
    copies = manifest._replace(entries=tuple(replace(e) for e in manifest.entries))
    remade = manifest_json(copies, held)
    assert isinstance(remade, Pieces) and remade.name == first.name
    dated = manifest._replace(site=manifest.site + "x/")
    changed = manifest_json(dated, held)
    assert isinstance(changed, Pieces) and changed.name != first.name
    assert changed == manifest_json(dated)


def resource(number: int, value: float, name: str = "") -> LoadedResource:
    """A small run resource of its own digest, for the held export's tests."""
    document = {
        "kind": "BenchmarkRun",
        "metadata": {"name": f"r{number}{name}"},
        "spec": {"v": value},
    }
    return LoadedResource("p", "", None, f"sha256:{number:064x}", document)
