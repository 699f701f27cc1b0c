"""The acceptance test of the format: every manifest kernelindex.dev published in its catalog
export (sources/kernelindex/) validates, hashes to the digest the site recorded for it, and
checks clean as a content tree (a bulk file)."""

from __future__ import annotations

import contextlib
import io
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest

from sitegen.cli import main
from sitegen.content.bulk import bulk_bytes, bulk_lines
from sitegen.content.documents import validate_resource
from sitegen.model.problems import Problem
from tests.conftest import REPOSITORY

EXPORT = REPOSITORY / "sources" / "kernelindex" / "catalog-2026-08-16-0022af0b.jsonl.zst"
# The tables whose rows carry a manifest, and where each row records the manifest's digest (a
# run's row: its bundle's three). Projects record none; serving_* and model_revisions are not
# benchmark kinds.
RECORDED: dict[str, dict[str, str | None]] = {
    "benchmark_runs": {
        "run": "runDigest",
        "protocol": "protocolKey",
        "environment": "environmentKey",
    },
    "workloads": {"": "workloadDigest"},
    "implementations": {"": "implementationDigest"},
    "operations": {"": "semanticDigest"},
    "projects": {"": None},
}


class Manifest:
    def __init__(self, table: str, row_id: str, where: str, document: Any, recorded: str | None):
        self.table = table
        self.row_id = row_id
        self.where = where
        self.document = document
        self.recorded = recorded


@pytest.fixture(scope="module")
def manifests() -> list[Manifest]:
    problems: list[Problem] = []
    found = []
    with EXPORT.open("rb") as stream:
        for _, line in bulk_lines(stream, True, str(EXPORT), problems):
            value = orjson.loads(line)
            keys = RECORDED.get(value["table"])
            if keys is None:
                continue
            row = value["row"]
            for where, key in keys.items():
                document = row["manifest"][where] if where else row["manifest"]
                recorded = row[key] if key else None
                found.append(Manifest(value["table"], row["id"], where, document, recorded))
    assert problems == []
    return found


def test_every_manifest_validates_with_the_digest_kernelindex_dev_recorded(
    manifests: list[Manifest],
) -> None:
    refused, mismatched = [], []
    kinds: Counter[str] = Counter()
    for manifest in manifests:
        problems: list[Problem] = []
        shown = f"{manifest.table}/{manifest.row_id}"
        loaded = validate_resource(manifest.document, shown, manifest.where, problems)
        if loaded is None:
            refused.append([p.line() for p in problems])
            continue
        kinds[loaded.kind] += 1
        if manifest.recorded is not None and loaded.digest != manifest.recorded:
            mismatched.append((shown, manifest.where, loaded.digest, manifest.recorded))
    assert refused[:3] == [] and mismatched[:3] == []
    assert kinds == {
        "BenchmarkRun": 7857,
        "BenchmarkProtocol": 7857,
        "ExecutionEnvironment": 7857,
        "WorkloadCase": 5371,
        "WorkloadSuite": 256,
        "ImplementationRevision": 4250,
        "OperationSpec": 449,
        "SoftwareProject": 615,
    }


def test_sitegen_digest_and_check_accept_them_all(
    manifests: list[Manifest], tmp_path: Path
) -> None:
    bundles: dict[str, dict[str, Any]] = {}
    documents = []
    for manifest in manifests:
        if manifest.where:
            bundles.setdefault(manifest.row_id, {})[manifest.where] = manifest.document
        else:
            documents.append(manifest.document)
    bulk = tmp_path / "export.jsonl.zst"
    bulk.write_bytes(bulk_bytes([*documents, *bundles.values()]))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["digest", str(bulk)])
    assert (status, err.getvalue()) == (0, "")
    printed = {tuple(line.split("\t")[1::2]) for line in out.getvalue().splitlines()}
    expected = {
        (manifest.document["kind"], manifest.recorded)
        for manifest in manifests
        if manifest.recorded is not None
    }
    projects = sum(1 for manifest in manifests if manifest.recorded is None)
    assert expected <= printed
    assert len(printed - expected) <= projects  # the projects, whose digest no row records
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = main(["check", str(tmp_path)])
    # Warned, not refused: 43 runs of one implementation measured on another operation's cases.
    assert status == 0
    assert out.getvalue().splitlines()[-1] == "ok, 43 warnings: 34,512 resources in 1 file"
