"""Entry types, layers, status codes, file names and the format version: what a session file holds.

A session file is JSON Lines, one entry a line. Every entry has ``id`` (``<prefix>-<seq>``),
``parent_id`` (``""`` for the root), ``type``, ``layer`` and ``ts`` (ns since the epoch).
``docs/session-format.md`` documents every entry type.
"""

from __future__ import annotations

import os

FORMAT_VERSION = "1.3"
FORMAT_NAME = "otel-agent-trace/session"

# Layers, as in DevDuck's recorder.
LAYER_AGENT = "agent"
LAYER_TOOL = "tool"
LAYER_SYS = "sys"
LAYERS = (LAYER_AGENT, LAYER_TOOL, LAYER_SYS)

# Entry types.
SESSION_START = "session.start"
SESSION_JOIN = "session.join"  # a child process joining its parent's session
SESSION_END = "session.end"
SPAN_START = "span.start"
SPAN_END = "span.end"
SPAN_EVENT = "span.event"
MESSAGE = "message"
SNAPSHOT = "snapshot"
CHECKPOINT = "checkpoint"
FORK = "fork"
ENTRY_TYPES = (
    SESSION_START,
    SESSION_JOIN,
    SESSION_END,
    SPAN_START,
    SPAN_END,
    SPAN_EVENT,
    MESSAGE,
    SNAPSHOT,
    CHECKPOINT,
    FORK,
)

# Content keys of a span.end written once while they stay the same (format 1.2: a later model
# call's content lists them in ``same``): a model call's system prompt and tool definitions.
CONTENT_CARRIED = ("system_instructions", "tool_definitions")

# Span attributes that name what a span is (the operation, the tool, the model asked for): a span
# entry with content leaves out those equal to the previous such entry of the same name in its
# file (format 1.2: ``like`` names that entry).
SPAN_IDENTITY_ATTRIBUTES = frozenset(
    {
        "gen_ai.operation.name",
        "gen_ai.provider.name",
        "gen_ai.request.model",
        "gen_ai.agent.name",
        "gen_ai.tool.name",
        "gen_ai.tool.type",
        "gen_ai.tool.description",
        "agent_trace.tool.import_path",
    }
)
SPAN_NAMES_REMEMBERED = 4096
"""Span names whose identity attributes a writer and a reader remember (both forget them all at
once when a new name would pass this)."""

# Span status codes as written.
STATUS_UNSET = "UNSET"
STATUS_OK = "OK"
STATUS_ERROR = "ERROR"
STATUS_UNFINISHED = "UNFINISHED"  # set by readers for a span.start with no span.end

# File names.
JSONL_SUFFIX = ".jsonl"
CHECKPOINT_SUFFIX = ".checkpoint"
ZIP_SUFFIX = ".zip"
ZIP_EVENTS = "events.jsonl"
ZIP_SNAPSHOTS = "snapshots.json"
ZIP_METADATA = "metadata.json"
ZIP_RESUME = "resume.json"
ZIP_MEMBERS = (ZIP_EVENTS, ZIP_SNAPSHOTS, ZIP_METADATA, ZIP_RESUME)
# The shape of the ZIP's snapshots.json, in metadata.json's ``snapshots_format``: 1 (absent: ZIPs
# before it) each snapshot's messages whole (``agent_messages``, DevDuck's shape: the member grows
# with snapshots × messages); 2 their entry ids by reference to the snapshot before
# (``agent_message_ids``: the member grows with the session), the messages in events.jsonl; 3 as 2,
# and a reference may keep runs of the snapshot before (a sliding window: what is new, not the
# window), as the session file's 1.3 references do (``references``).
ZIP_SNAPSHOTS_FORMAT = 3

# Keys of DevDuck's snapshots.json objects, in its order (the ZIP keeps exactly these).
DEVDUCK_SNAPSHOT_KEYS = (
    "timestamp",
    "snapshot_id",
    "agent_messages_count",
    "tools_loaded",
    "system_prompt_hash",
    "env_vars_redacted",
    "cwd",
    "events_since_last",
    "agent_messages",
    "system_prompt",
    "last_query",
    "last_result",
    "model_info",
    "description",
)
# Keys of the ZIP's snapshots.json objects (format 2, ``ZIP_SNAPSHOTS_FORMAT``): DevDuck's, the
# messages named by id (``views.snapshot_reference_view``).
ZIP_SNAPSHOT_KEYS = tuple("agent_message_ids" if k == "agent_messages" else k for k in DEVDUCK_SNAPSHOT_KEYS)


class SessionFormatError(ValueError):
    """A session file could not be read; the message names the file and line. ``too_large``: a
    member refused whole for being over the cap it is read under (a reader that can do without
    it, as without ``snapshots.json``, may go on)."""

    def __init__(
        self, path: str | os.PathLike[str], line: int | None, reason: str, *, too_large: bool = False
    ):
        self.path = str(path)
        self.line = line
        self.reason = reason
        self.too_large = too_large
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {reason}")


def session_file_name(session_id: str, tier: str, child: str | None = None) -> str:
    """``<session>.jsonl`` for the trace tier, ``<session>.checkpoint.jsonl`` for the checkpoint
    tier; a child process writes ``<session>.<child>[.checkpoint].jsonl`` beside its parent."""
    middle = f".{child}" if child else ""
    tier_part = CHECKPOINT_SUFFIX if tier == "checkpoint" else ""
    return f"{session_id}{middle}{tier_part}{JSONL_SUFFIX}"
