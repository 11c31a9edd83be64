"""Reading format 1.2 and 1.3 files as 1.1 entries: what their writer leaves out, put back as lines
are read.

A 1.2 file says once what 1.1 repeated on every line (``docs/session-format.md``, "1.2"); this
module restores it, so every reader downstream sees the 1.1 shape. It keeps only what later lines
refer to: the start entries of spans still open and the latest snapshot of the file (memory is
bounded by the spans running at once and one conversation, never by the file's length).

* Span attributes: those the root entry's ``span_attributes`` names (the session's id, on
  every span) are left out when they have that value, and written ``null`` when the span does not
  have them.
* A trace root's ``parent_span_id`` (``null``) and a ``span.end``'s ``UNSET`` status are left out.
* Under the start entry of a span still open, what that start says is not repeated: a span
  event leaves out ``trace_id``, a message ``span_id``, a snapshot ``trace_id`` and ``span_id``.
* A span entry with ``content`` (a tool or model call) leaves out the identity attributes
  (``SPAN_IDENTITY_ATTRIBUTES``: operation, tool, model asked for) equal to those of the latest
  such entry of the same name in the file, which ``like`` names (one that entry had and this span
  has not is ``null``).
* A ``span.end``'s ``content.same`` lists the content keys (a model call's system instructions
  and tool definitions) it has as the file's latest ``span.end`` that had them.
* A snapshot names the file's previous snapshot (``prev``) and leaves out the fields equal to
  it; a list of message ids (a snapshot's ``message_ids``, a span's ``input_message_ids`` /
  ``output_message_ids``) may be ``{"base": <snapshot entry id>, "keep": n, "add": [ids]}``: the
  first ``n`` ids of the latest snapshot, then ``add``; in 1.3 ``keep`` may also be a list of
  runs of that snapshot's ids and new ids (a sliding window: :mod:`.references`).
"""

from __future__ import annotations

from typing import Any

from .references import resolve
from .schema import (
    CONTENT_CARRIED,
    FORMAT_NAME,
    MESSAGE,
    SESSION_JOIN,
    SESSION_START,
    SNAPSHOT,
    SPAN_END,
    SPAN_EVENT,
    SPAN_IDENTITY_ATTRIBUTES,
    SPAN_NAMES_REMEMBERED,
    SPAN_START,
)

SNAPSHOT_CARRIED = (
    "description",
    "auto",
    "system_prompt",
    "system_prompt_sha256",
    "last_query",
    "last_result",
    "model_info",
    "tools_loaded",
    "cwd",
)
"""Snapshot fields a 1.2 snapshot leaves out when they equal its ``prev`` snapshot's."""
MESSAGE_ID_LISTS = ("input_message_ids", "output_message_ids")

STATUS_UNSET = {"code": "UNSET"}
_ROOTS = (SESSION_START, SESSION_JOIN)
_MAX_OPEN = 1 << 20  # open spans remembered (a file of spans that never end cannot grow it past this)


def compact_version(entry: dict[str, Any]) -> bool:
    """Whether a root entry starts a file written in format 1.2 or a later 1.x."""
    if entry.get("type") not in _ROOTS:
        return False
    meta: dict[str, Any] | None = entry.get("metadata")
    if type(meta) is not dict or meta.get("format") not in (FORMAT_NAME, None):
        return False
    version = meta.get("format_version")
    if type(version) is not str:
        return False
    major, _, minor = version.partition(".")
    return major == "1" and minor.isdigit() and int(minor) >= 2


