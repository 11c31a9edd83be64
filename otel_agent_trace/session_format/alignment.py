"""Conversation alignment: how a list sent now lines up with the one sent before it.

A conversation is mostly sent again as it was, grown by a question and its answer; else a
sliding window dropped its oldest turns (the system prompt kept), or a summary replaced some. Three
parts of the package compare a list with the last one position by position, and all do it here:

* the capture (``instrumentation/_genai/jsonable``): the messages an agent hands an SDK against
  the last call's, so a message sent again is not read again (:func:`align`);
* the recorder (``recording/message_store``): a conversation's messages against those its file saw
  last, so a message sent again is not hashed again (:func:`align`, by identity for the capture's
  own copies);
* the session format (``references``, ``views``): a snapshot's message ids against the previous
  snapshot's, written as the runs kept and the ids added (:func:`keep_of`).

Items are compared as lists compare theirs: an item is equal to itself without being compared
(:func:`same`), so an SDK object's ``__eq__`` runs only for the few items that are not the very
objects sent before. The comparisons of many items run in C (slices, ``list.index``): a resent
conversation costs about one pass in C, whatever its messages hold. Any comparison may raise (an
odd object's ``__eq__``): callers that take foreign objects catch it.
"""

from __future__ import annotations

from itertools import compress
from itertools import count as numbers
from typing import Any, NamedTuple

# Lists of message ids shorter than this are written whole, and a reference is written only when
# it saves at least this many ids (a reference's own keys cost about as much as three ids; short
# conversations stay plain lists).
MIN_REFERENCE = 8
# A base shorter than this is not looked at for runs (see keep_of).
MIN_RUNS_BASE = 20
# Pieces (runs of the base and ids in between) a reference holds at most: past them, the rest of
# the list is written in ``add`` (a conversation that moved its messages about).
MAX_PIECES = 32

# Items looked at one by one from the end of two lists (see common_prefix and run_length).
_TAIL = 8
_STR = frozenset({str})


def same(item: Any, before: Any) -> bool:
    """Whether ``item`` is as ``before`` was, as a list compares its items: the same object, or
    equal."""
    return item is before or bool(item == before)


def common_prefix(values: list[Any], previous: list[Any]) -> int:
    """How many leading items two lists share (see :func:`same`). Most often they part at their
    last item or two (a conversation grown by a question and its answer): the last few items not
    the same objects are stepped over, the rest compared at once, then those few one by one. Else
    the lists part early (a sliding window): that is found from the start, on slices of doubling
    then halving length. All in C but the few; an item compared in Python (an SDK object's
    ``__eq__``) costs a few comparisons, not a pass."""
    length = min(len(values), len(previous))
    end = length
    floor = max(0, length - _TAIL)
    while end > floor and values[end - 1] is not previous[end - 1]:
        end -= 1
    if values[:end] == previous[:end]:
        while end < length and values[end] == previous[end]:  # (not the same objects: see above)
            end += 1
        return end
    low, high, step = 0, 1, 1  # values[:low] is previous[:low]; they part before ``end``
    while values[low:high] == previous[low:high]:
        low, step = high, step * 2
        high = min(low + step, end)
    while high - low > 1:  # values[low:high] is not previous[low:high]
        middle = (low + high) // 2
        if values[low:middle] == previous[low:middle]:
            low = middle
        else:
            high = middle
    return low


def run_length(ids: list[Any], at: int, base: list[Any], start: int, low: int, high: int) -> int:
    """How many ids from ``ids[at]`` and ``base[start]`` on are equal, known to be at least
    ``low`` and at most ``high``. A run usually ends at its most, or a few ids before (where the
    base goes on by the last call's question and answer): the last few are looked at first, then
    the rest compared at once; else halving on slices. Every comparison of many ids runs in C."""
    end = high
    floor = max(low, high - _TAIL)
    while end > floor and ids[at + end - 1] != base[start + end - 1]:
        end -= 1  # (the ids from ``end`` to ``high`` differ)
    if ids[at + low : at + end] == base[start + low : start + end]:
        return end
    high = end - 1  # ids[at:at + low] is the base's; ids[at:at + high + 1] is not
    while low < high:
        middle = (low + high + 1) // 2
        if ids[at + low : at + middle] == base[start + low : start + middle]:
            low = middle
        else:
            high = middle - 1
    return low


def dropped_at(values: list[Any], previous: list[Any], at: int, identity: bool = False) -> int:
    """How many items of ``previous`` were dropped at position ``at`` of ``values`` (a sliding
    window, or a summary in their place): the distance to the next item of ``previous`` that is
    ``values[at]`` (the same object when ``identity``, else :func:`same`) and whose follower is
    ``values[at + 1]`` too; 0 when none is."""
    wanted = values[at]
    start = at + 1
    while start < len(previous):
        if identity:
            found = next((i for i in range(start, len(previous)) if previous[i] is wanted), -1)
        else:
            try:
                found = previous.index(wanted, start)  # (in C)
            except ValueError:
                found = -1
        if found < 0:
            return 0
        after = found + 1
        if after >= len(previous) or at + 1 >= len(values):
            return found - at
        follower, kept = values[at + 1], previous[after]
        if follower is kept if identity else same(follower, kept):
            return found - at
        start = after
    return 0


