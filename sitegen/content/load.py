"""Load a content tree: every file walked, parsed strictly and validated into resources.

A big tree is read by forked worker processes in chunks taken in walk order and merged back in
that order, so the result is the same as one process's. A worker sends each resource back as its
normalised document's bytes (`Packed`) with the run's summary, never as a pickled model. An
incremental build passes a `LoadCache`: files whose size, times and inode are unchanged are not
read again.
"""

from __future__ import annotations

import functools
import itertools
import operator
import os
import stat
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import orjson

from sitegen import process
from sitegen.content.bulk import is_bulk
from sitegen.content.documents import load_bytes, load_path
from sitegen.content.loaded import COMPACT_KINDS, DocumentStore, LoadedResource
from sitegen.content.run_summary import KIND as SUMMARISED_KIND
from sitegen.content.run_summary import RunSummary, summarise
from sitegen.content.walk import (
    CONTENT_FILES,
    StatKey,
    key_of,
    refuse_special,
    stat_key,
    walk,
    walk_differs,
)
from sitegen.model.problems import Problem

if TYPE_CHECKING:
    from multiprocessing.pool import Pool


class LoadResult(NamedTuple):
    resources: list[LoadedResource]
    problems: list[Problem]
    file_count: int


# Below this many files forking costs more than it saves.
PARALLEL_MIN_FILES = 1000
CHUNK_FILES = 500
MIN_CHUNK_FILES = 50

# A resource as a load worker sends it: path, where, digest, kind, name, title, document bytes,
# metadata digest (computed there, in parallel, for the manifest).
PackedResource = tuple[str, str, str, str, str, str | None, bytes, str]
Packed = list[PackedResource]
# Beside a `Packed` list, item for item: a run's summary, None for other kinds. Never cached:
# the analysis takes it once, and an incremental build's state stays small.
Summaries = list[RunSummary | None]
# An incremental build's memory of each file: shown path → (stat key, resources, problems).
LoadCache = dict[str, tuple[StatKey, Packed, list[Problem]]]


@dataclass
class HeldFile:
    """Beside a LoadCache held in memory (`sitegen serve`), what one file's load made: its runs'
    summaries, so that an unchanged run is not summarised again, and its resources once
    unpacked, so that they are not made again each build. Never written with the state."""

    summaries: Summaries
    resources: list[LoadedResource] | None = None


HeldLoads = dict[str, HeldFile]  # by shown path, as a LoadCache


@dataclass
class HeldWalk:
    """The last walk of the content tree (`sitegen serve`), taken as it was when a file
    watcher saw only files of it change: its files (shown path → path) and its problems."""

    files: dict[str, str] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    # How many times the tree was walked; and the files the last load looked at instead (with
    # their stat, taken into the cache), None where it walked: what content/walker.py's
    # process is told, that it may know what the cache holds without being sent all of it.
    walks: int = 0
    looked_at: dict[str, StatKey] | None = None
    # The last load of these files, patched by the next where it read a few of them again.
    loaded: LoadedWalk | None = None


class LoadedWalk(NamedTuple):
    """What a load of a walk's files made, as the next load of the same walk patches it (a
    file read again: its resources put in its place) rather than joins ~100k files' resources
    and problems anew (~0.1 s). Good only with the very cache and held loads it was made of."""

    cache: LoadCache
    held: HeldLoads
    resources: list[LoadedResource]
    problems: list[Problem]
    place: dict[str, int]  # each file's number, in the walk's order
    starts: list[int]  # where each file's resources start in `resources`, and the end
    with_problems: frozenset[str]  # the files whose load found a problem


