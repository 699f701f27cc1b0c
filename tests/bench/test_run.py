"""The benchmark's own logic: where builds write and how their outputs are cleared away."""

from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from bench import run
from bench.run import Place, place_for, table


def _output(root: Path, name: str) -> Path:
    site = root / name
    (site / "runs" / "a").mkdir(parents=True)
    (site / "runs" / "a" / "index.html").write_text("<p>run</p>")
    cache = root / f".{name}.sitegen-cache"
    cache.mkdir()
    (cache / "state.pickle").write_bytes(b"state")
    return site


def test_disk_moves_an_output_and_its_cache_aside_until_the_trash_is_emptied(
    tmp_path: Path,
) -> None:
    place = Place(tmp_path / "builds", on_disk=True)
    site = _output(place.root, "sitegen-1000")
    place.clear(site)
    assert not site.exists()
    assert not (place.root / ".sitegen-1000.sitegen-cache").exists()
    trash = place.root / ".trash"
    kept = sorted(p.relative_to(trash).as_posix() for p in trash.rglob("*") if p.is_file())
    assert kept == ["1/runs/a/index.html", "2/state.pickle"]
    site = _output(place.root, "sitegen-1000")  # the same path again, then another clear
    place.clear(site)
    assert len(list(trash.iterdir())) == 4
    place.empty_trash()
    assert not trash.exists()
    assert list(place.root.iterdir()) == []


def test_tmpfs_deletes_an_output_and_its_cache_at_once(tmp_path: Path) -> None:
    place = Place(tmp_path, on_disk=False)
    site = _output(tmp_path, "hugo-1000")
    (tmp_path / ".hugo-1000.sitegen-lock").write_text("")  # a build's lock: a file
    place.clear(site)
    place.clear(site)  # nothing left to clear: no error
    assert list(tmp_path.iterdir()) == []


def test_builds_go_to_tmpfs_only_where_it_holds_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(run, "MEMORY", tmp_path)
    usage = SimpleNamespace(total=10 * 2**30, used=0, free=10 * 2**30)
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage)
    assert place_for(100_000, disk=False).root == tmp_path / "sitegen-bench"
    assert not place_for(100_000, disk=False).on_disk
    assert place_for(100_000, disk=True) is run.DISK
    assert place_for(1_000_000, disk=False) is run.DISK  # 40 GB of outputs: not in 10 GiB
    monkeypatch.setattr(run, "MEMORY", tmp_path / "none")
    assert place_for(1_000, disk=False) is run.DISK


def _summary(wall: float, pss: int) -> dict[str, Any]:
    return {
        "wall_s": wall,
        "runs_per_s": 1,
        "pages_per_s": 1,
        "peak_pss_mib": pss,
        "peak_rss_mib": pss,
        "files": 2,
        "bytes_per_page": 3,
    }


def test_the_table_says_where_each_size_was_built() -> None:
    results = {
        "repeat": 3,
        "date": "2026-12-01",
        "machine": {"cpus": 2, "python": "3.11.7"},
        "sizes": {
            "1k": {
                "runs": 1000,
                "output": "tmpfs",
                "sitegen": _summary(0.41, 64),
                "hugo": _summary(0.34, 178),
                "ratio": 1.2,
            },
            "1M": {"runs": 1_000_000, "output": "disk", "sitegen": _summary(500.0, 6000)},
        },
    }
    rows = table(results).splitlines()
    assert rows[2].startswith("| 1k | tmpfs | 0.41 s |") and rows[2].endswith("| **1.20** |")
    assert rows[3].startswith("| 1M | disk | 500.00 s |") and rows[3].endswith("| — | — | — |")


def test_a_size_built_with_search_but_without_hugo_has_its_row() -> None:
    """`--no-hugo` at a size too big for Hugo then Pagefind (300k): sitegen's two builds, no
    ratios."""
    results = {
        "repeat": 1,
        "date": "2026-12-03",
        "machine": {"cpus": 2, "python": "3.11.7"},
        "sizes": {
            "300k": {
                "runs": 300_000,
                "output": "tmpfs",
                "sitegen": _summary(216.1, 2480),
                "sitegen-search": _summary(339.7, 2898),
            },
        },
    }
    rows = table(results).splitlines()
    assert "| 300k | 339.70 s | 2,898 MiB | — | — | — | — |" in rows


def test_this_checkouts_builds_make_no_search_index_unless_asked() -> None:
    """Either checkout (this one, or `--against`'s with its own Python) is built with the same
    flags: without an index unless the search pipeline is the one timed."""
    content, out = Path("content"), Path("out")
    assert run.sitegen_command(content, out)[-1] == "--no-search"
    assert run.sitegen_command(content, out, python="/other/python")[-1] == "--no-search"
    assert "--no-search" not in run.sitegen_command(content, out, search=True)
    assert run.sitegen_command(content, out, "--incremental")[-2:] == [
        "--no-search",
        "--incremental",
    ]


def test_the_search_line_is_read_and_reported_apart() -> None:
    line = (
        "built 5,254 pages (4,729 runs) in 8.6 s, of which the search index 6.9 s "
        "(5,213 pages, 5.3 MiB) → public"
    )
    found = run._SEARCH_LINE.search(line)
    assert found is not None and found.groups() == ("8.6", "6.9", "5,213", "5.3")
    results = {
        "repeat": 1,
        "date": "2026-12-01",
        "machine": {"cpus": 2, "python": "3.11.7"},
        "sizes": {},
        "search": {
            "output": "tmpfs",
            "wall_s": 8.6,
            "indexing_s": 6.9,
            "pages_indexed": 5213,
            "index_files": 5400,
            "index_mib": 5.3,
            "peak_pss_mib": 500,
        },
    }
    assert "with its search index" in table(results) and "of which indexing 6.90 s" in table(
        results
    )


def test_the_search_build_against_another_checkout_reports_its_ratio() -> None:
    """`--search --against`: the real catalog with its index built by both checkouts, side by
    side, and this code's time over that code's."""
    figures = {"wall_s": 80.0, "wall_s_all": [80.0], "indexing_s": 30.0, "peak_pss_mib": 1900}
    results = {
        "repeat": 1,
        "date": "2026-12-04",
        "machine": {"cpus": 2, "python": "3.11.7"},
        "sizes": {},
        "against": "/tmp/old",
        "search": {
            **figures,
            "output": "tmpfs",
            "indexing_s_all": [30.0],
            "pages_indexed": 25486,
            "index_files": 25626,
            "index_mib": 21.1,
            "against": {**figures, "wall_s": 100.0, "indexing_s": 50.0},
            "against_ratio": 0.8,
        },
    }
    text = table(results)
    assert "with `/tmp/old`'s code, side by side: 100.00 s, of which indexing 50.00 s" in text
    assert "**0.80**" in text


def test_hugo_then_pagefind_is_not_started_without_the_memory_it_needs() -> None:
    # Stop 49's run: ~19.9 GB at 100k runs; stale copies in /dev/shm once left 16 GB of 24.
    assert run.pagefind_memory_problem(100_000, available=22_000) is None
    problem = run.pagefind_memory_problem(100_000, available=16_000)
    assert problem is not None
    assert "100,000 runs needs ~20,000 MiB" in problem and "16,000 MiB is available" in problem
    assert "--no-search-sizes" in problem
    assert run.pagefind_memory_problem(10_000, available=16_000) is None
    assert run.available_mib() > 0
