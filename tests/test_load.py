"""The strict loader: file-system and byte-level cases a committed fixture cannot hold."""

from __future__ import annotations

import json
import os
import pickle
import shutil
import signal
from pathlib import Path
from typing import Any

import orjson
import pytest

from sitegen import cpus
from sitegen.load import (
    CHUNK_FILES,
    LOAD_PROCESSES_PER_CPU,
    MANY_FILES,
    MAX_FILE_BYTES,
    _guided_chunks,
    _load_processes,
    _read_bytes,
    load_content,
    load_files,
    parse_json,
)
from sitegen.problems import Problem
from sitegen.run_summary import summarise


def write_example(root: Path, example_bundle: dict[str, Any]) -> Path:
    content = root / "content"
    content.mkdir()
    (content / "example.json").write_text(json.dumps(example_bundle), encoding="utf-8")
    return content


def lines(problems: list[Any]) -> list[str]:
    return [p.line() for p in sorted(problems)]


def test_example_bundle_loads_clean(tmp_path: Path, example_bundle: dict[str, Any]) -> None:
    result = load_content(write_example(tmp_path, example_bundle))
    assert result.problems == []
    assert [r.kind for r in result.resources] == [
        "BenchmarkRun",
        "BenchmarkProtocol",
        "ExecutionEnvironment",
    ]
    assert [r.where for r in result.resources] == ["run", "protocol", "environment"]


def test_huge_file_is_refused_without_reading_it(
    tmp_path: Path, example_bundle: dict[str, Any]
) -> None:
    content = write_example(tmp_path, example_bundle)
    with open(content / "huge.json", "wb") as handle:
        handle.truncate(MAX_FILE_BYTES + 1)  # sparse: costs no disk
    result = load_content(content)
    assert lines(result.problems) == [
        f"content/huge.json: -: file is {MAX_FILE_BYTES + 1:,} bytes, over the limit of "
        f"{MAX_FILE_BYTES:,}"
    ]
    assert len(result.resources) == 3


def test_fifo_and_other_special_files_are_refused(
    tmp_path: Path, example_bundle: dict[str, Any]
) -> None:
    content = write_example(tmp_path, example_bundle)
    os.mkfifo(content / "pipe.json")  # opening it for reading would block forever
    result = load_content(content)
    assert lines(result.problems) == ["content/pipe.json: -: not a regular file"]


def test_a_file_swapped_after_the_walk_is_refused_when_read(tmp_path: Path) -> None:
    # The read checks the file it opened, not what the walk saw: a FIFO must not block it, a
    # symlink must not be followed, and a file that grows is cut off at the limit.
    os.mkfifo(tmp_path / "pipe.json")
    (tmp_path / "target.json").write_text("{}")
    (tmp_path / "link.json").symlink_to(tmp_path / "target.json")
    (tmp_path / "small.json").write_bytes(b"x" * 10)
    problems: list[Problem] = []
    assert _read_bytes(tmp_path / "pipe.json", "pipe.json", 100, problems) is None
    assert _read_bytes(tmp_path / "link.json", "link.json", 100, problems) is None
    assert _read_bytes(tmp_path / "small.json", "small.json", 5, problems) is None
    assert _read_bytes(tmp_path / "small.json", "small.json", 10, problems) == b"x" * 10
    assert [p.line() for p in problems] == [
        "pipe.json: -: not a regular file",
        "link.json: -: cannot read file: Too many levels of symbolic links",
        "small.json: -: file is 10 bytes, over the limit of 5",
    ]


def test_a_file_growing_while_read_is_read_to_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "growing.json"
    path.write_bytes(b"[1]")
    real_fstat = os.fstat

    def fstat_then_grow(descriptor: int) -> os.stat_result:
        found = real_fstat(descriptor)
        with open(path, "ab") as handle:  # appended after the size was taken
            handle.write(b" " * 20)
        return found

    monkeypatch.setattr(os, "fstat", fstat_then_grow)
    problems: list[Problem] = []
    assert _read_bytes(path, "growing.json", 10, problems) is None
    assert [p.line() for p in problems] == ["growing.json: -: file grew over the limit of 10 bytes"]
    assert _read_bytes(path, "growing.json", 100, []) == b"[1]" + b" " * 40


