"""sources/sources.toml: every upstream input content/ is built from, its sha256, provenance and
terms, and the import steps that turn those files into content/ (`sitegen import --all`).

The manifest is read as strictly as content: unknown keys, wrong types, paths that leave the
folder and links are problems, each naming the file and the key. A file under the folder that the
manifest does not list is a problem too, so every input has its provenance.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import tomllib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from sitegen.model.problems import Problem

MANIFEST_NAME = "sources.toml"
# Every key a [[source]] table must have, in the order docs/sources.md explains them.
SOURCE_KEYS = (
    "name",
    "title",
    "repository",
    "commit",
    "upstream_path",
    "licence",
    "attribution",
    "obtained",
    "files",
)
IMPORT_KEYS = ("importer", "out", "arguments")
FILE_KEYS = ("path", "sha256")
HEX = frozenset("0123456789abcdef")
CHUNK = 1 << 20


@dataclass(frozen=True)
class SourceFile:
    path: str  # relative to the manifest's folder, `/`-separated
    sha256: str


@dataclass(frozen=True)
class Source:
    name: str
    title: str
    repository: str
    commit: str
    upstream_path: str
    licence: str
    attribution: str
    obtained: str
    files: tuple[SourceFile, ...]


@dataclass(frozen=True)
class ImportStep:
    importer: str  # a registered importer's name: `sitegen import NAME`
    out: str  # a folder under the content directory; "." is the content directory itself
    arguments: tuple[str, ...]  # as on the command line, paths relative to the manifest's folder


@dataclass(frozen=True)
class SourcesManifest:
    path: Path
    sources: tuple[Source, ...]
    steps: tuple[ImportStep, ...]

    @property
    def folder(self) -> Path:
        return self.path.parent

    def command_line(self, step: ImportStep, content_dir: Path) -> list[str]:
        """`step`'s arguments for its importer: paths joined to the manifest's folder, and
        `--out` the step's folder under `content_dir`."""
        arguments = [
            argument if argument.startswith("-") else str(self.folder / argument)
            for argument in step.arguments
        ]
        out = content_dir if step.out == "." else content_dir / step.out
        return [*arguments, "--out", str(out)]


class ManifestError(Exception):
    """The manifest cannot be read at all, or holds problems; each is in `problems`."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        super().__init__(problems[0].line() if problems else "the sources manifest is invalid")
        self.problems = tuple(problems)


def read_manifest(path: Path, importers: Sequence[str]) -> SourcesManifest:
    """The manifest at `path`, every problem raised at once as ManifestError."""
    shown = str(path)
    try:
        with open(path, "rb") as file:
            raw = tomllib.load(file)
    except OSError as error:
        raise ManifestError([Problem(shown, "-", f"cannot be read: {error.strerror}")]) from None
    except tomllib.TOMLDecodeError as error:
        raise ManifestError([Problem(shown, "-", f"not TOML: {error}")]) from None
    problems: list[Problem] = []
    _unknown(raw, ("source", "import"), "", shown, problems)
    sources = [
        source
        for index, table in enumerate(_tables(raw, "source", shown, problems))
        if (source := _source(table, f"source[{index}]", shown, problems)) is not None
    ]
    steps = [
        step
        for index, table in enumerate(_tables(raw, "import", shown, problems))
        if (step := _step(table, f"import[{index}]", importers, shown, problems)) is not None
    ]
    names = [source.name for source in sources]
    for index, name in enumerate(names):
        if name in names[:index]:
            problems.append(Problem(shown, f"source[{index}].name", f"{name!r} is listed twice"))
    outs = [PurePosixPath(step.out) for step in steps]
    for index, out in enumerate(outs):
        for other in outs[:index]:
            if (
                out == other
                or out in other.parents
                or other in out.parents
                or "."
                in (
                    str(out),
                    str(other),
                )
            ):
                problems.append(
                    Problem(
                        shown,
                        f"import[{index}].out",
                        f"{str(out)!r} and {str(other)!r} overlap: each step replaces its folder",
                        "give each step a folder of its own under the content directory",
                    )
                )
    listed = [file.path for source in sources for file in source.files]
    for index, file_path in enumerate(listed):
        if file_path in listed[:index]:
            problems.append(Problem(shown, "files", f"{file_path!r} is listed twice"))
    if problems:
        raise ManifestError(problems)
    return SourcesManifest(path, tuple(sources), tuple(steps))


def verify_files(manifest: SourcesManifest) -> list[Problem]:
    """Every listed file present, a regular file (never a link), with its recorded sha256, and
    no file under the folder that the manifest does not list."""
    folder = manifest.folder
    problems: list[Problem] = []
    listed: set[str] = set()
    for source in manifest.sources:
        for file in source.files:
            listed.add(file.path)
            shown = str(folder / file.path)
            found = _sha256(folder, file.path)
            if isinstance(found, Problem):
                problems.append(Problem(shown, "-", found.message, found.hint))
            elif found != file.sha256:
                problems.append(
                    Problem(
                        shown,
                        "-",
                        f"sha256 is {found}, {MANIFEST_NAME} records {file.sha256} "
                        f"(source {source.name!r})",
                        "the file is not the upstream one: restore it (git checkout), or record "
                        f"the new upstream file and its provenance in {MANIFEST_NAME}",
                    )
                )
    for relative in _files_under(folder):
        if relative != MANIFEST_NAME and relative not in listed:
            problems.append(
                Problem(
                    str(folder / relative),
                    "-",
                    f"not listed in {MANIFEST_NAME}",
                    "every input needs its provenance: "
                    "add it to a [[source]]'s files, or remove it",
                )
            )
    return sorted(problems, key=lambda problem: (problem.path, problem.message))


def _sha256(folder: Path, relative: str) -> str | Problem:
    """The file's sha256, read without following a link anywhere on its path."""
    parts = PurePosixPath(relative).parts
    try:
        directory = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as error:
        return Problem("", "-", f"its folder cannot be opened: {error.strerror}")
    try:
        for part in parts[:-1]:
            inner = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=directory)
            os.close(directory)
            directory = inner
        descriptor = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW, dir_fd=directory)
    except FileNotFoundError:
        os.close(directory)
        return Problem("", "-", "no such file", f"restore it, or remove it from {MANIFEST_NAME}")
    except OSError as error:
        os.close(directory)
        if error.errno in (errno.ELOOP, errno.ENOTDIR):  # O_NOFOLLOW met a link
            return Problem("", "-", "a symbolic link: a source is a regular file, never a link")
        return Problem("", "-", f"cannot be read: {error.strerror}")
    os.close(directory)
    with os.fdopen(descriptor, "rb") as file:
        if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
            return Problem("", "-", "not a regular file")
        hashed = hashlib.sha256()
        while chunk := file.read(CHUNK):
            hashed.update(chunk)
    return hashed.hexdigest()


