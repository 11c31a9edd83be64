"""What each fidelity tier keeps of the same recording, and where its files may live.

* ``trace`` (shareable, the default): redacted; message text reduced to its length and SHA-256
  unless content capture is on, wherever it comes from (our capture, a framework's own span
  attributes and events: :mod:`otel_agent_trace.message_text`); a snapshot's system prompt always so; tool
  arguments and results as bounded, redacted previews.
* ``checkpoint`` (private): everything, unredacted (redaction would corrupt resumed context);
  files ``0600``, directories we create ``0700``.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any

from otel_agent_trace import message_text
from otel_agent_trace import session_format as fmt
from otel_agent_trace._internal.guard import report_once
from otel_agent_trace.session_format.views import message_fields
from otel_agent_trace.settings import TIER_CHECKPOINT, Settings

if TYPE_CHECKING:
    from otel_agent_trace.redaction import Redactor

# Content keys that are conversation messages (stored once each as ``message`` entries).
MESSAGE_KEYS = ("input_messages", "output_messages")
# Content keys that are message-like text: reduced to chars + sha256 in the trace tier.
TEXT_KEYS = message_text.TEXT_CONTENT_KEYS
# Content keys kept as chars + sha256 in the trace tier even with content capture on (a snapshot's
# system prompt: repeated in every snapshot, and a host's may embed its machine's facts).
HASH_ONLY_KEYS = frozenset({"system_prompt"})
# Content keys only the checkpoint tier keeps: the other tiers leave them out whole (not even a
# preview). A model call's HTTP exchanges (request and response bodies, for model replay:
# instrumentation/system/http/_exchange.py hands them over only to a recorder that declares this).
CHECKPOINT_ONLY_KEYS = frozenset({"http_exchanges"})

FILE_MODE = {"trace": 0o644, TIER_CHECKPOINT: 0o600}
PRIVATE_DIR_MODE = 0o700


def _preview(value: Any, limit: int) -> Any:
    """A bounded preview: short values as they are, long ones cut with the size said."""
    if isinstance(value, str):
        if len(value) <= limit:
            return value
        return value[:limit] + f"…[+{len(value) - limit} chars]"
    if value is None or isinstance(value, (bool, int, float)):
        return value
    text = fmt.dumps_canonical(value).decode("utf-8", "replace")
    if len(text) <= limit:
        return value
    return text[:limit] + f"…[+{len(text) - limit} chars]"


class TierPolicy:
    """Turns full-fidelity fields into what one tier keeps."""

    def __init__(self, tier: str, settings: Settings, redactor: Redactor | None):
        self.tier = tier
        self.full = tier == TIER_CHECKPOINT
        self._settings = settings
        self._redactor = redactor
        self._limit = settings.preview_chars
        self._keep_text = settings.content_captured
        if not self.full and redactor is not None:
            # The hot path, every span: the redactor's own method, no hop (message text is judged
            # with the rest of each key, once per key).
            if self._keep_text:
                self.span = redactor.redact_span  # type: ignore[method-assign]
            else:
                self.span = redactor.redact_span_hiding_text  # type: ignore[method-assign]

    # Attributes and names -----------------------------------------------------------------

    def attributes(self, attributes: dict[str, Any], event: str | None = None) -> dict[str, Any]:
        """Attributes (of an event named ``event``) as this tier keeps them."""
        if self.full or not attributes:
            return attributes
        if not self._keep_text:
            attributes = message_text.without_text(attributes, event)  # type: ignore[assignment]
        if self._redactor is None:
            return attributes
        return self._redactor.redact_attributes(attributes)

    def span(self, name: str, attributes: dict[str, Any] | None) -> tuple[str, dict[str, Any] | None]:
        """A span's name and attributes as this tier shows them (``None`` for no attributes).
        In a redacted tier the instance's ``span`` is the redactor's ``redact_span`` (or
        ``redact_span_hiding_text`` when message text is not kept)."""
        if attributes and not self.full and not self._keep_text:
            attributes = message_text.without_text(attributes)  # type: ignore[assignment]
        return name, attributes or None

    def text(self, value: str) -> str:
        if self.full or self._redactor is None:
            return value
        return self._redactor.redact_text(value)

    def value(self, value: Any) -> Any:
        """A free-form value (event attributes, state): redacted in the trace tier."""
        if self.full or self._redactor is None:
            return value
        return self._redactor.redact(value)

    def preview(self, value: Any) -> Any:
        """A bounded preview, redacted before it is cut (a secret cut in half cannot leak)."""
        if self._redactor is None:
            return _preview(value, self._limit)
        return self._redactor.redact_preview(value, self._limit)

    # Content ------------------------------------------------------------------------------

    def message(self, message: dict[str, Any], digest: str) -> dict[str, Any]:
        """A message entry's fields: full in checkpoint; reduced (or redacted) in trace."""
        content = message.get("content")
        fields: dict[str, Any] = {"role": message.get("role", "unknown")}
        if self.full:
            fields.update(message)
        else:
            for key, item in message.items():
                if key in ("role", "content"):
                    continue
                fields[key] = self.value(item) if key != "tool_calls" else self._tool_calls(item)
            if self._keep_text:
                fields["content"] = self.value(content)
        fields["content_chars"] = fmt.content_chars(content) if content is not None else 0
        fields["content_sha256"] = digest
        return message_fields(fields)

    def _tool_calls(self, calls: Any) -> Any:
        # Names and ids are needed to link tool spans; arguments only as previews.
        if not isinstance(calls, list):
            return self.preview(calls)
        out = []
        for call in calls:
            if isinstance(call, dict):
                out.append(
                    {k: (self.preview(v) if k == "arguments" else self.value(v)) for k, v in call.items()}
                )
            else:
                out.append(self.preview(call))
        return out

    def content_value(self, key: str, value: Any) -> Any:
        if self.full:
            return value
        if key in TEXT_KEYS:
            if self._keep_text and key not in HASH_ONLY_KEYS:
                return self.value(value)
            if value is None:
                return None
            return message_text.digest(value)
        return self.preview(value)


