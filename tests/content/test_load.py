"""The strict loader: file-system and byte-level cases a committed fixture cannot hold."""

from __future__ import annotations

import json
import shutil
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from sitegen.content.load import CHUNK_FILES, _guided_chunks, load_content, load_files
from sitegen.content.run_summary import summarise


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


def test_parallel_load_equals_one_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Forked workers give the same resources, documents and problems, in the same order."""
    import sitegen.content.load
    from tests.conftest import FIXTURES

    content = tmp_path / "content"
    shutil.copytree(FIXTURES / "site" / "content", content)
    for case in ("bad-instant", "bad-name", "bad-enum-nested"):  # some problems too
        for path in (FIXTURES / "invalid" / case / "content").rglob("*.json"):
            target = content / case / path.relative_to(FIXTURES / "invalid" / case / "content")
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, target)
    serial = load_content(content, workers=1)
    monkeypatch.setattr(sitegen.content.load, "PARALLEL_MIN_FILES", 0)
    monkeypatch.setattr(sitegen.content.load, "CHUNK_FILES", 4)
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

    import sitegen.content.load
    from tests.conftest import FIXTURES

    monkeypatch.setattr(sitegen.content.load, "PARALLEL_MIN_FILES", 0)
    seen: list[tuple[int, int]] = []

    def meanwhile() -> None:
        seen.append((len(multiprocessing.active_children()), len(seen)))

    cache: sitegen.content.load.LoadCache | None = {} if cached else None
    loaded = load_content(
        FIXTURES / "site" / "content", workers=workers, cache=cache, meanwhile=meanwhile
    )
    assert loaded.resources and not loaded.problems
    assert seen == [(workers if workers > 1 else 0, 0)]


@pytest.mark.parametrize("workers", [1, 2])
def test_an_incremental_load_summarises_every_run_and_caches_no_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    """Runs read now come summarised by the load workers; runs taken from the cache are
    summarised by the load too (half by a forked worker, with two CPUs), not one by one when
    the resolve asks. The cache (an incremental build's state) holds no summary: it would grow
    by a few hundred bytes a run."""
    import sitegen.content.load
    import sitegen.process
    from tests.conftest import FIXTURES

    monkeypatch.setattr(sitegen.content.load, "PARALLEL_MIN_FILES", 0)
    content = tmp_path / "content"
    shutil.copytree(FIXTURES / "site" / "content", content)
    cache: sitegen.content.load.LoadCache = {}
    first = load_content(content, workers=workers, cache=cache)
    runs = [r for r in first.resources if r.kind == "BenchmarkRun"]
    assert runs and all(r.held_summary == summarise(r.document) for r in runs)
    assert _cached_items(cache) == {8}

    changed = Path(runs[0].path.replace("content/", f"{content}/", 1))
    changed.write_bytes(changed.read_bytes() + b"\n")  # same resource, new stat key
    monkeypatch.setattr(sitegen.process, "usable_cpus", lambda: workers)
    again = load_content(content, workers=workers, cache=cache)
    again_runs = [r for r in again.resources if r.kind == "BenchmarkRun"]
    assert len(again_runs) == len(runs)
    assert all(r.held_summary == summarise(r.document) for r in again_runs)
    assert _cached_items(cache) == {8}


@pytest.mark.parametrize("workers", [1, 2])
def test_a_held_load_keeps_each_unchanged_files_resources_and_summaries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    """`sitegen serve` holds what each file's load made: an unchanged file's resources are the
    very objects of the last build, their runs' summaries still held after its analysis (which
    reads them, where a build takes them); a changed file's are made anew; a deleted file's are
    dropped."""
    import sitegen.content.load
    from sitegen.analysis.kernels import HeldAnalysis, analyse
    from sitegen.content.catalog import resolve
    from tests.conftest import FIXTURES

    monkeypatch.setattr(sitegen.content.load, "PARALLEL_MIN_FILES", 0)
    content = tmp_path / "content"
    shutil.copytree(FIXTURES / "site" / "content", content)
    cache: sitegen.content.load.LoadCache = {}
    held: sitegen.content.load.HeldLoads = {}
    first = load_content(content, workers=workers, cache=cache, held=held)
    runs = [r for r in first.resources if r.kind == "BenchmarkRun"]
    analyse(resolve(first.resources)[0], HeldAnalysis())
    alone = [r for r in runs if not r.where][:2]  # each the only resource of its file
    changed, deleted = (Path(r.path.replace("content/", f"{content}/", 1)) for r in alone)
    changed.write_bytes(changed.read_bytes() + b"\n")
    deleted.unlink()
    again = load_content(content, workers=workers, cache=cache, held=held)
    before = {(r.path, r.where): r for r in first.resources}
    kept = [r for r in again.resources if before.get((r.path, r.where)) is r]
    assert len(kept) == len(first.resources) - 2
    assert {r.path for r in again.resources} == {r.path for r in first.resources} - {alone[1].path}
    assert all(
        r.held_summary == summarise(r.document) for r in again.resources if r.kind == "BenchmarkRun"
    )
    assert set(held) == set(cache) and alone[1].path not in held
    assert [r.digest for r in again.resources] == [
        r.digest for r in load_content(content, workers=workers).resources
    ]


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
    import sitegen.content.load

    previous = signal.signal(signal.SIGTERM, lambda number, frame: None)
    try:
        with sitegen.content.load._pool(2) as pool:
            found = pool.map(_signal_dispositions, range(4), chunksize=1)
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert found == [(signal.SIG_DFL, signal.SIG_IGN)] * 4


def _cached_items(cache: dict[str, Any]) -> set[int]:
    """The lengths of the cached resources: 8 fields (load.Packed), no summary among them."""
    return {len(item) for _, packed, _ in cache.values() for item in packed}


def test_a_load_told_what_changed_reads_that_alone_and_gives_a_whole_loads_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`sitegen serve` tells the load which paths its watcher saw change: it reads those files
    alone and takes every other file's held resources, and the result is a whole load's."""
    import sitegen.content.load
    from tests.conftest import FIXTURES

    content = tmp_path / "content"
    shutil.copytree(FIXTURES / "site" / "content", content)
    (content / "runs" / "broken.json").write_text("{")  # a problem carried along
    cache: sitegen.content.load.LoadCache = {}
    held: sitegen.content.load.HeldLoads = {}
    walked = sitegen.content.load.HeldWalk()
    first = load_content(content, cache=cache, held=held, walked=walked)
    run = next(r for r in first.resources if r.kind == "BenchmarkRun" and not r.where)
    path = Path(run.path.replace("content/", f"{content}/", 1))
    path.write_bytes(path.read_bytes().replace(b"{", b"{\n", 1))  # the same run, new bytes
    read: list[object] = []
    load_chunk = sitegen.content.load._load_chunk
    monkeypatch.setattr(
        sitegen.content.load, "_load_chunk", lambda files: read.append(files) or load_chunk(files)
    )
    walked_again: list[object] = []
    load_cached = sitegen.content.load._load_cached
    monkeypatch.setattr(
        sitegen.content.load,
        "_load_cached",
        lambda *args: walked_again.append(args) or load_cached(*args),
    )
    told = load_content(content, cache=cache, held=held, walked=walked, changed={str(path)})
    assert read == [[(str(path), run.path)]] and walked_again == []  # no pass over the files
    whole = load_content(content)
    assert [(r.path, r.where, r.digest) for r in told.resources] == [
        (r.path, r.where, r.digest) for r in whole.resources
    ]
    assert told.problems == whole.problems and told.problems
    kept = {id(r) for r in first.resources}
    assert [r.path for r in told.resources if id(r) not in kept] == [run.path]


