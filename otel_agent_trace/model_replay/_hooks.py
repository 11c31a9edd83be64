"""The replay in progress, for capture code that asks per call (``@oat.tool``): one global read
when no replay runs. Set by :func:`otel_agent_trace.model_replay.start`."""

from __future__ import annotations

from typing import Any

player: Any = None  # the active ``Player``, else None
