"""manifest.py: run identities and metadata digests, spelled out fast, equal the canonical ones;
a held state makes only the changed runs' entries again."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import orjson
import pytest

import sitegen.publish.manifest
from sitegen.content.load import DocumentStore, LoadedResource
from sitegen.model.digest import canonical_json
from sitegen.pipeline import build_site
from sitegen.publish.incremental import State
from sitegen.publish.manifest import run_identity
from tests.publish.test_incremental import cold, edit, run_files, site_content
from tests.test_pipeline import tree

SPEC = {
    "implementationDigest": "sha256:" + "1" * 64,
    "workloadDigest": "sha256:" + "a2" * 32,
    "protocolDigest": "sha256:" + "0f" * 32,
    "environmentDigest": "sha256:" + "9" * 64,
}


def test_run_identity_is_the_hash_of_the_canonical_digest_list() -> None:
    parts = [SPEC[k] for k in SPEC]
    expected = "sha256:" + hashlib.sha256(canonical_json(parts)).hexdigest()
    assert run_identity(*SPEC.values()) == expected
    # Anything but a validated digest (a foreign manifest) takes the canonical path.
    odd = {**SPEC, "workloadDigest": 'sha256:"\u00e9'}
    parts = [odd[k] for k in SPEC]
    assert (
        run_identity(*odd.values()) == "sha256:" + hashlib.sha256(canonical_json(parts)).hexdigest()
    )


def test_metadata_digest_is_the_same_held_whole_or_compact() -> None:
    document = {
        "apiVersion": "kernelindex.dev/v1alpha1",
        "kind": "BenchmarkRun",
        "metadata": {"name": "r", "title": "LayerNorm · liger", "labels": {"b": "2", "a": "1"}},
        "spec": {"status": "passed"},
    }
    whole = LoadedResource("p", "", None, "sha256:" + "0" * 64, document)
    compact = LoadedResource.compact(
        "p", "", whole.digest, orjson.dumps(document), "BenchmarkRun", "r", "LayerNorm · liger"
    )
    store = DocumentStore()
    store.add(b"[1,2,3]")  # something before it, so that its span starts past 0
    stored = LoadedResource.compact(
        "p", "", whole.digest, orjson.dumps(document), "BenchmarkRun", "r", None, None, store
    )
    expected = "sha256:" + hashlib.sha256(canonical_json(document["metadata"])).hexdigest()
    assert whole.metadata_digest == compact.metadata_digest == stored.metadata_digest == expected
    assert whole.token == compact.token == stored.token
    for entry in (compact, stored):
        assert entry.document == document and entry.spec == document["spec"]
    assert stored.raw == compact.raw == orjson.dumps(document)


def test_a_held_state_makes_only_the_changed_runs_entries_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    content, out = site_content(tmp_path), tmp_path / "public"
    made: list[str] = []
    entry = sitegen.publish.manifest._Entries._entry

    def counted(self: Any, resource: LoadedResource, run: Any) -> Any:
        if run is not None:
            made.append(resource.path)
        return entry(self, resource, run)

    monkeypatch.setattr(sitegen.publish.manifest._Entries, "_entry", counted)
    state = State()
    assert build_site(content, out, state=state).out_dir is not None
    runs = len(made)
    assert runs > 10
    made.clear()
    edited = next(p for p in run_files(content) if "timing" in json.loads(p.read_text())["spec"])

    def slower(document: dict[str, Any]) -> None:
        document["spec"]["timing"]["latencyNs"]["median"] += 1

    edit(edited, slower)
    assert build_site(content, out, state=state).out_dir is not None
    shown = f"content/{edited.relative_to(content).as_posix()}"
    assert made == [shown] * made.count(shown) and made  # its runs only
    assert tree(out) == cold(content, tmp_path, "edited")
    # Retitled, a run keeps its digest (the spec's) but is a new resource: made again.
    made.clear()
    edit(edited, lambda document: document["metadata"].update(title="Retitled"))
    assert build_site(content, out, state=state).out_dir is not None
    assert made == [shown] * made.count(shown) and made
    assert tree(out) == cold(content, tmp_path, "retitled")
    # Retitling a resource that is not a run makes every run's facts again: every entry too.
    made.clear()
    # (The H100's is also in a bundle, whose copy the catalog takes: its file's is not shown.)
    environment = content / "environments" / "liger-bench-nvidia-a100-sxm4-80gb.json"
    edit(environment, lambda document: document["metadata"].update(title="Renamed"))
    assert build_site(content, out, state=state).out_dir is not None
    assert len(made) == runs
    assert tree(out) == cold(content, tmp_path, "renamed")