def _files_under(folder: Path) -> Iterator[str]:
    """Every entry under `folder` that is not a directory, links included (never followed)."""
    for root, directories, files in os.walk(folder, followlinks=False):
        directories.sort()
        base = Path(root).relative_to(folder)
        for name in sorted(files):
            yield (base / name).as_posix()
        # A link to a folder is listed as an entry, never walked into.
        for name in directories:
            if os.path.islink(os.path.join(root, name)):
                yield (base / name).as_posix()


def _tables(raw: Mapping[str, Any], key: str, shown: str, problems: list[Problem]) -> list[Any]:
    value = raw.get(key, [])
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        problems.append(Problem(shown, key, f"not an array of tables: write [[{key}]]"))
        return []
    return value


def _unknown(
    table: Mapping[str, Any],
    allowed: Sequence[str],
    where: str,
    shown: str,
    problems: list[Problem],
) -> None:
    for key in sorted(set(table) - set(allowed)):
        problems.append(
            Problem(
                shown,
                f"{where}.{key}" if where else key,
                "unknown key",
                f"allowed here: {', '.join(allowed)}",
            )
        )


def _text(
    table: Mapping[str, Any], key: str, where: str, shown: str, problems: list[Problem]
) -> str | None:
    value = table.get(key)
    if not isinstance(value, str) or not value.strip():
        what = "missing" if value is None else "not a non-empty string"
        problems.append(Problem(shown, f"{where}.{key}", what))
        return None
    return value


def _relative(value: str, where: str, shown: str, problems: list[Problem]) -> bool:
    """`value` names a path inside the manifest's folder: relative, no `..`, `/`-separated."""
    path = PurePosixPath(value)
    if path.is_absolute() or ".." in path.parts or "\\" in value or value in ("", "."):
        problems.append(Problem(shown, where, f"not a path inside the sources folder: {value!r}"))
        return False
    return True


def _source(
    table: Mapping[str, Any], where: str, shown: str, problems: list[Problem]
) -> Source | None:
    before = len(problems)
    _unknown(table, SOURCE_KEYS, where, shown, problems)
    texts = {
        key: _text(table, key, where, shown, problems) for key in SOURCE_KEYS if key != "files"
    }
    files: list[SourceFile] = []
    raw_files = table.get("files")
    if not isinstance(raw_files, list) or not raw_files:
        problems.append(Problem(shown, f"{where}.files", "missing, or not a list of files"))
    else:
        for index, entry in enumerate(raw_files):
            at = f"{where}.files[{index}]"
            if not isinstance(entry, dict):
                problems.append(Problem(shown, at, "not a table: write { path = …, sha256 = … }"))
                continue
            _unknown(entry, FILE_KEYS, at, shown, problems)
            path = _text(entry, "path", at, shown, problems)
            sha = _text(entry, "sha256", at, shown, problems)
            if path is not None and not _relative(path, f"{at}.path", shown, problems):
                path = None
            if sha is not None and (len(sha) != 64 or not set(sha) <= HEX):
                problems.append(Problem(shown, f"{at}.sha256", "not 64 lowercase hex digits"))
                sha = None
            if path is not None and sha is not None:
                files.append(SourceFile(path, sha))
    if len(problems) > before:
        return None
    return Source(**{key: value or "" for key, value in texts.items()}, files=tuple(files))


def _step(
    table: Mapping[str, Any],
    where: str,
    importers: Sequence[str],
    shown: str,
    problems: list[Problem],
) -> ImportStep | None:
    before = len(problems)
    _unknown(table, IMPORT_KEYS, where, shown, problems)
    importer = _text(table, "importer", where, shown, problems)
    if importer is not None and importer not in importers:
        problems.append(
            Problem(
                shown,
                f"{where}.importer",
                f"no importer named {importer!r}",
                f"sitegen has: {', '.join(importers)}",
            )
        )
    out = _text(table, "out", where, shown, problems)
    if out is not None and out != ".":
        _relative(out, f"{where}.out", shown, problems)
    arguments = table.get("arguments")
    if not isinstance(arguments, list) or not all(isinstance(a, str) for a in arguments):
        problems.append(Problem(shown, f"{where}.arguments", "not a list of strings"))
    else:
        for index, argument in enumerate(arguments):
            if argument == "--out" or argument.startswith("--out="):
                problems.append(
                    Problem(shown, f"{where}.arguments[{index}]", "--out is the step's `out`")
                )
            elif not argument.startswith("-"):
                _relative(argument, f"{where}.arguments[{index}]", shown, problems)
    if len(problems) > before or importer is None or out is None:
        return None
    return ImportStep(importer, out, tuple(arguments))  # type: ignore[arg-type]
