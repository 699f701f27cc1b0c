"""The only module that touches the output directory.

Everything is rendered in memory first; here it is written into a staging directory beside the
output (same file system), then swapped in: the old output is renamed aside, the new one renamed
into place, the old one removed. A build that fails or is killed before the swap leaves the
previous site as it was, and pages of deleted resources disappear with the old tree.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from sitegen import process

MARKER = ".sitegen-output"
MARKER_TEXT = b"This directory is written by `sitegen build` and replaced whole on every build.\n"
STAGING_INFIX = ".staging-"
OLD_INFIX = ".old-"


# A file's bytes: the big ones (manifest, export) are made in a bytearray and written uncopied.
Data = bytes | bytearray
Writer = Callable[[str, Data], None]


class OutputError(Exception):
    """The output path is one we refuse to write to."""


class InterruptedAfterSwap(KeyboardInterrupt):
    """Ctrl-C or SIGTERM once the new output was in place: only the removal of the old one was
    cut short (the next build removes what is left of it)."""


def check_output_dir(out_dir: Path, content_dir: Path | None = None) -> Path:
    """The resolved output directory, or OutputError if replacing it could destroy something."""
    if out_dir.is_symlink():
        raise OutputError(f"refusing to write to {out_dir}: it is a symbolic link")
    target = out_dir.resolve()
    home = Path.home().resolve()
    if target == Path(target.anchor) or target == home:
        raise OutputError(f"refusing to write to {target}: the file system root or home directory")
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
        if any(target.iterdir()) and not (target / MARKER).is_file():
            raise OutputError(
                f"refusing to write to {target}: a non-empty directory that is not a previous "
                f"sitegen output (no {MARKER} file)"
            )
    if not target.parent.is_dir():
        raise OutputError(f"refusing to write to {target}: its parent directory does not exist")
    return target


class Staging:
    """A staging tree beside the output. Files go in with `write`; `staged` swaps it in.

    `write` may be called from forked worker processes: each keeps its own set of made folders,
    and a file is created exclusively, so no two writers can silently share one path.
    """

    def __init__(self, target: Path, write_file: Writer | None = None):
        self.target = target
        try:
            staging = tempfile.mkdtemp(prefix=f".{target.name}{STAGING_INFIX}", dir=target.parent)
        except OSError as error:
            error.filename = str(target.parent)  # the folder refused, not a random name in it
            raise
        self.root = Path(staging)
        # Paths are joined as strings: pathlib's parsing was a third of writing a page.
        self._prefix = f"{self.root}/"
        self._writer = write_file or _write_file
        self._made: set[str] = {""}
        # The marker goes first so a staging tree left by a killed build is recognisably ours.
        try:
            _write_file(self._prefix + MARKER, MARKER_TEXT)
        except BaseException:  # a disk full from the first byte: leave no empty tree behind
            shutil.rmtree(self.root, ignore_errors=True)
            raise

    def write(self, path: str, data: Data) -> None:
        _check_relative(path)
        folder = path.rpartition("/")[0]
        if folder not in self._made:
            try:
                os.mkdir(self._prefix + folder)  # one call: the parent mostly exists
            except FileExistsError:
                pass
            except FileNotFoundError:
                os.makedirs(self._prefix + folder, exist_ok=True)
            self._made.add(folder)
        self._writer(self._prefix + path, data)


@contextmanager
def staged(
    out_dir: Path,
    content_dir: Path | None = None,
    write_file: Writer | None = None,
) -> Iterator[Staging]:
    """A staging tree for `out_dir`, swapped in when the block ends, deleted if it raises."""
    target = check_output_dir(out_dir, content_dir)
    _remove_leftovers(target)
    staging = Staging(target, write_file)
    try:
        yield staging
        os.chmod(staging.root, 0o755)  # mkdtemp makes it 0700; a published site is world-readable
        _swap(staging.root, target)
    except BaseException:
        shutil.rmtree(staging.root, ignore_errors=True)
        raise


class Patch:
    """The files an incremental build changes, staged beside the output, and what it deletes."""

    def __init__(self, target: Path) -> None:
        self.target = target
        self.staging = Staging(target)
        self.deleted: list[str] = []

    def write(self, path: str, data: Data) -> None:
        self.staging.write(path, data)

    def delete(self, path: str) -> None:
        _check_relative(path)
        self.deleted.append(path)

    def apply(self) -> list[str]:
        """Move each staged file over its old self (rename(2): every file is whole at every
        moment), delete the outputs that are gone, prune emptied folders; the changed paths.
        An interrupt waits until all of it is done: the site is the old one or the new."""
        applied: list[str] | None = None
        try:
            with process.interrupts_deferred():
                applied = self._apply()
        except KeyboardInterrupt:
            if applied is not None:
                raise InterruptedAfterSwap from None
            raise
        return applied

    def _apply(self) -> list[str]:
        root = self.staging.root
        moved = []
        made: set[Path] = set()
        stack = [root]
        while stack:
            with os.scandir(stack.pop()) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(Path(entry.path))
                    elif entry.name != MARKER or Path(entry.path).parent != root:
                        moved.append(Path(entry.path).relative_to(root).as_posix())
        for path in sorted(moved):
            destination = self.target / path
            if destination.parent not in made:
                destination.parent.mkdir(parents=True, exist_ok=True)
                made.add(destination.parent)
            os.replace(root / path, destination)
        for path in sorted(self.deleted):
            try:
                (self.target / path).unlink()
            except FileNotFoundError:
                continue
            folder = (self.target / path).parent
            while folder != self.target:
                try:  # fails when not empty: `runs/` holds a folder per run, not worth listing
                    folder.rmdir()
                except OSError:
                    break
                folder = folder.parent
        return sorted(moved) + sorted(self.deleted)


@contextmanager
def patched(out_dir: Path, content_dir: Path | None = None) -> Iterator[Patch]:
    """Change a previous output in place: the changed files are staged and moved in when the
    block ends; nothing is touched if it raises (the content or a template was wrong)."""
    target = check_output_dir(out_dir, content_dir)
    if not (target / MARKER).is_file():
        raise OutputError(f"refusing to patch {target}: not a previous sitegen output")
    _remove_leftovers(target)
    patch = Patch(target)
    try:
        yield patch
        patch.apply()
    finally:
        shutil.rmtree(patch.staging.root, ignore_errors=True)


def write_site(
    files: Mapping[str, bytes],
    out_dir: Path,
    content_dir: Path | None = None,
    write_file: Writer | None = None,
) -> Path:
    """Write `files` (site path → bytes) as all of `out_dir`, swapped in atomically."""
    for path in files:
        _check_relative(path)
    with staged(out_dir, content_dir, write_file) as staging:
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
    view = memoryview(data)
    while view:
        view = view[os.write(descriptor, view) :]


def _check_relative(path: str) -> None:
    parts = path.split("/")
    if not path or path.startswith("/") or any(p in ("", ".", "..") for p in parts) or "\\" in path:
        raise OutputError(f"refusing to write outside the output directory: {path!r}")


def _swap(staging: Path, target: Path) -> None:
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
            shutil.rmtree(old, ignore_errors=True)
    except KeyboardInterrupt:
        if swapped:
            raise InterruptedAfterSwap from None
        raise


def _remove_leftovers(target: Path) -> None:
    """Staging and old trees of killed builds: only ours (marked or empty), beside the output."""
    for sibling in target.parent.iterdir():
        name = sibling.name
        ours = name.startswith(f".{target.name}{STAGING_INFIX}") or name.startswith(
            f".{target.name}{OLD_INFIX}"
        )
        if not ours or sibling.is_symlink() or not sibling.is_dir():
            continue
        if (sibling / MARKER).is_file() or not any(sibling.iterdir()):
            shutil.rmtree(sibling, ignore_errors=True)
