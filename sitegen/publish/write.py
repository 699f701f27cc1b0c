"""The only module that touches the output directory (and the importer's content tree).

Files are written into a staging directory beside the output (same file system), then swapped
in: the old output is renamed aside, the new one renamed into place, the old one removed. A
build that fails or is killed before the swap leaves the previous site as it was, and pages of
deleted resources disappear with the old tree. The caller holds the output's lock
(publish/lock.py), so the staging and old trees beside it are its own, or leftovers of a killed
command, which are removed.

A folder is only ever replaced when it is absent, empty or one the same command wrote (its
`Owner`'s marker file is in it), and never when it is the file system root, the home or the
current directory, holds a project or is related to the content. Every path written or
deleted stays inside the tree: `..`, absolute paths and symbolic links inside an existing
output are refused, never followed. An OSError while writing is a WriteError naming the path.
"""

from __future__ import annotations

import bisect
import contextlib
import hashlib
import itertools
import os
import re
import shutil
import stat
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

from sitegen import process
from sitegen.publish.errors import OutputError, WriteError
from sitegen.publish.lock import locked

__all__ = ["MARKER", "InterruptedAfterSwap", "OutputError", "WriteError"]

MARKER = ".sitegen-output"
MARKER_TEXT = b"This directory is written by `sitegen build` and replaced whole on every build.\n"
STAGING_INFIX = ".staging-"
OLD_INFIX = ".old-"


class Owner(NamedTuple):
    """A kind of folder a command replaces whole, and the file that says a folder is one."""

    what: str  # as a refusal names it: "a previous sitegen output"
    marker: str  # the file or folder every such folder holds, relative to it
    marker_text: bytes | None  # written into each staging tree first; None: the caller writes it
    missing: str  # as a refusal says it is missing: "no .sitegen-output file"

    def marks(self, folder: Path) -> bool:
        """Whether `folder` holds the marker: a real file or folder, never a link."""
        try:
            mode = os.lstat(folder / self.marker).st_mode
        except OSError:
            return False
        return stat.S_ISREG(mode) or stat.S_ISDIR(mode)


SITE_OUTPUT = Owner("a previous sitegen output", MARKER, MARKER_TEXT, f"no {MARKER} file")


class InterruptedAfterSwap(KeyboardInterrupt):
    """Ctrl-C or SIGTERM once the new output was in place: only the removal of the old one was
    cut short (the next build removes what is left of it)."""


class Pieces:
    """A file's bytes as the buffers they lie in, in order, never joined: the big files a held
    build makes again (the export, the manifest: render/outputs.py) are mostly stretches of
    the last build's, ~250 MB at 100k runs that a join would copy every build (~0.2 s)."""

    __slots__ = ("_size", "name", "parts", "starts")

    def __init__(
        self, parts: Iterable[bytes | bytearray | memoryview], name: str | None = None
    ) -> None:
        self.parts = tuple(part for part in parts if len(part))
        # What stands for these bytes where their maker knows them apart without hashing them
        # (`data_digest`): one name, the same bytes; None: their SHA-256.
        self.name = name
        # Where each part starts in the file, for `views`.
        self.starts = list(itertools.accumulate(map(len, self.parts), initial=0))
        self._size = self.starts.pop()

    def __len__(self) -> int:
        return self._size

    def __bytes__(self) -> bytes:
        return b"".join(self.parts)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Pieces):
            return bytes(self) == bytes(other)
        if isinstance(other, bytes | bytearray | memoryview):
            return len(self) == len(other) and bytes(self) == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # compared by bytes, like a bytearray

    def views(self, start: int, stop: int) -> list[memoryview]:
        """The bytes from `start` to `stop` as views of the parts they lie in."""
        found = []
        place = bisect.bisect_right(self.starts, start) - 1
        while start < stop:
            part, begins = self.parts[place], self.starts[place]
            end = min(stop, begins + len(part))
            found.append(memoryview(part)[start - begins : end - begins])
            start, place = end, place + 1
        return found