def test_symlinked_content_root_is_followed_but_not_links_inside(
    tmp_path: Path, example_bundle: dict[str, Any]
) -> None:
    content = write_example(tmp_path, example_bundle)
    (content / "escape").symlink_to(tmp_path)
    result = load_content(content)
    assert lines(result.problems) == [
        "content/escape: -: symbolic links are not allowed in content"
    ]


def test_pathological_nesting_does_not_crash() -> None:
    _, found = parse_json("[" * 100_000 + "]" * 100_000)
    assert found == [("$", "nesting deeper than 32 levels")]


def test_missing_content_directory_is_one_problem(tmp_path: Path) -> None:
    result = load_content(tmp_path / "nowhere")
    assert result.problems[0].message.startswith("cannot read content directory")


def test_file_creation_order_does_not_change_what_loads(
    tmp_path: Path, example_bundle: dict[str, Any]
) -> None:
    results = []
    for order in (("b", "a", "c"), ("c", "b", "a")):
        root = tmp_path / "".join(order)
        root.mkdir()
        content = write_example(root, example_bundle)
        for name in order:
            (content / name).mkdir()
            shutil.copy(content / "example.json", content / name / "x.json")
        results.append([(r.path, r.where, r.digest) for r in load_content(content).resources])
    assert results[0] == results[1]
    assert len(results[0]) == 12


def test_load_files_reports_each_named_file(tmp_path: Path, example_bundle: dict[str, Any]) -> None:
    content = write_example(tmp_path, example_bundle)
    (content / "bad.json").write_text("{", encoding="utf-8")
    result = load_files([content / "example.json", content / "bad.json", content / "none.json"])
    assert len(result.resources) == 3
    assert [p.message.split(":")[0] for p in sorted(result.problems)] == [
        "invalid JSON",
        "cannot read file",
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"a": 1, "a": 2}', "duplicate key"),
        ('{"a": 9007199254740992}', "integer out of range"),
        ('{"a": -1e999}', "overflows a double"),
        ('{"a": NaN}', "numbers must be finite"),
        ('{"a": [null]}', "null is not allowed"),
        ('{"\\udc00": 1}', "lone UTF-16 surrogate"),
    ],
)
def test_strict_json_rejects(text: str, message: str) -> None:
    _, found = parse_json(text)
    assert len(found) == 1 and message in found[0][1]


def test_strict_json_accepts_the_largest_exact_integer() -> None:
    value, found = parse_json('{"a": 9007199254740991, "b": -9007199254740991, "c": 1e308}')
    assert found == [] and value["a"] == 2**53 - 1


