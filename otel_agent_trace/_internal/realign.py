"""Lining a conversation up with the last one again after some of its messages were dropped (a
sliding window) or replaced by one (a summary): shared by the capture and the recorder, which
both compare a conversation with the last one position by position."""

from __future__ import annotations

import operator
from itertools import compress, repeat
from typing import Any


def dropped_at(values: list[Any], previous: list[Any], at: int, identity: bool = False) -> int:
    """How many items of ``previous`` were dropped at position ``at`` of ``values``: the distance
    to the next item of ``previous`` that is ``values[at]`` (by identity, or equal to it: in C)
    and whose follower is ``values[at + 1]`` too; 0 when none is. A comparison may raise."""
    wanted = values[at]
    start = at + 1
    while start < len(previous):
        if identity:
            hits = compress(range(start, len(previous)), map(operator.is_, repeat(wanted), previous[start:]))
            found = next(hits, -1)
        else:
            try:
                found = previous.index(wanted, start)
            except ValueError:
                found = -1
        if found < 0:
            return 0
        after = found + 1
        if after >= len(previous) or at + 1 >= len(values):
            return found - at
        follower, kept = values[at + 1], previous[after]
        if follower is kept if identity else (follower,) == (kept,):
            return found - at
        start = after
    return 0