def load_content(
    content_dir: Path,
    workers: int | None = None,
    cache: LoadCache | None = None,
    meanwhile: Callable[[], object] | None = None,
    held: HeldLoads | None = None,
    walked: HeldWalk | None = None,
    changed: Collection[str] | None = None,
    looking: Callable[[dict[str, StatKey]], object] | None = None,
) -> LoadResult:
    """Every resource under `content_dir`, and every problem found on the way.

    `workers` processes read (default: `process.load_processes`); with `cache`, only the files
    changed since it was filled are read, and it is updated in place to hold exactly the files
    of this walk, as `held` is, if given, with the runs' summaries and resources. `meanwhile`,
    if given, is called once: while the workers read, when there are any (the caller's own work,
    done beside them rather than after), else after the load. `walked` holds the last walk;
    `changed` (with `cache`, `held` and `walked`), the paths a file watcher saw change since:
    where each is a file of that walk (or a path no walk reads), the last walk is taken again
    and only those files are looked at, else the tree is walked. `unseen_change` tells
    whether the watcher missed one; `looking`, if given, is called with the files looked at
    and their stat (as the cache holds them) once those are read, before every other file's
    resources are taken from `held`.
    """
    problems: list[Problem] = []
    label = content_label(content_dir)
    if changed is not None and walked is not None and walked.files and cache and held:
        looked_at = _looked_at(content_dir, label, walked, changed)
        if looked_at is not None:
            walked.looked_at = looked_at
            return _load_looked_at(walked, looked_at, cache, held, meanwhile, looking)
    files = [(path, f"{label}/{relative}") for path, relative in walk(content_dir, problems, label)]
    if walked is not None:
        walked.files = {shown: path for path, shown in files}
        walked.problems = list(problems)
        walked.walks += 1
        walked.looked_at = walked.loaded = None
    if cache is not None:
        loaded = _load_cached(files, problems, cache, workers, meanwhile, held)
        if walked is not None and held:
            _held_whole(loaded, walked, cache, held)
        return loaded
    resources: list[LoadedResource] = []
    count = workers if workers is not None else process.load_processes(len(files))
    if count > 1 and len(files) >= PARALLEL_MIN_FILES:
        store = DocumentStore()
        with _pool(count) as pool:
            results = pool.imap(_load_chunk, _guided_chunks(files, count))
            if meanwhile is not None:
                meanwhile()
            for packed, found, summarised in results:
                resources += unpack(packed, store, summarised)
                problems += found
    else:
        for path, shown in files:
            load_path(path, shown, resources, problems)
        if meanwhile is not None:
            meanwhile()
    return LoadResult(resources, problems, len(files))


def _looked_at(
    content_dir: Path, label: str, walked: HeldWalk, changed: Collection[str]
) -> dict[str, StatKey] | None:
    """The stat of each walked file among `changed`; None where a change may be anything else
    (a file added, gone or moved, a folder): then the tree is walked again."""
    roots = {os.path.abspath(content_dir), os.path.realpath(content_dir)}
    found: dict[str, StatKey] = {}
    for path in changed:
        relative = next(
            (
                os.path.relpath(path, root)
                for root in roots
                if os.path.commonpath([root, os.path.abspath(path)]) == root
            ),
            None,
        )
        if relative is None or relative == ".":
            return None
        parts = relative.split(os.sep)
        if any(part.startswith((".", "_")) for part in parts):
            continue  # never walked: tooling's dot-files, site data under `_` folders
        shown = f"{label}/{'/'.join(parts)}"
        file = walked.files.get(shown)
        if file is None:
            return None
        try:
            now = os.lstat(file)
        except OSError:
            return None
        if not stat.S_ISREG(now.st_mode):
            return None
        found[shown] = key_of(now)
    return found


def unseen_change(content_dir: Path, walked: HeldWalk, cache: LoadCache) -> bool:
    """Whether the tree differs from the last walk and the cache: a change a watcher missed.
    ~0.9 s at 100k files, after the saved run's page is published, in this process where there
    is one CPU (else content/walker.py's process walks beside the planning): a newer save
    may stop it."""
    label = content_label(content_dir)
    return walk_differs(content_dir, label, walked.files, walked.problems, cached_key(cache))


def cached_key(cache: LoadCache) -> Callable[[str], StatKey]:
    """Each file's stat as the cache holds it, by shown path."""
    return lambda shown: cache[shown][0]


def content_label(content_dir: Path) -> str:
    """How problems name the content tree: its folder's own name (`content/runs/x.json`), a
    byte of it that is not UTF-8 shown as U+FFFD (the manifest and the export name it in
    UTF-8)."""
    name = content_dir.resolve().name or "content"
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _pool(processes: int) -> Pool:
    """Forked load workers, which leaving its `with` block terminates (SIGTERM)."""
    with process.forking_workers():
        return process.fork_context().Pool(processes, initializer=process.worker_signals)


def _guided_chunks(files: list[tuple[str, str]], workers: int) -> list[list[tuple[str, str]]]:
    """The files in runs sized by `process.next_share`: the last runs are short, so the
    workers finish nearly together."""
    chunks = []
    start = 0
    while start < len(files):
        size = process.next_share(len(files) - start, workers, MIN_CHUNK_FILES, CHUNK_FILES)
        chunks.append(files[start : start + size])
        start += size
    return chunks


def unpack(
    packed: Packed, store: DocumentStore | None = None, summaries: Summaries | None = None
) -> list[LoadedResource]:
    """The resources a load worker or a cache entry packed, with the runs' summaries if given."""
    return [
        LoadedResource.compact(
            path, where, value, raw, kind, name, title, metadata_digest, store, summary
        )
        if kind in COMPACT_KINDS
        else LoadedResource(path, where, None, value, orjson.loads(raw))
        for (path, where, value, kind, name, title, raw, metadata_digest), summary in zip(
            packed, summaries or itertools.repeat(None, len(packed)), strict=True
        )
    ]


