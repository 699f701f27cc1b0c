"""A fixture pull request: the fixture site's content with one of each kind of change.

Base: `tests/fixtures/site/content`. Head: a copy with
- a run added (LayerNorm liger backward, hidden=4096, on the A100, which had no backward runs);
- a run removed (LayerNorm huggingface forward, hidden=1024, on the A100);
- a run measured again with a new median (LayerNorm liger backward, hidden=4096, on the H100:
  0.166 ms → 0.183 ms), replacing the old one;
- a protocol retitled (liger-bench-do-bench-forward): metadata only, so the same digest.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from tests.conftest import FIXTURES

BASE_CONTENT = FIXTURES / "site" / "content"
A100 = "sha256:90c9e2764222f592477cfccf3373519add5a1b881563956ad058c4f99e41b6b9"
MOVED = (
    "liger-layer-norm-backward-liger-nvidia-h100-80gb-hbm3-hidden4096-rows4096-fp32-"
    "2025-07-17-18-18-16"
)
REMOVED = (
    "liger-layer-norm-forward-huggingface-nvidia-a100-sxm4-80gb-hidden1024-rows4096-fp32-"
    "2024-09-03-15-39"
)
PROTOCOL = "liger-bench-do-bench-forward"
NEW_PROTOCOL_TITLE = "Liger-Kernel benchmark harness · forward pass"


def _read(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def _write(path: Path, document: dict[str, Any]) -> None:
    path.write_text(json.dumps(document, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


def make_pull_request(target: Path) -> Path:
    """Write the head content tree at `target` and return it."""
    shutil.copytree(BASE_CONTENT, target)
    runs = target / "runs"

    moved_path = runs / f"{MOVED}.json"
    moved = _read(moved_path)
    added = json.loads(json.dumps(moved))
    moved["spec"]["timing"]["latencyNs"]["median"] = 182934
    moved["spec"]["sourceNative"]["metrics"]["ms_50"] = 0.182934
    _write(moved_path, moved)

    added["metadata"]["name"] = (
        "liger-layer-norm-backward-liger-nvidia-a100-sxm4-80gb-hidden4096-rows4096-fp32-2025-08-01"
    )
    spec = added["spec"]
    spec["environmentDigest"] = A100
    spec["timing"]["latencyNs"]["median"] = 251008
    spec["measurements"][0]["value"] = 249120
    spec["measurements"][1]["value"] = 253440
    spec["sourceNative"]["externalId"] = (
        "layer_norm/backward/liger/nvidia-a100-sxm4-80gb/hidden4096-rows4096-fp32/2025-08-01-09-00-00"
    )
    spec["sourceNative"]["metrics"] = {"ms_50": 0.251008, "ms_20": 0.24912, "ms_80": 0.25344}
    spec["observedAt"] = "2025-08-01T09:00:00.000Z"
    _write(runs / f"{added['metadata']['name']}.json", added)

    (runs / f"{REMOVED}.json").unlink()

    protocol_path = target / "protocols" / f"{PROTOCOL}.json"
    protocol = _read(protocol_path)
    protocol["metadata"]["title"] = NEW_PROTOCOL_TITLE
    _write(protocol_path, protocol)
    return target
