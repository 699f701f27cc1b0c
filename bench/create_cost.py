"""What creating a site's files costs the file system under DIR, nothing rendered: a folder per
page holding a 12 KB `index.html` and a 3 KB `index.json`, as a run page and its twin.

    python bench/create_cost.py DIR [--folders 20000]

DIR must not exist; it is left in place, so that the measurement itself deletes nothing (on
ext4 without a journal, a deletion slows the next minutes' creations: see
bench/results/issue-38-disk-2026-12-05.md). Prints the microseconds a folder and its two files
took, and the process's kernel CPU.
"""

from __future__ import annotations

import argparse
import os
import resource
import time
from pathlib import Path

PAGE = b"x" * 12_000
TWIN = b"x" * 3_000


def create(root: Path, folders: int) -> tuple[float, float]:
    """Seconds of wall time and of kernel CPU to create `folders` page folders under `root`."""
    os.mkdir(root)
    started = time.perf_counter()
    system = resource.getrusage(resource.RUSAGE_SELF).ru_stime
    for number in range(folders):
        folder = f"{root}/{number}"
        os.mkdir(folder)
        for name, data in (("index.html", PAGE), ("index.json", TWIN)):
            handle = os.open(f"{folder}/{name}", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            try:
                os.write(handle, data)
            finally:
                os.close(handle)
    wall = time.perf_counter() - started
    return wall, resource.getrusage(resource.RUSAGE_SELF).ru_stime - system


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dir", type=Path)
    parser.add_argument("--folders", type=int, default=20_000)
    args = parser.parse_args()
    wall, system = create(args.dir, args.folders)
    per_folder = wall / args.folders * 1e6
    print(
        f"{args.dir}: {per_folder:.0f} µs a folder and its two files "
        f"({wall:.2f} s, kernel CPU {system:.2f} s)"
    )


if __name__ == "__main__":
    main()
