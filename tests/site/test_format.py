"""Display strings (sitegen/site/format.py)."""

from __future__ import annotations

from sitegen.site.format import Numbers, decimals_for


def test_number_formatting() -> None:
    assert decimals_for(0.5776) == 3 and decimals_for(0.00812) == 5 and decimals_for(46.8) == 3
    numbers = Numbers("peak_memory", "mib")
    assert numbers.one(1280.53125) == "1,280.53" and numbers.unit == "MiB"


def test_three_significant_digits_thousands_separated() -> None:
    from sitegen.site.format import significant

    cases = {268.3: "268", 1.2499: "1.25", 0.05173: "0.0517", 18.816: "18.8", 99.96: "100"}
    cases |= {1234.5: "1,230", 0.9996: "1.00", 5.0: "5.00", 0.0: "0"}
    assert {value: significant(value) for value in cases} == cases
    assert significant(float("inf")) == "—"


def test_each_value_in_the_unit_that_suits_it() -> None:
    from sitegen.site.format import scale_for

    assert scale_for("ns", [18816, 307000]).text(18816) == "18.8 µs"  # one unit for a chart
    assert scale_for("ns", [51744]).text(51744) == "51.7 µs"
    assert scale_for("ns", [171_008_000]).text(171_008_000) == "171 ms"
    assert scale_for("ns", [5e9]).text(5e9) == "5.00 s"
    assert scale_for("ns", [12]).text(12) == "12.0 ns"
    assert scale_for("mib", [1280.53125]).text(1280.53125) == "1.25 GiB"
    assert scale_for("mib", [0.5]).text(0.5) == "512 KiB"
    assert scale_for("widgets", [3]).text(3) == "3.00 widgets"  # an unknown unit as stored


def test_ratios_say_their_direction_in_words() -> None:
    from sitegen.site.format import against_baseline, slower_than_fastest, times

    assert times(268.4) == "268×" and times(1.2499) == "1.25×"
    assert slower_than_fastest(1.0, 1) == "fastest"
    assert slower_than_fastest(1.25, 2) == "1.25× slower"
    assert slower_than_fastest(None, None) == "—"
    assert against_baseline(2.345) == "2.35× faster"
    assert against_baseline(0.8) == "1.25× slower"
    assert against_baseline(1 / 268) == "268× slower"  # never 0.00×
    assert against_baseline(float("inf")) == "—" and against_baseline(0.0) == "—"


def test_memory_reads_as_an_amount_and_equal_values_as_equal() -> None:
    from sitegen.site.format import against_baseline, slower_than_fastest, wording

    memory = wording("peak_memory_allocated")
    assert slower_than_fastest(1.0, 1, memory) == "lowest"
    assert slower_than_fastest(2.5, 2, memory) == "2.50× more"
    assert slower_than_fastest(1.0, 2, memory) == "equal to the lowest"  # a tie in rank only
    assert against_baseline(4.0, memory) == "4.00× less"
    assert against_baseline(0.5, memory) == "2.00× more"
    assert against_baseline(1.0) == "equal"
    assert wording("latency").best == "fastest"
