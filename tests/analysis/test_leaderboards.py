"""Leaderboards as data (sitegen/analysis/leaderboards.py)."""

from __future__ import annotations

import pytest

from sitegen.analysis.leaderboards import distribution


def test_distribution_counts_every_value_once() -> None:
    values = [1.0, 1.5, 2.0, 10.0, 100.0, 100.0]
    bins = distribution(values, bins=4)
    assert sum(count for _, _, count in bins) == len(values)
    # A span past 20× is binned in log scale: equal ratios, not equal widths.
    ratios = [high / low for low, high, _ in bins]
    assert max(ratios) - min(ratios) < 1e-9
    assert bins[0][0] == 1.0 and bins[-1][1] == pytest.approx(100.0)


def test_distribution_of_nothing_and_of_one_value() -> None:
    assert distribution([]) == []
    assert distribution([3.0, 3.0]) == [(3.0, 3.0, 2)]
