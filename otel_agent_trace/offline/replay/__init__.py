"""Replay a recorded session: dry replay (walk and check the timeline, run nothing), tool replay
(re-run recorded tool calls in a workspace and compare), and the interactive stepper."""

from .timeline import EntryNotFound, Finding, ReplayReport, replay_events, resolve_id
from .tools import CallReport, ToolCall, ToolReplayReport, recorded_calls, replay_tools

__all__ = [
    "CallReport",
    "EntryNotFound",
    "Finding",
    "ReplayReport",
    "ToolCall",
    "ToolReplayReport",
    "recorded_calls",
    "replay_events",
    "replay_tools",
    "resolve_id",
]
