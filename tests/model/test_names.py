"""Names made from text (sitegen/model/names.py)."""

from __future__ import annotations

from sitegen.model.names import kebab, short_hash


def test_kebab_cuts_after_trimming() -> None:
    assert kebab("NVIDIA H100 80GB HBM3") == "nvidia-h100-80gb-hbm3"
    assert kebab("__a..b__") == "a-b"
    assert kebab("x" * 99 + " y") == "x" * 99 + "-"


# --- every row accounted for ----------------------------------------------------------------------


def test_short_hashes_are_stable_hex() -> None:
    assert short_hash("kernel:LayerNorm") == short_hash("kernel:LayerNorm")
    assert len(short_hash("x", 8)) == 8 and int(short_hash("x"), 16) >= 0
