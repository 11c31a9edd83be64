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
way, without ``base`` (:func:`expand`; its format 3).

Which ids a reference keeps is conversation alignment (``alignment.keep_of``: the runs of the
base a list holds, and when a reference is worth writing). The writer (:func:`reference`) runs on
the recorder's hot path, once per snapshot and model call: every comparison of ids runs in C;
Python loops only per piece, at most :data:`MAX_PIECES` of them. The reader
(:func:`resolve`) refuses a reference that does not resolve exactly (``None``), and the file's
line is then reported as a bad one (``docs/session-format.md``, "Reading rules").
"""

from __future__ import annotations

from typing import Any

from .alignment import MAX_PIECES, MIN_REFERENCE, keep_of

__all__ = ["MAX_PIECES", "MIN_REFERENCE", "expand", "reference", "resolve"]


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
