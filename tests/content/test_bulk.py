"""Bulk content files: JSON Lines, plain or zstd, read as a stream and written byte-identically."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
import zstandard

from sitegen.content import bulk
from sitegen.content.bulk import bulk_bytes, bulk_lines
from sitegen.content.load import load_content, load_documents, load_files
from sitegen.model.problems import Problem

SITE = Path(__file__).parent.parent / "fixtures" / "site" / "content"


def site_documents() -> list[dict[str, Any]]:
    loaded = load_content(SITE, workers=1)
    assert loaded.problems == []
    return [entry.document for entry in loaded.resources]


def read(data: bytes, compressed: bool) -> tuple[list[tuple[int, bytes]], list[str]]:
    problems: list[Problem] = []
    found = list(bulk_lines(io.BytesIO(data), compressed, "b.jsonl", problems))
    return found, [p.line() for p in problems]


def test_the_same_documents_in_any_order_make_the_same_bytes() -> None:
    documents = site_documents()
    written = bulk_bytes(documents)
    assert bulk_bytes(list(reversed(documents))) == written
    assert bulk_bytes(documents + documents[:3]) == written  # a repeated line is written once
    plain = zstandard.ZstdDecompressor().decompress(written)
    assert plain == bulk_bytes(documents, compressed=False)
    lines = plain.splitlines()
    assert lines == sorted(lines) and plain.endswith(b"\n")


def test_a_tree_of_bulk_files_loads_as_its_json_files_do(tmp_path: Path) -> None:
    documents = site_documents()
    content = tmp_path / "content"
    content.mkdir()
    half = len(documents) // 2
    (content / "a.jsonl.zst").write_bytes(bulk_bytes(documents[:half]))
    (content / "b.jsonl").write_bytes(bulk_bytes(documents[half:], compressed=False))
    loaded = load_content(content, workers=1)
    assert loaded.problems == []
    assert loaded.file_count == 2
    expected = {(d["kind"], json.dumps(d, sort_keys=True)) for d in documents}
    assert {(r.kind, json.dumps(r.document, sort_keys=True)) for r in loaded.resources} == expected
    assert all(
        r.path.startswith(("content/a.jsonl.zst:", "content/b.jsonl:")) for r in loaded.resources
    )
    by_files = load_files([content / "a.jsonl.zst", content / "b.jsonl"])
    assert [r.digest for r in by_files.resources] == [r.digest for r in loaded.resources]
    in_memory = load_documents(
        [(name, (content / name).read_bytes()) for name in ("a.jsonl.zst", "b.jsonl")], "content"
    )
    assert [r.digest for r in in_memory.resources] == [r.digest for r in loaded.resources]


def test_a_line_is_whole_whatever_the_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    data = b'{"a":1}\n\n  \n{"bb":22}\n{"c":3}'
    for size in (1, 2, 3, 7, 100):
        monkeypatch.setattr(bulk, "_CHUNK_BYTES", size)
        assert read(data, False) == ([(1, b'{"a":1}'), (4, b'{"bb":22}'), (5, b'{"c":3}')], [])
        compressed = zstandard.ZstdCompressor().compress(data)
        assert read(compressed, True) == read(data, False)


def test_a_line_over_the_limit_is_refused_and_the_next_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(bulk, "MAX_LINE_BYTES", 8)
    data = b'{"a":1}\n{"long":"line"}\n{"b":2}\n{"tail":"too long"}'
    for size in (3, 100):
        monkeypatch.setattr(bulk, "_CHUNK_BYTES", size)
        assert read(data, False) == (
            [(1, b'{"a":1}'), (3, b'{"b":2}')],
            [
                "b.jsonl:2: -: line is over the limit of 8 bytes",
                "b.jsonl:4: -: line is over the limit of 8 bytes",
            ],
        )


def test_a_zip_bomb_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bulk, "MAX_DECOMPRESSED_BYTES", 1000)
    body = b'{"a":1}\n' * 1000
    refused = "b.jsonl: -: decompresses to more than 1,000 bytes; hint: split it into several files"
    declared = zstandard.ZstdCompressor(write_content_size=True).compress(body)
    found, problems = read(declared, True)
    assert (found, problems) == ([], [refused])  # the frame says its size: nothing is expanded
    streamed = io.BytesIO()
    with zstandard.ZstdCompressor().stream_writer(streamed, closefd=False) as writer:
        writer.write(body)
    assert zstandard.get_frame_parameters(streamed.getvalue()).content_size == (
        zstandard.CONTENTSIZE_UNKNOWN
    )
    monkeypatch.setattr(bulk, "_CHUNK_BYTES", 100)
    found, problems = read(streamed.getvalue(), True)
    assert len(found) * 8 <= 1000 and problems == [refused]


def test_bytes_that_are_not_whole_zstd_frames_are_a_problem() -> None:
    body = b'{"a":1}\n' * 10_000
    frame = zstandard.ZstdCompressor().compress(body)
    assert len(read(frame + frame, True)[0]) == 20_000  # frames follow each other
    assert read(frame[:-3], True)[1] == [
        "b.jsonl: -: ends inside a zstd frame: the file is cut short"
    ]
    assert read(b"", True) == ([], ["b.jsonl: -: empty: a .jsonl.zst file holds zstd frames"])
    found, problems = read(body, True)
    assert found == []
    assert problems == [
        "b.jsonl: -: not a readable zstd file (cannot get frame parameters: Unknown frame "
        "descriptor)"
    ]
    found, problems = read(frame + b"tail", True)
    assert len(found) == 10_000
    assert problems == [
        "b.jsonl: -: not a readable zstd file (zstd decompressor error: Unknown frame descriptor)"
    ]


def test_each_line_is_checked_and_named_by_its_number(tmp_path: Path) -> None:
    documents = site_documents()
    content = tmp_path / "content"
    content.mkdir()
    lines = [json.dumps(documents[0]), "{", json.dumps({"kind": "BenchmarkRun"})]
    (content / "x.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    data = zstandard.ZstdCompressor().compress((content / "x.jsonl").read_bytes())
    (content / "y.jsonl.zst").write_bytes(data)
    loaded = load_content(content, workers=1)
    assert len(loaded.resources) == 2
    for name in ("x.jsonl", "y.jsonl.zst"):
        assert (
            f"content/{name}:2: 1:2: invalid JSON: expecting property name enclosed in double "
            "quotes" in [p.line() for p in loaded.problems]
        )
        assert any(p.path == f"content/{name}:3" and p.where == "$" for p in loaded.problems)
