"""A validated resource as the rest of the build holds it (`LoadedResource`), and the shared
buffer the runs' documents live in after a parallel load (`DocumentStore`)."""

from __future__ import annotations

import hashlib
from typing import Any, TypeVar

import orjson

from sitegen.content.run_summary import KIND as SUMMARISED_KIND
from sitegen.content.run_summary import RunSummary, summarise
from sitegen.model.digest import canonical_json
from sitegen.model.resources import KINDS, Resource
from sitegen.model.text import neutralised

AnyResource = TypeVar("AnyResource", bound=Resource)

# Held as bytes after a parallel load: the kind there are millions of.
COMPACT_KINDS = frozenset({"BenchmarkRun"})


class DocumentStore:
    """Many documents' bytes end to end in one buffer, each found by its span (start, length).

    After a parallel load the runs' documents live here rather than as a bytes object each:
    reading a bytes object writes its reference count, and once the render workers are forked
    every page of memory written is copied into the writer. One buffer is written only while
    loading, so its pages stay shared between the processes.
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


def shown_title(title: str | None) -> str | None:
    """A title as every output shows it: neutralised (model/text.py); one of white space alone
    is none, so that pages show the resource's name instead."""
    if title is None or not title.strip():
        return None
    return neutralised(title)


class LoadedResource:
    """A validated resource, its normalised document, and the place it came from.

    `document` is the resource as validation normalised it (`document_json()`): readers take
    the spec, metadata and title from it. The pydantic model is kept when this process
    validated the resource; after a parallel load it is rebuilt from the document on first use
    (the document is valid by construction), so the main process holds dicts, not models.
    Runs from a parallel load are held compact, as the document's orjson bytes (`raw`), and
    parsed anew each time `document` is read: a run's dicts take several times the memory of
    its bytes, and there may be millions. Those bytes are in a shared `DocumentStore`
    when one is given. Readers must not mutate `document`. A run from a parallel load also
    holds the summary its worker made (content/run_summary.py) until the analysis takes it.
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
        "verbatim",
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
        self.title: str | None = shown_title(document["metadata"].get("title"))
        self._token: str | None = None
        self._metadata_digest: str | None = None
        self._summary: RunSummary | None = None
        # Whether `raw` is already the bytes the site's JSON writer makes of the document
        # (render/outputs.py decides; None until it has): held so that `serve` tests each
        # unchanged resource once, not at every rebuild.
        self.verbatim: bool | None = None

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
        entry.title = shown_title(title)
        entry._token = None
        entry._metadata_digest = metadata_digest
        entry._summary = summary
        entry.verbatim = None
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

    def model(self, kind: type[AnyResource]) -> AnyResource:
        """The resource as its kind's model, every field a typed attribute:
        `entry.model(BenchmarkRun).spec.evidence`. TypeError if it is another kind."""
        resource = self.resource
        if not isinstance(resource, kind):
            raise TypeError(f"{self.path}: a {self.kind}, not a {kind.__name__}")
        return resource

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
