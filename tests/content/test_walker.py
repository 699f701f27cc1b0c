"""The content walker's process (content/walker.py) answers as the build's own walk does."""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path
from typing import Any

import pytest

import sitegen.pipeline
import sitegen.process
from sitegen.content.load import HeldLoads, HeldWalk, LoadCache, content_label, load_content
from sitegen.content.load import unseen_change as own_walk_differs
from sitegen.content.walker import ContentWalker
from sitegen.publish.incremental import State
from tests.conftest import FIXTURES
from tests.publish.test_incremental import cold
from tests.test_pipeline import tree

CONTENT = FIXTURES / "site" / "content"


class Loaded:
    """A content tree as a held state's load leaves it, and its walker."""

    def __init__(self, tmp_path: Path) -> None:
        self.content = tmp_path / "content"
        shutil.copytree(CONTENT, self.content)
        self.walked = HeldWalk()
        self.cache: LoadCache = {}
        self.held: HeldLoads = {}
        self.walker = ContentWalker(self.content, content_label(self.content))
        self.load()

    def load(self, changed: set[str] | None = None, told: bool = True) -> None:
        load_content(self.content, 1, self.cache, None, self.held, self.walked, changed)
        if told:
            self.walker.loaded(self.walked.walks, self.walked.looked_at)

    def differs(self) -> bool:
        walked, cache = self.walked, self.cache
        answer = self.walker.ask(
            walked.walks, walked.files, walked.problems, lambda shown: cache[shown][0]
        )()
        assert answer == own_walk_differs(self.content, walked, cache)
        return answer


def _runs(content: Path) -> list[Path]:
    return sorted((content / "runs").rglob("*.json"))


def _touch(path: Path) -> None:
    path.write_bytes(path.read_bytes() + b"\n")


def test_the_walker_finds_each_kind_of_change_and_takes_a_load_that_looked_at_a_few_files(
    tmp_path: Path,
) -> None:
    """Each change to the tree since the load (a file written, added, deleted, a link made)
    is seen, as the build's own walk sees it; a load that looked at the changed file (told
    file by file) or walked again (told whole) makes the tree agree again."""
    loaded = Loaded(tmp_path)
    try:
        assert not loaded.differs()
        first, second = _runs(loaded.content)[:2]
        _touch(first)
        assert loaded.differs()
        loaded.load({str(first)})
        assert loaded.walked.looked_at is not None and loaded.walked.walks == 1
        assert not loaded.differs()  # told of the one file's stat, not sent the tree again
        _touch(second)
        loaded.load({str(second)})
        assert not loaded.differs()
        added = first.with_name("added.json")
        shutil.copy(first, added)
        assert loaded.differs()
        loaded.load({str(added)})  # a file not walked before: walked again, sent whole
        assert loaded.walked.walks == 2 and loaded.walked.looked_at is None
        assert not loaded.differs()
        added.unlink()
        assert loaded.differs()
        loaded.load()
        assert not loaded.differs()
        os.symlink(first, first.with_name("linked.json"))
        assert loaded.differs()  # a problem more: a link, never followed
        loaded.load()
        assert loaded.walked.problems and not loaded.differs()
    finally:
        loaded.walker.stop()


def test_a_walker_not_told_of_a_load_sees_a_change_where_there_is_none_never_the_reverse(
    tmp_path: Path,
) -> None:
    """What the walker holds can only fall behind the load: a file's stat it was not told
    of is one the load took since, so the answer is a change, and a walk of the tree follows;
    once told of the next load, it agrees again."""
    loaded = Loaded(tmp_path)
    try:
        assert not loaded.differs()
        first = _runs(loaded.content)[0]
        _touch(first)
        loaded.load({str(first)}, told=False)
        walked, cache = loaded.walked, loaded.cache
        asked = loaded.walker.ask(
            walked.walks, walked.files, walked.problems, lambda s: cache[s][0]
        )
        assert asked() and not own_walk_differs(loaded.content, walked, cache)
        loaded.load()  # walked again: sent whole
        assert not loaded.differs()
    finally:
        loaded.walker.stop()


