"""Walk the content tree, parse strictly, and validate every document into resources.

Content comes from strangers' pull requests, so nothing here trusts it: symlinks, special files,
huge files, bad bytes, duplicate keys, non-finite or inexact numbers and absurd nesting are all
reported as problems, each tied to a file and a JSON path, and loading goes on to the next file so
that one run reports everything.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import multiprocessing
import os
import signal
import stat
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from types import UnionType
from typing import TYPE_CHECKING, Annotated, Any, NamedTuple, Union, get_args, get_origin

import orjson
from pydantic import BaseModel, ValidationError

from sitegen import cpus
from sitegen.digest import API_VERSION, canonical_json, digest
from sitegen.problems import Problem, json_path
from sitegen.resources import KINDS, Resource
from sitegen.run_summary import KIND as SUMMARISED_KIND
from sitegen.run_summary import RunSummary, summarise

if TYPE_CHECKING:
    from multiprocessing.pool import Pool

MAX_FILE_BYTES = 4 * 1024 * 1024  # one resource or bundle; the largest real one is ~5 KB
MAX_EXPORT_BYTES = 512 * 1024 * 1024  # a JSON Lines export holds many bundles
MAX_DEPTH = 32  # the deepest real resource nests 7 levels
MAX_SAFE_INTEGER = 2**53 - 1  # beyond this, RFC 8785 (IEEE doubles) cannot represent integers
BUNDLE_KEYS = frozenset({"run", "protocol", "environment"})
BUNDLE_ROLES = {
    "run": "BenchmarkRun",
    "protocol": "BenchmarkProtocol",
    "environment": "ExecutionEnvironment",
}


class DocumentStore:
    """Many documents' bytes end to end in one buffer, each found by its span (start, length).

    After a parallel load the runs' documents live here rather than as a bytes object each:
    reading a bytes object writes its reference count, and once the render workers are forked
    every page of memory written is copied into the writer. One buffer is written only while
    loading, so its pages stay shared (~1.2 KB a run: 1.2 GB of copies at a million runs).
    """

    __slots__ = ("_data",)

    def __init__(self) -> None:
        self._data = bytearray()

    def add(self, raw: bytes) -> int:
        """Store `raw`; returns its span."""
        start = len(self._data)
        self._data += raw
        return start << 32 | len(raw)

    def view(self, span: int) -> memoryview:
        """The bytes at `span`, without copying them (do not hold it across an `add`)."""
        start = span >> 32
        return memoryview(self._data)[start : start + (span & 0xFFFFFFFF)]


class LoadedResource:
    """A validated resource, its normalised document, and the place it came from.

    `document` is the resource as validation normalised it (`document_json()`): readers take
    the spec, metadata and title from it. The pydantic model is kept when this process
    validated the resource; after a parallel load it is rebuilt from the document on first use
    (the document is valid by construction), so the main process holds dicts, not models.
    Runs from a parallel load are held compact, as the document's orjson bytes (`raw`), and
    parsed anew each time `document` is read: a run's dicts are ~4.5 KB of memory against
    ~1.2 KB of bytes, and there may be millions. Those bytes are in a shared `DocumentStore`
    when one is given. Readers must not mutate `document`. A run from a parallel load also
    holds the summary its worker made (run_summary.py) until the analysis takes it.
    """

    __slots__ = (
        "_document",
        "_metadata_digest",
        "_raw",
        "_resource",
        "_span",
        "_store",
        "_summary",
        "_token",
        "digest",
        "kind",
        "name",
        "path",
        "title",
        "where",
    )

    def __init__(
        self,
        path: str,  # display path: `content/runs/x.json`, or `content/x.jsonl:12` for a line
        where: str,  # JSON path of the resource inside its document: "" or a bundle key
        resource: Resource | None,
        digest: str,
        document: dict[str, Any] | None = None,
    ) -> None:
        if document is None:
            assert resource is not None
            document = resource.document_json()
        self.path = path
        self.where = where
        self._resource = resource
        self.digest = digest
        self._document: dict[str, Any] | None = document
        self._raw: bytes | None = None
        self._store: DocumentStore | None = None
        self._span = 0
        self.kind: str = document["kind"]
        self.name: str = document["metadata"]["name"]
        self.title: str | None = document["metadata"].get("title")
        self._token: str | None = None
        self._metadata_digest: str | None = None
        self._summary: RunSummary | None = None

    @classmethod
    def compact(
        cls,
        path: str,
        where: str,
        digest: str,
        raw: bytes,
        kind: str,
        name: str,
        title: str | None,
        metadata_digest: str | None = None,
        store: DocumentStore | None = None,
        summary: RunSummary | None = None,
    ) -> LoadedResource:
        """A resource held as its normalised document's orjson bytes (see the class), in
        `store` if given; a run's `summary`, if its load worker made one."""
        entry = cls.__new__(cls)
        entry.path = path
        entry.where = where
        entry._resource = None
        entry.digest = digest
        entry._document = None
        entry._store = store
        if store is None:
            entry._raw = raw
            entry._span = 0
        else:
            entry._raw = None
            entry._span = store.add(raw)
        entry.kind = kind
        entry.name = name
        entry.title = title
        entry._token = None
        entry._metadata_digest = metadata_digest
        entry._summary = summary
        return entry

    @property
    def document(self) -> dict[str, Any]:
        if self._document is not None:
            return self._document
        if self._store is not None:
            return orjson.loads(self._store.view(self._span))  # type: ignore[no-any-return]
        assert self._raw is not None
        return orjson.loads(self._raw)  # type: ignore[no-any-return]

    @property
    def raw(self) -> bytes:
        """The normalised document as orjson bytes."""
        if self._raw is not None:
            return self._raw
        if self._store is not None:
            return bytes(self._store.view(self._span))
        return orjson.dumps(self._document)

    @property
    def is_compact(self) -> bool:
        """Held as bytes (parsed on each read of `document`), not as dicts."""
        return self._document is None

    @property
    def token(self) -> str:
        """A hash of the normalised document, metadata included: equal tokens, equal pages."""
        if self._token is None:
            self._token = hashlib.sha256(self.raw).hexdigest()
        return self._token

    @property
    def metadata_digest(self) -> str:
        """sha256 of the metadata's canonical JSON: the manifest's "metadata changed" test."""
        if self._metadata_digest is None:
            metadata = canonical_json(self.metadata)
            self._metadata_digest = "sha256:" + hashlib.sha256(metadata).hexdigest()
        return self._metadata_digest

    @property
    def summary(self) -> RunSummary:
        """A run's summary (run_summary.py): as its load worker made it, else read now, and
        held until `take_summary`."""
        if self._summary is None:
            if self.kind != SUMMARISED_KIND:
                raise TypeError(f"only runs are summarised, not {self.kind}")
            self._summary = summarise(self.document)
        return self._summary

    def take_summary(self) -> RunSummary:
        """The summary, no longer held: the analysis keeps what it needs of it."""
        summary = self.summary
        self._summary = None
        return summary

    @property
    def held_summary(self) -> RunSummary | None:
        """The summary if one is held (nothing is read)."""
        return self._summary

    @property
    def resource(self) -> Resource:
        if self._resource is None:
            self._resource = KINDS[self.kind].model_validate(self.document)
        return self._resource

    @property
    def spec(self) -> dict[str, Any]:
        """The normalised spec, exactly as hashed."""
        return self.document["spec"]  # type: ignore[no-any-return]

    @property
    def metadata(self) -> dict[str, Any]:
        """The normalised metadata (`metadata.model_dump(mode="json", exclude_unset=True)`)."""
        return self.document["metadata"]  # type: ignore[no-any-return]

    def at(self, location: str) -> str:
        """The JSON path of `location` (inside the resource) within its document."""
        return f"{self.where}.{location}" if self.where else location

    def __repr__(self) -> str:
        return f"LoadedResource({self.path!r}, {self.where!r}, {self.kind}, {self.digest})"

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled as its document: the model is rebuilt where it is needed, if it is.
        if self.is_compact:
            compact = (self.path, self.where, self.digest, self.raw, self.kind, self.name)
            return (LoadedResource.compact, (*compact, self.title, self._metadata_digest))
        return (LoadedResource, (self.path, self.where, None, self.digest, self.document))