class Alignment(NamedTuple):
    """How a list lines up with the one before it (see :func:`align`)."""

    prefix: int  # its leading items that are as they were
    changed: list[int]  # the positions after them, up to the shorter list's end, that are not
    at: int  # where items of the one before were dropped (when ``dropped``)
    dropped: int  # how many were dropped there (0: none)

    def kept(self, previous: list[Any]) -> list[Any]:
        """``previous`` without the dropped items: what the positions line up with."""
        if not self.dropped:
            return previous
        return previous[: self.at] + previous[self.at + self.dropped :]


def align(values: list[Any], previous: list[Any], identity: bool = False) -> Alignment:
    """Which items of ``values`` are as they were at their position in ``previous``. The leading
    ones are found at once (:func:`common_prefix`); an item after them is as it was when it is the
    same object (``identity``: the list holds the very objects kept) or else :func:`same`. When
    the first two after the leading ones both differ, some items may have been dropped there (a
    sliding window) or replaced by one (a summary): then ``previous`` without them is what the
    rest lines up with (:meth:`Alignment.kept`). A comparison may raise."""
    prefix = common_prefix(values, previous)
    length = min(len(values), len(previous))
    if prefix + 1 < length and not _kept(values[prefix + 1], previous[prefix + 1], identity):
        for at in (prefix, prefix + 1):
            try:
                dropped = dropped_at(values, previous, at, identity)
            except Exception:  # an odd object's comparison: not taken as dropped
                dropped = 0
            if dropped:
                rest = previous[:at] + previous[at + dropped :]
                kept = common_prefix(values, rest)
                return Alignment(kept, _changed(values, rest, kept, identity), at, dropped)
    return Alignment(prefix, _changed(values, previous, prefix, identity), 0, 0)


def _kept(item: Any, before: Any, identity: bool) -> bool:
    return item is before if identity else same(item, before)


def _changed(values: list[Any], previous: list[Any], start: int, identity: bool) -> list[int]:
    """The positions from ``start`` to the shorter list's end whose items are not as they were."""
    stop = min(len(values), len(previous))
    return [i for i in range(start, stop) if not _kept(values[i], previous[i], identity)]


def keep_of(base: list[Any], ids: list[Any], known: int = 0) -> tuple[Any, int] | None:
    """The ``keep`` of the ids ``ids`` against ``base`` (an int, the leading run; or a list of
    pieces: see ``references``) and where ``add`` starts in ``ids``; ``None`` when the list is
    better written whole. The session file's references (``references.reference``) and the ZIP's
    ``snapshots.json`` (against the snapshot before, ``views``) both keep their ids by it.
    ``known``: how many leading ids are known to be the base's (not compared again)."""
    count = len(ids)
    if count < MIN_REFERENCE:
        return None
    length = len(base)
    keep = min(length, count)
    low = min(known, keep)
    if low < keep:  # (else: a growing conversation, known equal as far as it goes)
        keep = low if ids[low] != base[low] else run_length(ids, 0, base, 0, low, keep)  # (a window: low)
    # Other runs, when the base goes on after the leading run and they could save more: they hold
    # at most the base's ids, less one each (the leading run and one more, to beat it). Not when
    # the base only goes on by the last call's question and answer (a growing conversation asked
    # anew), nor for a short base (a few ids to save, for more work than writing them).
    if (
        keep < count
        and length >= MIN_RUNS_BASE
        and length - (2 if keep else 1) > max(MIN_REFERENCE - 1, keep)
    ):
        pieces = _pieces(base, ids, keep)
        if pieces is not None:
            return pieces
    if keep < MIN_REFERENCE:
        return None
    return keep, keep


def _pieces(base: list[Any], ids: list[Any], keep: int) -> tuple[list[Any], int] | None:
    """The 1.3 ``keep`` of ``ids`` against ``base`` (they share the first ``keep`` ids, and the
    next differs) and where ``add`` starts; ``None`` when it saves no more than the 1.2 form.

    Runs are found left to right: the next id is looked for in the base after the last run
    (``list.index``), and the run from there is as long as the two lists agree. An id not found
    there is new: it and the ids after it that the rest of the base does not hold (a set's
    membership, mapped in C up to the next id it holds) are pieces of their own, unless no id
    after them is in the base (then they are ``add``). A repeated id may start a run at its first
    occurrence where a later one would have been longer: the reference is still exact, one piece
    longer."""
    count, length = len(ids), len(base)
    pieces: list[Any] = [[0, keep]] if keep else []
    kept, runs = keep, len(pieces)
    at, start = keep, keep  # the next id of ``ids``; where the base goes on
    present: Any = None  # whether an id is in the base after the first id not found
    while at < count and start < length and len(pieces) < MAX_PIECES:
        try:
            found = base.index(ids[at], start)
        except ValueError:
            if present is None:
                present = set(base[start:]).__contains__
            # The next id the base holds (in C, up to it): the ids before it are new.
            stop = next(compress(numbers(at + 1), map(present, ids[at + 1 :])), count)
            if stop == count:
                break  # no id after it is in the base: the rest is new (``add``)
            new = ids[at:stop]
            if not set(map(type, new)) <= _STR:  # (an id that is not a string: written whole)
                break
            pieces += new
            at = stop
            continue
        run = run_length(ids, at, base, found, 1, min(count - at, length - found))  # ids[at] is base[found]
        pieces.append([found, found + run])
        kept += run
        runs += 1
        at, start = at + run, found + run
    # Each run costs about an id ("[12,345]," against "0a0b0c0d-0345",): it saves its ids but one.
    if kept - runs <= max(MIN_REFERENCE - 1, keep):  # (no better than the leading run alone)
        return None
    return pieces, at