def _load_cached(
    files: list[tuple[str, str]],
    problems: list[Problem],
    cache: LoadCache,
    workers: int | None,
    meanwhile: Callable[[], object] | None,
    held: HeldLoads | None,
    keys: dict[str, StatKey] | None = None,
) -> LoadResult:
    """`keys`: every file's stat where already known (else each file is looked at)."""
    if keys is None:
        keys = {shown: stat_key(path) for path, shown in files}
    stale = [(path, shown) for path, shown in files if cache.get(shown, ((),))[0] != keys[shown]]
    count = workers if workers is not None else process.load_processes(len(stale))
    # The files read now come with their runs summarised; with `held`, the others too.
    made: HeldLoads = {} if held is None else held
    if count > 1 and len(stale) >= PARALLEL_MIN_FILES:
        with _pool(count) as pool:
            results = pool.imap(_load_chunk, [[item] for item in stale], chunksize=CHUNK_FILES)
            if meanwhile is not None:
                meanwhile()
            for (_, shown), (packed, found, summaries) in zip(stale, results, strict=True):
                cache[shown] = (keys[shown], packed, found)
                made[shown] = HeldFile(summaries)
    else:
        for path, shown in stale:
            packed, found, summaries = _load_chunk([(path, shown)])
            cache[shown] = (keys[shown], packed, found)
            made[shown] = HeldFile(summaries)
        if meanwhile is not None:
            meanwhile()
    for shown in set(cache) - set(keys):
        del cache[shown]
    for shown in set(made) - set(keys):
        del made[shown]
    # Not held (`build --incremental`, or the build daemon's first build from its state on
    # disk) and not read now: summarised here, beside a worker.
    unsummarised = [shown for _, shown in files if shown not in made]
    summarised = dict(
        zip(unsummarised, _summaries([cache[shown][1] for shown in unsummarised]), strict=True)
    )
    resources: list[LoadedResource] = []
    for _, shown in files:
        _, packed, found = cache[shown]
        file = made.get(shown)
        if file is None:
            unpacked = unpack(packed, summaries=summarised[shown])
            if held is not None:  # held from now on: the next build takes these very objects
                made[shown] = HeldFile(summarised[shown], unpacked)
            resources += unpacked
        else:
            if file.resources is None:  # kept where `held` is, their summaries too (analysis)
                file.resources = unpack(packed, summaries=file.summaries)
            resources += file.resources
        problems += found
    return LoadResult(resources, problems, len(files))


def _summaries(packs: list[Packed]) -> list[Summaries]:
    """The runs of each of `packs` summarised, as a load worker does: by a forked worker and
    this process, half each, for many (the state of `build --incremental` keeps no summary,
    and 100k runs took a second on one CPU)."""
    if len(packs) < PARALLEL_MIN_FILES or process.usable_cpus() < 2:
        return _summarise_packed(packs)
    half = len(packs) // 2
    first, second = process.forked_calls(
        [functools.partial(_summarise_packed, part) for part in (packs[:half], packs[half:])]
    )
    return first + second


def _summarise_packed(packs: list[Packed]) -> list[Summaries]:
    return [
        [
            summarise(orjson.loads(raw)) if kind == SUMMARISED_KIND else None
            for _, _, _, kind, _, _, raw, _ in packed
        ]
        for packed in packs
    ]


def _load_looked_at(
    walked: HeldWalk,
    looked_at: dict[str, StatKey],
    cache: LoadCache,
    held: HeldLoads,
    meanwhile: Callable[[], object] | None,
    looking: Callable[[dict[str, StatKey]], object] | None = None,
) -> LoadResult:
    """`_load_cached` where only the `looked_at` files of the last walk may have changed
    (`sitegen serve`): those read again where their stat did change, every other file's held
    resources taken as they are, with no pass over the files in Python. `looking`: called
    once those files are read (the cache holds what it is told), before the rest."""
    last, walked.loaded = walked.loaded, None  # held again once this load is whole
    read = [shown for shown, key in looked_at.items() if cache[shown][0] != key]
    for shown in read:
        packed, found, summaries = _load_chunk([(walked.files[shown], shown)])
        cache[shown] = (looked_at[shown], packed, found)
        held[shown] = HeldFile(summaries, unpack(packed, summaries=summaries))
    if looking is not None:
        looking(looked_at)
    if meanwhile is not None:
        meanwhile()
    if last is not None and last.cache is cache and last.held is held:
        patched = _patched_load(last, read, walked)
        if patched is not None:
            return patched
    joined = _joined(walked, cache, held)
    if joined is None:  # a file not held (an earlier load stopped short): the whole way
        listed = [(path, shown) for shown, path in walked.files.items()]
        keys = {shown: cache[shown][0] for shown in walked.files}
        return _load_cached(listed, list(walked.problems), cache, None, None, held, keys)
    walked.loaded = joined
    return LoadResult(joined.resources.copy(), joined.problems.copy(), len(joined.place))


