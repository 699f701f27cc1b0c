"""Display strings (sitegen/site/format.py)."""

from __future__ import annotations

from sitegen.site.format import Numbers, decimals_for


def test_number_formatting() -> None:
    assert decimals_for(0.5776) == 3 and decimals_for(0.00812) == 5 and decimals_for(46.8) == 3
    numbers = Numbers("peak_memory", "mib")
    assert numbers.one(1280.53125) == "1,280.53" and numbers.unit == "MiB"
