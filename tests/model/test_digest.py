"""Identity: known-answer vectors and properties of canonical JSON."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from sitegen.model.digest import canonical_json, digest, short
from sitegen.model.resources import KINDS

# JSON values as the format admits them: no null, finite numbers, exact integers.
leaves = (
    st.booleans()
    | st.integers(min_value=-(2**53 - 1), max_value=2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
json_values = st.recursive(
    leaves,
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=8), children, max_size=5)
    ),
    max_leaves=30,
)
specs = st.dictionaries(st.text(max_size=8), json_values, min_size=1, max_size=6)


def test_seed_row_digests_reproduce(seed_row: dict[str, Any]) -> None:
    assert len(seed_row) == 7
    for entry in seed_row.values():
        resource = entry["resource"]
        model = KINDS[resource["kind"]].model_validate(resource)
        assert digest(resource["kind"], model.spec_json()) == entry["digest"]
        # Validation normalises nothing away from an already-normal resource.
        assert model.document_json() == resource


def test_example_bundle_digests_match_its_references(example_bundle: dict[str, Any]) -> None:
    run = example_bundle["run"]["spec"]
    for role, field in (("protocol", "protocolDigest"), ("environment", "environmentDigest")):
        member = example_bundle[role]
        assert digest(member["kind"], member["spec"]) == run[field]


def test_jcs_number_formatting_differs_from_sorted_json_dumps() -> None:
    value = {"b": 1e-06, "a": 4096.0, "é": 1e21}
    assert canonical_json(value) == b'{"a":4096,"b":0.000001,"\xc3\xa9":1e+21}'
    assert canonical_json(value) != json.dumps(value, sort_keys=True).encode()


def test_keys_sort_by_utf16_code_units() -> None:
    # U+1F600 (surrogates D83D DE00) sorts before U+FB01 in UTF-16, after it in code points.
    assert canonical_json({"\ufb01": 1, "\U0001f600": 2}).startswith('{"\U0001f600"'.encode())


def test_metadata_never_changes_identity(seed_row: dict[str, Any]) -> None:
    resource = copy.deepcopy(seed_row["protocol"]["resource"])
    resource["metadata"]["title"] = "Retitled"
    model = KINDS["BenchmarkProtocol"].model_validate(resource)
    assert digest("BenchmarkProtocol", model.spec_json()) == seed_row["protocol"]["digest"]


def test_short_form_is_for_display_only() -> None:
    assert short("sha256:" + "ab" * 32) == "abababababab"


def _shuffled(value: Any, rng: random.Random) -> Any:
    if isinstance(value, dict):
        items = list(value.items())
        rng.shuffle(items)
        return {k: _shuffled(v, rng) for k, v in items}
    if isinstance(value, list):
        return [_shuffled(v, rng) for v in value]
    return value


def _leaf_paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _leaf_paths(v, (*prefix, k))]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _leaf_paths(v, (*prefix, i))]
    return [prefix]


def _changed(leaf: Any) -> Any:
    """A value that differs from `leaf` as JSON (1 and 1.0 are the same JSON number)."""
    if isinstance(leaf, bool):
        return not leaf
    if isinstance(leaf, int | float):
        return leaf + 1 if abs(leaf) < 2**52 else leaf / 2
    return leaf + "x"


@given(specs)
@settings(max_examples=200, deadline=None)
def test_canonicalising_twice_equals_once(spec: dict[str, Any]) -> None:
    once = canonical_json(spec)
    # JSON numbers are doubles: an integer past 2^53 reads back as the double it was written from.
    reread = json.loads(once, parse_int=lambda t: int(t) if abs(int(t)) < 2**53 else float(t))
    assert canonical_json(reread) == once


@given(specs, st.randoms(use_true_random=False), st.sampled_from([None, 0, 2, "\t"]))
@settings(max_examples=200, deadline=None)
def test_key_order_and_whitespace_never_change_the_digest(
    spec: dict[str, Any], rng: random.Random, indent: int | str | None
) -> None:
    reordered = json.loads(json.dumps(_shuffled(spec, rng), indent=indent))
    assert digest("OperationSpec", reordered) == digest("OperationSpec", spec)


@given(specs, st.data())
@settings(max_examples=200, deadline=None)
def test_a_changed_leaf_always_changes_the_digest(
    spec: dict[str, Any], data: st.DataObject
) -> None:
    paths = [p for p in _leaf_paths(spec) if p]
    path = data.draw(st.sampled_from(paths)) if paths else None
    if path is None:
        return
    changed = copy.deepcopy(spec)
    parent = changed
    for step in path[:-1]:
        parent = parent[step]
    old = parent[path[-1]]
    parent[path[-1]] = _changed(old)
    if json.dumps(parent[path[-1]]) == json.dumps(old) or parent[path[-1]] == old:
        return  # e.g. a float too large for +1 to change it: not a changed leaf
    assert digest("OperationSpec", changed) != digest("OperationSpec", spec)


# The fast path must equal the reference package byte for byte, on every value it accepts.
floats_everywhere = st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from(
    [
        0.0,
        -0.0,
        1e-4,
        9.999999999999999e-5,
        1e16,
        9999999999999998.0,
        1e21,
        1e-7,
        5e-324,
        2.0**53,
        2.0**53 + 2,
        -(2.0**60),
        0.1 + 0.2,
        1e-06,
        123456789.125,
    ]
)
unicode_text = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12
)
wide_values = st.recursive(
    st.booleans() | st.integers(-(2**53 - 1), 2**53 - 1) | floats_everywhere | unicode_text,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(unicode_text, children, max_size=4)
    ),
    max_leaves=25,
)


@given(wide_values)
@settings(max_examples=1500, deadline=None)
def test_fast_canonical_json_equals_the_rfc8785_package(value: Any) -> None:
    import rfc8785

    assert canonical_json(value) == rfc8785.dumps(value)


def test_fast_path_agrees_on_keys_that_sort_differently_in_utf16() -> None:
    import rfc8785

    value = {"\ufb01": 1, "\U0001f600": 2, "a": [1e-7, 1e21, 2.0**60, -0.0]}
    assert canonical_json(value) == rfc8785.dumps(value)


# The orjson path (top-level objects) must equal the reference too: ASCII keys and strings so that
# it is taken, floats and integers from everywhere so that its refusals are exercised.
ascii_text = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=127), max_size=10)
ascii_values = st.recursive(
    st.booleans()
    | st.integers(-(2**53 - 1), 2**53 - 1)
    | floats_everywhere
    | ascii_text
    | st.sampled_from(["sha256:" + "0123456789" * 6 + "abcd", "1.0,", ":12345678901234567"]),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(ascii_text, children, max_size=4)
    ),
    max_leaves=25,
)


@given(st.dictionaries(ascii_text, ascii_values, max_size=6))
@settings(max_examples=800, deadline=None)
def test_orjson_canonical_path_equals_the_rfc8785_package(value: dict[str, Any]) -> None:
    import rfc8785

    assert canonical_json(value) == rfc8785.dumps(value)


def test_orjson_path_is_taken_for_a_run_and_refused_where_jcs_differs(
    seed_row: dict[str, Any],
) -> None:
    import rfc8785

    from sitegen.model.digest import _orjson_canonical, identity_document

    run = identity_document("BenchmarkRun", seed_row["run"]["resource"]["spec"])
    assert _orjson_canonical(run) == rfc8785.dumps(run)
    for risky in (
        {"a": 4096.0},
        {"a": -0.0},
        {"a": 1e16},
        {"a": 1e-6},
        {"\U0001f600": 1, "\ufb01": 2},
        {"a": None},
    ):
        assert _orjson_canonical(risky) is None
        assert canonical_json(risky) == rfc8785.dumps(risky)
    assert _orjson_canonical({"a": 2**53}) is None
    # Text that merely looks risky, and non-ASCII text below U+10000, keep the fast path.
    for plain in ({"gpu": "geforce-rtx", "title": "LayerNorm · liger · backward", "é": "ü"},):
        assert _orjson_canonical(plain) == rfc8785.dumps(plain)


# Any text but lone surrogates, at the top level of an object: the orjson path's refusals on
# non-ASCII (only characters past U+FFFF) must equal the reference's output.
@given(st.dictionaries(unicode_text, wide_values, max_size=6))
@settings(max_examples=300, deadline=None)
def test_orjson_canonical_path_equals_the_rfc8785_package_on_unicode(value: dict[str, Any]) -> None:
    import rfc8785

    assert canonical_json(value) == rfc8785.dumps(value)


@given(st.dictionaries(unicode_text, wide_values, max_size=6))
@settings(max_examples=300, deadline=None)
def test_known_canonical_json_is_canonical_json_whatever_orjson_writes(
    value: dict[str, Any],
) -> None:
    """With the value's digest known, orjson's bytes are kept only when they hash to it."""
    import hashlib

    from sitegen.model.digest import known_canonical_json

    canonical = canonical_json(value)
    known = "sha256:" + hashlib.sha256(canonical).hexdigest()
    assert known_canonical_json(value, known) == canonical
    assert known_canonical_json(value, "sha256:" + "0" * 64) == canonical  # a wrong one: checked


def test_known_canonical_json_keeps_orjsons_bytes_only_when_they_hash_to_the_digest() -> None:
    import hashlib

    from sitegen.model.digest import known_canonical_json

    for value in ({"a": 4096.0, "b": 1e-7}, {"\U0001f600": 1, "\ufb01": 2}, {"run": "x", "n": 3}):
        canonical = canonical_json(value)
        known = "sha256:" + hashlib.sha256(canonical).hexdigest()
        assert known_canonical_json(value, known) == canonical