def test_parallel_load_equals_one_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Forked workers give the same resources, documents and problems, in the same order."""
    import sitegen.load
    from tests.conftest import FIXTURES

    content = tmp_path / "content"
    shutil.copytree(FIXTURES / "site" / "content", content)
    for case in ("bad-instant", "bad-name", "bad-enum-nested"):  # some problems too
        for path in (FIXTURES / "invalid" / case / "content").rglob("*.json"):
            target = content / case / path.relative_to(FIXTURES / "invalid" / case / "content")
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, target)
    serial = load_content(content, workers=1)
    monkeypatch.setattr(sitegen.load, "PARALLEL_MIN_FILES", 0)
    monkeypatch.setattr(sitegen.load, "CHUNK_FILES", 4)
    parallel = load_content(content, workers=2)
    assert serial.problems and lines(parallel.problems) == lines(serial.problems)
    assert parallel.file_count == serial.file_count
    assert [(r.path, r.where, r.digest, r.document) for r in parallel.resources] == [
        (r.path, r.where, r.digest, r.document) for r in serial.resources
    ]
    # The model is rebuilt from the document on demand, and is the model validation made.
    for mine, theirs in zip(parallel.resources, serial.resources, strict=True):
        assert mine.resource == theirs.resource
    # Runs come back compact, their bytes in one shared store; the rest as documents.
    runs = [r for r in parallel.resources if r.kind == "BenchmarkRun"]
    assert runs and all(r.is_compact for r in runs)
    assert len({id(r._store) for r in runs}) == 1 and runs[0]._store is not None
    assert not any(r.is_compact for r in parallel.resources if r.kind != "BenchmarkRun")
    for mine, theirs in zip(parallel.resources, serial.resources, strict=True):
        assert mine.raw == orjson.dumps(theirs.document) and mine.token == theirs.token
        assert pickle.loads(pickle.dumps(mine)).document == theirs.document
    # Each run comes with the summary its worker made, the one its document gives; a serial
    # load summarises nothing until asked.
    assert all(r.held_summary == summarise(r.document) for r in runs)
    assert not any(r.held_summary for r in serial.resources)


@pytest.mark.parametrize(("workers", "cached"), [(1, False), (2, False), (1, True), (2, True)])
def test_meanwhile_runs_once_beside_the_load_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int, cached: bool
) -> None:
    """The caller's own work (build.py: compiling the templates) is done while the workers
    read, not after: once, with the workers alive; without workers, once after the load."""
    import multiprocessing

    import sitegen.load
    from tests.conftest import FIXTURES

    monkeypatch.setattr(sitegen.load, "PARALLEL_MIN_FILES", 0)
    seen: list[tuple[int, int]] = []

    def meanwhile() -> None:
        seen.append((len(multiprocessing.active_children()), len(seen)))

    cache: sitegen.load.LoadCache | None = {} if cached else None
    loaded = load_content(
        FIXTURES / "site" / "content", workers=workers, cache=cache, meanwhile=meanwhile
    )
    assert loaded.resources and not loaded.problems
    assert seen == [(workers if workers > 1 else 0, 0)]


@pytest.mark.parametrize("workers", [1, 2])
def test_an_incremental_load_summarises_the_runs_it_reads_and_caches_no_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    """Runs read now come summarised; runs taken from the cache are summarised when asked.
    The cache (an incremental build's state, pickled) holds no summary: it would grow by a
    few hundred bytes a run."""
    import sitegen.load
    from tests.conftest import FIXTURES

    monkeypatch.setattr(sitegen.load, "PARALLEL_MIN_FILES", 0)
    content = tmp_path / "content"
    shutil.copytree(FIXTURES / "site" / "content", content)
    cache: sitegen.load.LoadCache = {}
    first = load_content(content, workers=workers, cache=cache)
    runs = [r for r in first.resources if r.kind == "BenchmarkRun"]
    assert runs and all(r.held_summary == summarise(r.document) for r in runs)
    assert b"RunSummary" not in pickle.dumps(cache)

    changed = Path(runs[0].path.replace("content/", f"{content}/", 1))
    changed.write_bytes(changed.read_bytes() + b"\n")  # same resource, new stat key
    again = load_content(content, workers=workers, cache=cache)
    summarised = {r.path for r in again.resources if r.held_summary is not None}
    assert summarised == {runs[0].path}
    assert all(
        r.summary == summarise(r.document) for r in again.resources if r.kind == "BenchmarkRun"
    )
    assert b"RunSummary" not in pickle.dumps(cache)


@pytest.mark.parametrize("count", [1, 49, 1000, 4354, 20_001])
def test_load_chunks_cover_every_file_in_order_and_shrink_to_the_end(count: int) -> None:
    files = [(f"{i}.json", f"content/{i}.json") for i in range(count)]
    chunks = _guided_chunks(files, workers=2)
    assert [item for chunk in chunks for item in chunk] == files
    sizes = [len(chunk) for chunk in chunks]
    assert max(sizes) <= CHUNK_FILES and sizes == sorted(sizes, reverse=True)
    if count >= 4 * CHUNK_FILES:
        assert sizes[0] == CHUNK_FILES and sizes[-1] < CHUNK_FILES / 4, "the last runs are short"


def _signal_dispositions(_: object) -> tuple[object, object]:
    return signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)


def test_load_workers_die_of_sigterm_whatever_their_parent_handles() -> None:
    """`sitegen serve` handles SIGTERM (to clean up); its load workers, forked with that handler,
    must still die of the SIGTERM the pool's terminate sends: a worker that ran the handler's
    Python only between bytecodes once hung a terminate forever. Ctrl-C is the parent's."""
    import sitegen.load

    previous = signal.signal(signal.SIGTERM, lambda number, frame: None)
    try:
        with sitegen.load._pool(2) as pool:
            found = pool.map(_signal_dispositions, range(4), chunksize=1)
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert found == [(signal.SIG_DFL, signal.SIG_IGN)] * 4


def test_a_small_tree_is_read_by_one_worker_per_cpu_a_big_one_by_two(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(cpus, "usable_cpus", lambda: 3)
    assert _load_processes(MANY_FILES - 1) == 3
    assert _load_processes(MANY_FILES) == 3 * LOAD_PROCESSES_PER_CPU == 6
