"""Incremental builds (`sitegen build --incremental`, and every rebuild of `sitegen serve`):
the normal pipeline, told what the last build saw, so that it redoes only what changed.

The state remembers, from the last build:

- each content file's size, times and inode with the resources and problems read from it, so an
  unchanged file is not read, parsed or validated again (content/load.py);
- each output file's sha256 and, for a page, its key: a hash of the site-wide inputs (code,
  templates, assets, base URL, build date, deployment, import reports, every resource that is
  not a run, every non-run URL) and of the runs the page shows (site/plan.py). A page whose key
  is unchanged is neither planned nor rendered; a file whose bytes are unchanged is not written.

The output is byte for byte what a cold build writes (tests/publish/test_incremental.py). The
state is plain JSON, parsed and checked field by field: a state that does not match this code's
format is discarded and the build is a full one. `serve` holds it in memory; `build
--incremental` keeps it in a folder beside the output, deleted before the output is touched and
written after, so a build killed in between leaves none and the next build is a full one.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from sitegen.content.catalog import Catalog
from sitegen.content.load import LoadCache, Packed, StatKey
from sitegen.model.problems import Problem, Severity
from sitegen.publish.write import Data
from sitegen.render.assets import ASSETS_DIR, TEMPLATES_DIR, site_assets
from sitegen.render.render import Output
from sitegen.site.records import LazyPage, Page
from sitegen.site.urls import SiteUrls, json_twin, output_path

CACHE_INFIX = ".sitegen-cache"
STATE = "state.json"
FORMAT = 3
PACKAGE_DIR = Path(__file__).resolve().parent.parent

Outputs = dict[str, tuple[str | None, str]]  # output path → (page key or None, sha256 of bytes)


@functools.cache
def code_version() -> str:
    """A hash of sitegen's code: a state written by other code is not used (its shape may
    differ). Templates and assets are in each page's key instead (`fingerprint`)."""
    return _hash_files(hashlib.sha256(f"format {FORMAT}\n".encode()), (PACKAGE_DIR,))


