"""Incremental builds (`sitegen build --incremental`, `sitegen serve`): redo only what changed.

A cache beside the output (`.<out>.sitegen-cache/state.pickle`) remembers, from the last build:

- each content file's size, times and inode with the resources and problems read from it, so an
  unchanged file is not read, parsed or validated again (load.py);
- each output file's sha256 and, for a page, its key: a hash of the site-wide inputs (code,
  templates, assets, base URL, build date, deployment, import reports, every resource that is
  not a run, every non-run URL) and of the runs the page shows (pages.py). A page whose key is
  unchanged is neither planned nor rendered; a rendered file whose bytes are unchanged is not
  written.

The output is byte for byte what a cold build writes (tests/test_incremental.py). Everything is
checked and rendered before the output is touched, so content with errors or a failing template
leaves the previous site as it was; then the changed files are renamed into place one by one and
the files of vanished pages deleted (write.py's `patched`). The cache is deleted before that
step and written after it: a build killed in between leaves no cache, and the next build is a
full, swapped-in one. The cache trusts that nothing else edits the output directory.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import pickle
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from sitegen.catalog import Catalog
from sitegen.load import LoadCache
from sitegen.pages import LazyPage, Page
from sitegen.render import ASSETS_DIR, TEMPLATES_DIR, Output, site_assets
from sitegen.urls import SiteUrls, json_twin, output_path

CACHE_INFIX = ".sitegen-cache"
STATE = "state.pickle"
FORMAT = 2
PACKAGE_DIR = Path(__file__).resolve().parent

Outputs = dict[str, tuple[str | None, str]]  # output path → (page key or None, sha256 of bytes)


@functools.cache
def code_version() -> str:
    """A hash of sitegen's code: a cache written by other code is not used (its shape may
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
    outputs: Outputs = field(default_factory=dict)
    loads: LoadCache = field(default_factory=dict)
    format: int = FORMAT
    code: str = field(default_factory=code_version)


def cache_dir(out_dir: Path) -> Path:
    target = out_dir.resolve()
    return target.parent / f".{target.name}{CACHE_INFIX}"


def spares_dir(out_dir: Path) -> Path:
    """Where patches keep the big files they replaced, to overwrite next time (write.py)."""
    return cache_dir(out_dir) / "spares"


def read_state(out_dir: Path) -> State | None:
    """The last build's state, or None (no cache, another format, unreadable, no output)."""
    path = cache_dir(out_dir) / STATE
    try:
        with open(path, "rb") as handle:
            state = pickle.load(handle)
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ValueError, TypeError):
        return None
    if not isinstance(state, State) or state.format != FORMAT:
        return None
    if getattr(state, "code", None) != code_version():  # what it holds may be shaped otherwise
        return None
    return state


def forget_state(out_dir: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        (cache_dir(out_dir) / STATE).unlink()


def write_state(out_dir: Path, state: State) -> None:
    folder = cache_dir(out_dir)
    folder.mkdir(exist_ok=True)
    temporary = folder / f"{STATE}.{os.getpid()}"
    with open(temporary, "wb") as handle:
        pickle.dump(state, handle, protocol=pickle.HIGHEST_PROTOCOL)
    os.replace(temporary, folder / STATE)


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

    def _refuse(self, path: str, data: bytes) -> None:
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

    def write(
        self, path: str, data: bytes, key: str | None = None, version: str | None = None
    ) -> None:
        value = version or hashlib.sha256(data).hexdigest()
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
        """Take what this process noted itself (the extras, or everything when serial)."""
        self.absorb(self.records())
