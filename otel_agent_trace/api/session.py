"""Sessions for code that drives the recorder itself: ``session()``, ``snapshot()``,
``record_message()`` and ``configure()``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from opentelemetry import trace

from otel_agent_trace._internal import sink
from otel_agent_trace._internal.guard import internal_error, report_once
from otel_agent_trace.settings import Settings, get_settings, parse_tiers


def configure(settings: Settings | None = None) -> trace.TracerProvider:
    """Make sure spans are recorded: with no SDK TracerProvider set up yet, set one up with the
    session processor; with one already set up (by hand or by ``opentelemetry-instrument``), add
    the session processor to it unless it is there. Returns the provider."""
    from opentelemetry.sdk.trace import TracerProvider

    from otel_agent_trace.recording import SessionSpanProcessor, add_session_processor

    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        provider = TracerProvider()
        provider.add_span_processor(SessionSpanProcessor(settings, auto_session=False))
        provider._agent_trace_recording = True  # type: ignore[attr-defined]
        trace.set_tracer_provider(provider)
        provider = trace.get_tracer_provider()
    add_session_processor(provider)
    return provider  # type: ignore[return-value]


class Session:
    """One recording session. A context manager (sync and async), or ``start()`` / ``stop()``.

    Starting a session stops the one being recorded (each process records one at a time).
    """

    def __init__(
        self,
        name: str | None = None,
        *,
        directory: str | Path | None = None,
        tier: str | None = None,
        metadata: dict[str, Any] | None = None,
        settings: Settings | None = None,
        trace_path: str | Path | None = None,
        checkpoint_path: str | Path | None = None,
        environment: Any = None,
    ):
        """``environment``: where the recorder takes time, host and process facts from
        (:func:`otel_agent_trace.testing.fixed_environment` makes a recording reproducible)."""
        base = settings or get_settings()
        changes: dict[str, Any] = {}
        if directory is not None:
            changes["directory"] = Path(directory)
        if trace_path is not None or checkpoint_path is not None:  # one file per tier, never one for both
            from otel_agent_trace.settings import tiers_for_paths

            changes["trace_path"] = Path(trace_path) if trace_path is not None else None
            changes["checkpoint_path"] = Path(checkpoint_path) if checkpoint_path is not None else None
            changes["tiers"] = tiers_for_paths(tier or "", changes["trace_path"], changes["checkpoint_path"])
        elif tier is not None:
            changes["tiers"] = parse_tiers(tier)
        self.settings = base.with_(**changes) if changes else base
        self.name = name
        self.metadata = metadata
        self.environment = environment
        self._recorder: Any = None
        self.zip_paths: list[str] = []

    def start(self) -> Session:
        """Start recording; with ``AGENT_TRACE_RECORD=false`` (no local recording at all) nothing
        is recorded and the session stays empty (no files, no id)."""
        if not self.settings.record:
            return self
        from otel_agent_trace.recording import start_session
        from otel_agent_trace.recording.writer import SessionFileExists

        configure()
        try:
            self._recorder = start_session(
                self.settings, name=self.name, metadata=self.metadata, environment=self.environment
            )
        except SessionFileExists:
            raise  # a path the caller named is taken: theirs to choose another
        except OSError as exc:  # the disk refuses (full, read-only): the agent runs, unrecorded
            report_once("session start", "otel-agent-trace: the session was not recorded: %s", exc)
        return self

    def stop(self) -> list[str]:
        """Stop recording and export the ZIP(s); returns their paths."""
        if self._recorder is not None:
            self.zip_paths = self._recorder.stop()
        return self.zip_paths

    def flush(self) -> None:
        """Write what is still queued (starts of running spans, their events) now; otherwise it
        is written within ``AGENT_TRACE_FLUSH_MS``. Finished spans need no flush."""
        if self._recorder is not None:
            self._recorder.flush()

    @property
    def session_id(self) -> str | None:
        return self._recorder.session_id if self._recorder else None

    @property
    def files(self) -> list[Path]:
        return list(self._recorder.files) if self._recorder else []

    @property
    def recording(self) -> bool:
        return bool(self._recorder and self._recorder.active)

    def snapshot(self, description: str = "", **state: Any) -> int | None:
        return snapshot(description, **state)

    def __enter__(self) -> Session:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    async def __aenter__(self) -> Session:
        return self.start()

    async def __aexit__(self, *exc: Any) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"Session(id={self.session_id}, recording={self.recording})"


def session(name: str | None = None, **kwargs: Any) -> Session:
    """A new :class:`Session` (not started): ``with oat.session("fix-bug"): ...``."""
    return Session(name, **kwargs)


def _current_span() -> Any:
    span = trace.get_current_span()
    return span if span.is_recording() else None


def snapshot(
    description: str = "",
    *,
    messages: list[Any] | None = None,
    system_prompt: str | None = None,
    state: dict[str, Any] | None = None,
    last_query: Any = None,
    last_result: Any = None,
    model_info: dict[str, Any] | None = None,
    tools_loaded: list[str] | None = None,
) -> int | None:
    """Record the conversation state so far (a point to resume from). Returns the snapshot id,
    or ``None`` when nothing is recording."""
    rec = sink.ensure_active()
    if rec is None:
        return None
    try:
        return rec.snapshot(
            description,
            messages=messages,
            system_prompt=system_prompt,
            state=state,
            last_query=last_query,
            last_result=last_result,
            model_info=model_info,
            tools_loaded=tools_loaded,
            span=_current_span(),
        )
    except Exception as exc:  # the agent must never see our failure
        internal_error("snapshot", exc)
        return None


def record_message(role: str, content: Any, **extra: Any) -> str | None:
    """Record one conversation message under the current span. Returns its entry id."""
    rec = sink.ensure_active()
    if rec is None:
        return None
    try:
        return rec.record_message(role, content, span=_current_span(), **extra)
    except Exception as exc:
        internal_error("record_message", exc)
        return None
