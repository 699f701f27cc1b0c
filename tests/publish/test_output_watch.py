"""The build daemon's watch of its output (sitegen/publish/output_watch.py): real inotify on
real folders; a change by anyone after the build is seen, the build's own writes are not."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from inotify_simple import Event, flags

import sitegen.publish.output_watch as output_watch
from sitegen.publish.output_watch import NotWatched, OutputWatch


def output(tmp_path: Path) -> Path:
    root = tmp_path / "public"
    (root / "runs" / "a").mkdir(parents=True)
    (root / "runs" / "a" / "index.html").write_text("a")
    (root / "index.html").write_text("home")
    return root


def armed(root: Path) -> OutputWatch:
    watch = OutputWatch.arm(root)
    assert isinstance(watch, OutputWatch)
    assert watch.unchanged()
    return watch


def _append(root: Path) -> None:
    with (root / "index.html").open("a") as page:
        page.write("!")


def _link(root: Path) -> None:
    os.link(root / "index.html", root / "runs" / "a" / "linked.html")


CHANGES: dict[str, Callable[[Path], object]] = {
    "written in place": lambda root: (root / "runs" / "a" / "index.html").write_text("b"),
    "appended": _append,
    "added": lambda root: (root / "runs" / "a" / "new.html").write_text("new"),
    "deleted": lambda root: (root / "runs" / "a" / "index.html").unlink(),
    "chmod": lambda root: (root / "index.html").chmod(0o600),
    "touched": lambda root: os.utime(root / "runs" / "a" / "index.html", ns=(1, 1)),
    "renamed": lambda root: (root / "index.html").rename(root / "home.html"),
    "folder added": lambda root: (root / "runs" / "b").mkdir(),
    "folder removed": lambda root: shutil.rmtree(root / "runs" / "a"),
    "linked in": _link,
    "symlinked in": lambda root: (root / "runs" / "x").symlink_to("/etc"),
}


@pytest.mark.parametrize("change", CHANGES, ids=list(CHANGES))
def test_a_change_made_after_the_build_is_seen_and_stays_seen(tmp_path: Path, change: str) -> None:
    root = output(tmp_path)
    watch = armed(root)
    CHANGES[change](root)
    assert not watch.unchanged()
    assert not watch.unchanged()  # asked again by a build that starts over
    # The build that walked and rewrote the output holds a new watch of all of it.
    rearmed = watch.settled()
    assert isinstance(rearmed, OutputWatch) and rearmed is not watch
    assert rearmed.unchanged()


def test_the_builds_own_writes_are_settled_and_its_new_folders_watched(tmp_path: Path) -> None:
    root = output(tmp_path)
    watch = armed(root)
    (root / "runs" / "b" / "deep").mkdir(parents=True)  # the build's: a new run's page
    (root / "runs" / "b" / "deep" / "index.html").write_text("b")
    (root / "runs" / "a" / "index.html").write_text("a2")
    shutil.rmtree(root / "runs" / "a")
    assert watch.settled() is watch
    assert watch.unchanged()
    (root / "runs" / "b" / "deep" / "index.html").write_text("someone else")
    assert not watch.unchanged()


def test_a_folder_the_build_moves_is_watched_by_its_new_name(tmp_path: Path) -> None:
    """As the search index's folder is swapped in: made elsewhere, then moved in."""
    root = output(tmp_path)
    made = tmp_path / "staging" / "pagefind"
    (made / "fragment").mkdir(parents=True)
    watch = armed(root)
    os.rename(root / "runs", tmp_path / "staging" / "old-runs")  # moved out, then removed
    shutil.rmtree(tmp_path / "staging" / "old-runs")
    os.rename(made, root / "pagefind")
    assert watch.settled() is watch
    assert watch.unchanged()
    (root / "pagefind" / "fragment" / "x.pf_fragment").write_bytes(b"someone else")
    assert not watch.unchanged()


