"""The one way a snapshot and a message are shown to readers: DevDuck's snapshot shape
(``snapshots.json`` in the ZIP, ``LoadedSession.snapshots``) and a message without its entry
bookkeeping. The ZIP writer and the loader both build them here, so a session's ``.jsonl`` and
its ``.zip`` give equal snapshots."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .alignment import keep_of
from .references import expand
from .schema import MESSAGE, SNAPSHOT

# Entry fields that are bookkeeping, not part of the message itself.
MESSAGE_ENTRY_KEYS = frozenset({"id", "parent_id", "type", "layer", "ts", "digest", "span_id"})
# A message's own keys of those names (an OpenAI Responses item's ``id`` and ``type``: a
# ``function_call`` with ``id: "fc_…"``) are kept under this key of its entry, never at the top
# where they would replace the entry's id and type.
MESSAGE_OWN_KEYS = "message_keys"
_NOT_IN_VIEW = (*sorted(MESSAGE_ENTRY_KEYS), MESSAGE_OWN_KEYS)


def message_fields(fields: dict[str, Any]) -> dict[str, Any]:
    """A message's fields as its entry holds them (``fields``, changed in place and returned): the
    keys that clash with the entry's bookkeeping moved under :data:`MESSAGE_OWN_KEYS`."""
    if not MESSAGE_ENTRY_KEYS.isdisjoint(fields):
        fields[MESSAGE_OWN_KEYS] = {k: fields.pop(k) for k in MESSAGE_ENTRY_KEYS.intersection(fields)}
    return fields


def message_view(entry: Mapping[str, Any] | None, entry_id: str = "") -> dict[str, Any]:
    """A message entry as the message it records (``role``, ``content`` or its hash, …); a message
    the file does not hold (cut off by a crash) is ``{"role": "unknown", "missing": <id>}``."""
    if entry is None:
        return {"role": "unknown", "content": None, "missing": entry_id or True}
    view = dict(entry)  # (copied, then the bookkeeping taken out: faster than a comprehension)
    pop = view.pop
    for key in _NOT_IN_VIEW:
        pop(key, None)
    own: dict[str, Any] | None = entry.get(MESSAGE_OWN_KEYS)
    if isinstance(own, dict):
        view.update(own)
    return view


def model_info_view(raw: Any) -> dict[str, Any]:
    """``model_info`` with DevDuck's three keys first (``type``, ``model_id``, ``provider``), then
    whatever else was recorded."""
    fields: dict[str, Any] | None = raw
    raw = fields if isinstance(fields, dict) else {}
    out = {
        "type": raw.get("type"),
        "model_id": raw.get("model_id") or raw.get("model"),
        "provider": raw.get("provider"),
    }
    for key, value in raw.items():
        if key not in out and key != "model":
            out[key] = value
    return out


