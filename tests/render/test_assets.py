"""Assets and JSON Schemas every site carries (sitegen/render/assets.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from sitegen.model.resources import KINDS, json_schemas
from sitegen.pipeline import build_site
from sitegen.render.assets import SCHEMAS_DIR, schema_files, site_assets
from sitegen.render.compact_json import compact_json
from sitegen.render.errors import RenderError
from tests.conftest import FIXTURES, REGENERATE


def test_assets_are_content_hashed() -> None:
    assets = site_assets()
    for asset in assets.values():
        assert asset.path.startswith("assets/")
    assert assets["plotly"].path.startswith("assets/plotly-")
    assert len(assets["plotly"].data) > 1_000_000  # the real bundle, from the plotly package


def test_the_shipped_json_schemas_are_the_models() -> None:
    """sitegen/model/schemas/<Kind>.json, published as schemas/<Kind>.json, are what the models say
    (`SITEGEN_REGENERATE=1` rewrites them after a model changes)."""
    expected = {kind: compact_json(schema, newline=True) for kind, schema in json_schemas().items()}
    if REGENERATE:
        SCHEMAS_DIR.mkdir(exist_ok=True)
        for stale in SCHEMAS_DIR.glob("*.json"):
            stale.unlink()
        for kind, data in expected.items():
            (SCHEMAS_DIR / f"{kind}.json").write_bytes(data)
    assert sorted(path.stem for path in SCHEMAS_DIR.glob("*.json")) == sorted(KINDS)
    assert schema_files() == expected, "a model changed: SITEGEN_REGENERATE=1 to rewrite"


def test_a_missing_json_schema_fails_the_build_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shipped = tmp_path / "schemas"
    shutil.copytree(SCHEMAS_DIR, shipped)
    (shipped / "WorkloadCase.json").unlink()
    monkeypatch.setattr("sitegen.render.assets.SCHEMAS_DIR", shipped)
    with pytest.raises(RenderError, match="JSON Schema of WorkloadCase is missing"):
        build_site(FIXTURES / "site" / "content", tmp_path / "out")
    assert not (tmp_path / "out").exists()