def test_an_overflow_or_the_output_replaced_means_a_new_watch(tmp_path: Path) -> None:
    root = output(tmp_path)
    watch = armed(root)
    # The kernel's queue overflowed while the build wrote (events were lost): watch it all.
    watch._follow(Event(wd=-1, mask=flags.Q_OVERFLOW, cookie=0, name=""))
    rearmed = watch.settled()
    assert isinstance(rearmed, OutputWatch) and rearmed is not watch
    # The output replaced whole, as a full build swaps a staging tree in.
    replaced = tmp_path / "staging"
    shutil.copytree(root, replaced)
    os.rename(root, tmp_path / "old")
    os.rename(replaced, root)
    again = rearmed.settled()
    assert isinstance(again, OutputWatch) and again is not rearmed
    (root / "runs" / "a" / "index.html").write_text("someone else")
    assert not again.unchanged()


def test_no_watch_where_it_could_not_be_trusted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = output(tmp_path)
    mounts = tmp_path / "mountinfo"
    # A network file system's inotify does not see other machines' writes.
    mounts.write_text(f"36 25 0:32 / {tmp_path} rw,relatime shared:1 - nfs4 server:/ rw\n")
    monkeypatch.setattr(output_watch, "MOUNTS", mounts)
    assert OutputWatch.arm(root) == NotWatched(
        None, "its file system's inotify may not see every change"
    )
    assert not NotWatched(None, "never").may_fit()
    # A mount point's name as the kernel escapes it (a space: \\040).
    spaced = tmp_path / "a b"
    spaced.mkdir()
    mounts.write_text(f"36 25 0:32 / {str(spaced).replace(' ', chr(92) + '040')} rw - ext4 x rw\n")
    assert output_watch._local(spaced)
    assert not output_watch._local(root)  # no mount above it
    monkeypatch.undo()
    # More folders than the user's watches leave, a quarter of them kept free of those held.
    watches = tmp_path / "max_user_watches"
    watches.write_text("40\n")  # 30 usable: root, runs, runs/a are 3
    monkeypatch.setattr(output_watch, "MAX_WATCHES", watches)
    monkeypatch.setattr(output_watch, "watches_held", lambda: 27)
    assert isinstance(OutputWatch.arm(root), OutputWatch)
    monkeypatch.setattr(output_watch, "watches_held", lambda: 28)  # another daemon's, say
    short = OutputWatch.arm(root)
    assert short == NotWatched(3, short.reason)
    assert "its 3 folders want more inotify watches than this user has free (2 of" in short.reason
    assert not short.may_fit()  # told without listing the output's folders again
    monkeypatch.setattr(output_watch, "watches_held", lambda: 27)  # the other one ended
    assert short.may_fit()
    missing = OutputWatch.arm(tmp_path / "missing")
    assert missing == NotWatched(0, "its folders could not be read") and missing.may_fit()


def test_a_watch_refused_by_inotify_is_undone_and_tried_again_later(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = output(tmp_path)
    added: list[int] = []

    def refused(self: OutputWatch, folder: str) -> None:
        if len(added) == 2:  # the user's limit reached by someone else meanwhile
            raise OSError(28, "No space left on device")
        added.append(self._inotify.add_watch(folder, self._mask))

    monkeypatch.setattr(OutputWatch, "_add", refused)
    assert OutputWatch.arm(root) == NotWatched(
        3, "inotify refused a watch (No space left on device)"
    )
    monkeypatch.undo()
    armed(root)


def test_a_queue_that_cannot_be_read_means_a_walk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    watch = armed(output(tmp_path))

    def refused(timeout: float = 0) -> list[Event]:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(watch._inotify, "read", refused)
    assert not watch.unchanged()
    monkeypatch.undo()
    assert not watch.unchanged()  # still: nothing can say what happened meanwhile
    rearmed = watch.settled()
    assert isinstance(rearmed, OutputWatch) and rearmed.unchanged()


def test_the_watches_this_users_processes_hold_are_counted(tmp_path: Path) -> None:
    before = output_watch.watches_held()
    watch = armed(output(tmp_path))  # root, runs, runs/a
    assert output_watch.watches_held() >= before + 3
    watch.close()
