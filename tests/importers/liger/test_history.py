"""The benchmark history (`sitegen import liger … --history DIR`): each row bound to the commit
it measured, a row published twice one run, the main CSV's digests unmoved, the runs written
in bulk files. The fixture `tests/fixtures/liger/history/` is four folders of the real
history, two rows each: a carried-over pair (one also in the main CSV), a CI run, and a CI run
and a release run of one commit."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from sitegen.content.bulk import COMPRESSED_SUFFIX
from sitegen.importers.liger.history import load_history
from sitegen.importers.liger.importing import ImportResult, import_rows, main
from sitegen.model.problems import Problem
from sitegen.pipeline import check_content
from tests.conftest import FIXTURES, REPOSITORY

HISTORY = FIXTURES / "liger" / "history"
MAIN_CSV = REPOSITORY / "sources" / "liger" / "all_benchmark_data.csv"
LIGER = "https://github.com/linkedin/Liger-Kernel"


@pytest.fixture(scope="module")
def with_history() -> ImportResult:
    return import_rows([MAIN_CSV], history_dir=HISTORY)


def history_runs(result: ImportResult) -> list[dict[str, object]]:
    return [row.run.document for row in result.imported if row.file.startswith("benchmarks/")]


def test_each_row_is_bound_to_the_commit_it_measured(with_history: ImportResult) -> None:
    runs = {
        (run["metadata"]["labels"].get("liger_commit", "")[:7], run["spec"]["observedAt"]): run  # type: ignore[index, union-attr]
        for run in history_runs(with_history)
    }
    ci = runs[("0a62700", "2025-11-28T00:49:53.000Z")]
    release = runs[("0a62700", "2025-11-21T23:30:36.000Z")]
    assert ci["metadata"]["labels"] == {  # type: ignore[index]
        "liger_version": "0.6.4",
        "liger_commit": "0a62700752e8592c0bf16916d1e4dbf598cee8c1",
        "liger_commit_date": "2025-11-21T22:48:25.000Z",  # 14:48:25-08:00, in UTC
        "liger_golden_commit": "c1bdc24546c158759a58db30192a5e9a1b9e2597",
        "liger_golden_commit_date": "2025-06-14T00:38:10.000Z",
    }
    assert release["metadata"]["labels"]["liger_release"] == "0.6.4"  # type: ignore[index]
    # One commit: one implementation, whichever run measured it.
    assert ci["spec"]["implementationDigest"] == release["spec"]["implementationDigest"]  # type: ignore[index]


def test_liger_implementations_are_revisions_of_one_project(with_history: ImportResult) -> None:
    revisions = {
        built.document["spec"]["projectRevision"].get("commit", "")[:7]: built.document
        for row in with_history.imported
        if row.file.startswith("benchmarks/")
        and (built := row.resources["implementation"])
        .document["metadata"]["name"]
        .startswith("liger-bench-layer-norm-liger")
    }
    assert sorted(revisions) == ["", "0a62700", "c1bdc24"]  # "": the carried-over row's release
    at = revisions["0a62700"]
    assert at["spec"]["projectRevision"] == {
        "repository": LIGER,
        "commit": "0a62700752e8592c0bf16916d1e4dbf598cee8c1",
        "version": "0.6.4",
    }
    assert at["metadata"]["title"] == "LayerNorm · Liger @ 0a62700"
    # Other projects' code is not Liger's commit: Transformers stays one implementation.
    hf = {
        row.resources["implementation"].digest
        for row in with_history.imported
        if row.run.document["spec"]["sourceNative"]["externalId"].split("/")[2] == "huggingface"
        and row.run.document["spec"]["sourceNative"]["benchmark"] == "layer_norm/forward"
    }
    assert len(hf) == 1


def test_a_row_published_twice_is_the_main_csvs_run_with_its_commit(
    with_history: ImportResult,
) -> None:
    alone = import_rows([MAIN_CSV])
    before = {row.run.digest: row.run for row in alone.imported}
    after = {row.run.digest: row.run for row in with_history.imported}
    assert set(before) <= set(after)  # no main-CSV digest moves
    (twice,) = [s for s in with_history.skipped if s.reason == "published-twice"]
    assert twice.file == "benchmarks/53a37a5/benchmark.csv"
    changed = [d for d in before if before[d].document != after[d].document]
    (digest,) = changed
    labels = after[digest].document["metadata"]["labels"]
    # Carried over into upstream's first CI folder: older than its commit, so no commit.
    assert "liger_commit" not in labels and labels["liger_golden_commit"].startswith("c1bdc24")
    assert len(with_history.imported) == len(alone.imported) + 7


def test_a_carried_over_row_is_bound_to_its_release_alone(with_history: ImportResult) -> None:
    (carried,) = [
        row for row in with_history.imported if row.file == "benchmarks/53a37a5/benchmark.csv"
    ]
    assert "liger_commit" not in carried.run.document["metadata"]["labels"]
    revision = carried.resources["implementation"].document["spec"]["projectRevision"]
    assert revision == {
        "repository": LIGER,
        "version": carried.run.document["metadata"]["labels"]["liger_version"],
    }


def test_history_runs_are_written_in_bulk_and_check_clean(tmp_path: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main([MAIN_CSV], tmp_path / "content", history_dir=HISTORY)
    assert status == 0, err.getvalue()
    bulk = sorted(
        p.relative_to(tmp_path / "content")
        for p in (tmp_path / "content").rglob(f"*{COMPRESSED_SUFFIX}")
    )
    assert [str(p) for p in bulk] == ["runs/layer_norm/forward/history.jsonl.zst"]
    checked = check_content(tmp_path / "content", strict=True)
    assert checked.ok and checked.analysis is not None
    assert "benchmarks/0a62700/benchmark.csv: 2 rows, 2 imported, 0 skipped" in out.getvalue()


def test_a_folder_without_its_commit_is_a_problem(tmp_path: Path) -> None:
    folder = tmp_path / "history"
    (folder / "benchmarks" / "abc1234").mkdir(parents=True)
    (folder / "benchmarks" / "abc1234" / "benchmark.csv").write_text("")
    (folder / "commits.tsv").write_text("folder\tcommit\tcommitted_at\tsubject\n")
    problems: list[Problem] = []
    assert load_history(folder, problems) is not None
    assert [p.line() for p in problems] == [
        f"{folder}/benchmarks/abc1234/benchmark.csv: folder: 'abc1234' has no line in "
        "commits.tsv; hint: resolve the folder's commit in the Liger-Kernel repository",
        f"{folder}/benchmarks: folder: no <folder>/benchmark.csv",
    ]
