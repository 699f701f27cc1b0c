"""The site-wide files that are not pages (sitegen/render/outputs.py)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from sitegen.publish.manifest import Manifest
from sitegen.render.compact_json import compact_json
from sitegen.render.outputs import export_jsonl, manifest_json, sitemap_xml
from tests.conftest import FIXTURES

SITE_CONTENT = FIXTURES / "site" / "content"


def test_export_lines_equal_compact_json_for_compact_and_whole_documents() -> None:
    """The export splices a run's orjson bytes in; its bytes must be compact_json's anyway,
    including for the numbers where orjson and json differ (which take json's path)."""
    import orjson

    from sitegen.content.loaded import DocumentStore, LoadedResource

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

    urls = ("https://example.org/a/", "https://example.org/?q=1&r='2'<>\"")
    root = ElementTree.fromstring(sitemap_xml(urls))
    assert [loc.text for loc in root.iter("{http://www.sitemaps.org/schemas/sitemap/0.9}loc")] == [
        *urls
    ]
    assert b"&amp;r=&#39;2&#39;&lt;&gt;&#34;" in sitemap_xml(urls)


def test_a_held_manifest_takes_the_lines_of_its_unchanged_entries_from_the_last(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`sitegen serve`: the same bytes as written whole, with only the entries that are not the
    very objects of the last build's manifest written again."""
    import sitegen.render.outputs
    from sitegen.analysis.kernels import HeldAnalysis
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
    from sitegen.analysis.kernels import HeldAnalysis
    from sitegen.content.loaded import LoadedResource

    def resource(number: int, value: float) -> LoadedResource:
        document = {
            "kind": "BenchmarkRun",
            "metadata": {"name": f"r{number}"},
            "spec": {"v": value},
        }
        return LoadedResource("p", "", None, f"sha256:{number:064x}", document)

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


def test_a_held_export_is_written_into_the_buffer_of_the_build_before_last() -> None:
    """The build daemon's export and manifest are written over the buffer of the build before
    last (no fresh ~240 MB a build at 100k runs): that buffer is reused, grown when the file
    outgrows it, and the bytes are the same as written whole every time, copied stretches
    and all."""
    from sitegen.analysis.kernels import HeldAnalysis
    from sitegen.content.loaded import LoadedResource

    def resource(number: int, value: float, name: str = "") -> LoadedResource:
        document = {
            "kind": "BenchmarkRun",
            "metadata": {"name": f"r{number}{name}"},
            "spec": {"v": value},
        }
        return LoadedResource("p", "", None, f"sha256:{number:064x}", document)

    runs = [resource(n, n + 0.5) for n in range(20)]
    held = HeldAnalysis()
    buffers, sizes = [], []
    for build in range(6):
        if build == 4:  # a longer export than the spare holds: it grows
            runs += [resource(n, 0.25, "-added-with-a-long-name") for n in range(20, 60)]
        else:
            runs[build] = resource(build, build + 0.75)
        data = export_jsonl(tuple(runs), held)
        assert data == export_jsonl(tuple(runs))
        assert bytes(held.export.view) == bytes(data)
        buffers.append(held.export.view.obj)
        sizes.append(len(data))
    assert buffers[2] is buffers[0] and buffers[3] is buffers[1]  # written over in place
    assert buffers[0] is not buffers[1]
    assert buffers[4] is buffers[2] and len(buffers[4]) >= sizes[4] > sizes[2]  # grown


def test_lines_written_over_a_buffer_still_viewed_grow_as_a_copy() -> None:
    """A view of the spare still held (someone kept the bytes of the build before last): it
    cannot be resized, so the file grows into a copy, and the view's bytes are left alone."""
    from sitegen.render.outputs import Lines

    spare = bytearray(b"old bytes")
    viewed = memoryview(spare)
    lines = Lines(spare)
    lines += b"new"
    lines += b" and longer than the spare"
    assert bytes(lines.data()) == b"new and longer than the spare"
    assert bytes(viewed) == b"new bytes"  # written over in place up to where it outgrew it
    assert lines.buffer is not spare
