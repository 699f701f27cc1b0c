"""manifest.py: run identities and metadata digests, spelled out fast, equal the canonical ones."""

from __future__ import annotations

import hashlib

import orjson

from sitegen.content.load import DocumentStore, LoadedResource
from sitegen.model.digest import canonical_json
from sitegen.publish.manifest import run_identity

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