# --- files and directories ---------------------------------------------------------------------


def prepare_directory(directory: Path, private: bool) -> bool:
    """Create ``directory`` (``0700``: sessions hold what agents did). A directory that already
    exists keeps its mode; when it is open to others and ``private`` files go there, say so once.
    Returns whether the directory was created."""
    created = not directory.exists()
    directory.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR_MODE)
    if private and not created:
        try:
            mode = stat.S_IMODE(directory.stat().st_mode)
        except OSError:
            return created
        if mode & 0o077:
            report_once(
                f"private-dir:{directory}",
                "otel-agent-trace: checkpoint files are private (0600) but %s is open to others "
                "(mode %04o), so their names are visible; `chmod 700 %s` to close it",
                directory,
                mode,
                directory,
            )
    return created


def file_tier(path: str | os.PathLike[str]) -> str | None:
    """The tier a session file says it is (its first entry), for forks and exports: a copy of a
    checkpoint file must stay marked checkpoint and private (``0600``)."""
    try:
        with open(path, "rb") as stream:
            first = stream.readline()
        entry = fmt.loads(first)
    except (OSError, ValueError):
        return None
    tier = entry.get("tier") if isinstance(entry, dict) else None
    return tier if isinstance(tier, str) else None


def mode_for(tier: str | None) -> int:
    """File mode for a file of this tier (unknown tiers are treated as private)."""
    return FILE_MODE.get(tier or "", 0o600)


def tier_file(settings: Settings, tier: str, default: Path, *, child: bool = False) -> Path:
    """The file of one tier: its explicit path (``AGENT_TRACE_TRACE_PATH`` /
    ``AGENT_TRACE_CHECKPOINT_PATH``, ``session(trace_path=…)``) or ``default``. A child process
    writes its own file beside the parent's, never into the parent's file."""
    explicit = settings.checkpoint_path if tier == TIER_CHECKPOINT else settings.trace_path
    if explicit is None:
        return default
    explicit = Path(explicit).expanduser()
    return explicit.parent / default.name if child else explicit
