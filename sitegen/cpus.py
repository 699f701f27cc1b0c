"""How many CPUs a build may use: the number of load and render processes follows from it.

`os.cpu_count()` is the host's count. A container limited to 2 CPUs on a 64-CPU host (a CI
runner, a deploy builder) would fork 64 render workers, each copying the memory it touches:
so the count here is the process's affinity mask, lowered to its cgroup's CPU quota.
`loky.cpu_count()` does the same, but importing loky takes ~80 ms (3 % of the real catalog's
build); `os.process_cpu_count()` (Python 3.13) reads the mask only.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")


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


def next_share(left: int, processes: int, smallest: int, largest: int) -> int:
    """How many of the `left` items a process takes next (guided scheduling): a
    `2 × processes`-th of them, within [smallest, largest]. The last shares are small, so the
    processes finish nearly together; the first are large, so handing out costs little."""
    return min(largest, max(smallest, -(-left // (2 * processes))))


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