def _hash_files(digest: Any, folders: tuple[Path, ...]) -> str:
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and path.suffix in (".py", ".html", ".xml", ".css", ".js"):
                digest.update(path.as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()  # type: ignore[no-any-return]


@dataclass
class State:
    """What the last build saw and wrote (see the module's docstring)."""

    outputs: Outputs = field(default_factory=dict)
    loads: LoadCache = field(default_factory=dict)


def cache_dir(out_dir: Path) -> Path:
    target = out_dir.resolve()
    return target.parent / f".{target.name}{CACHE_INFIX}"


def read_state(out_dir: Path) -> State | None:
    """The last build's state, or None (none, unreadable, another format or code)."""
    try:
        data = (cache_dir(out_dir) / STATE).read_bytes()
        return state_from_json(orjson.loads(data))
    except (OSError, orjson.JSONDecodeError, ValueError, TypeError, KeyError, IndexError):
        return None


def forget_state(out_dir: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        (cache_dir(out_dir) / STATE).unlink()


def write_state(out_dir: Path, state: State) -> None:
    folder = cache_dir(out_dir)
    folder.mkdir(exist_ok=True)
    temporary = folder / f"{STATE}.{os.getpid()}"
    temporary.write_bytes(orjson.dumps(state_to_json(state)))
    os.replace(temporary, folder / STATE)


def state_to_json(state: State) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "code": code_version(),
        "outputs": {path: list(item) for path, item in state.outputs.items()},
        "loads": {
            shown: [list(key), [_packed_json(item) for item in packed], [list(p) for p in found]]
            for shown, (key, packed, found) in state.loads.items()
        },
    }


def _packed_json(item: tuple[Any, ...]) -> list[Any]:
    *head, raw, metadata_digest = item
    return [*head, raw.decode(), metadata_digest]


def state_from_json(document: Any) -> State | None:
    """The state a document holds, checked field by field; None when it is not this code's."""
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        return None
    if document.get("code") != code_version():
        return None
    outputs: Outputs = {}
    for path, (key, sha) in _mapping(document["outputs"]).items():
        outputs[path] = (_optional_text(key), _text(sha))
    loads: LoadCache = {}
    for shown, (key, packed, found) in _mapping(document["loads"]).items():
        loads[_text(shown)] = (_stat(key), _packed(packed), [_problem(p) for p in _list(found)])
    return State(outputs, loads)


def _packed(value: Any) -> Packed:
    found = []
    for item in _list(value):
        path, where, digest, kind, name, title, raw, metadata_digest = _list(item)
        found.append(
            (
                _text(path),
                _text(where),
                _text(digest),
                _text(kind),
                _text(name),
                _optional_text(title),
                _text(raw).encode(),
                _text(metadata_digest),
            )
        )
    return found


def _problem(value: Any) -> Problem:
    path, where, message, hint, severity = _list(value)
    return Problem(_text(path), _text(where), _text(message), _text(hint), Severity(severity))


def _stat(value: Any) -> StatKey:
    key = tuple(_list(value))
    if not all(type(part) is int for part in key):
        raise ValueError("a stat key holds integers")
    return key


def _mapping(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValueError("expected an object")
    return value


def _list(value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise ValueError("expected a list")
    return value


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError("expected a string")
    return value


def _optional_text(value: Any) -> str | None:
    return None if value is None else _text(value)


def fingerprint(catalog: Catalog, urls: SiteUrls, *extra: Any) -> str:
    """Everything besides the runs that any page may show, hashed."""
    digest = hashlib.sha256(code_version().encode())
    digest.update(_hash_files(hashlib.sha256(), (TEMPLATES_DIR, ASSETS_DIR)).encode())
    digest.update(repr(sorted((k, a.path) for k, a in site_assets(True).items())).encode())
    digest.update(repr((urls.prefix, urls.base)).encode())
    for key, path in sorted(urls.paths.items()):
        entry = catalog.by_digest.get(key)
        if entry is None or entry.kind != "BenchmarkRun":
            digest.update(f"{key}\0{path}\n".encode())
    for value, entry in catalog.by_digest.items():
        if entry.kind != "BenchmarkRun":
            digest.update(f"{value}\0{entry.token}\n".encode())
    for item in extra:
        digest.update(orjson.dumps(item, default=repr, option=orjson.OPT_SORT_KEYS))
    return digest.hexdigest()


class IncrementalOutput(Output):
    """Skips pages whose key is unchanged; passes on only files whose bytes changed."""

    def __init__(self, previous: Outputs, site_key: str) -> None:
        super().__init__(self._refuse)
        self.previous = previous
        self.site_key = site_key
        self.outputs: Outputs = {}
        self._noted: list[tuple[str, tuple[str | None, str]]] = []

    def _refuse(self, path: str, data: Data) -> None:
        raise RuntimeError("IncrementalOutput.sink is not set")

    def sink(self, write: Any) -> None:
        self._write = write

    def full_key(self, key: str) -> str:
        return hashlib.sha256(f"{self.site_key}\0{key}".encode()).hexdigest()

    def skip(self, page: Page | LazyPage) -> bool:
        if not isinstance(page, LazyPage) or page.key is None:
            return False
        key = self.full_key(page.key)
        paths = (output_path(page.path), json_twin(page.path))
        found = [self.previous.get(path) for path in paths]
        if all(item is not None and item[0] == key for item in found):
            self._noted += [(path, item) for path, item in zip(paths, found, strict=True) if item]
            return True
        return False

    def write(self, path: str, data: Data, key: str | None = None) -> None:
        value = hashlib.sha256(data).hexdigest()
        old = self.previous.get(path)
        if old is None or old[1] != value:
            self._write(path, data)
        self._noted.append((path, (self.full_key(key) if key else None, value)))

    def records(self) -> list[Any]:
        noted, self._noted = self._noted, []
        return noted

    def absorb(self, records: list[Any]) -> None:
        self.outputs.update(records)

    def finish(self) -> None:
        """Take what this process noted itself (the site-wide files, or everything when one
        process rendered)."""
        self.absorb(self.records())
