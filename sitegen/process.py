"""Process tuning, in one place: how many CPUs a build may use, how its worker processes are
forked, handed work and ended, and how the garbage collector runs while a build allocates.

The worker counts follow from `usable_cpus`: `os.cpu_count()` is the host's count, and a
container limited to 2 CPUs on a 64-CPU host (a CI runner, a deploy builder) would fork 64
workers, each copying the memory it touches. So the count is the process's affinity mask,
lowered to its cgroup's CPU quota (as `loky.cpu_count()` does, without importing loky).
"""

from __future__ import annotations

import contextlib
import functools
import gc
import math
import os
import pickle
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:  # multiprocessing with its first use: ~7 ms of every command's start
    from multiprocessing.context import ForkContext

T = TypeVar("T")

CGROUP_ROOT = Path("/sys/fs/cgroup")

# While a build runs, the young generation is collected every this many allocations, not 700:
# loading and planning make millions of objects that live until the build ends and hold no
# cycles worth finding (docs/performance.md has the measurements).
COLLECT_EVERY = 100_000

# Load workers wait on every read of a file that is not in the page cache: with two per CPU
# one reads while the other computes. A small tree waits little, and one per CPU is faster.
LOAD_PROCESSES_PER_CPU = 2
MANY_FILES = 8_000


def usable_cpus(cgroup_root: Path = CGROUP_ROOT) -> int:
    """The CPUs this process may run on, fewer where a cgroup CPU quota allows fewer."""
    try:
        count = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        count = os.cpu_count() or 1
    quota = cgroup_quota(cgroup_root, _own_cgroup())
    if quota is not None:
        count = min(count, max(1, math.ceil(quota)))
    return max(1, count)


def load_processes(file_count: int) -> int:
    """How many processes read a content tree of `file_count` files."""
    per_cpu = LOAD_PROCESSES_PER_CPU if file_count >= MANY_FILES else 1
    return per_cpu * usable_cpus()


