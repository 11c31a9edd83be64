"""Lists of message ids written by reference to the file's latest snapshot (formats 1.2 and 1.3).

A snapshot's ``message_ids`` and a ``span.end``'s ``input_message_ids`` / ``output_message_ids``
may be written as ``{"base": <the file's latest snapshot entry id>, "keep": ..., "add": [ids]}``:

* ``"keep": n`` (1.2): the base snapshot's first ``n`` ids, then ``add``. A growing conversation
  writes only its new ids.
* ``"keep": [piece, ...]`` (1.3): each piece in turn, then ``add``. A piece is ``[start, stop]``
  (the base's ids ``start`` to ``stop``, a slice: ``0 <= start < stop <= len(base)``, each run
  starting at or after the end of the one before) or a string (one id that is not in the base
  there: a summary in place of dropped turns, a message put in the middle). A sliding window —
  the system prompt kept, the oldest turns dropped after it, new ones appended — is
  ``{"keep": [[0, 1], [5, 400]], "add": [the new ids]}``: what is new, not the window.

The ZIP's ``snapshots.json`` keeps each snapshot's ids against the snapshot before it the same
way, without ``base`` (:func:`keep_of`, :func:`expand`; its format 3).

The writer (:func:`reference`) runs on the recorder's hot path, once per snapshot and model call:
every comparison of ids runs in C (slice comparisons, ``list.index``, a set's membership by
``map``); Python loops only per piece, at most :data:`MAX_PIECES` of them. The reader
(:func:`resolve`) refuses a reference that does not resolve exactly (``None``), and the file's
line is then reported as a bad one (``docs/session-format.md``, "Reading rules").
"""

from __future__ import annotations

from itertools import compress
from itertools import count as numbers
from typing import Any

# Lists of message ids shorter than this are written whole, and a reference is written only when
# it saves at least this many ids (a reference's own keys cost about as much as three ids; short
# conversations stay plain lists).
MIN_REFERENCE = 8
# A base shorter than this is not looked at for runs (see reference).
MIN_RUNS_BASE = 20
# Pieces (runs of the base and ids in between) a reference holds at most: past them, the rest of
# the list is written in ``add`` (a conversation that moved its messages about).
MAX_PIECES = 32


def reference(base_id: str, base: list[Any], ids: list[Any], same: int = 0) -> Any:
    """``ids`` as written in a file whose latest snapshot is ``base_id`` with the ids ``base``: by
    reference when that saves at least :data:`MIN_REFERENCE` ids, else the list itself. The
    leading run alone is the 1.2 form (``"keep": n``, byte for byte as 1.2 wrote it); runs of the
    base further on, or ids new in the middle, the 1.3 form, when they save more. ``same``: how
    many leading ids are known to be the base's (not compared again)."""
    found = keep_of(base, ids, same)
    if found is None:
        return ids
    return {"base": base_id, "keep": found[0], "add": ids[found[1] :]}


def keep_of(base: list[Any], ids: list[Any], same: int = 0) -> tuple[Any, int] | None:
    """The ``keep`` of ``ids`` against ``base`` (an int, the leading run; or a list of pieces) and
    where ``add`` starts in ``ids``; ``None`` when the list is better written whole. The session
    file's references (:func:`reference`) and the ZIP's ``snapshots.json`` (against the snapshot
    before, ``session_format.views``) both keep their ids by it."""
    count = len(ids)
    if count < MIN_REFERENCE:
        return None
    length = len(base)
    keep = min(length, count)
    low = min(same, keep)
    if low < keep:  # (else: a growing conversation, known equal as far as it goes)
        keep = low if ids[low] != base[low] else _run(ids, 0, base, 0, low, keep)  # (a window: low)
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


# Ids looked at one by one from the end of a run's most possible extent (see _run).
_TAIL = 8


def _run(ids: list[Any], at: int, base: list[Any], start: int, low: int, high: int) -> int:
    """How many ids from ``ids[at]`` and ``base[start]`` on are equal, known to be at least
    ``low`` and at most ``high``. A run usually ends at its most, or a few ids before (where the
    base goes on by the last call's question and answer): the last few are looked at first, then
    the rest compared at once; else halving on slices. Every comparison of many ids runs in C (an
    id is equal to itself at once)."""
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


_STR = frozenset({str})


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
        run = _run(ids, at, base, found, 1, min(count - at, length - found))  # (ids[at] is base[found])
        pieces.append([found, found + run])
        kept += run
        runs += 1
        at, start = at + run, found + run
    # Each run costs about an id ("[12,345]," against "0a0b0c0d-0345",): it saves its ids but one.
    if kept - runs <= max(MIN_REFERENCE - 1, keep):  # (no better than the leading run alone)
        return None
    return pieces, at


def resolve(ref: dict[str, Any], base_id: Any, base: Any) -> list[Any] | None:
    """The list of ids a reference stands for, against the file's latest snapshot (entry id
    ``base_id``, its ids ``base``); ``None`` when it names another base or does not resolve
    exactly (see :func:`expand`)."""
    if ref.get("base") != base_id or base_id is None:
        return None
    return expand(ref.get("keep"), ref.get("add"), base)


def expand(keep: Any, add: Any, base: Any) -> list[Any] | None:
    """The ids ``keep`` and ``add`` stand for against the ids ``base`` (see the module's
    docstring); ``None`` when they do not resolve exactly: ``base`` or ``add`` not a list,
    ``keep`` out of range, a run not a pair of increasing ints within the base, a run starting
    before the end of the one before."""
    # (JSON values, as declared here: each type is checked before it is relied on)
    ids: list[Any] | None = base
    added: list[Any] | None = add
    kept: int | list[Any] | None = keep
    if type(ids) is not list or type(added) is not list:
        return None
    if type(kept) is int:
        return ids[:kept] + added if 0 <= kept <= len(ids) else None
    if type(kept) is not list:
        return None
    out: list[Any] = []
    end = 0  # where the last run ended
    length = len(ids)
    for item in kept:
        piece: str | list[Any] | None = item
        if type(piece) is str:
            out.append(piece)
            continue
        if type(piece) is not list or len(piece) != 2:
            return None
        start, stop = piece
        if type(start) is not int or type(stop) is not int or not end <= start < stop <= length:
            return None
        out += ids[start:stop]
        end = stop
    out += added
    return out