# A file's bytes: the big ones (manifest, export) are made in a bytearray, or as Pieces, and
# written uncopied.
Data = bytes | bytearray | memoryview | Pieces
Writer = Callable[[str, Data], None]


def data_digest(data: Data) -> str:
    """The SHA-256 of a file's bytes, hex; of Pieces a part at a time, or their name: what an
    incremental build compares with the last build's to tell whether a file changed."""
    if not isinstance(data, Pieces):
        return hashlib.sha256(data).hexdigest()
    if data.name is not None:
        return data.name
    digest = hashlib.sha256()
    for part in data.parts:
        digest.update(part)
    return digest.hexdigest()


def check_output_dir(
    out_dir: Path, content_dir: Path | None = None, owner: Owner = SITE_OUTPUT
) -> Path:
    """The resolved output directory, or OutputError if replacing it could destroy something."""
    if out_dir.is_symlink():
        raise OutputError(f"refusing to write to {out_dir}: it is a symbolic link")
    target = out_dir.resolve()
    home = Path.home().resolve()
    if target == Path(target.anchor) or target == home:
        raise OutputError(f"refusing to write to {target}: the file system root or home directory")
    here = Path.cwd().resolve()
    if target == here or target in here.parents:
        raise OutputError(f"refusing to write to {target}: it is or holds the current directory")
    if content_dir is not None:
        content = content_dir.resolve()
        if target == content or target in content.parents or content in target.parents:
            raise OutputError(
                f"refusing to write to {target}: it is, holds or is inside the content "
                f"tree {content}"
            )
    if (target / "pyproject.toml").exists() or (target / ".git").exists():
        raise OutputError(
            f"refusing to write to {target}: it holds a project (pyproject.toml or .git)"
        )
    if target.exists():
        if not target.is_dir():
            raise OutputError(f"refusing to write to {target}: it exists and is not a directory")
        if any(target.iterdir()) and not owner.marks(target):
            raise OutputError(
                f"refusing to write to {target}: a non-empty directory that is not "
                f"{owner.what} ({owner.missing})"
            )
    if not target.parent.is_dir():
        raise OutputError(f"refusing to write to {target}: its parent directory does not exist")
    return target


class Staging:
    """A staging tree beside the output. Files go in with `write`; `staged` swaps it in.

    `write` may be called from forked worker processes: each keeps its own set of made folders,
    and a file is created exclusively, so no two writers can silently share one path.
    """

    def __init__(
        self, target: Path, write_file: Writer | None = None, owner: Owner = SITE_OUTPUT
    ) -> None:
        self.target = target
        try:
            made = tempfile.mkdtemp(prefix=f".{target.name}{STAGING_INFIX}", dir=target.parent)
        except OSError as error:
            raise WriteError.of(error, target.parent) from None
        self.root = Path(made)
        # Paths are joined as strings: pathlib's parsing was a third of writing a page.
        self._prefix = f"{self.root}/"
        self._writer = write_file or _write_file
        self._made: set[str] = {""}
        # The marker goes first so a staging tree left by a killed build is recognisably ours.
        if owner.marker_text is not None:
            try:
                self.write(owner.marker, owner.marker_text)
            except BaseException:  # a disk full from the first byte: leave no empty tree behind
                shutil.rmtree(self.root, ignore_errors=True)
                raise

    def write(self, path: str, data: Data) -> None:
        _check_relative(path)
        folder = path.rpartition("/")[0]
        try:
            if folder not in self._made:
                try:
                    os.mkdir(self._prefix + folder)  # one call: the parent mostly exists
                except FileExistsError:
                    pass
                except FileNotFoundError:
                    os.makedirs(self._prefix + folder, exist_ok=True)
                self._made.add(folder)
            self._writer(self._prefix + path, data)
        except OSError as error:
            raise WriteError.of(error, self.target / path) from None