def test_a_held_load_of_the_same_walk_is_patched_where_its_files_were_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A load told what changed, after one of the same walk, puts the files it read again in
    their places in the last load's resources instead of joining every file's anew; a file
    whose resources or problems change, or a load stopped partway, means the whole join.
    Each result is a whole load's, and the caller's list is its own."""
    import sitegen.content.load
    from tests.conftest import FIXTURES

    content = tmp_path / "content"
    shutil.copytree(FIXTURES / "site" / "content", content)
    cache: sitegen.content.load.LoadCache = {}
    held: sitegen.content.load.HeldLoads = {}
    walked = sitegen.content.load.HeldWalk()
    first = load_content(content, cache=cache, held=held, walked=walked)
    runs = [r for r in first.resources if r.kind == "BenchmarkRun" and not r.where]
    paths = [Path(r.path.replace("content/", f"{content}/", 1)) for r in runs]
    paths = [p for p in paths if "timing" in json.loads(p.read_bytes())["spec"]][:2]

    def slower(path: Path, by: int) -> bytes:  # a new digest
        document = json.loads(original[paths.index(path)])
        document["spec"]["timing"]["latencyNs"]["median"] += by
        return json.dumps(document).encode()

    patched: list[bool] = []
    patch = sitegen.content.load._patched_load

    def noted(*args: Any) -> object:
        found = patch(*args)
        patched.append(found is not None)
        return found

    monkeypatch.setattr(sitegen.content.load, "_patched_load", noted)

    def told(path: Path, data: bytes, looking: Callable[..., object] | None = None) -> list[Any]:
        path.write_bytes(data)
        result = load_content(
            content, cache=cache, held=held, walked=walked, changed={str(path)}, looking=looking
        )
        whole = load_content(content)
        assert [(r.path, r.where, r.digest) for r in result.resources] == [
            (r.path, r.where, r.digest) for r in whole.resources
        ]
        assert result.problems == whole.problems
        problems = list(result.problems)
        result.resources.clear()  # the caller's own: the next load is not changed by it
        result.problems.clear()
        return problems

    original = [path.read_bytes() for path in paths]
    assert walked.loaded is not None  # the whole walk's load, held as the join of its files
    told(paths[0], slower(paths[0], 1))
    assert patched == [True]  # so the first load told what changed is patched too
    told(paths[0], slower(paths[0], 2))
    told(paths[1], slower(paths[1], 1))
    assert patched == [True, True, True]
    assert told(paths[0], b"{")  # a problem found: joined anew
    assert patched == [True, True, True, False]
    told(paths[0], original[0])  # a problem gone: joined anew
    told(paths[1], original[1])
    assert patched == [True, True, True, False, False, True]

    def stopped(looked_at: object) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        told(paths[0], slower(paths[0], 3), looking=stopped)
    told(paths[1], slower(paths[1], 2))  # the stopped load's file read
    assert patched == [True, True, True, False, False, True]  # nothing held of a stopped load
    told(paths[1], original[1])
    assert patched[-1] is True
