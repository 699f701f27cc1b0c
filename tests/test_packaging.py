"""A wheel carries everything a build needs: the templates and assets, the JSON Schemas and the
importer's OperationSpecs, as package data (no repository beside an installed sitegen)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

from tests.conftest import REPOSITORY


def test_the_wheel_holds_the_templates_assets_schemas_and_operations(tmp_path: Path) -> None:
    pip = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"]
    subprocess.run(
        [*pip, "--wheel-dir", str(tmp_path), str(REPOSITORY)],
        check=True,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("sitegen-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    templates = {
        p.name for p in (REPOSITORY / "templates").glob("*") if p.suffix in {".html", ".xml"}
    }
    assert {f"sitegen/templates/{name}" for name in templates} <= names
    for asset in ("site.css", "site.js", "preview.css"):
        assert f"sitegen/templates/assets/{asset}" in names
    assert "sitegen/model/schemas/BenchmarkRun.json" in names
    assert "sitegen/importers/liger/operations/liger-layer-norm.json" in names
    assert not [name for name in names if name.startswith(("content/", "tests/", "bench/"))]
