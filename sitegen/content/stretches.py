"""Which items of a sequence are the very items of the last build's, found as stretches
compared as pointers: how the held stages of `sitegen serve` and the build daemon tell what
changed in ~100k resources without reading one."""

from __future__ import annotations

import itertools
import operator
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple, TypeVar

REPLACED_AT_MOST = 8  # new items side by side that `same_stretches` steps over in place


class Stretch(NamedTuple):
    """`now[start:stop]` is `last[last : last + stop - start]`, object for object."""

    start: int
    stop: int
    last: int


FIRST_BLOCK = 64  # items `_same_for` compares first; each block after is twice the last
LAST_BLOCK = 1 << 16


def _same_for(last: Sequence[Any], j: int, now: Sequence[Any], i: int) -> int:
    """How many items of `now` from `i` on are the very items of `last` from `j` on. Compared
    in C a block at a time, blocks growing (~0.004 s at 100k items, a loop ~0.03 s)."""
    most = min(len(now) - i, len(last) - j)
    done, block = 0, FIRST_BLOCK
    while done < most:
        size = min(block, most - done)
        ours = now[i + done : i + done + size]
        theirs = last[j + done : j + done + size]
        if not all(map(operator.is_, ours, theirs)):
            differ = itertools.compress(itertools.count(), map(operator.is_not, ours, theirs))
            return done + next(differ)
        done, block = done + size, min(block * 2, LAST_BLOCK)
    return most


def same_stretches(
    last: Sequence[Any], now: Sequence[Any], ahead: int = REPLACED_AT_MOST
) -> list[Stretch]:
    """The stretches of `now` that are stretches of `last` (the very same objects in the same
    order), in order; an item of `now` outside them is new, or one stepped over near an edit
    (the caller makes it anew). Compared as pointers, so that no object is read: ~100k
    resources, whose attributes each cost a cache miss to read. A few items replaced side by
    side, one inserted or one deleted are stepped over where they stand; anything moved
    further is found through the objects' ids (`last` holds them: no id is reused while it
    lives), their map made only then (~0.04 s at 100k). `ahead`: more items replaced side by
    side than REPLACED_AT_MOST are stepped over too, up to that many: where an item made anew
    costs little, and those moved further may be taken as new."""
    stretches: list[Stretch] = []
    looked_to = 0  # the items of `now` before it were looked ahead from: not again
    place: dict[int, int] | None = None
    size, last_size = len(now), len(last)
    i = j = 0
    while i < size:
        item = now[i]
        if j < last_size and item is last[j]:
            same = _same_for(last, j, now, i)
            stretches.append(Stretch(i, i + same, j))
            i, j = i + same, j + same
            continue
        if i + 1 < size and j + 1 < last_size and now[i + 1] is last[j + 1]:
            i, j = i + 1, j + 1  # replaced where it stands
            continue
        if i + 1 < size and j < last_size and now[i + 1] is last[j]:
            i += 1  # inserted
            continue
        if j + 1 < last_size and item is last[j + 1]:
            j += 1  # one deleted
            continue
        # A few replaced side by side (a manifest's entries of the resources that are not
        # runs, made again each build): found again a few steps on.
        step = next(
            (
                step
                for step in range(2, REPLACED_AT_MOST + 1)
                if i + step < size and j + step < last_size and now[i + step] is last[j + step]
            ),
            0,
        )
        if step:
            i, j = i + step, j + step
            continue
        if ahead > REPLACED_AT_MOST and i >= looked_to:
            # Many replaced side by side (a GPU's history pages of every shape): found again
            # further on, looked for in C, once a window, before any id is mapped.
            window = min(ahead, size - i, last_size - j)
            found_at = map(operator.is_, now[i : i + window], last[j : j + window])
            step = next(itertools.compress(itertools.count(), found_at), 0)
            if step:
                i, j = i + step, j + step
                continue
            looked_to = i + window
        if place is None:
            place = {id(held): number for number, held in enumerate(last)}
        found = place.get(id(item))
        if found is not None and last[found] is item:
            j = found
        else:
            i += 1
    return stretches


def gaps(covered: list[tuple[int, int]], size: int) -> Iterator[tuple[int, int]]:
    """The ranges of `range(size)` outside the `covered` ones (which do not overlap)."""
    at = 0
    for start, stop in sorted(covered):
        if start > at:
            yield at, start
        at = max(at, stop)
    if at < size:
        yield at, size


T = TypeVar("T")


def changes(
    last: Sequence[T], now: Sequence[T], ahead: int = REPLACED_AT_MOST
) -> tuple[list[T], list[T]] | None:
    """The items of `now` outside its stretches of `last` (added, in `now`'s order), and the
    items of `last` outside them (removed, in `last`'s order); an item stepped over near an
    edit is in both (`ahead`: `same_stretches`'). None where a stretch covers an item of
    `last` that another covers too (`now` lists it twice)."""
    added: list[T] = []
    covered = []
    done = 0
    for start, stop, from_last in same_stretches(last, now, ahead):
        added += now[done:start]
        covered.append((from_last, from_last + stop - start))
        done = stop
    added += now[done:]
    covered.sort()
    if any(stop > start for (_, stop), (start, _) in itertools.pairwise(covered)):
        return None
    removed = [item for start, stop in gaps(covered, len(last)) for item in last[start:stop]]
    return added, removed
