"""Every setting of otel-agent-trace, read from the environment in one place.

Our own settings are ``AGENT_TRACE_*`` environment variables; the OpenTelemetry ones we honour
(``OTEL_TRACES_EXPORTER``, ``OTEL_EXPORTER_OTLP_*``, ``OTEL_BSP_*``,
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``) keep their standard meaning.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

TIER_TRACE = "trace"
TIER_CHECKPOINT = "checkpoint"
TIERS = (TIER_TRACE, TIER_CHECKPOINT)

# Values of OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT (legacy true/false accepted).
CONTENT_NONE = "NO_CONTENT"
CONTENT_SPAN = "SPAN_ONLY"
CONTENT_EVENT = "EVENT_ONLY"
CONTENT_SPAN_AND_EVENT = "SPAN_AND_EVENT"

ENV_DIR = "AGENT_TRACE_DIR"
ENV_TIER = "AGENT_TRACE_TIER"
ENV_FSYNC = "AGENT_TRACE_FSYNC"
ENV_FLUSH_MS = "AGENT_TRACE_FLUSH_MS"
ENV_ZIP = "AGENT_TRACE_ZIP"
ENV_SIGNAL_GRACE_MS = "AGENT_TRACE_SIGNAL_GRACE_MS"  # a signal's stop ends the process after this
ENV_AUTO_SESSION = "AGENT_TRACE_AUTO_SESSION"
ENV_SESSION_ID = "AGENT_TRACE_SESSION_ID"
ENV_PARENT_ENTRY = "AGENT_TRACE_PARENT_SPAN"
# The entry, per tier, a child process's files hang under: "trace=<id>,checkpoint=<id>".
ENV_PARENT_ENTRIES = "AGENT_TRACE_PARENT_ENTRIES"
ENV_PREVIEW_CHARS = "AGENT_TRACE_PREVIEW_CHARS"
ENV_SYS_EVENTS_PER_SPAN = "AGENT_TRACE_SYS_EVENTS_PER_SPAN"
ENV_SYSTEM_LAYER = "AGENT_TRACE_SYSTEM_LAYER"
ENV_RECORD = "AGENT_TRACE_RECORD"
# One line on stderr at exit naming the session's file and what to run next: auto (stderr is a
# terminal) | true | false.
ENV_SUMMARY = "AGENT_TRACE_SUMMARY"
SUMMARY_CHOICES = ("auto", "true", "false")
ENV_REDACT_PATTERNS = "AGENT_TRACE_REDACT_PATTERNS"
ENV_REDACT_ALLOW = "AGENT_TRACE_REDACT_ALLOW"
ENV_TRACE_PATH = "AGENT_TRACE_TRACE_PATH"
ENV_CHECKPOINT_PATH = "AGENT_TRACE_CHECKPOINT_PATH"
ENV_CAPTURE_CONTENT = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
# Model replay (docs/model-replay.md): the HTTP exchanges the checkpoint tier keeps, and a run
# answered from a recording. The replay settings are set by `otel-agent-trace replay --model-replay`.
ENV_EXCHANGE_MAX_BYTES = "AGENT_TRACE_EXCHANGE_MAX_BYTES"
ENV_MODEL_REPLAY = "AGENT_TRACE_MODEL_REPLAY"  # the session whose model calls answer this run
ENV_MODEL_REPLAY_ON_DIVERGENCE = "AGENT_TRACE_MODEL_REPLAY_ON_DIVERGENCE"  # stop | continue | live
ENV_MODEL_REPLAY_LIVE_URL = "AGENT_TRACE_MODEL_REPLAY_LIVE_URL"
ENV_MODEL_REPLAY_TOOLS = "AGENT_TRACE_MODEL_REPLAY_TOOLS"  # recorded (default: run no tool) | live
ENV_MODEL_REPLAY_REPORT = "AGENT_TRACE_MODEL_REPLAY_REPORT"  # where the run's replay report goes (JSON)
ENV_REPLAY_OF = "AGENT_TRACE_REPLAY_OF"  # the source session's id: the new session's metadata names it
REPLAY_ON_DIVERGENCE = ("stop", "continue", "live")
REPLAY_TOOLS = ("recorded", "live")  # the first is the default: run no tool

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


class SettingsError(ValueError):
    """A setting has a value we cannot use; the message names the variable."""


def _flag(env: Mapping[str, str], name: str, default: bool) -> bool:
    raw = env.get(name, "").strip().lower()
    if not raw:
        return default
    if raw in _TRUE:
        return True
    if raw in _FALSE:
        return False
    raise SettingsError(f"{name}={raw!r}: expected true or false")


def _int(env: Mapping[str, str], name: str, default: int, minimum: int = 0) -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise SettingsError(f"{name}={raw!r}: expected an integer") from None
    if value < minimum:
        raise SettingsError(f"{name}={raw!r}: must be at least {minimum}")
    return value


def _list(env: Mapping[str, str], name: str) -> tuple[str, ...]:
    raw = env.get(name, "")
    if raw.strip().startswith("["):  # a JSON list, for items that contain commas (regexes)
        import json

        try:
            items = json.loads(raw)
        except ValueError:
            raise SettingsError(f"{name}: not a JSON list of strings") from None
        if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
            raise SettingsError(f"{name}: not a JSON list of strings")
        return tuple(i for i in items if i)
    return tuple(part.strip() for part in raw.split(",") if part.strip())


def _summary(env: Mapping[str, str]) -> str:
    raw = env.get(ENV_SUMMARY, "").strip().lower()
    if raw in _TRUE:
        return "true"
    if raw in _FALSE:
        return "false"
    return _choice(env, ENV_SUMMARY, SUMMARY_CHOICES)


def _choice(env: Mapping[str, str], name: str, choices: tuple[str, ...]) -> str:
    raw = env.get(name, "").strip().lower()
    if not raw:
        return choices[0]
    if raw not in choices:
        raise SettingsError(f"{name}={raw!r}: expected {' or '.join(choices)}")
    return raw


def parse_tiers(raw: str) -> tuple[str, ...]:
    """``trace`` | ``checkpoint`` | ``both`` (or ``trace,checkpoint``) → an ordered tuple of tiers."""
    raw = (raw or TIER_TRACE).strip().lower()
    if raw == "both":
        return TIERS
    tiers = tuple(dict.fromkeys(p.strip() for p in raw.split(",") if p.strip()))
    bad = [t for t in tiers if t not in TIERS]
    if bad or not tiers:
        raise SettingsError(f"{ENV_TIER}={raw!r}: expected trace, checkpoint or both")
    return tiers


def same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """Whether two paths name the same file (also through symlinks, ``..`` and hard links)."""
    pa, pb = Path(a).expanduser(), Path(b).expanduser()
    try:
        if pa.exists() and pb.exists():
            return os.path.samefile(pa, pb)
    except OSError:
        pass
    return os.path.realpath(pa) == os.path.realpath(pb)


def check_tier_paths(
    trace_path: str | os.PathLike[str] | None, checkpoint_path: str | os.PathLike[str] | None, where: str = ""
) -> None:
    """Reject one file asked for both tiers: the shareable trace would gain the full conversation."""
    if trace_path is None or checkpoint_path is None:
        return
    if same_file(trace_path, checkpoint_path):
        names = where or "the trace and checkpoint paths"
        raise SettingsError(
            f"{names} name the same file ({checkpoint_path}): the shareable, redacted trace tier and "
            "the private, complete checkpoint tier must be written to two different files"
        )


def tiers_for_paths(raw: str, trace_path: Path | None, checkpoint_path: Path | None) -> tuple[str, ...]:
    """The tiers to record: ``AGENT_TRACE_TIER`` if set, else the tiers given a path (else trace).
    One file asked for both tiers, or a path for a tier not recorded, is an error."""
    if trace_path is not None and checkpoint_path is not None:
        check_tier_paths(trace_path, checkpoint_path, f"{ENV_TRACE_PATH} and {ENV_CHECKPOINT_PATH}")
    with_paths = tuple(t for t, p in zip(TIERS, (trace_path, checkpoint_path), strict=True) if p is not None)
    if not (raw or "").strip():
        return with_paths or (TIER_TRACE,)
    tiers = parse_tiers(raw)
    for tier, var in zip(TIERS, (ENV_TRACE_PATH, ENV_CHECKPOINT_PATH), strict=True):
        if tier in with_paths and tier not in tiers:
            raise SettingsError(f"{var} is set but {ENV_TIER}={raw!r} does not record the {tier} tier")
    return tiers


def parse_capture_content(raw: str | None) -> str:
    """Normalise the GenAI content-capture switch (legacy ``true``/``false`` included)."""
    value = (raw or "").strip()
    upper = value.upper()
    if not value or upper in {"FALSE", "0", "NO_CONTENT"}:
        return CONTENT_NONE
    if upper == "TRUE" or upper == "1":
        return CONTENT_SPAN_AND_EVENT
    if upper in {CONTENT_SPAN, CONTENT_EVENT, CONTENT_SPAN_AND_EVENT}:
        return upper
    raise SettingsError(
        f"{ENV_CAPTURE_CONTENT}={value!r}: expected NO_CONTENT, SPAN_ONLY, EVENT_ONLY or SPAN_AND_EVENT"
    )


_DEFAULTS: dict[str, Any] = {
    "directory": Path("agent-sessions"),
    "tiers": (TIER_TRACE,),
    "fsync": False,
    "flush_ms": 100,
    "write_zip": True,
    "signal_grace_ms": 20000,
    "auto_session": True,
    "inherited_session_id": None,
    "inherited_parent_span": None,
    "inherited_parent_entries": (),  # (tier, entry id)
    "preview_chars": 500,
    "sys_events_per_span": 1000,
    "system_layer": True,
    "record": True,
    "summary": "auto",
    "capture_content": CONTENT_NONE,
    "redact_patterns": (),
    "redact_allow": (),
    "trace_path": None,
    "checkpoint_path": None,
    "exchange_max_bytes": 16 << 20,
    "model_replay": None,
    "model_replay_on_divergence": "stop",
    "model_replay_live_url": None,
    "model_replay_tools": "recorded",
    "model_replay_report": None,
    "replay_of": None,
}


class Settings:
    """Resolved settings, immutable. Build with :meth:`from_env` or by keyword; change a copy with
    :meth:`with_`. (A plain class: a frozen dataclass of these fields costs ~3 ms to define, paid
    at start-up by every Python child process of an agent.)"""

    directory: Path
    tiers: tuple[str, ...]
    fsync: bool
    flush_ms: int
    write_zip: bool
    signal_grace_ms: int
    auto_session: bool
    inherited_session_id: str | None
    inherited_parent_span: str | None
    inherited_parent_entries: tuple[tuple[str, str], ...]
    preview_chars: int
    sys_events_per_span: int
    system_layer: bool
    record: bool
    summary: str
    capture_content: str
    redact_patterns: tuple[str, ...]
    redact_allow: tuple[str, ...]
    trace_path: Path | None
    checkpoint_path: Path | None
    exchange_max_bytes: int
    model_replay: Path | None
    model_replay_on_divergence: str
    model_replay_live_url: str | None
    model_replay_tools: str
    model_replay_report: Path | None
    replay_of: str | None
    extra: dict[str, str]  # not compared

    __slots__ = (*_DEFAULTS, "extra")

    def __init__(self, **values: Any):
        unknown = set(values) - set(_DEFAULTS) - {"extra"}
        if unknown:
            raise TypeError(f"Settings got unexpected keyword arguments: {sorted(unknown)}")
        for name, default in _DEFAULTS.items():
            object.__setattr__(self, name, values.get(name, default))
        object.__setattr__(self, "extra", dict(values.get("extra") or {}))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"Settings are immutable: use settings.with_({name}=...)")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("Settings are immutable")

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in _DEFAULTS)

    def __eq__(self, other: object) -> bool:
        return type(other) is Settings and self._values() == other._values()  # type: ignore[union-attr]

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in _DEFAULTS)
        return f"Settings({shown})"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        trace_path = Path(env[ENV_TRACE_PATH]) if env.get(ENV_TRACE_PATH) else None
        checkpoint_path = Path(env[ENV_CHECKPOINT_PATH]) if env.get(ENV_CHECKPOINT_PATH) else None
        return cls(
            directory=Path(env.get(ENV_DIR) or "agent-sessions"),
            tiers=tiers_for_paths(env.get(ENV_TIER, ""), trace_path, checkpoint_path),
            trace_path=trace_path,
            checkpoint_path=checkpoint_path,
            fsync=_flag(env, ENV_FSYNC, False),
            flush_ms=_int(env, ENV_FLUSH_MS, 100, minimum=0),
            write_zip=_flag(env, ENV_ZIP, True),
            signal_grace_ms=_int(env, ENV_SIGNAL_GRACE_MS, 20000, minimum=0),
            auto_session=_flag(env, ENV_AUTO_SESSION, True),
            inherited_session_id=env.get(ENV_SESSION_ID) or None,
            inherited_parent_span=env.get(ENV_PARENT_ENTRY) or None,
            inherited_parent_entries=parse_parent_entries(env.get(ENV_PARENT_ENTRIES)),
            preview_chars=_int(env, ENV_PREVIEW_CHARS, 500, minimum=16),
            sys_events_per_span=_int(env, ENV_SYS_EVENTS_PER_SPAN, 1000),
            system_layer=_flag(env, ENV_SYSTEM_LAYER, True),
            record=_flag(env, ENV_RECORD, True),
            summary=_summary(env),
            capture_content=parse_capture_content(env.get(ENV_CAPTURE_CONTENT)),
            redact_patterns=_list(env, ENV_REDACT_PATTERNS),
            redact_allow=_list(env, ENV_REDACT_ALLOW),
            exchange_max_bytes=_int(env, ENV_EXCHANGE_MAX_BYTES, 16 << 20),
            model_replay=Path(env[ENV_MODEL_REPLAY]) if env.get(ENV_MODEL_REPLAY) else None,
            model_replay_on_divergence=_choice(env, ENV_MODEL_REPLAY_ON_DIVERGENCE, REPLAY_ON_DIVERGENCE),
            model_replay_live_url=env.get(ENV_MODEL_REPLAY_LIVE_URL) or None,
            model_replay_tools=_choice(env, ENV_MODEL_REPLAY_TOOLS, REPLAY_TOOLS),
            model_replay_report=(
                Path(env[ENV_MODEL_REPLAY_REPORT]) if env.get(ENV_MODEL_REPLAY_REPORT) else None
            ),
            replay_of=env.get(ENV_REPLAY_OF) or None,
        )

    def with_(self, **changes: Any) -> Settings:
        """A copy with some fields changed."""
        values = {name: getattr(self, name) for name in _DEFAULTS}
        values["extra"] = self.extra
        values.update(changes)
        return Settings(**values)

    @property
    def content_on_spans(self) -> bool:
        """Whether message content goes on span attributes (and so to OTLP)."""
        return self.capture_content in (CONTENT_SPAN, CONTENT_SPAN_AND_EVENT)

    @property
    def content_in_events(self) -> bool:
        return self.capture_content in (CONTENT_EVENT, CONTENT_SPAN_AND_EVENT)

    @property
    def content_captured(self) -> bool:
        return self.capture_content != CONTENT_NONE


_current: Settings | None = None


def get_settings() -> Settings:
    """The process-wide settings, read from the environment on first use.

    A setting we cannot use is reported once, in one line, and the process runs on unrecorded
    (``record=False``): a typo in an environment variable must not break the agent."""
    global _current
    if _current is None:
        try:
            _current = Settings.from_env()
        except SettingsError as exc:
            from otel_agent_trace._internal.guard import report_once

            report_once("settings", "otel-agent-trace: %s. Nothing is recorded until this is fixed.", exc)
            _current = Settings(record=False)
    return _current


def set_settings(settings: Settings | None) -> None:
    """Replace the process-wide settings (``None``: read the environment again on next use)."""
    global _current
    _current = settings


def parse_parent_entries(raw: str | None) -> tuple[tuple[str, str], ...]:
    """``trace=<id>,checkpoint=<id>`` as ``(("trace", id), ("checkpoint", id))``; anything
    malformed is ignored (a child then hangs its files under their own root)."""
    out = []
    for item in (raw or "").split(","):
        tier, _, entry = item.partition("=")
        if tier in TIERS and entry and len(entry) <= 64 and entry.isprintable():
            out.append((tier, entry))
    return tuple(out)


def format_parent_entries(entries: Mapping[str, str]) -> str:
    return ",".join(f"{tier}={entry}" for tier, entry in entries.items() if entry)
