"""The files every site carries besides its pages: content-hashed CSS, JS and plotly.js (served
from the site itself, never a CDN), and each kind's JSON Schema."""

from __future__ import annotations

import hashlib
import importlib.resources
import os
from pathlib import Path
from typing import NamedTuple

from sitegen.model.resources import KINDS
from sitegen.render.errors import RenderError


def _templates_dir() -> Path:
    """The templates beside this code: a checkout's `templates/` (also when the checkout is
    imported from the path rather than installed), else the wheel's `sitegen/templates`."""
    checkout = Path(__file__).resolve().parents[2] / "templates"
    if (checkout / "_base.html").is_file() and (checkout / "assets" / "site.js").is_file():
        return checkout
    return Path(str(importlib.resources.files("sitegen.templates")))


TEMPLATES_DIR = _templates_dir()
ASSETS_DIR = TEMPLATES_DIR / "assets"
PLOTLY_BUNDLE = ASSETS_DIR / "vendor" / "plotly-basic.min.js"
# Shipped with the code, made from the models (`json_schemas`); SITEGEN_REGENERATE=1 rewrites.
SCHEMAS_DIR = Path(__file__).resolve().parent.parent / "model" / "schemas"
HASH_HEX = 12


def templates_key() -> tuple[tuple[str, tuple[int, ...]], ...]:
    """Each template file's name and stat (size, times, inode): equal while none changed."""
    found = []
    for folder, _, names in os.walk(TEMPLATES_DIR):
        for name in names:
            path = os.path.join(folder, name)
            s = os.lstat(path)
            found.append((path, (s.st_size, s.st_mtime_ns, s.st_ctime_ns, s.st_ino, s.st_dev)))
    return tuple(sorted(found))


class Asset(NamedTuple):
    path: str  # site path, content-hashed: assets/site-0123456789ab.css
    data: bytes


def hashed(stem: str, suffix: str, data: bytes) -> Asset:
    return Asset(f"assets/{stem}-{hashlib.sha256(data).hexdigest()[:HASH_HEX]}{suffix}", data)


def plotly_bundle() -> bytes:
    """plotly.js's basic bundle (scatter, bar, pie: what the charts use), as the plotly.js
    project publishes it (`plotly.js-basic-dist-min` on npm, MIT), kept in the repository: the
    full bundle is four times its size, and the site never loads plotly from a CDN."""
    try:
        return PLOTLY_BUNDLE.read_bytes()
    except OSError as error:
        raise RenderError(f"cannot read {PLOTLY_BUNDLE.name}: {error.strerror}") from None


def site_assets(preview: bool = False) -> dict[str, Asset]:
    """The assets every site has, and the preview styles when the site is a preview."""
    assets = {
        "css": hashed("site", ".css", (ASSETS_DIR / "site.css").read_bytes()),
        "js": hashed("site", ".js", (ASSETS_DIR / "site.js").read_bytes()),
        "plotly": hashed("plotly", ".min.js", plotly_bundle()),
    }
    # The search and compare pages' own scripts and styles, loaded there only.
    for name in ("search", "compare"):
        assets[f"{name}_js"] = hashed(name, ".js", (ASSETS_DIR / f"{name}.js").read_bytes())
        assets[f"{name}_css"] = hashed(name, ".css", (ASSETS_DIR / f"{name}.css").read_bytes())
    if preview:
        assets["preview"] = hashed("preview", ".css", (ASSETS_DIR / "preview.css").read_bytes())
    return assets


def schema_files() -> dict[str, bytes]:
    """Each kind's published JSON Schema, by kind name."""
    found = {}
    for kind in sorted(KINDS):
        try:
            found[kind] = (SCHEMAS_DIR / f"{kind}.json").read_bytes()
        except OSError as error:
            raise RenderError(
                f"the JSON Schema of {kind} is missing ({error.strerror}): "
                "SITEGEN_REGENERATE=1 pytest tests/model/test_resources.py writes it"
            ) from None
    return found
