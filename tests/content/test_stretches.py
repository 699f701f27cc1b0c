"""content/stretches.py: the very objects of the last build's sequence, found as stretches."""

from __future__ import annotations

import random

from sitegen.content.stretches import (
    FIRST_BLOCK,
    LAST_BLOCK,
    REPLACED_AT_MOST,
    gaps,
    same_stretches,
)


def _covered(last: list[object], now: list[object]) -> list[bool]:
    """Which items of `now` the stretches cover, after checking each stretch."""
    covered = [False] * len(now)
    previous = 0
    for start, stop, held in same_stretches(last, now):
        assert previous <= start < stop <= len(now)  # in order, none empty, none overlapping
        assert all(now[n] is last[held + n - start] for n in range(start, stop))
        covered[start:stop] = [True] * (stop - start)
        previous = stop
    return covered


def test_same_stretches_find_the_unchanged_runs_of_objects_around_edits() -> None:
    last = [object() for _ in range(10)]
    new = object()
    assert same_stretches(last, last) == [(0, 10, 0)]
    assert same_stretches([], last) == [] and same_stretches(last, []) == []
    # Replaced in place, inserted, deleted: every other item is in a stretch.
    replaced = [*last[:4], new, *last[5:]]
    assert same_stretches(last, replaced) == [(0, 4, 0), (5, 10, 5)]
    three = [*last[:3], object(), object(), object(), *last[6:]]  # side by side
    assert same_stretches(last, three) == [(0, 3, 0), (6, 10, 6)]
    inserted = [*last[:4], new, *last[4:]]
    assert same_stretches(last, inserted) == [(0, 4, 0), (5, 11, 4)]
    deleted = [*last[:4], *last[5:]]
    assert same_stretches(last, deleted) == [(0, 4, 0), (4, 9, 5)]
    # Two deleted, or moved far: found by its id.
    assert same_stretches(last, [*last[:3], *last[5:]]) == [(0, 3, 0), (3, 8, 5)]
    moved = [last[0], last[9], last[7], *last[1:7]]
    assert same_stretches(last, moved) == [(0, 1, 0), (1, 2, 9), (2, 3, 7), (3, 9, 1)]
    # One moved next door is stepped over as if inserted: made anew by the caller.
    assert same_stretches(last, [last[9], *last[:9]]) == [(1, 10, 0)]
    # An equal object that is not the very one is new.
    assert same_stretches([1000, 2000], [1000, int("2000")]) == [(0, 1, 0)]


def test_same_stretches_cover_every_kept_object_but_a_few_near_each_edit() -> None:
    chance = random.Random(7)
    for _ in range(300):
        last = [object() for _ in range(chance.randrange(0, 30))]
        now = list(last)
        for _ in range(chance.randrange(0, 4)):
            edit = chance.choice(["replace", "insert", "delete", "move"])
            if edit == "insert" or not now:
                now.insert(chance.randrange(0, len(now) + 1), object())
            elif edit == "replace":
                now[chance.randrange(0, len(now))] = object()
            elif edit == "delete":
                del now[chance.randrange(0, len(now))]
            else:
                now.insert(chance.randrange(0, len(now)), now.pop(chance.randrange(0, len(now))))
        covered = _covered(last, now)
        kept = {id(item) for item in last}
        missed = [n for n, item in enumerate(now) if id(item) in kept and not covered[n]]
        # An old item left out is one stepped over near an edit: a few an edit at most.
        assert len(missed) <= 3 * REPLACED_AT_MOST


def test_same_stretches_end_where_an_item_differs_whatever_the_block() -> None:
    """Long stretches are compared a block at a time (`FIRST_BLOCK`, doubling): a stretch
    ends at the first item that differs, at a block's first or last item or inside one."""
    last = [object() for _ in range(3 * LAST_BLOCK)]
    for at in (1, FIRST_BLOCK - 1, FIRST_BLOCK, 3 * FIRST_BLOCK, LAST_BLOCK + 5, len(last) - 1):
        now = [*last[:at], object(), *last[at + 1 :]]
        assert (
            same_stretches(last, now)
            == [(0, at, 0), (at + 1, len(last), at + 1)][: 2 if at + 1 < len(last) else 1]
        )
    # Equal but not the very object ends a stretch inside a block.
    equal = [*last[:100], int("123456789"), *last[101:200]]
    assert same_stretches([*last[:100], 123456789, *last[101:200]], equal) == [
        (0, 100, 0),
        (101, 200, 101),
    ]
    # `now` longer or shorter than `last`: the stretch stops at the shorter's end.
    assert same_stretches(last[:1000], last) == [(0, 1000, 0)]
    assert same_stretches(last, last[:1000]) == [(0, 1000, 0)]


def test_gaps_are_what_the_stretches_leave_of_the_last_sequence() -> None:
    assert list(gaps([], 5)) == [(0, 5)]
    assert list(gaps([(3, 5), (0, 1)], 7)) == [(1, 3), (5, 7)]
    assert list(gaps([(0, 7)], 7)) == []


def test_many_replaced_side_by_side_are_stepped_over_as_far_as_asked() -> None:
    """More items replaced where they stood than REPLACED_AT_MOST: by default found again
    through their ids; with `ahead`, stepped over (looked ahead for, in C) as far as that."""
    last = [object() for _ in range(1000)]
    now = [*last[:500], *(object() for _ in range(40)), *last[540:]]
    expected = [(0, 500, 0), (540, 1000, 540)]
    assert same_stretches(last, now) == expected == same_stretches(last, now, ahead=64)
    # Moved, not replaced: found by id by default; taken as new within what is looked ahead.
    moved = [*last[:500], *last[520:540], *last[500:520], *last[540:]]
    by_id = [(0, 500, 0), (500, 520, 520), (520, 540, 500), (540, 1000, 540)]
    assert same_stretches(last, moved) == by_id
    assert same_stretches(last, moved, ahead=64) == expected
    # All new: nothing covered, and looked ahead from once a window.
    assert same_stretches(last, [object() for _ in last], ahead=64) == []
