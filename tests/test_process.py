"""process.py: the CPUs a build may use (affinity mask, cgroup quota) and its worker counts."""

from __future__ import annotations

import functools
import multiprocessing
import os
import time
from pathlib import Path

import pytest

from sitegen import process
from sitegen.process import cgroup_quota, usable_cpus


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.mark.parametrize(
    ("files", "own", "quota"),
    [
        ({}, "/", None),
        ({"cpu.max": "max 100000\n"}, "/", None),
        ({"cpu.max": "200000 100000\n"}, "/", 2.0),
        ({"cpu.max": "150000 100000\n"}, "/", 1.5),
        # The tightest limit on the way up from this process's own cgroup counts.
        ({"cpu.max": "400000 100000\n", "ci/job/cpu.max": "100000 100000\n"}, "/ci/job", 1.0),
        ({"cpu.max": "100000 100000\n", "ci/job/cpu.max": "max 100000\n"}, "/ci/job", 1.0),
        # cgroup v1: quota over period; -1 is no limit.
        ({"cpu/cpu.cfs_quota_us": "300000\n", "cpu/cpu.cfs_period_us": "100000\n"}, "/", 3.0),
        ({"cpu,cpuacct/cpu.cfs_quota_us": "-1\n", "cpu,cpuacct/cpu.cfs_period_us": "1"}, "/", None),
        # Garbage is no limit, never a crash.
        ({"cpu.max": "lots", "cpu/cpu.cfs_quota_us": "x", "cpu/cpu.cfs_period_us": "0"}, "/", None),
    ],
)
def test_cgroup_quota(tmp_path: Path, files: dict[str, str], own: str, quota: float | None) -> None:
    for name, text in files.items():
        _write(tmp_path / name, text)
    assert cgroup_quota(tmp_path, own) == quota


def test_usable_cpus_never_exceeds_the_affinity_mask_and_follows_a_quota(tmp_path: Path) -> None:
    mask = len(os.sched_getaffinity(0))
    assert 1 <= usable_cpus(tmp_path) == mask  # no cgroup files: the mask
    _write(tmp_path / "cpu.max", "50000 100000\n")  # half a CPU still gets one process
    assert usable_cpus(tmp_path) == 1
    _write(tmp_path / "cpu.max", f"{(mask + 8) * 100000} 100000\n")  # a quota above the mask
    assert usable_cpus(tmp_path) == mask
    assert usable_cpus() <= (os.cpu_count() or 1)


def test_next_share_is_a_fraction_of_what_is_left_within_bounds() -> None:
    from sitegen.process import next_share

    assert next_share(100_000, 2, 16, 250) == 250  # capped
    assert next_share(1_000, 2, 16, 250) == 250
    assert next_share(400, 2, 16, 250) == 100  # a quarter of what is left
    assert next_share(401, 2, 16, 250) == 101  # rounded up: nothing is left behind
    assert next_share(20, 2, 16, 250) == 16  # never below the smallest
    assert next_share(5, 2, 16, 250) == 16  # the caller takes what there is