def test_a_held_build_asks_the_walker_and_walks_itself_once_it_stops_answering(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With two CPUs, a held build that takes a watcher's word has the walker process check
    it (no worker forked for it); a walker that stopped answering is replaced by the build's
    own walk, which finds the change all the same, and no walker is started again."""
    monkeypatch.setattr(sitegen.process, "usable_cpus", lambda *_: 2)
    forked: list[object] = []
    meanwhile = sitegen.process.meanwhile
    monkeypatch.setattr(
        sitegen.process, "meanwhile", lambda call: forked.append(call) or meanwhile(call)
    )
    content = tmp_path / "content"
    shutil.copytree(CONTENT, content)
    out, state = tmp_path / "public", State()
    assert sitegen.pipeline.build_site(content, out, state=state).out_dir is not None
    first, second = _runs(content)[:2]
    _touch(first)
    built = sitegen.pipeline.build_site(content, out, state=state, changed={str(first)})
    assert built.out_dir is not None and state.walker is not None and not forked
    walker = state.walker
    ask = walker.ask

    def asked_then_killed(*args: object) -> object:
        # Stopped before it is asked, so that it cannot answer before it is killed.
        walker._process.send_signal(signal.SIGSTOP)
        answer = ask(*args)  # type: ignore[arg-type]
        walker._process.kill()
        walker._process.wait()
        return answer

    monkeypatch.setattr(walker, "ask", asked_then_killed)
    _touch(second)  # missed by the watcher, which tells of the first again
    own: list[bool] = []
    unseen_change = sitegen.pipeline.unseen_change
    monkeypatch.setattr(
        sitegen.pipeline,
        "unseen_change",
        lambda *args: own.append(unseen := unseen_change(*args)) or unseen,
    )
    built = sitegen.pipeline.build_site(content, out, state=state, changed={str(first)})
    assert built.out_dir is not None
    assert state.walker is None and state.content_unwalked and own[:1] == [True]
    assert tree(out) == cold(content, tmp_path, "missed")
    _touch(first)
    built = sitegen.pipeline.build_site(content, out, state=state, changed={str(first)})
    assert built.out_dir is not None and state.walker is None
    assert len(forked) == 1  # a worker forked for the check, as before walkers


def test_a_held_build_that_walked_tells_the_walker_of_its_walk_for_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A held build that walked the tree (the first) starts the walker and tells it of that
    walk as it ends: the next build, told of a few files, sends it only those files' stats."""
    monkeypatch.setattr(sitegen.process, "usable_cpus", lambda *_: 2)
    content = tmp_path / "content"
    shutil.copytree(CONTENT, content)
    out, state = tmp_path / "public", State()
    assert sitegen.pipeline.build_site(content, out, state=state).out_dir is not None
    walker = state.walker
    assert walker is not None and walker._walks == state.walked.walks
    asked: list[tuple[bool, set[str]]] = []
    ask = walker.ask

    def noted(walks: int, *args: Any) -> Any:
        # Whether the whole walk goes with the question, and which files' stats would.
        asked.append((walker._walks != walks, set(walker._pending)))
        return ask(walks, *args)

    monkeypatch.setattr(walker, "ask", noted)
    first = _runs(content)[0]
    _touch(first)
    built = sitegen.pipeline.build_site(content, out, state=state, changed={str(first)})
    assert built.out_dir is not None and state.walker is walker
    shown = [name for name, path in state.walked.files.items() if path == str(first)]
    assert asked == [(False, set(shown))] and len(shown) == 1
    assert tree(out) == cold(content, tmp_path, "told")


def test_a_load_that_cannot_be_sent_is_not_asked_about(tmp_path: Path) -> None:
    """A name JSON cannot hold (a lone surrogate, which the walk refuses but a caller might
    hand over) is an OSError before anything is sent: the build walks the tree itself."""
    loaded = Loaded(tmp_path)
    try:
        walked = loaded.walked
        files = {**walked.files, "content/x\udcff.json": "x"}
        with pytest.raises(OSError, match="cannot be told"):
            loaded.walker.ask(walked.walks + 1, files, walked.problems, lambda s: (0,))
        assert not loaded.differs()  # still told of the last load only
    finally:
        loaded.walker.stop()


def test_an_answer_a_build_never_read_is_passed_over(tmp_path: Path) -> None:
    """A build that stopped (a newer save) before it read the walker's answer leaves it in
    the pipe; the next build reads the answer to its own question, asked after a change."""
    loaded = Loaded(tmp_path)
    try:
        walked, cache = loaded.walked, loaded.cache
        loaded.walker.ask(walked.walks, walked.files, walked.problems, lambda s: cache[s][0])
        _touch(_runs(loaded.content)[0])  # after the first question: its answer is "same"
        assert loaded.differs() and loaded.differs()
    finally:
        loaded.walker.stop()


def test_a_held_build_asks_the_walker_before_its_resolution_and_hears_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The walker is asked as soon as the load has read the few files it looks at, with each
    one's stat as the load took it, before the resolution (its walk runs beside the rest of
    the build): no change is seen where the watcher told of every one, build after build,
    and one the watcher missed is found (the tree walked again, the site a cold build's)."""
    monkeypatch.setattr(sitegen.process, "usable_cpus", lambda *_: 2)
    content = tmp_path / "content"
    shutil.copytree(CONTENT, content)
    out, state = tmp_path / "public", State()
    assert sitegen.pipeline.build_site(content, out, state=state).out_dir is not None
    events: list[str] = []
    ask, resolve = ContentWalker.ask, sitegen.pipeline.resolve
    monkeypatch.setattr(ContentWalker, "ask", lambda *args: events.append("asked") or ask(*args))
    monkeypatch.setattr(
        sitegen.pipeline, "resolve", lambda *args: events.append("resolved") or resolve(*args)
    )
    first, second = _runs(content)[:2]
    for _ in range(2):
        _touch(first)
        built = sitegen.pipeline.build_site(content, out, state=state, changed={str(first)})
        assert built.out_dir is not None and state.walker is not None
        assert events == ["asked", "resolved"] and state.walked.walks == 1  # nothing missed
        events.clear()
    _touch(first)
    _touch(second)  # missed by the watcher
    built = sitegen.pipeline.build_site(content, out, state=state, changed={str(first)})
    assert built.out_dir is not None and state.walked.walks == 2
    assert tree(out) == cold(content, tmp_path, "missed")