@contextmanager
def staged(
    out_dir: Path,
    content_dir: Path | None = None,
    write_file: Writer | None = None,
    owner: Owner = SITE_OUTPUT,
) -> Iterator[Staging]:
    """A staging tree for `out_dir`, swapped in when the block ends, deleted if it raises (or
    the process is interrupted). The caller holds the output's lock (`locked`)."""
    target = check_output_dir(out_dir, content_dir, owner)
    _remove_leftovers(target, owner)
    staging = Staging(target, write_file, owner)
    try:
        yield staging
        os.chmod(staging.root, 0o755)  # mkdtemp makes it 0700; a published site is world-readable
        _swap(staging.root, target, owner.marker)
    except BaseException:
        remove_tree(staging.root, owner.marker)
        raise


# A replaced file this big is linked into the staging tree first where its removal is left to a
# thread (`patched`'s `discard_aside`): the rename then frees none of its pages (~0.03 s at 100k
# runs for the export and the manifest, ~250 MB on tmpfs).
DISCARD_ASIDE_BYTES = 1 << 20


class Patch:
    """The files an incremental build changes, staged beside the output, and what it deletes."""

    def __init__(self, target: Path, discard_aside: bool = False) -> None:
        self.target = target
        self.staging = Staging(target)
        self.deleted: list[str] = []
        self.changed: list[str] = []  # what `apply` moved in or deleted
        self.last: set[str] = set()  # moved in after the rest: files that name others
        self._discard_aside = discard_aside

    def write(self, path: str, data: Data) -> None:
        self.staging.write(path, data)

    def delete(self, path: str) -> None:
        _check_relative(path)
        self.deleted.append(path)

    def apply(self) -> list[str]:
        """Move each staged file over its old self (rename(2): every file is whole at every
        moment), delete the outputs that are gone, prune emptied folders; the changed paths.

        The previous output is not trusted to be as it was written: a folder on the way that
        is a symbolic link (or not a folder) is refused, never followed, and so is a file
        that is not a regular one. An interrupt waits until all of it is done: the site is the
        old one or the new."""
        applied: list[str] | None = None
        try:
            with process.interrupts_deferred():
                applied = self._apply()
        except KeyboardInterrupt:
            if applied is not None:
                raise InterruptedAfterSwap from None
            raise
        self.changed = applied
        return applied

    def _apply(self) -> list[str]:
        root = self.staging.root
        moved = []
        stack = [root]
        while stack:
            with os.scandir(stack.pop()) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(Path(entry.path))
                    elif entry.name != MARKER or Path(entry.path).parent != root:
                        moved.append(Path(entry.path).relative_to(root).as_posix())
        inside = _Inside(self.target)
        aside = root / DISCARDED if self._discard_aside else None
        try:
            for number, path in enumerate(sorted(moved, key=lambda p: (p in self.last, p))):
                inside.folder(path.rpartition("/")[0], make=True)
                size = inside.replaceable(path)
                if aside is not None and size is not None and size >= DISCARD_ASIDE_BYTES:
                    _link_aside(self.target / path, aside, number)
                os.replace(root / path, self.target / path)
            for path in sorted(self.deleted):
                folder = path.rpartition("/")[0]
                if not inside.folder(folder, make=False) or inside.replaceable(path) is None:
                    continue
                try:
                    (self.target / path).unlink()
                except FileNotFoundError:
                    continue
                while folder:
                    try:  # fails when not empty: `runs/` holds a folder per run, not worth listing
                        (self.target / folder).rmdir()
                    except OSError:
                        break
                    folder = folder.rpartition("/")[0]
        except OSError as error:
            raise WriteError.of(error, self.target) from None
        return sorted(moved) + sorted(self.deleted)


DISCARDED = "discarded"  # the staging tree's folder of replaced files' second names


def _link_aside(path: Path, folder: Path, number: int) -> None:
    """A second name for the file at `path` in `folder` (never following a link), where the
    file system allows one: its bytes are then freed with the staging tree, not by the rename
    that replaces it."""
    with contextlib.suppress(OSError):
        folder.mkdir(exist_ok=True)
        os.link(path, folder / str(number), follow_symlinks=False)


