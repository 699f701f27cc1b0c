"""The public surface is deliberate (as httpx's tests/test_exported_members.py): what
`sitegen` exports is what `__all__` names, and each name is documented."""

from __future__ import annotations

import sitegen


def test_all_names_exactly_the_public_members() -> None:
    public = {name for name in dir(sitegen) if not name.startswith("_")}
    # Subpackages are importable, not exported: the stages' modules may change between versions.
    modules = {name for name in public if type(getattr(sitegen, name)).__name__ == "module"}
    assert set(sitegen.__all__) - {"__version__"} == public - modules
    for name in sitegen.__all__:
        if name != "__version__":
            assert getattr(sitegen, name).__doc__, f"{name} is exported without a docstring"
