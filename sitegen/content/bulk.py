"""Bulk content files: JSON Lines, plain (`.jsonl`) or zstd-compressed (`.jsonl.zst`), one
resource or stored run bundle a line. Read as a stream, line by line, never whole; written by
`bulk_bytes`, byte-identical for the same documents.

An importer that writes tens of thousands of resources writes them here, in one or a few files,
rather than a file each. The bytes come from strangers as any content does: a compressed file
that would expand past `MAX_DECOMPRESSED_BYTES` (a zip bomb) is refused where it passes the
limit, and a line over `MAX_LINE_BYTES` is refused without being held.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import IO, Any

import orjson
import zstandard

from sitegen.model.problems import Problem

PLAIN_SUFFIX = ".jsonl"
COMPRESSED_SUFFIX = ".jsonl.zst"
SUFFIXES = (PLAIN_SUFFIX, COMPRESSED_SUFFIX)
MAX_FILE_BYTES = 512 * 1024 * 1024  # on disk, compressed or not
MAX_DECOMPRESSED_BYTES = 1024 * 1024 * 1024  # what a `.jsonl.zst` may expand to
MAX_LINE_BYTES = 4 * 1024 * 1024  # one resource or bundle, as a `.json` file may hold
# Fixed, so that the same lines compress to the same bytes. zstd writes no time or name into a
# frame: with one thread and the content size recorded, output depends on the input alone.
ZSTD_LEVEL = 10
_CHUNK_BYTES = 1024 * 1024
# Compressed bytes are decompressed this many at a time: zstd can expand a block over 30,000
# times, and one call's output is held whole.
_COMPRESSED_PIECE_BYTES = 1024


def is_bulk(name: str) -> bool:
    return name.endswith(SUFFIXES)


def bulk_bytes(documents: Iterable[Any], compressed: bool = True) -> bytes:
    """The bulk file that holds `documents` (resources or run bundles): each as orjson writes it
    (the form the loader reads fastest), the lines sorted and de-duplicated, zstd at a fixed
    level unless `compressed` is false. The same documents, in any order, give the same bytes."""
    lines = sorted({orjson.dumps(document) for document in documents})
    body = b"".join(line + b"\n" for line in lines)
    if not compressed:
        return body
    compressor = zstandard.ZstdCompressor(
        level=ZSTD_LEVEL, write_checksum=True, write_content_size=True, threads=0
    )
    return compressor.compress(body)


def bulk_lines(
    stream: IO[bytes], compressed: bool, shown: str, problems: list[Problem]
) -> Iterator[tuple[int, bytes]]:
    """Each non-blank line of a bulk file with its number (from 1), without its newline.

    A line over `MAX_LINE_BYTES` is a problem and is skipped; bytes that are not zstd, or that
    expand past `MAX_DECOMPRESSED_BYTES`, are a problem and end the file there.
    """
    chunks = (
        _decompressed_chunks(stream, shown, problems)
        if compressed
        else _chunks(stream, shown, problems)
    )
    number = 0
    pending = bytearray()
    too_long = False  # the current line passed the limit: its bytes are dropped to its end
    for chunk in chunks:
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            if end < 0:
                if not too_long:
                    pending += chunk[start:]
                    if len(pending) > MAX_LINE_BYTES:
                        too_long = True
                        pending.clear()
                break
            number += 1
            if too_long:
                problems.append(_long_line(shown, number))
                too_long = False
            elif pending:
                pending += chunk[start:end]
                if len(pending) > MAX_LINE_BYTES:
                    problems.append(_long_line(shown, number))
                elif pending.strip():
                    yield number, bytes(pending)
                pending.clear()
            elif end - start > MAX_LINE_BYTES:
                problems.append(_long_line(shown, number))
            elif end > start and not chunk[start:end].isspace():
                yield number, chunk[start:end]
            start = end + 1
    if too_long:
        problems.append(_long_line(shown, number + 1))
    elif pending.strip():
        yield number + 1, bytes(pending)


def _long_line(shown: str, number: int) -> Problem:
    return Problem(f"{shown}:{number}", "-", f"line is over the limit of {MAX_LINE_BYTES:,} bytes")


def _chunks(stream: IO[bytes], shown: str, problems: list[Problem]) -> Iterator[bytes]:
    total = 0
    while chunk := stream.read(_CHUNK_BYTES):
        total += len(chunk)
        if total > MAX_FILE_BYTES:  # it grew since its size was checked
            problems.append(
                Problem(shown, "-", f"file grew over the limit of {MAX_FILE_BYTES:,} bytes")
            )
            return
        yield chunk


def _decompressed_chunks(stream: IO[bytes], shown: str, problems: list[Problem]) -> Iterator[bytes]:
    """The bytes of every zstd frame of `stream`, in order; a problem, and the end, where they
    would pass `MAX_DECOMPRESSED_BYTES`, where a frame is cut short or the bytes are not zstd."""
    limit = MAX_DECOMPRESSED_BYTES
    refused = Problem(
        shown, "-", f"decompresses to more than {limit:,} bytes", "split it into several files"
    )
    decompressor = zstandard.ZstdDecompressor()
    frame = decompressor.decompressobj()
    total = 0
    started = False
    try:
        while data := stream.read(_COMPRESSED_PIECE_BYTES):
            if not started:
                started = True
                declared = zstandard.get_frame_parameters(data).content_size
                if declared != zstandard.CONTENTSIZE_UNKNOWN and declared > limit:
                    problems.append(refused)  # said in its header: nothing is expanded
                    return
            while data:
                if frame.eof:
                    frame = decompressor.decompressobj()
                chunk = frame.decompress(data)
                data = frame.unused_data if frame.eof else b""
                total += len(chunk)
                if total > limit:
                    problems.append(refused)
                    return
                if chunk:
                    yield chunk
    except zstandard.ZstdError as error:
        problems.append(Problem(shown, "-", f"not a readable zstd file ({error})"))
        return
    if not started:
        problems.append(Problem(shown, "-", "empty: a .jsonl.zst file holds zstd frames"))
    elif not frame.eof:
        problems.append(Problem(shown, "-", "ends inside a zstd frame: the file is cut short"))
