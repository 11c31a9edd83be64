"""The one way a snapshot and a message are shown to readers: DevDuck's snapshot shape
(``snapshots.json`` in the ZIP, ``LoadedSession.snapshots``) and a message without its entry
bookkeeping. The ZIP writer and the loader both build them here, so a session's ``.jsonl`` and
its ``.zip`` give equal snapshots."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

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
    own = entry.get(MESSAGE_OWN_KEYS)
    if isinstance(own, dict):
        view.update(own)
    return view


def model_info_view(raw: Any) -> dict[str, Any]:
    """``model_info`` with DevDuck's three keys first (``type``, ``model_id``, ``provider``), then
    whatever else was recorded."""
    raw = raw if isinstance(raw, dict) else {}
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
    views: Mapping[str, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """One ``snapshot`` entry in DevDuck's shape, its messages resolved from ``messages`` (entry id
    → message entry). Exactly DevDuck's keys, in its order (``state`` is in the entry and in the
    ZIP's ``resume.json``).

    ``views`` (entry id → :func:`message_view` of that message entry), when given, is used before
    ``messages``: the same view object for an id however many snapshots name it (the ZIP writer
    makes each once)."""
    ids = entry.get("message_ids")
    ids = [i for i in ids if isinstance(i, str)] if isinstance(ids, list) else []
    if views is None:
        agent_messages = [message_view(messages.get(i), i) for i in ids]
    else:
        agent_messages = [views[i] if i in views else message_view(messages.get(i), i) for i in ids]
    tools = entry.get("tools_loaded")
    return {
        "timestamp": _number(entry.get("ts")) / 1e9,
        "snapshot_id": entry.get("snapshot_id"),
        "agent_messages_count": len(agent_messages),
        "tools_loaded": tools if isinstance(tools, list) else [],
        "system_prompt_hash": entry.get("system_prompt_sha256"),
        "env_vars_redacted": [],
        "cwd": entry.get("cwd"),
        "events_since_last": events_since_last,
        "agent_messages": agent_messages,
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
            ids = entry.get("message_ids")
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
    return [snapshot_view(entry, messages, count) for entry, count in snapshots]
