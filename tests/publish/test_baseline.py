"""Fuzzing the base-manifest reader (publish/baseline.py): arbitrary bytes, arbitrary JSON and a
real manifest with any part replaced are a Manifest or a BaseError, never anything else; and any
manifest it accepts compares, as JSON and as Markdown, without raising or printing a non-finite
number."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sitegen.cli import main
from sitegen.pipeline import manifest_of_content
from sitegen.publish.baseline import BaseError, parse_manifest_bytes
from sitegen.publish.compare import changes_document, compare, format_markdown
from sitegen.publish.manifest import Manifest, manifest_document
from tests.conftest import FIXTURES
from tests.content.test_documents import json_paths, json_values, replaced

_built = manifest_of_content(FIXTURES / "site" / "content").manifest
assert _built is not None
HEAD: Manifest = _built
DOCUMENT = manifest_document(HEAD)


def _read(data: bytes) -> Manifest | None:
    try:
        return parse_manifest_bytes(data, "base.json")
    except BaseError:
        return None


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400))
def test_any_bytes_are_a_manifest_or_a_base_error(data: bytes) -> None:
    _read(data)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_any_json_is_a_manifest_or_a_base_error(value: Any) -> None:
    _read(json.dumps(value).encode())


@st.composite
def mutated_manifests(draw: st.DrawFn) -> bytes:
    path = draw(st.sampled_from(json_paths(DOCUMENT)))
    return json.dumps(replaced(DOCUMENT, path, draw(json_values))).encode()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_manifests())
def test_an_accepted_manifest_always_compares(data: bytes) -> None:
    base = _read(data)
    if base is None:
        return
    changes = compare(base, HEAD, "base", "head")
    format_markdown(changes)
    json.dumps(changes_document(changes), allow_nan=False)


def test_a_real_manifest_reads_back() -> None:
    assert _read(json.dumps(DOCUMENT).encode()) == HEAD
    with pytest.raises(BaseError, match=r"^base\.json: not a JSON manifest: 1:1: Expecting value$"):
        parse_manifest_bytes(b"", "base.json")


URL_HINT = "hint: give the https URL of a published manifest.json"


@pytest.mark.parametrize(
    ("url", "message"),
    [
        (
            "http://127.0.0.1:abc/m.json",
            "a port is a number from 1 to 65535: 'http://127.0.0.1:abc/m.json'",
        ),
        (
            "https://x.example/a b.json",
            "not a URL: 'https://x.example/a b.json' holds a space, a control or non-ASCII "
            'character or one of <>"\\^`{|}',
        ),
        (
            "https://x.example/a\r\nHost: y",
            "not a URL: 'https://x.example/a\\r\\nHost: y' holds a space, a control or "
            'non-ASCII character or one of <>"\\^`{|}',
        ),
        ("http://[::1/m.json", "not a host name or IP address: '::1' in 'http://[::1/m.json'"),
    ],
)
def test_a_url_that_is_not_one_is_a_one_line_usage_error(
    url: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["diff", url, str(FIXTURES / "site" / "content")]) == 2
    assert capsys.readouterr().err == f"sitegen diff: {message}; {URL_HINT}\n"