class LoadResult(NamedTuple):
    resources: list[LoadedResource]
    problems: list[Problem]
    file_count: int


# Below this many files forking costs more than it saves.
PARALLEL_MIN_FILES = 1000
CHUNK_FILES = 500
MIN_CHUNK_FILES = 50


def load_content(
    content_dir: Path,
    workers: int | None = None,
    cache: LoadCache | None = None,
    meanwhile: Callable[[], object] | None = None,
) -> LoadResult:
    """Every resource under `content_dir`, and every problem found on the way.

    A big tree is read by `workers` forked processes (default: one per CPU, two from
    MANY_FILES files), in chunks of files taken in walk order and merged back in that order,
    so the result is the same as one process's. Each resource comes back as its normalised
    document (orjson bytes), never as a pickled model. `meanwhile`, if given, is called once:
    while the workers read, when there are any (the caller's own work, done beside them rather
    than after), else after the load.
    """
    problems: list[Problem] = []
    label = content_dir.resolve().name or "content"
    files = [
        (path, f"{label}/{relative}") for path, relative in _walk(content_dir, problems, label)
    ]
    if cache is not None:
        return _load_cached(files, problems, cache, workers, meanwhile)
    resources: list[LoadedResource] = []
    count = workers if workers is not None else _load_processes(len(files))
    if count > 1 and len(files) >= PARALLEL_MIN_FILES:
        chunks = _guided_chunks(files, count)
        store = DocumentStore()
        with _pool(count) as pool:
            results = pool.imap(_load_chunk, chunks)
            if meanwhile is not None:
                meanwhile()
            for packed, found, summaries in results:
                resources += unpack(packed, store, summaries)
                problems += found
    else:
        for path, shown in files:
            _load_one(path, shown, resources, problems)
        if meanwhile is not None:
            meanwhile()
    return LoadResult(resources, problems, len(files))


