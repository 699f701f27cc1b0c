"""Canonical JSON (RFC 8785) and sha256 digests: the one definition of identity."""

from __future__ import annotations

import hashlib
import re
from typing import Any

import rfc8785

API_VERSION = "kernelindex.dev/v1alpha1"
DIGEST_PATTERN = re.compile(r"^sha256:[0-9a-f]{64}$")


def canonical_json(value: Any) -> bytes:
    """RFC 8785 (JCS) bytes of a JSON value: sorted keys, no whitespace, ECMAScript numbers."""
    return rfc8785.dumps(value)


def identity_document(kind: str, spec: dict[str, Any]) -> dict[str, Any]:
    """The part of a resource that is hashed; metadata never is."""
    return {"apiVersion": API_VERSION, "kind": kind, "spec": spec}


def digest_of_canonical(canonical: bytes) -> str:
    return "sha256:" + hashlib.sha256(canonical).hexdigest()


def digest(kind: str, spec: dict[str, Any]) -> str:
    """`sha256:<hex>` of the canonical `{apiVersion, kind, spec}`.

    `spec` must already be normalised (durations in ns, set-like lists sorted, no nulls).
    """
    return digest_of_canonical(canonical_json(identity_document(kind, spec)))


def short(digest_value: str, length: int = 12) -> str:
    """A display form only: `sha256:` dropped, first `length` hex digits."""
    return digest_value.removeprefix("sha256:")[:length]