class _Inside:
    """Folders and files of an existing tree, each checked once: real folders all the way."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._checked: set[str] = {""}

    def folder(self, relative: str, make: bool) -> bool:
        """Whether `relative` is a real folder inside the root (made if `make`); OutputError
        if one of its parts is a link or a file."""
        if relative in self._checked:
            return True
        parent = relative.rpartition("/")[0]
        if not self.folder(parent, make):
            return False
        path = self.root / relative
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            if not make:
                return False
            os.mkdir(path)
            mode = os.lstat(path).st_mode
        if not stat.S_ISDIR(mode):
            raise OutputError(
                f"refusing to write into {path}: it is not a folder sitegen made "
                "(a symbolic link or a file), so it could lead outside the output"
            )
        self._checked.add(relative)
        return True

    def replaceable(self, relative: str) -> int | None:
        """The size of the file there to replace or delete, None where there is none;
        OutputError if it is not a regular file (a link is never written through)."""
        path = self.root / relative
        try:
            found = os.lstat(path)
        except FileNotFoundError:
            return None
        if not stat.S_ISREG(found.st_mode):
            raise OutputError(f"refusing to replace {path}: it is not a regular file")
        return found.st_size


@contextmanager
def patched(
    out_dir: Path,
    content_dir: Path | None = None,
    discard_aside: list[threading.Thread] | None = None,
) -> Iterator[Patch]:
    """Change a previous output in place: the changed files are staged and moved in when the
    block ends; nothing is touched if it raises (the content or a template was wrong). The
    caller holds the output's lock.

    `discard_aside` (a process that lives on: `sitegen serve`, the build daemon): the staging
    tree, holding the big files replaced, is removed by a thread added to it, not before the
    block ends; the list's threads are waited for first (the last patch's). A tree the
    process leaves when killed is removed by the next build (`_remove_leftovers`)."""
    target = check_output_dir(out_dir, content_dir)
    if not (target / MARKER).is_file():
        raise OutputError(f"refusing to patch {target}: not a previous sitegen output")
    if discard_aside is not None:
        while discard_aside:
            discard_aside.pop().join()
    _remove_leftovers(target, SITE_OUTPUT)
    patch = Patch(target, discard_aside is not None)
    applied = False
    try:
        yield patch
        patch.apply()
        applied = True
    finally:
        if applied and discard_aside is not None:
            removal = threading.Thread(
                target=remove_tree, args=(patch.staging.root, MARKER), name="sitegen-discard"
            )
            removal.start()
            discard_aside.append(removal)
        else:
            remove_tree(patch.staging.root, MARKER)


@contextmanager
def staged_folder(out_dir: Path, name: str) -> Iterator[Path]:
    """A new `out_dir/<name>` (the search index) made in a staging tree beside a previous
    output: the block fills the folder yielded (or leaves it absent), which then replaces the
    old one whole (or the old one is removed). Nothing changes if the block raises. The caller
    holds the output's lock."""
    target = check_output_dir(out_dir)
    if not (target / MARKER).is_file():
        raise OutputError(f"refusing to patch {target}: not a previous sitegen output")
    _check_relative(name)
    staging = Staging(target)
    try:
        new, old = staging.root / name, target / name
        yield new
        try:
            with process.interrupts_deferred():
                if os.path.lexists(old):  # removed with the staging tree, never followed
                    os.rename(old, staging.root / f"old-{name}")
                if new.exists():
                    os.chmod(new, 0o755)
                    os.rename(new, old)
        except OSError as error:
            raise WriteError.of(error, old) from None
    finally:
        remove_tree(staging.root, MARKER)


def write_site(
    files: Mapping[str, Data],
    out_dir: Path,
    content_dir: Path | None = None,
    write_file: Writer | None = None,
    owner: Owner = SITE_OUTPUT,
    wait: bool = False,
) -> Path:
    """Write `files` (path → bytes, in order) as all of `out_dir`, swapped in atomically,
    holding its lock."""
    for path in files:
        _check_relative(path)
    target = check_output_dir(out_dir, content_dir, owner)
    with locked(target, wait), staged(out_dir, content_dir, write_file, owner) as staging:
        for path, data in files.items():
            staging.write(path, data)
    return staging.target