# A load worker waits on every read of a file that is not in the page cache (a big tree, a slow
# disk): with two per CPU one reads while the other computes. A 100k-run tree read cold here:
# 28–35 s with one per CPU, 18–19 s with two, no faster with three or four; warm, all the same.
# A small tree waits little: the real catalog (4,354 files) was built faster with one per CPU,
# warm and cold (the extra processes' forks and switches cost more than its reads wait), where
# the 10k-run tree (10,463 files) read cold ~0.2 s faster with two.
LOAD_PROCESSES_PER_CPU = 2
MANY_FILES = 8_000


def _load_processes(file_count: int) -> int:
    per_cpu = LOAD_PROCESSES_PER_CPU if file_count >= MANY_FILES else 1
    return per_cpu * cpus.usable_cpus()


def _pool(processes: int) -> Pool:
    """Forked load workers, which leaving its `with` block terminates (SIGTERM)."""
    return multiprocessing.get_context("fork").Pool(processes, initializer=_worker_signals)


def _worker_signals() -> None:
    """A load worker dies of SIGTERM even where its parent handles SIGTERM (`sitegen serve`
    stops on it as on Ctrl-C). An inherited Python handler runs only between bytecodes: a
    worker that got the signal just before blocking on the task queue's lock never ran it, and
    the pool's terminate waited for it forever (a `serve` benchmark hung so). Ctrl-C is the
    parent's: it terminates the pool."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _guided_chunks(files: list[tuple[str, str]], workers: int) -> list[list[tuple[str, str]]]:
    """The files in runs sized by `cpus.next_share`: the last runs are short, so the workers
    finish nearly together (with equal runs of 500, one worker waited for the other's last
    ~0.1 s on the real catalog)."""
    chunks = []
    start = 0
    while start < len(files):
        size = cpus.next_share(len(files) - start, workers, MIN_CHUNK_FILES, CHUNK_FILES)
        chunks.append(files[start : start + size])
        start += size
    return chunks


# A resource as a load worker sends it: path, where, digest, kind, name, title, document bytes,
# metadata digest (computed there, in parallel, for the manifest).
Packed = list[tuple[str, str, str, str, str, str | None, bytes, str]]
# Held compact (LoadedResource.compact) after a parallel load: the kind there are millions of.
COMPACT_KINDS = frozenset({"BenchmarkRun"})
# Beside a `Packed` list, item for item: a run's summary, None for other kinds. Never cached
# (LoadCache): the analysis takes it once, and an incremental build's state stays small.
Summaries = list[RunSummary | None]
# An incremental build's memory of each file: shown path → (stat key, packed resources, problems).
LoadCache = dict[str, tuple[tuple[int, ...], Packed, list[Problem]]]


def _stat_key(path: str | Path) -> tuple[int, ...]:
    found = os.lstat(path)
    return (found.st_size, found.st_mtime_ns, found.st_ctime_ns, found.st_ino, found.st_dev)


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
) -> LoadResult:
    """Files whose size, times and inode are unchanged are not read again; `cache` is updated
    in place to hold exactly the files of this walk. `meanwhile` as in `load_content`."""
    keys = {shown: _stat_key(path) for path, shown in files}
    stale = [(path, shown) for path, shown in files if cache.get(shown, ((),))[0] != keys[shown]]
    count = workers if workers is not None else _load_processes(len(stale))
    summaries: dict[str, Summaries] = {}  # the files read now: their runs come summarised
    if count > 1 and len(stale) >= PARALLEL_MIN_FILES:
        with _pool(count) as pool:
            results = pool.imap(_load_chunk, [[item] for item in stale], chunksize=CHUNK_FILES)
            if meanwhile is not None:
                meanwhile()
            for (_, shown), (packed, found, summaries[shown]) in zip(stale, results, strict=True):
                cache[shown] = (keys[shown], packed, found)
    else:
        for item in stale:
            packed, found, summaries[item[1]] = _load_chunk([item])
            cache[item[1]] = (keys[item[1]], packed, found)
        if meanwhile is not None:
            meanwhile()
    for shown in set(cache) - set(keys):
        del cache[shown]
    resources: list[LoadedResource] = []
    for _, shown in files:
        _, packed, found = cache[shown]
        resources += unpack(packed, summaries=summaries.get(shown))
        problems += found
    return LoadResult(resources, problems, len(files))


class ChangedFile(NamedTuple):
    shown: str
    before: Packed  # what the cache held for it ([] for a new file)
    after: Packed  # what it holds now ([] once deleted)
    stat_key: tuple[int, ...] | None  # None: deleted


def load_changed(
    content_dir: Path, changed: Iterable[Path], cache: LoadCache
) -> list[ChangedFile] | None:
    """Read again the content files named as changed (`sitegen serve` hears of them), without
    walking the tree; `cache` is left as it was (`commit_changed` updates it).

    None unless each is a `.json` resource file the walk would read, read without a problem,
    or such a file deleted: a folder, a symlink, an export, a note, site data (`_` folders) or
    a problem takes the whole walk, which reports. Dot-files, and files that came and went
    (an editor's), are not content: skipped.
    """
    root = content_dir.resolve()
    label = root.name or "content"
    found: dict[str, ChangedFile] = {}
    for named in changed:
        path = Path(named).parent.resolve() / Path(named).name  # never the file's own symlink
        try:
            relative = path.relative_to(root)
        except ValueError:
            return None
        if any(part.startswith(".") for part in relative.parts):
            continue
        shown = f"{label}/{relative.as_posix()}"
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            if shown in cache:
                found[shown] = ChangedFile(shown, cache[shown][1], [], None)
            elif any(key.startswith(shown + "/") for key in cache):
                return None  # a folder went away
            continue  # an editor's temporary file, come and gone: never content
        if any(part.startswith("_") for part in relative.parts) or relative.suffix != ".json":
            return None
        if not stat.S_ISREG(mode):
            return None
        before = cache[shown][1] if shown in cache else []
        key = _stat_key(path)
        after, problems, _ = _load_chunk([(str(path), shown)])
        if problems:
            return None
        found[shown] = ChangedFile(shown, before, after, key)
    return [found[shown] for shown in sorted(found)]


def commit_changed(changed: list[ChangedFile], cache: LoadCache) -> None:
    """Record what `load_changed` read, once the build that used it has succeeded."""
    for item in changed:
        if item.stat_key is None:
            cache.pop(item.shown, None)
        else:
            cache[item.shown] = (item.stat_key, item.after, [])


def _load_one(
    path: str, shown: str, resources: list[LoadedResource], problems: list[Problem]
) -> None:
    if path.endswith(".jsonl"):
        _load_export(path, shown, resources, problems)
    else:
        _load_file(path, shown, resources, problems)


def _load_chunk(files: list[tuple[str, str]]) -> tuple[Packed, list[Problem], Summaries]:
    """A worker's share: each resource packed (see `Packed`), the problems, and each run's
    summary (run_summary.py), made here beside the other workers rather than in the main
    process."""
    resources: list[LoadedResource] = []
    problems: list[Problem] = []
    for path, shown in files:
        _load_one(path, shown, resources, problems)
    packed = [
        (r.path, r.where, r.digest, r.kind, r.name, r.title, r.raw, r.metadata_digest)
        for r in resources
    ]
    summaries = [summarise(r.document) if r.kind == SUMMARISED_KIND else None for r in resources]
    return packed, problems, summaries


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
        refusal = _refuse_special(shown, stat.S_ISLNK(mode), stat.S_ISREG(mode))
        if refusal:
            problems.append(refusal)
        elif path.suffix == ".jsonl":
            _load_export(path, shown, resources, problems)
        else:
            _load_file(path, shown, resources, problems)
    return LoadResult(resources, problems, len(paths))


# --- the file system ----------------------------------------------------------------------------


def _walk(root: Path, problems: list[Problem], label: str) -> Iterator[tuple[str, str]]:
    """Regular `.json`/`.jsonl` files in sorted order; never follows a symlink. Each as its path
    and its path below `root`, both plain strings: a `Path` per file cost more than the rest of
    the walk, and again each time a chunk of them was pickled for a load worker."""
    try:
        mode = os.lstat(root).st_mode
    except OSError as error:
        problems.append(Problem(label, "-", f"cannot read content directory: {error.strerror}"))
        return
    if not stat.S_ISDIR(mode):
        problems.append(Problem(label, "-", "content path is not a directory"))
        return
    stack = [(str(root), "")]
    while stack:
        directory, prefix = stack.pop()
        try:
            with os.scandir(directory) as found:
                entries = sorted(found, key=_entry_name)
        except OSError as error:
            problems.append(
                Problem(
                    f"{label}/{prefix}".rstrip("/"), "-", f"cannot list directory: {error.strerror}"
                )
            )
            continue
        subdirectories = []
        for entry in entries:
            name = entry.name
            relative = f"{prefix}{name}"
            shown = f"{label}/{relative}"
            # Dot-files are tooling; `_` folders hold site data (import reports), not resources.
            if name.startswith((".", "_")):
                continue
            # The type the directory listing gives (no system call a file where the file system
            # records it); a symlink to a folder is not a folder here. The read checks again.
            if entry.is_dir(follow_symlinks=False):
                subdirectories.append((entry.path, f"{relative}/"))
            elif refusal := _refuse_special(
                shown, entry.is_symlink(), entry.is_file(follow_symlinks=False)
            ):
                problems.append(refusal)
            elif name.endswith((".json", ".jsonl")):
                yield entry.path, relative
            elif not name.endswith(".md"):
                problems.append(
                    Problem(
                        shown,
                        "-",
                        "unexpected file type",
                        "content holds .json resources, .jsonl exports and .md notes",
                    )
                )
        stack.extend(reversed(subdirectories))


def _entry_name(entry: os.DirEntry[str]) -> str:
    return entry.name


def _refuse_special(shown: str, symlink: bool, regular: bool) -> Problem | None:
    """Symlinks are never followed and only regular files are read (the type from a directory
    listing, `os.lstat`, or `os.fstat` of a descriptor opened with O_NOFOLLOW)."""
    if symlink:
        return Problem(shown, "-", "symbolic links are not allowed in content")
    if not regular:
        return Problem(shown, "-", "not a regular file")
    return None


# The file could be swapped between the walk and the read: O_NOFOLLOW refuses a symlink, and
# O_NONBLOCK keeps a FIFO from blocking the open (fstat then refuses it).
_READ_FLAGS = (
    os.O_RDONLY | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
)


def _read_bytes(path: str | Path, shown: str, limit: int, problems: list[Problem]) -> bytes | None:
    try:
        descriptor = os.open(path, _READ_FLAGS)
    except OSError as error:
        problems.append(Problem(shown, "-", f"cannot read file: {error.strerror}"))
        return None
    try:
        found = os.fstat(descriptor)
        if refusal := _refuse_special(
            shown, stat.S_ISLNK(found.st_mode), stat.S_ISREG(found.st_mode)
        ):
            problems.append(refusal)
            return None
        size = found.st_size
        if size > limit:
            problems.append(
                Problem(shown, "-", f"file is {size:,} bytes, over the limit of {limit:,}")
            )
            return None
        data = os.read(descriptor, size + 1)  # one call: a regular file reads whole
        if len(data) > size:  # it grew since fstat: read on, up to the limit
            with os.fdopen(os.dup(descriptor), "rb") as handle:
                data += handle.read(limit + 1 - len(data))
    finally:
        os.close(descriptor)
    if len(data) > limit:
        problems.append(Problem(shown, "-", f"file grew over the limit of {limit:,} bytes"))
        return None
    return data


def _decode(data: bytes, shown: str, problems: list[Problem]) -> str | None:
    if data.startswith(b"\xef\xbb\xbf"):
        problems.append(
            Problem(shown, "-", "file starts with a byte order mark", "save as UTF-8 without BOM")
        )
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        problems.append(
            Problem(
                shown,
                f"line {line}",
                f"not valid UTF-8 (byte 0x{data[error.start]:02x} at offset {error.start})",
            )
        )
        return None


# --- strict JSON --------------------------------------------------------------------------------


class _Rejected:
    """A number the format cannot hold; reported with its JSON path after parsing."""

    def __init__(self, text: str, reason: str) -> None:
        self.text = text
        self.reason = reason


class _DuplicateKeys(dict[str, Any]):
    duplicates: list[str]


class _ParseFlags:
    """Set by the parser hooks so a clean document skips the full inspection walk."""

    suspicious = False


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        marked = _DuplicateKeys(result)
        marked.duplicates = sorted({k for k, _ in pairs if k in seen or seen.add(k)})
        _ParseFlags.suspicious = True
        return marked
    return result


def _integer(text: str) -> int | _Rejected:
    value = int(text)
    if abs(value) > MAX_SAFE_INTEGER:
        _ParseFlags.suspicious = True
        return _Rejected(text, "integer out of range (beyond ±2^53−1, not exact in JSON numbers)")
    return value


def _float(text: str) -> float | _Rejected:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        _ParseFlags.suspicious = True
        return _Rejected(text, "number out of range (overflows a double)")
    return value


def _constant(text: str) -> _Rejected:
    _ParseFlags.suspicious = True
    return _Rejected(text, f"{text} is not valid JSON (numbers must be finite)")


_DECODER = json.JSONDecoder(
    object_pairs_hook=_object, parse_int=_integer, parse_float=_float, parse_constant=_constant
)


_ORJSON_INDENT = orjson.OPT_INDENT_2 | orjson.OPT_STRICT_INTEGER  # refuses ints past ±2^53


def parse_clean(data: bytes) -> Any:
    """The value of a document that provably holds nothing `parse_json` would report, else None.

    orjson parses ~8× faster than `json` with hooks. Its value is the strict parser's when the
    bytes are exactly what orjson writes back (two-space indent plus a newline, as the importer
    writes, or compact): then there is no duplicate key (it would be lost), no BOM, bad UTF-8,
    lone surrogate, NaN or overflowing number (orjson refuses them), no integer past ±2^53
    (OPT_STRICT_INTEGER refuses to write it back), and every number is in its shortest form.
    What remains is checked on the text: `null` and nesting. Anything else returns None and takes
    the strict path, which reports.
    """
    if b"null" in data:
        return None
    if data.count(b"{") + data.count(b"[") > MAX_DEPTH:
        return None
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(value, dict):
        return None
    try:
        indented = orjson.dumps(value, option=_ORJSON_INDENT)
    except orjson.JSONEncodeError:
        return None
    if indented + b"\n" == data or orjson.dumps(value) == data:
        return value
    return None


def parse_json(text: str) -> tuple[Any, list[tuple[str, str]]]:
    """Parse one JSON text strictly: returns the value and (json path, message) problems.

    Raises `json.JSONDecodeError` for syntax errors (with line and column).
    """
    _ParseFlags.suspicious = False
    try:
        value = _DECODER.decode(text)
    except RecursionError:
        return None, [("$", f"nesting deeper than {MAX_DEPTH} levels")]
    # The walk costs more than parsing; the text tells cheaply when it cannot find anything.
    needs_walk = (
        _ParseFlags.suspicious
        or "null" in text
        or "\\ud" in text
        or "\\uD" in text
        or text.count("{") + text.count("[") > MAX_DEPTH
    )
    return value, _inspect(value) if needs_walk else []


def _inspect(root: Any) -> list[tuple[str, str]]:
    """Problems the parser lets through: duplicates, nulls, bad numbers, depth, lone surrogates."""
    found: list[tuple[str, str]] = []
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(root, ())]
    while stack:
        value, location = stack.pop()
        if len(location) > MAX_DEPTH:
            found.append((json_path(location), f"nesting deeper than {MAX_DEPTH} levels"))
            continue
        if isinstance(value, dict):
            for key in getattr(value, "duplicates", ()):
                found.append((json_path((*location, key)), f"duplicate key {_quote(key)}"))
            for key, item in value.items():
                if _has_surrogate(key):
                    found.append((json_path(location), "key holds a lone UTF-16 surrogate"))
                stack.append((item, (*location, key)))
        elif isinstance(value, list):
            stack.extend((item, (*location, i)) for i, item in enumerate(value))
        elif isinstance(value, _Rejected):
            found.append((json_path(location), value.reason))
        elif value is None:
            found.append(
                (
                    json_path(location),
                    "null is not allowed",
                )
            )
        elif isinstance(value, str) and _has_surrogate(value):
            found.append((json_path(location), "string holds a lone UTF-16 surrogate"))
    return found


def _has_surrogate(text: str) -> bool:
    return any("\ud800" <= c <= "\udfff" for c in text) if not text.isascii() else False


def _quote(value: Any, limit: int = 60) -> str:
    """A content string made safe to print on one line: JSON-quoted, ASCII, cut."""
    text = json.dumps(value, ensure_ascii=True)
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --- documents ----------------------------------------------------------------------------------


def _load_file(
    path: str | Path, shown: str, resources: list[LoadedResource], problems: list[Problem]
) -> None:
    data = _read_bytes(path, shown, MAX_FILE_BYTES, problems)
    clean = None if data is None else parse_clean(data)
    if clean is not None:
        _load_value(clean, shown, resources, problems)
        return
    text = None if data is None else _decode(data, shown, problems)
    if text is None:
        return
    _load_document(text, shown, resources, problems)


def _load_export(
    path: str | Path, shown: str, resources: list[LoadedResource], problems: list[Problem]
) -> None:
    data = _read_bytes(path, shown, MAX_EXPORT_BYTES, problems)
    text = None if data is None else _decode(data, shown, problems)
    if text is None:
        return
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        if len(line) > MAX_FILE_BYTES:
            problems.append(Problem(f"{shown}:{number}", "-", "line is over the size limit"))
            continue
        _load_document(line, f"{shown}:{number}", resources, problems, export=True)


def _load_document(
    text: str,
    shown: str,
    resources: list[LoadedResource],
    problems: list[Problem],
    export: bool = False,
) -> None:
    try:
        value, found = parse_json(text)
    except json.JSONDecodeError as error:
        message = error.msg[0].lower() + error.msg[1:]
        if message.endswith(" at"):  # "Invalid control character at": the place is in `where`
            message = message[:-3] + " in a string"
        problems.append(Problem(shown, f"{error.lineno}:{error.colno}", f"invalid JSON: {message}"))
        return
    if found:
        problems.extend(Problem(shown, where, message) for where, message in found)
        return
    _load_value(value, shown, resources, problems, export)


def _load_value(
    value: Any,
    shown: str,
    resources: list[LoadedResource],
    problems: list[Problem],
    export: bool = False,
) -> None:
    """A parsed document: a resource, a bundle, or a problem."""
    if isinstance(value, dict) and set(value) == BUNDLE_KEYS:
        _load_bundle(value, shown, resources, problems)
    elif isinstance(value, dict) and "apiVersion" in value and not export:
        loaded = validate_resource(value, shown, "", problems)
        if loaded:
            resources.append(loaded)
    else:
        expected = "a run bundle" if export else "a resource or a run bundle"
        problems.append(
            Problem(
                shown,
                "$",
                f"not {expected}",
                "a resource has apiVersion, kind, metadata and spec; a bundle has "
                "exactly run, protocol and environment",
            )
        )


def _load_bundle(
    value: dict[str, Any], shown: str, resources: list[LoadedResource], problems: list[Problem]
) -> None:
    """A stored run bundle: its protocol and environment must hash to the run's digests."""
    members: dict[str, LoadedResource] = {}
    for role, kind in BUNDLE_ROLES.items():
        part = value[role]
        loaded = validate_resource(part, shown, role, problems, expected_kind=kind)
        if loaded:
            members[role] = loaded
            resources.append(loaded)
    run = members.get("run")
    if run is None:
        return
    for role, key in (("protocol", "protocolDigest"), ("environment", "environmentDigest")):
        member = members.get(role)
        claimed = run.spec[key]
        if member and member.digest != claimed:
            problems.append(
                Problem(
                    shown,
                    role,
                    f"embedded {member.kind} hashes to {member.digest}, but run.spec.{key} is "
                    f"{claimed}",
                    "was it edited after the run was recorded?",
                )
            )


def validate_resource(
    value: Any, shown: str, where: str, problems: list[Problem], expected_kind: str | None = None
) -> LoadedResource | None:
    """Validate one resource object; report every problem under `where`."""
    prefix = f"{where}." if where else ""
    if not isinstance(value, dict):
        problems.append(
            Problem(shown, where or "$", f"expected a resource object, got {_json_type(value)}")
        )
        return None
    kind = value.get("kind")
    if value.get("apiVersion") != API_VERSION:
        problems.append(
            Problem(
                shown,
                f"{prefix}apiVersion",
                f"expected {_quote(API_VERSION)}, got {_describe(value.get('apiVersion'))}",
            )
        )
        return None
    if kind not in KINDS or (expected_kind and kind != expected_kind):
        allowed = expected_kind or "one of " + ", ".join(sorted(KINDS))
        problems.append(
            Problem(shown, f"{prefix}kind", f"expected {allowed}, got {_describe(kind)}")
        )
        return None
    try:
        resource = KINDS[kind].model_validate(value)
    except ValidationError as error:
        problems.extend(
            Problem(shown, f"{prefix}{path}", message, hint)
            for path, message, hint in describe_errors(error, value)
        )
        return None
    document = resource.document_json()
    return LoadedResource(shown, where, resource, digest(kind, document["spec"]), document)


# --- turning pydantic errors into problems ------------------------------------------------------

_TYPE_NAMES = {
    "int_type": "an integer",
    "float_type": "a number",
    "string_type": "a string",
    "bool_type": "a boolean",
    "dict_type": "an object",
    "list_type": "a list",
    "model_type": "an object",
    "model_attributes_type": "an object",
}


def describe_errors(error: ValidationError, document: Any) -> list[tuple[str, str, str]]:
    """One (json path, message, hint) per place, in the author's terms.

    Pydantic puts union member tags into `loc`; walking the document itself tells a key from a
    tag. Several failed union members at one place collapse into one "expected A or B".
    """
    by_place: dict[str, list[dict[str, Any]]] = {}
    values: dict[str, Any] = {}
    for detail in error.errors(include_url=False, include_context=True):
        location, value, is_key = _locate(detail["loc"], document)
        if detail["type"] == "missing":
            location = (*location, detail["loc"][-1])
        path = json_path(location) + (" (key)" if is_key else "")
        by_place.setdefault(path, []).append(detail)
        values[path] = value
    model = type(_resource_model(document))
    found = []
    for path, details in by_place.items():
        hint = ""
        if details[0]["type"] == "extra_forbidden":
            allowed = _allowed_fields(model, details[0]["loc"][:-1])
            hint = "allowed here: " + ", ".join(allowed) if allowed else ""
        found.append((path, _message(details, values[path]), hint))
    return found


def _resource_model(document: Any) -> Any:
    return KINDS[document["kind"]].model_construct()


def _allowed_fields(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    """The field names an object at `loc` may hold, found by walking the model's types."""
    current: Any = model
    for step in loc:
        current = _step_into(current, step)
        if current is None:
            return []
    current = _unwrap(current)
    if isinstance(current, type) and issubclass(current, BaseModel):
        return sorted(f.alias or name for name, f in current.model_fields.items())
    return []


def _unwrap(annotation: Any) -> Any:
    """`Annotated[X, …]` → X; `X | None` → X (the only non-None member)."""
    while True:
        if get_origin(annotation) is Annotated:
            annotation = get_args(annotation)[0]
            continue
        members = [a for a in get_args(annotation) if a is not type(None)]
        if get_origin(annotation) in (Union, UnionType) and len(members) == 1:
            annotation = members[0]
            continue
        return annotation


def _step_into(annotation: Any, step: Any) -> Any:
    current = _unwrap(annotation)
    if isinstance(current, type) and issubclass(current, BaseModel):
        for name, info in current.model_fields.items():
            if (info.alias or name) == step:
                return info.annotation
        return current if step == current.__name__ else None  # a union tag names the model
    origin = get_origin(current)
    if origin is list and isinstance(step, int):
        return get_args(current)[0]
    if origin is dict and isinstance(step, str):
        return get_args(current)[1]
    return None


def _locate(loc: tuple[Any, ...], document: Any) -> tuple[tuple[str | int, ...], Any, bool]:
    location: list[str | int] = []
    node = document
    for step in loc:
        if step == "[key]":
            return tuple(location), location[-1] if location else None, True
        if isinstance(node, dict) and isinstance(step, str) and step in node:
            node = node[step]
            location.append(step)
        elif isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node):
            node = node[step]
            location.append(step)
        # anything else is a union tag, or the name of a missing field: not a place in the JSON
    return tuple(location), node, False


def _message(details: list[dict[str, Any]], value: Any) -> str:
    types = [d["type"] for d in details]
    if "missing" in types:
        return "required field is missing"
    if "extra_forbidden" in types:
        return "unknown field"
    expected = [_TYPE_NAMES[t] for t in types if t in _TYPE_NAMES]
    if expected and len(expected) == len(types):
        unique = list(dict.fromkeys(expected))
        if unique == ["an integer", "a number"]:
            unique = ["a number"]
        return f"expected {' or '.join(unique)}, got {_describe(value)}"
    # Prefer the most specific failure: a value error beats the type errors of other members.
    specific = [d for d in details if d["type"] not in _TYPE_NAMES] or details
    detail = specific[0]
    kind = detail["type"]
    if kind == "string_pattern_mismatch":
        return f"{_quote(value)} does not match {detail['ctx']['pattern']}"
    if kind == "literal_error":
        return f"expected one of {detail['ctx']['expected']}, got {_describe(value)}"
    if kind == "value_error":
        return str(detail["ctx"]["error"])
    text = str(detail["msg"]).removeprefix("Value error, ")
    return text[0].lower() + text[1:] if text else kind


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return "null"


def _describe(value: Any) -> str:
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        return f"{_json_type(value)} {_quote(value)}"
    return _json_type(value) if value is not None else "nothing"