def _joined(walked: HeldWalk, cache: LoadCache, held: HeldLoads) -> LoadedWalk | None:
    """The load of the last walk joined from each of its files' held resources and cached
    problems, in the walk's order; None where a file is not held."""
    files = walked.files.keys()
    try:
        held_files = list(map(held.__getitem__, files))
    except KeyError:
        return None
    # Each file's resources and problems read in C, ~100k files (~0.03 s less than a call each).
    held_resources = list(map(_RESOURCES, held_files))
    if None in held_resources or len(held_files) != len(files):
        return None
    resources = list(itertools.chain.from_iterable(held_resources))
    file_problems: list[list[Problem]] = list(map(_PROBLEMS, map(cache.__getitem__, files)))
    problems = list(walked.problems)
    problems += itertools.chain.from_iterable(file_problems)
    return LoadedWalk(
        cache,
        held,
        resources,
        problems,
        dict(zip(files, itertools.count())),
        list(itertools.accumulate(map(len, held_resources), initial=0)),
        frozenset(itertools.compress(files, file_problems)),
    )


def _held_whole(result: LoadResult, walked: HeldWalk, cache: LoadCache, held: HeldLoads) -> None:
    """Hold a whole walk's load as the next load of a few files patches it (`_patched_load`),
    where the join of its files' held resources is that very load: without it, the first
    edit after a daemon's first build joined them (~0.2 s at 100k runs)."""
    joined = _joined(walked, cache, held)
    if (
        joined is not None
        and len(joined.resources) == len(result.resources)
        and all(map(operator.is_, joined.resources, result.resources))
        and joined.problems == result.problems
    ):
        walked.loaded = joined


def _patched_load(last: LoadedWalk, read: list[str], walked: HeldWalk) -> LoadResult | None:
    """The last load with the files `read` again put in their places; None where one holds
    more or fewer resources than before, or a problem was or is found in one (then the load
    is joined anew)."""
    resources = last.resources.copy()
    for shown in read:
        number = last.place[shown]
        start, stop = last.starts[number], last.starts[number + 1]
        now = last.held[shown].resources
        if now is None or len(now) != stop - start:
            return None
        if shown in last.with_problems or last.cache[shown][2]:
            return None
        resources[start:stop] = now
    walked.loaded = last._replace(resources=resources)
    return LoadResult(resources.copy(), last.problems.copy(), len(last.place))


_RESOURCES = operator.attrgetter("resources")  # a held file's, None where not held
_PROBLEMS = operator.itemgetter(2)  # a cached file's (its key, packed documents, problems)


def _load_chunk(files: list[tuple[str, str]]) -> tuple[Packed, list[Problem], Summaries]:
    """A worker's share: each resource packed, the problems, and each run's summary, made here
    beside the other workers rather than in the main process."""
    resources: list[LoadedResource] = []
    problems: list[Problem] = []
    for path, shown in files:
        load_path(path, shown, resources, problems)
    packed = [
        (r.path, r.where, r.digest, r.kind, r.name, r.title, r.raw, r.metadata_digest)
        for r in resources
    ]
    summaries = [summarise(r.document) if r.kind == SUMMARISED_KIND else None for r in resources]
    return packed, problems, summaries


def load_documents(files: Iterable[tuple[str, bytes]], label: str) -> LoadResult:
    """The resources of files held in memory (an import, before it is written), each read as
    the walk and the load read a file of a tree named `label`: a path with a part starting
    with `.` or `_` is not content, `.md` is a note, and `.json` and bulk files hold resources."""
    resources: list[LoadedResource] = []
    problems: list[Problem] = []
    count = 0
    for relative, data in sorted(files):
        shown = f"{label}/{relative}"
        if any(part.startswith((".", "_")) for part in relative.split("/")):
            continue
        if relative.endswith(".md"):
            continue
        count += 1
        if relative.endswith(".json") or is_bulk(relative):
            load_bytes(data, shown, resources, problems)
        else:
            problems.append(Problem(shown, "-", "unexpected file type", CONTENT_FILES))
    return LoadResult(resources, problems, count)


def load_files(paths: list[Path]) -> LoadResult:
    """Resources in the named files (for `sitegen digest`), shown by the path as given."""
    resources: list[LoadedResource] = []
    problems: list[Problem] = []
    for path in paths:
        shown = str(path)
        try:
            mode = os.lstat(path).st_mode
        except OSError as error:
            problems.append(Problem(shown, "-", f"cannot read file: {error.strerror}"))
            continue
        refusal = refuse_special(shown, stat.S_ISLNK(mode), stat.S_ISREG(mode))
        if refusal:
            problems.append(refusal)
        else:
            load_path(path, shown, resources, problems)
    return LoadResult(resources, problems, len(paths))