def test_a_small_tree_is_read_by_one_worker_per_cpu_a_big_one_by_two(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(process, "usable_cpus", lambda: 3)
    assert process.load_processes(process.MANY_FILES - 1) == 3
    assert process.load_processes(process.MANY_FILES) == 3 * process.LOAD_PROCESSES_PER_CPU


def test_a_build_collects_less_and_puts_the_thresholds_back() -> None:
    import gc

    before = gc.get_threshold()
    with process.collecting_less():
        assert gc.get_threshold()[0] == process.COLLECT_EVERY
        with process.collecting_less():  # nested: the outermost restores
            pass
        assert gc.get_threshold()[0] == process.COLLECT_EVERY
    assert gc.get_threshold() == before


# A parent that forks two load workers and one render-style worker, prints their ids, then is
# killed with SIGKILL: nothing of its own runs after, so only the kernel can end the workers.
_ORPHANING_PARENT = """
import os, signal, sys, time
from sitegen import process
from sitegen.content import load
pool = load._pool(2)
pids = [worker.pid for worker in pool._pool]
context = process.fork_context()

def render_like():
    process.worker_signals()
    time.sleep(60)

with process.forking_workers():
    helper = context.Process(target=render_like)
    helper.start()
print(*pids, helper.pid, flush=True)
time.sleep(0.3)
os.kill(os.getpid(), signal.SIGKILL)
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def test_workers_end_within_a_second_of_their_parents_death() -> None:
    import subprocess
    import sys
    import time

    result = subprocess.run(
        [sys.executable, "-c", _ORPHANING_PARENT], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == -9, result.stderr
    workers = [int(pid) for pid in result.stdout.split()]
    assert len(workers) == 3
    died = time.monotonic()
    while any(_alive(pid) for pid in workers) and time.monotonic() - died < 1.0:
        time.sleep(0.01)
    assert not any(_alive(pid) for pid in workers)


def test_a_worker_started_after_its_parent_died_ends_itself(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The parent may die between the fork and the worker asking the kernel: it then sees a
    parent that is not the one that forked it, and ends."""
    ended = []
    monkeypatch.setattr(process, "_forking_process", os.getpid() + 1)  # not this one's parent
    monkeypatch.setattr(process, "_kernel_kills_orphans", lambda: True)
    monkeypatch.setattr(os, "_exit", ended.append)
    process.die_with_parent()
    assert ended == [1]


def test_interrupts_wait_for_the_deferred_block_then_stop() -> None:
    """Under `stopped_by_signals`, SIGTERM inside `interrupts_deferred` lets the block finish,
    then raises; one outside raises at once; nothing is left held for a later block."""
    import os
    import signal

    import pytest

    from sitegen.process import interrupts_deferred, stopped_by_signals

    done = []
    with stopped_by_signals():
        with pytest.raises(KeyboardInterrupt), interrupts_deferred():
            os.kill(os.getpid(), signal.SIGTERM)
            done.append("after the signal")
        assert done == ["after the signal"]
        with pytest.raises(KeyboardInterrupt), interrupts_deferred():
            os.kill(os.getpid(), signal.SIGTERM)
            raise OSError("the block's own error")
        with interrupts_deferred():
            done.append("a later block, not interrupted")
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGTERM)
            for _ in range(1000):
                done.append("never: outside a deferred block it stops at once")
    assert done == ["after the signal", "a later block, not interrupted"]


class _Unpicklable(Exception):
    def __reduce__(self) -> str | tuple[object, ...]:
        raise TypeError("not this one")


def _own_pid() -> int:
    return os.getpid()


def _fails() -> int:
    raise ValueError("bad chunk")


def _fails_unpicklably() -> int:
    raise _Unpicklable("held a lock")


def _dies() -> int:
    os._exit(9)


@pytest.mark.parametrize("cpus", [1, 2])
def test_forked_calls_answer_in_order_from_workers_where_there_are_cpus(
    cpus: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(process, "usable_cpus", lambda: cpus)
    first, second, third = process.forked_calls([_own_pid, _own_pid, _own_pid])
    assert first == os.getpid()
    assert (second != first and third not in (first, second)) if cpus > 1 else second == first


def test_what_a_forked_call_raises_is_raised_here(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(process, "usable_cpus", lambda: 2)
    with pytest.raises(ValueError, match="bad chunk"):
        process.forked_calls([_own_pid, _fails])
    with pytest.raises(RuntimeError, match="_Unpicklable: held a lock"):
        process.forked_calls([_own_pid, _fails_unpicklably])
    with pytest.raises(RuntimeError, match=r"a worker died \(exit code 9\)"):
        process.forked_calls([_own_pid, _dies])


@pytest.mark.parametrize("cpus", [1, 2])
def test_a_call_meanwhile_answers_from_a_worker_where_there_is_a_cpu(
    cpus: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(process, "usable_cpus", lambda: cpus)
    with process.meanwhile(_own_pid) as answer:
        assert (answer() != os.getpid()) if cpus > 1 else answer() == os.getpid()
        assert answer() == answer()  # asked again: the same answer, not a second call


def test_what_a_call_meanwhile_raises_is_raised_when_asked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(process, "usable_cpus", lambda: 2)
    with process.meanwhile(_fails) as answer, pytest.raises(ValueError, match="bad chunk"):
        answer()
    died = pytest.raises(RuntimeError, match=r"a worker died \(exit code 9\)")
    with process.meanwhile(_dies) as answer, died:
        answer()


def test_a_call_meanwhile_not_asked_for_is_stopped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(process, "usable_cpus", lambda: 2)
    before = set(multiprocessing.active_children())
    with process.meanwhile(functools.partial(time.sleep, 60)):
        (worker,) = set(multiprocessing.active_children()) - before
    assert not worker.is_alive()  # killed and joined as the block ended, not left to run
