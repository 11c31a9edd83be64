"""What each fidelity tier keeps of the same recording.

* ``trace`` (shareable): redacted; message text reduced to its length and SHA-256 unless content
  capture is on; tool arguments and results as bounded previews.
* ``checkpoint`` (private, 0600): everything, unredacted, so a run can be resumed.
"""

from __future__ import annotations

from typing import Any

from otel_agent_trace import session_format as fmt
from otel_agent_trace.redaction import Redactor
from otel_agent_trace.settings import TIER_CHECKPOINT, Settings

# Content keys that are conversation messages (stored once each as ``message`` entries).
MESSAGE_KEYS = ("input_messages", "output_messages")
# Content keys that are message-like text: reduced to chars + sha256 in the trace tier.
TEXT_KEYS = frozenset({"system_instructions", "system_prompt", "last_query", "last_result"})


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

    # Attributes and names -----------------------------------------------------------------

    def attributes(self, attributes: dict[str, Any]) -> dict[str, Any]:
        if self.full or self._redactor is None or not attributes:
            return attributes
        return self._redactor.redact(attributes)

    def text(self, value: str) -> str:
        if self.full or self._redactor is None:
            return value
        return self._redactor.redact_text(value)

    def value(self, value: Any) -> Any:
        """A free-form value (event attributes, state): redacted in the trace tier."""
        if self.full or self._redactor is None:
            return value
        return self._redactor.redact(value)

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
        return fields

    def _tool_calls(self, calls: Any) -> Any:
        # Names and ids are needed to link tool spans; arguments only as previews.
        if not isinstance(calls, list):
            return self.value(_preview(calls, self._limit))
        out = []
        for call in calls:
            if isinstance(call, dict):
                out.append(
                    {
                        k: (self.value(_preview(v, self._limit)) if k == "arguments" else v)
                        for k, v in call.items()
                    }
                )
            else:
                out.append(self.value(_preview(call, self._limit)))
        return out

    def content_value(self, key: str, value: Any) -> Any:
        if self.full:
            return value
        if key in TEXT_KEYS and not self._keep_text:
            if value is None:
                return None
            return {"chars": fmt.content_chars(value), "sha256": fmt.content_sha256(value)}
        return self.value(_preview(value, self._limit))
