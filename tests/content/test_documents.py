"""Fuzzing the loader (content/documents.py, and the check behind it): arbitrary bytes, arbitrary
JSON and valid resources with any part replaced never raise; each is a resource or problems.
And a tree that checks clean always builds."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sitegen.content.documents import load_data
from sitegen.content.loaded import LoadedResource
from sitegen.model.problems import Problem
from sitegen.pipeline import build_site, check_documents
from tests.conftest import FIXTURES

SITE = FIXTURES / "site" / "content"
RUN = (
    "runs/liger-layer-norm-backward-liger-nvidia-h100-80gb-hbm3-hidden1024-rows4096-fp32-"
    "2025-07-17-18-18-16.json"
)
TREE = {
    RUN: (SITE / RUN).read_bytes(),
    **{
        f"{folder}/{name}": (SITE / folder / name).read_bytes()
        for folder, name in (
            ("workloads", "liger-layer-norm-hidden1024-rows4096-fp32.json"),
            ("implementations", "liger-bench-layer-norm-liger.json"),
            ("operations", "liger-layer-norm.json"),
            ("projects", "liger-kernel.json"),
            ("protocols", "liger-bench-do-bench-backward.json"),
            ("environments", "liger-bench-nvidia-h100-80gb-hbm3.json"),
        )
    },
}

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30)
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=12), inner, max_size=5)
    ),
    max_leaves=25,
)


def _load(data: bytes) -> tuple[list[LoadedResource], list[Problem]]:
    resources: list[LoadedResource] = []
    problems: list[Problem] = []
    load_data(data, "content/x.json", resources, problems)
    assert bool(resources) != bool(problems) or not resources
    return resources, problems


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400))
def test_any_bytes_load_without_raising(data: bytes) -> None:
    _load(data)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_any_json_loads_without_raising(value: Any) -> None:
    _load(json.dumps(value).encode())
    _load(json.dumps(value, indent=2).encode() + b"\n")  # orjson's fast path's shape


def json_paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += json_paths(item, (*prefix, key))
    elif isinstance(value, list):
        for number, item in enumerate(value):
            found += json_paths(item, (*prefix, number))
    return found


def replaced(document: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    copy = json.loads(json.dumps(document))
    node = copy
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = value
    return copy


@st.composite
def mutated_trees(draw: st.DrawFn) -> dict[str, bytes]:
    """The seven resources of one run, one of them with any part replaced by any JSON."""
    name = draw(st.sampled_from(sorted(TREE)))
    document = json.loads(TREE[name])
    path = draw(st.sampled_from(json_paths(document)))
    value = draw(json_values)
    changed = replaced(document, path, value)
    indent = draw(st.sampled_from([None, 2]))
    return {**TREE, name: json.dumps(changed, indent=indent, ensure_ascii=False).encode()}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_trees())
def test_a_tree_with_any_part_replaced_checks_without_raising(files: dict[str, bytes]) -> None:
    checked = check_documents(files.items(), "content")
    assert not any("sitegen failed" in p.message for p in checked.problems)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_trees())
def test_a_tree_that_checks_clean_builds(files: dict[str, bytes]) -> None:
    checked = check_documents(files.items(), "content")
    if not checked.ok:
        return
    with tempfile.TemporaryDirectory() as folder:
        content = Path(folder) / "content"
        for relative, data in files.items():
            (content / relative).parent.mkdir(parents=True, exist_ok=True)
            (content / relative).write_bytes(data)
        built = build_site(content, Path(folder) / "public")
        assert built.out_dir is not None, built.checked.problems