def snapshot_view(
    entry: Mapping[str, Any],
    messages: Mapping[str, Mapping[str, Any]],
    events_since_last: int,
    *,
    views: dict[str, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """One ``snapshot`` entry in DevDuck's shape, its messages resolved from ``messages`` (entry id
    → message entry). Exactly DevDuck's keys, in its order (``state`` is in the entry and in the
    ZIP's ``resume.json``).

    ``views`` (entry id → :func:`message_view` of that message entry), when given, is used before
    ``messages``, and filled with the views made: the same view object for an id however many
    snapshots name it."""
    ids = _message_ids(entry)
    if views is None:
        agent_messages = [message_view(messages.get(i), i) for i in ids]
    else:
        agent_messages = _views_of(ids, messages, views)
    return _devduck_keys(entry, events_since_last, len(ids), "agent_messages", agent_messages)


def snapshot_reference_view(
    entry: Mapping[str, Any], events_since_last: int, previous_ids: list[str] | None
) -> tuple[dict[str, Any], list[str]]:
    """One ``snapshot`` entry as the ZIP's ``snapshots.json`` (format 3) holds it: DevDuck's keys,
    with ``agent_message_ids`` in place of ``agent_messages`` — the entry ids of its messages
    (``message`` entries of ``events.jsonl``), as a list, or by reference to the snapshot before
    it in the list, as the session file keeps them (``alignment.keep_of``): ``{"keep": n, "add":
    [...]}``, its first ``n`` ids then ``add`` (format 2), or ``{"keep": [piece, ...], "add":
    [...]}``, runs of its ids and ids new between them, then ``add`` (format 3: a sliding window).
    So the member grows with the session, not with snapshots × messages. Returns the view and its
    ids (the next one's ``previous_ids``)."""
    ids = _message_ids(entry)
    shown: Any = ids
    if previous_ids:
        found = keep_of(previous_ids, ids)
        if found is not None:
            shown = {"keep": found[0], "add": ids[found[1] :]}
    return _devduck_keys(entry, events_since_last, len(ids), "agent_message_ids", shown), ids


def resolve_snapshots(
    snapshots: list[Mapping[str, Any]], messages: Mapping[str, Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """``snapshots.json`` (any format) in DevDuck's shape, each snapshot's messages whole:
    formats 2 and 3's ``agent_message_ids`` expanded and resolved from ``messages`` (entry id → message
    entry, as :func:`build_snapshots` keeps them); a format-1 snapshot as it is. One view per id,
    shared by the snapshots that name it."""
    out: list[dict[str, Any]] = []
    views: dict[str, dict[str, Any]] = {}
    previous: list[str] = []
    for snapshot in snapshots:
        if "agent_message_ids" not in snapshot:
            out.append(dict(snapshot))
            continue
        listed: dict[str, Any] | list[Any] | None = snapshot["agent_message_ids"]
        if isinstance(listed, dict):
            listed = expand(listed.get("keep"), listed.get("add"), previous) or []
        ids: list[str] = [i for i in listed if isinstance(i, str)] if isinstance(listed, list) else []
        previous = ids
        resolved = _views_of(ids, messages, views)
        view: dict[str, Any] = {}
        for key, value in snapshot.items():  # (in its place among DevDuck's keys)
            if key == "agent_message_ids":
                view["agent_messages"] = resolved
            else:
                view[key] = value
        out.append(view)
    return out


def _views_of(
    ids: list[str], messages: Mapping[str, Mapping[str, Any]], views: dict[str, dict[str, Any]]
) -> list[dict[str, Any]]:
    """The :func:`message_view` of each id, each made once and kept in ``views`` (shared)."""
    out: list[dict[str, Any]] = []
    for i in ids:
        view = views.get(i)
        if view is None:
            view = views[i] = message_view(messages.get(i), i)
        out.append(view)
    return out


def _message_ids(entry: Mapping[str, Any]) -> list[str]:
    """A snapshot's message ids, the ``str`` ones (a copy: all are, most often, found in C)."""
    ids: list[Any] | None = entry.get("message_ids")
    if not isinstance(ids, list):
        return []
    if _STR_ONLY.issuperset(map(type, ids)):
        return list(ids)
    return [i for i in ids if isinstance(i, str)]


_STR_ONLY = frozenset({str})


def _devduck_keys(
    entry: Mapping[str, Any], events_since_last: int, count: int, messages_key: str, messages: Any
) -> dict[str, Any]:
    tools = entry.get("tools_loaded")
    return {
        "timestamp": _number(entry.get("ts")) / 1e9,
        "snapshot_id": entry.get("snapshot_id"),
        "agent_messages_count": count,
        "tools_loaded": tools if isinstance(tools, list) else [],
        "system_prompt_hash": entry.get("system_prompt_sha256"),
        "env_vars_redacted": [],
        "cwd": entry.get("cwd"),
        "events_since_last": events_since_last,
        messages_key: messages,
        "system_prompt": entry.get("system_prompt"),
        "last_query": entry.get("last_query"),
        "last_result": entry.get("last_result"),
        "model_info": model_info_view(entry.get("model_info")),
        "description": entry.get("description", ""),
    }


def _number(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def build_snapshots(
    entries: Callable[[], Iterable[Mapping[str, Any]]], raw: list[Mapping[str, Any]] | None = None
) -> list[dict[str, Any]]:
    """Every snapshot of a session in DevDuck's shape, from a callable that streams its entries
    (the snapshot entries themselves are appended to ``raw`` when given).

    Two passes: the first keeps the snapshot entries and which message ids they name; the second
    keeps just those messages. Memory is bounded by what the snapshots show, not the file size.
    """
    snapshots: list[tuple[Mapping[str, Any], int]] = []
    needed: set[str] = set()
    since = 0
    for entry in entries():
        if entry.get("type") == SNAPSHOT:
            snapshots.append((entry, since))
            since = 0
            ids: list[Any] | None = entry.get("message_ids")
            if isinstance(ids, list):
                needed.update(i for i in ids if isinstance(i, str))
        else:
            since += 1
    messages: dict[str, Mapping[str, Any]] = {}
    if needed:
        for entry in entries():
            if entry.get("type") == MESSAGE and entry.get("id") in needed:
                messages[entry["id"]] = entry
    if raw is not None:
        raw.extend(entry for entry, _ in snapshots)
    # One view per message, shared by the snapshots that name it: a conversation snapshotted
    # each turn holds its messages once, not once per turn.
    views: dict[str, dict[str, Any]] = {}
    return [snapshot_view(entry, messages, count, views=views) for entry, count in snapshots]