def next_share(left: int, processes: int, smallest: int, largest: int) -> int:
    """How many of the `left` items a process takes next (guided scheduling): a
    `2 × processes`-th of them, within [smallest, largest]. The last shares are small, so the
    processes finish nearly together; the first are large, so handing out costs little."""
    return min(largest, max(smallest, -(-left // (2 * processes))))


# The process that forks workers, as they see it: a worker whose parent is no longer this one
# was orphaned (its parent died) and ends itself.
_forking_process: int | None = None
PR_SET_PDEATHSIG = 1  # linux/prctl.h
ORPHAN_POLL_S = 0.25  # where the kernel cannot signal an orphan, how often it looks


def fork_context() -> ForkContext:
    """Workers are forked: they inherit the loaded catalog and planned site without pickling."""
    global _forking_process
    _forking_process = os.getpid()
    import multiprocessing

    return multiprocessing.get_context("fork")


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def forking_workers() -> Iterator[None]:
    """Fork workers inside this block: they start with SIGINT and SIGTERM held, so that one
    sent before `worker_signals` has run waits for it, instead of reaching a Python handler
    inherited from the parent (a worker that took it, raised and went on would wait forever on
    a queue's lock that a terminated sibling died holding)."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def worker_signals() -> None:
    """In a forked worker: die of SIGTERM even where the parent handles it (an inherited Python
    handler runs only between bytecodes, and a worker blocked on a queue's lock never ran it);
    Ctrl-C is the parent's, which stops the workers. And die with the parent, however it dies
    (`kill -9` included): a worker never writes on into a staging tree nobody will swap in.
    A signal held since the fork (`forking_workers`) is taken now, as these say."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent()
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)


def die_with_parent() -> None:
    """Linux: the kernel sends SIGKILL to this process when its parent exits. Elsewhere a
    daemon thread looks every ORPHAN_POLL_S. Either way, a parent already gone ends it now."""
    parent = _forking_process if _forking_process is not None else os.getppid()
    if not _kernel_kills_orphans():
        threading.Thread(target=_end_when_orphaned, args=(parent,), daemon=True).start()
    if os.getppid() != parent:  # it died before the kernel was asked
        os._exit(1)


def _kernel_kills_orphans() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes  # only in a worker, once

        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def _end_when_orphaned(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(ORPHAN_POLL_S)
    os._exit(1)


# Signals that came while `interrupts_deferred` held them, acted on when it ends.
_held: list[int] = []
_holding = 0


@contextlib.contextmanager
def stopped_by_signals() -> Iterator[None]:
    """While the block runs, SIGTERM (a process manager, `kill`, a cancelled CI job) stops it as
    Ctrl-C does: KeyboardInterrupt, so that what each stage holds is cleaned up on the way out,
    except inside `interrupts_deferred`. A signal already ignored (a shell's background job
    ignores SIGINT) stays ignored. The previous handlers come back after."""
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may set handlers; signals reach only it anyway
        return
    previous = {number: signal.getsignal(number) for number in STOP_SIGNALS}
    for number, handler in previous.items():
        if handler is not signal.SIG_IGN:
            signal.signal(number, _stop)
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def _stop(signal_number: int, frame: FrameType | None) -> None:
    if _holding:
        _held.append(signal_number)
        return
    raise KeyboardInterrupt


@contextlib.contextmanager
def interrupts_deferred() -> Iterator[None]:
    """Ctrl-C and SIGTERM wait until the block has ended (under `stopped_by_signals`): a few
    renames that must all happen, or none, are never cut in the middle."""
    global _holding
    _holding += 1
    try:
        yield
    finally:
        _holding -= 1
        if not _holding and _held:
            _held.clear()
            raise KeyboardInterrupt  # even over the block's own error: stopping was asked for


@contextlib.contextmanager
def collecting_less() -> Iterator[None]:
    """The young generation collected every COLLECT_EVERY allocations while the block runs."""
    thresholds = gc.get_threshold()
    if thresholds[0] == COLLECT_EVERY:  # already inside one: the outermost restores
        yield
        return
    gc.set_threshold(COLLECT_EVERY, 50, 1000)
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)


@contextlib.contextmanager
def not_collecting() -> Iterator[None]:
    """No collection while the block runs: for a block making many objects without cycles,
    each freed when its count drops, where the collector's passes over them are pure cost."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def forked_calls(calls: Sequence[Callable[[], T]]) -> list[T]:
    """Each of `calls`' results, in order: the first made by this process, each other by a
    forked worker of its own meanwhile, where there is a CPU for it (else all here, in
    turn). What a worker raises is raised here: an exception that pickles as itself, anything
    else as a RuntimeError of its words; a worker that dies without a word, a RuntimeError."""
    if len(calls) < 2 or usable_cpus() < 2:
        return [call() for call in calls]
    context = fork_context()
    workers: list[_Forked[T]] = []
    with frozen_for_fork():
        try:
            with forking_workers():
                for call in calls[1:]:  # each kept as it starts: stopped should the next fail
                    workers.append(_Forked(call, context))
            return [calls[0](), *(worker.answer() for worker in workers)]
        finally:
            for worker in workers:
                worker.stop()


@contextlib.contextmanager
def meanwhile(call: Callable[[], T]) -> Iterator[Callable[[], T]]:
    """`call` made by a forked worker while the block runs, where there is a CPU for it (else
    here, when its answer is asked for): the block gets a function that waits for the answer
    and returns it, or raises what the call raised (as `forked_calls` does). A worker still
    running when the block ends is killed."""
    if usable_cpus() < 2:
        yield functools.cache(call)
        return
    gc.freeze()  # the worker's collector leaves the pages it shares with this process alone
    try:
        with forking_workers():
            worker = _Forked(call, fork_context())
    finally:
        gc.unfreeze()
    try:
        yield functools.cache(worker.answer)
    finally:
        worker.stop()


class _Forked(Generic[T]):
    """A call made by a forked worker (started inside `forking_workers`), its answer sent back
    through a pipe."""

    def __init__(self, call: Callable[[], T], context: Any) -> None:
        self._reader, writer = context.Pipe(duplex=False)
        try:
            self._process = context.Process(target=_forked_call, args=(call, writer))
            self._process.start()
        finally:
            writer.close()

    def answer(self) -> T:
        """The call's result, waited for; what it raised, raised here."""
        try:
            done, value = self._reader.recv()
        except EOFError:
            self._process.join()
            code = self._process.exitcode
            raise RuntimeError(f"a worker died (exit code {code})") from None
        if not done:
            raise value
        return value  # type: ignore[no-any-return]

    def stop(self) -> None:
        """Killed if still running, reaped, its pipe closed."""
        if self._process.is_alive():
            self._process.kill()
        self._process.join()
        self._reader.close()


def _forked_call(call: Callable[[], object], writer: Any) -> None:
    worker_signals()
    try:
        answer: tuple[bool, object] = (True, call())
    except BaseException as error:  # anything a worker meets is reported, then it stops
        try:
            pickle.loads(pickle.dumps(error))
            answer = (False, error)
        except Exception:  # an exception that does not pickle: its words
            answer = (False, RuntimeError(f"{type(error).__name__}: {error}"))
    writer.send(answer)
    writer.close()


@contextlib.contextmanager
def frozen_for_fork() -> Iterator[None]:
    """Everything alive now is left out of collections while forked workers run: the collector
    never touches it again, so the copy-on-write pages they share stay shared."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def exit_now(code: int) -> None:
    """End the command once its output is complete: flush the streams and skip the
    interpreter's teardown (a last collection and every module's caches), as mypy does."""
    for stream in (sys.stdout, sys.stderr):
        # Its reader may have gone (`| head`): there is nothing more to tell it.
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)


def cgroup_quota(root: Path, own: str) -> float | None:
    """CPUs' worth of time this process's cgroups may use, or None if unlimited.

    cgroup v2: `cpu.max` of its cgroup `own` and of each above it ("<quota> <period>", or
    "max <period>": none). v1: `cpu.cfs_quota_us` (-1: none) over `cpu.cfs_period_us` of the
    cpu controller's hierarchy as this process sees it (in a container, its own). The
    tightest counts.
    """
    found: list[float] = []
    parts = [part for part in own.split("/") if part]
    folder = root.joinpath(*parts)
    while True:
        limit = _v2_limit(folder)
        if limit is not None:
            found.append(limit)
        if folder == root:
            break
        folder = folder.parent
    for controller in ("cpu", "cpu,cpuacct"):
        limit = _v1_limit(root / controller)
        if limit is not None:
            found.append(limit)
    return min(found) if found else None


def _own_cgroup() -> str:
    """This process's cgroup v2 path ("0::/path" in /proc/self/cgroup), "/" if unknown."""
    try:
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            if line.startswith("0::"):
                return line[3:] or "/"
    except OSError:
        pass
    return "/"


def _v2_limit(folder: Path) -> float | None:
    fields = _read(folder / "cpu.max").split()
    if len(fields) != 2 or fields[0] == "max":
        return None
    return _ratio(fields[0], fields[1])


def _v1_limit(folder: Path) -> float | None:
    quota, period = _read(folder / "cpu.cfs_quota_us"), _read(folder / "cpu.cfs_period_us")
    if not quota or not period or quota.strip() == "-1":
        return None
    return _ratio(quota, period)


def _ratio(quota: str, period: str) -> float | None:
    try:
        value = int(quota) / int(period)
    except (ValueError, ZeroDivisionError):
        return None
    return value if value > 0 else None


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""