def _write_file(path: str, data: Data) -> None:
    # os-level calls: three system calls and no buffered file object per page.
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
    try:
        _write_all(descriptor, data)
    except OSError as error:
        error.filename = path  # a full disk is told by a write to a descriptor, which names none
        raise
    finally:
        os.close(descriptor)


def _write_all(descriptor: int, data: Data) -> None:
    for part in data.parts if isinstance(data, Pieces) else (data,):
        view = memoryview(part)
        while view:
            view = view[os.write(descriptor, view) :]


def _check_relative(path: str) -> None:
    parts = path.split("/")
    if not path or path.startswith("/") or any(p in ("", ".", "..") for p in parts) or "\\" in path:
        raise OutputError(f"refusing to write outside the output directory: {path!r}")


def _swap(staging: Path, target: Path, marker: str) -> None:
    """The staging tree renamed into place, the old output aside and then removed. An interrupt
    waits for the renames; one during the removal is InterruptedAfterSwap."""
    swapped = False
    try:
        with process.interrupts_deferred():
            old = None
            if target.exists():
                old = Path(tempfile.mkdtemp(prefix=f".{target.name}{OLD_INFIX}", dir=target.parent))
                os.rename(target, old)  # onto the empty directory mkdtemp made: atomic on POSIX
            try:
                os.rename(staging, target)
            except BaseException:
                if old is not None:
                    os.rename(old, target)  # put the previous site back
                raise
            swapped = True
        if old is not None:
            remove_tree(old, marker)
    except KeyboardInterrupt:
        if swapped:
            raise InterruptedAfterSwap from None
        raise
    except OSError as error:
        raise WriteError.of(error, target) from None


def _remove_leftovers(target: Path, owner: Owner) -> None:
    """Staging and old trees of killed commands beside the output: only ours (marked, empty,
    or a staging tree as mkdtemp made it), never through a link. The caller holds the lock, so
    none of them belongs to a command still running."""
    try:
        siblings = list(target.parent.iterdir())
    except OSError as error:
        raise WriteError.of(error, target.parent) from None
    staging_prefix = f".{target.name}{STAGING_INFIX}"
    for sibling in siblings:
        name = sibling.name
        if not name.startswith((staging_prefix, f".{target.name}{OLD_INFIX}")):
            continue
        try:
            found = os.lstat(sibling)
        except OSError:
            continue
        if not stat.S_ISDIR(found.st_mode):
            continue
        unmarked_staging = name.startswith(staging_prefix) and _as_mkdtemp_made(
            name.removeprefix(staging_prefix), found
        )
        if owner.marks(sibling) or unmarked_staging or not any(sibling.iterdir()):
            remove_tree(sibling, owner.marker)


def _as_mkdtemp_made(suffix: str, found: os.stat_result) -> bool:
    """A folder as mkdtemp made it: its random suffix, this user's, 0700. A staging tree whose
    marker went first when its removal was cut short (by an older sitegen: `remove_tree` takes
    it last) is still recognisably ours."""
    mine = not hasattr(os, "getuid") or found.st_uid == os.getuid()
    return bool(_MKDTEMP_SUFFIX.fullmatch(suffix)) and mine and found.st_mode & 0o777 == 0o700


_MKDTEMP_SUFFIX = re.compile(r"[a-z0-9_]{8}")  # tempfile's names: 8 of these characters


def remove_tree(root: Path, marker: str) -> None:
    """`root` and all it holds, its `marker` last, never following a link (rmtree's own rule):
    a removal cut short leaves a tree still marked as ours, which the next command removes."""
    try:
        with os.scandir(root) as found:
            entries = sorted(found, key=lambda entry: entry.name == marker)
    except OSError:
        entries = []
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                os.unlink(entry.path)
    shutil.rmtree(root, ignore_errors=True)