class Upgrade:
    """The state of one 1.2 (or later 1.x) file being read: its session id, open spans, latest snapshot."""

    __slots__ = ("defaults", "open", "snapshot", "content", "names", "_kinds")

    def __init__(self, root: dict[str, Any]):
        self.defaults: dict[str, Any] = {}
        self.open: dict[str, dict[str, Any]] = {}  # start entry id → start entry, while open
        self.snapshot: dict[str, Any] | None = None
        self.content: dict[str, Any] = {}
        self.names: dict[str, tuple[Any, dict[str, Any]]] = {}
        self.reset(root)
        self._kinds = {
            SPAN_START: self._start,
            SPAN_END: self._end,
            SPAN_EVENT: self._event,
            MESSAGE: self._message,
            SNAPSHOT: self._snapshot,
        }

    def reset(self, root: dict[str, Any]) -> None:
        """Start a file (its root entry): nothing is open, no snapshot taken."""
        defaults = root.get("span_attributes")
        self.defaults = defaults if type(defaults) is dict else {}
        self.open = {}
        self.snapshot = None
        self.content = {}
        self.names = {}

    def step(self, entry: dict[str, Any]) -> bool:
        """Put back in ``entry`` (the file's next after its root) what 1.2 left out. A root entry
        (a child file's, in a ZIP's ``events.jsonl``) starts the state again, or, when its file
        is not 1.2 or later, ends the upgrade: ``False``, and that entry and the rest are read as they are."""
        kind = entry.get("type")
        if type(kind) is not str:
            return True  # (the reader's checks name the line)
        handler = self._kinds.get(kind)
        if handler is not None:
            handler(entry)
        elif kind in _ROOTS:
            if not compact_version(entry):
                return False
            self.reset(entry)
        return True

    # --- spans -----------------------------------------------------------------------------------

    def _attributes(self, entry: dict[str, Any]) -> None:
        """A span's attributes with what was said before put back: the identity attributes of
        the latest span entry of its name (``like``), the root's ``span_attributes``."""
        if "parent_span_id" not in entry:
            entry["parent_span_id"] = None
        attributes: dict[str, Any] | None = entry.get("attributes")
        like = entry.pop("like", None)
        name = entry.get("name")
        if type(name) is str and "content" in entry:
            names = self.names
            previous = names.get(name)
            if like is not None and previous is not None and previous[0] == like:
                if type(attributes) is not dict:
                    attributes = entry["attributes"] = {}
                for key, value in previous[1].items():
                    if key not in attributes:
                        attributes[key] = value
                    elif attributes[key] is None:
                        del attributes[key]
            if previous is None and len(names) >= SPAN_NAMES_REMEMBERED:
                names.clear()
            keys = SPAN_IDENTITY_ATTRIBUTES.intersection(attributes) if type(attributes) is dict else ()
            names[name] = (entry.get("id"), {k: attributes[k] for k in keys} if attributes and keys else {})
        if not self.defaults:
            return
        if type(attributes) is not dict:
            attributes = entry["attributes"] = {}
        for key, value in self.defaults.items():
            had = attributes.get(key, attributes)
            if had is attributes:
                attributes[key] = value
            elif had is None:
                del attributes[key]

    def _start(self, entry: dict[str, Any]) -> None:
        self._attributes(entry)
        if len(self.open) >= _MAX_OPEN:
            self.open.clear()
        entry_id = entry.get("id")
        if type(entry_id) is str:  # (another type: the reader's checks name the line)
            self.open[entry_id] = entry

    def _under(self, entry: dict[str, Any]) -> dict[str, Any] | None:
        """The start entry of the open span ``entry`` hangs under, if any."""
        parent = entry.get("parent_id")
        return self.open.get(parent) if type(parent) is str else None

    def _end(self, entry: dict[str, Any]) -> None:
        start = self._under(entry)
        if start is not None and start.get("span_id") == entry.get("span_id"):
            del self.open[entry["parent_id"]]
        self._attributes(entry)
        if "status" not in entry:
            entry["status"] = dict(STATUS_UNSET)
        content: dict[str, Any] | None = entry.get("content")
        if type(content) is dict:
            for key in MESSAGE_ID_LISTS:
                ids: dict[str, Any] | None = content.get(key)
                if type(ids) is dict:
                    content[key] = self._ids(ids)
            same: list[Any] | None = content.pop("same", None)
            carried = self.content
            if type(same) is list:
                for key in same:
                    if type(key) is str and key in carried:
                        content[key] = carried[key]
            for key in CONTENT_CARRIED:
                if key in content:
                    carried[key] = content[key]

    def _event(self, entry: dict[str, Any]) -> None:
        if "trace_id" not in entry:
            span = self._under(entry)
            if span is not None:
                entry["trace_id"] = span.get("trace_id")

    # --- messages and snapshots ------------------------------------------------------------------

    def _message(self, entry: dict[str, Any]) -> None:
        if "span_id" not in entry:
            span = self._under(entry)
            if span is not None:
                entry["span_id"] = span.get("span_id")

    def _ids(self, ref: dict[str, Any]) -> Any:
        """A list of message ids written by reference to the latest snapshot (:mod:`.references`);
        left as it is when it does not resolve (it names another snapshot, a run is out of range,
        …): the reader's checks then name the line."""
        snapshot = self.snapshot
        if snapshot is None:
            return ref
        ids = resolve(ref, snapshot.get("id"), snapshot.get("message_ids"))
        return ref if ids is None else ids

    def _snapshot(self, entry: dict[str, Any]) -> None:
        prev = self.snapshot
        if "prev" in entry:
            name = entry.pop("prev")
            if prev is not None and prev.get("id") == name:
                for key in SNAPSHOT_CARRIED:
                    if key not in entry and key in prev:
                        entry[key] = prev[key]
        ids: dict[str, Any] | list[Any] | None = entry.get("message_ids")
        if type(ids) is dict:
            ids = entry["message_ids"] = self._ids(ids)
        if "messages_count" not in entry and type(ids) is list:
            entry["messages_count"] = len(ids)
        if "trace_id" not in entry:
            span = self._under(entry)
            if span is not None:
                entry["trace_id"] = span.get("trace_id")
                entry["span_id"] = span.get("span_id")
        self.snapshot = entry
