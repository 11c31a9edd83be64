"""DevDuck and DM-Code-Agent sessions as the entries the analysis reads: their events, as the
loader maps them (:mod:`otel_agent_trace.offline.formats`), turned into our span, message and
session entries, so ``analyze``, ``diff`` and ``report`` give the same checklist for them.

* **DM-Code-Agent** (``/work/shared/REFERENCE.md`` §1): a run (``run_start`` … ``run_end`` or
  ``run_error``) is an agent span whose output is the run's ``final_answer`` and whose status is
  the run's ``status``; an ``llm_call`` is a model call (its model, its tokens when the payload
  has them, its duration when it has one); a ``tool_call`` is a tool call with its
  ``action_input``, ``observation`` and ``failure`` flag; a ``parse_error`` or ``plan_error`` is
  a failure (stage ``parse``, or by its text); a ``replan`` is counted; a ``checkpoint`` is a
  snapshot; a ``file_backup`` is a file write; every other event is counted as an event.
* **DevDuck** (devduck 1.15.7): ``tool.call`` / ``tool.result`` pairs (matched by tool name, in
  order) are tool calls, a result carrying an error a failed one; ``file.*`` events are file
  events under the tool call running then; ``http.*`` events are HTTP requests and
  ``process.*`` / ``subprocess.*`` events processes (a status of 400 or more, an error or a
  non-zero exit code is a failure); ``message`` events are messages (their 500-character
  preview), ``snapshot.created`` snapshots, ``session.stop`` the end with its duration. A file
  whose ``session.start`` DevDuck's ring dropped is named by its ``metadata.json`` (the loader
  hands its ``session_id`` and ``total_events`` over on the first entry, as ``evicted_start``);
  its session start is then made up here, flagged ``evicted_start`` (it is no entry of the file,
  and the file has no start), and its metadata says how many events the ring dropped
  (``events_evicted``).

Entries are made one by one as the file is read (nothing is kept but the running tool calls).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any
from urllib.parse import urlsplit

from otel_agent_trace import semconv
from otel_agent_trace import session_format as fmt

from ..formats import devduck
from . import classify as cls

# Entry "types" only this module makes (objects, never a string read from a file): a failure
# that is no span (a response that did not parse, a plan that failed) and a replan.
FAILURE = object()
REPLAN = object()

_NS = 1_000_000_000
_OK_STATUSES = frozenset(
    {None, "", "success", "succeeded", "ok", "completed", "complete", "done", "finished"}
)
_RUN_SECONDS = ("duration_seconds", "duration", "duration_s")  # DM writes duration_seconds
_OWN_KEYS = frozenset({"id", "parent_id", "type", "layer", "ts", "run_id", "trace_id", "data"})


def _text(value: Any) -> str:
    return value if isinstance(value, str) else "" if value is None else str(value)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        return None
    return float(value) if value >= 0 else None


def _seconds_ns(data: dict[str, Any], seconds: tuple[str, ...], millis: tuple[str, ...]) -> int:
    """A duration from the first of these fields present (seconds, then milliseconds), in ns."""
    for key in seconds:
        value = _number(data.get(key))
        if value is not None:
            return int(value * _NS)
    for key in millis:
        value = _number(data.get(key))
        if value is not None:
            return int(value * 1_000_000)
    return 0


def _int(data: dict[str, Any], *keys: str) -> int | None:
    for key in keys:
        value = data.get(key)
        if type(value) is int:
            return value
    return None


def _own(entry: dict[str, Any]) -> dict[str, Any]:
    """A foreign entry's own fields (what its payload or data held)."""
    return {k: v for k, v in entry.items() if k not in _OWN_KEYS}


def _span_end(
    entry: dict[str, Any],
    name: str,
    layer: str,
    attributes: dict[str, Any],
    *,
    span_id: str | None = None,
    parent: str | None = None,
    duration: int = 0,
    error: str | None = None,
    content: dict[str, Any] | None = None,
) -> dict[str, Any]:
    status: dict[str, Any] = {"code": fmt.STATUS_OK}
    if error is not None:
        status = {"code": fmt.STATUS_ERROR, "description": error[:500] or "error"}
    out = {
        "id": entry["id"],
        "parent_id": entry.get("parent_id") or "",
        "type": fmt.SPAN_END,
        "layer": layer,
        "ts": entry["ts"],
        "name": name,
        "span_id": span_id or entry["id"],
        "parent_span_id": parent,
        "duration_ns": duration,
        "status": status,
        "attributes": attributes,
    }
    if content is not None:
        out["content"] = content
    return out


def _event(entry: dict[str, Any], name: str, layer: str, span_id: str | None, attributes: dict[str, Any]):  # type: ignore[no-untyped-def]
    return {
        "id": entry["id"],
        "parent_id": entry.get("parent_id") or "",
        "type": fmt.SPAN_EVENT,
        "layer": layer,
        "ts": entry["ts"],
        "name": name,
        "span_id": span_id,
        "attributes": attributes,
    }


def _message(entry: dict[str, Any], content_key: str) -> dict[str, Any]:
    out = {
        "id": entry["id"],
        "parent_id": entry.get("parent_id") or "",
        "type": fmt.MESSAGE,
        "layer": fmt.LAYER_AGENT,
        "ts": entry["ts"],
        "role": _text(entry.get("role")) or None,
    }
    content = entry.get(content_key)
    if content is not None:
        out["content"] = content
    for key in ("content_chars", "content_sha256"):
        if key in entry:
            out[key] = entry[key]
    return out


def failure(entry: dict[str, Any], stage: str, key: str, reason: str) -> dict[str, Any]:
    """A failure that is no span (see :data:`FAILURE`)."""
    return {
        "id": entry["id"],
        "type": FAILURE,
        "ts": entry["ts"],
        "name": _text(entry.get("type")),
        "stage": stage,
        "key": key,
        "reason": reason,
    }


def _session_start(entry: dict[str, Any], session_id: str, fmt_name: str, meta: dict[str, Any]):  # type: ignore[no-untyped-def]
    """The session's start; ``meta`` (its metadata) may still grow as the file is read."""
    meta.setdefault("format", fmt_name)
    return {
        "id": entry["id"],
        "parent_id": "",
        "type": fmt.SESSION_START,
        "layer": fmt.LAYER_AGENT,
        "ts": entry["ts"],
        "session_id": session_id,
        "tier": "",
        "metadata": meta,
    }


def _session_end(entry: dict[str, Any], duration: int, unfinished: int) -> dict[str, Any]:
    return {
        "id": entry["id"],
        "parent_id": "",
        "type": fmt.SESSION_END,
        "layer": fmt.LAYER_AGENT,
        "ts": entry["ts"],
        "duration_ns": duration,
        "unfinished_spans": unfinished,
    }


# --- DM-Code-Agent ------------------------------------------------------------------------------


def _reason(entry: dict[str, Any], *keys: str) -> str:
    for key in keys:
        value = entry.get(key)
        if value not in (None, "", False):
            return _text(value) if not isinstance(value, dict) else _text(value.get("message") or value)
    return ""


def _tokens(entry: dict[str, Any]) -> dict[str, int]:
    """Token counts an ``llm_call`` carries (real ones only: an estimate is not a count)."""
    usage = entry.get("usage")
    sources = [usage, entry] if isinstance(usage, dict) else [entry]
    out: dict[str, int] = {}
    for source in sources:
        tokens_in = _int(source, "input_tokens", "prompt_tokens")
        tokens_out = _int(source, "output_tokens", "completion_tokens")
        if tokens_in is not None and semconv.GEN_AI_USAGE_INPUT_TOKENS not in out:
            out[semconv.GEN_AI_USAGE_INPUT_TOKENS] = tokens_in
        if tokens_out is not None and semconv.GEN_AI_USAGE_OUTPUT_TOKENS not in out:
            out[semconv.GEN_AI_USAGE_OUTPUT_TOKENS] = tokens_out
    return out


def dm_entries(entries: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """A DM-Code-Agent session's entries (as the loader maps them) as ours."""
    started = False
    start_ts = 0
    meta: dict[str, Any] = {}
    model = ""
    provider = ""
    run: tuple[str, int] | None = None  # the running run's span id and start time
    for entry in entries:
        event = entry.get("type")
        ts = entry.get("ts") or 0
        if not started:
            started, start_ts = True, ts
            session_id = _text(entry.get("run_id")) or _text(entry.get("id"))
            yield _session_start(entry, session_id, "dm-code-agent", meta)
        if event in ("runtime", "run_start"):
            own = _own(entry)
            meta.update(own)  # the session's metadata, as the run tells it
            if event == "runtime" or "model" in own or "provider" in own:
                model = _text(own.get("model")) or model
                provider = _text(own.get("provider")) or provider
            if event == "run_start":
                run = (entry["id"], ts)
                yield {
                    "id": entry["id"],
                    "parent_id": entry.get("parent_id") or "",
                    "type": fmt.SPAN_START,
                    "layer": fmt.LAYER_AGENT,
                    "ts": ts,
                    "name": "invoke_agent dm-agent",
                    "span_id": entry["id"],
                    "parent_span_id": None,
                    "attributes": {semconv.GEN_AI_OPERATION_NAME: semconv.OP_INVOKE_AGENT},
                }
        elif event == fmt.MESSAGE:
            yield _message(entry, "content")
        elif event == "llm_call":
            name = _text(entry.get("model")) or model or provider or "model"
            attrs: dict[str, Any] = {
                semconv.GEN_AI_OPERATION_NAME: semconv.OP_CHAT,
                semconv.GEN_AI_REQUEST_MODEL: name,
                **_tokens(entry),
            }
            if provider:
                attrs[semconv.GEN_AI_PROVIDER_NAME] = provider
            why = _reason(entry, "error", "exception")
            yield _span_end(
                entry,
                f"chat {name}",
                fmt.LAYER_AGENT,
                attrs,
                parent=run and run[0],
                duration=_seconds_ns(
                    entry, ("duration", "duration_s", "latency_s"), ("duration_ms", "latency_ms")
                ),
                error=why or None,
            )
        elif event == "tool_call":
            action = _text(entry.get("action")) or "tool"
            failed = bool(entry.get("failure") or entry.get("failed") or entry.get("error"))
            observation = entry.get("observation")
            yield _span_end(
                entry,
                f"execute_tool {action}",
                fmt.LAYER_TOOL,
                {semconv.GEN_AI_OPERATION_NAME: semconv.OP_EXECUTE_TOOL, semconv.GEN_AI_TOOL_NAME: action},
                parent=run and run[0],
                duration=_seconds_ns(entry, ("duration", "duration_s"), ("duration_ms",)),
                error=(_reason(entry, "error") or _text(observation)[:300] or "failed") if failed else None,
                content={"tool_arguments": entry.get("action_input"), "tool_result": observation},
            )
        elif event == "parse_error":
            why = _reason(entry, "error", "message", "reason") or "the model's response could not be parsed"
            yield failure(entry, cls.PARSE, "model:" + (model or provider or "model"), why)
        elif event == "plan_error":
            why = _reason(entry, "error", "message", "reason") or "planning failed"
            yield failure(entry, cls.failure_stage(why, cls.MODEL), "plan", why)
        elif event == "replan":
            yield {"id": entry["id"], "type": REPLAN, "ts": ts}
        elif event in ("run_end", "run_error"):
            status = entry.get("status")
            error = None
            if event == "run_error":
                error = _reason(entry, "error", "exception", "message") or "run_error"
            elif not (status is None or isinstance(status, str) and status.lower() in _OK_STATUSES):
                error = f"status {_text(status)}"
                detail = _reason(entry, "error", "reason")
                if detail:
                    error += f": {detail}"
            content = {"agent_output": entry["final_answer"]} if "final_answer" in entry else None
            measured = _seconds_ns(entry, _RUN_SECONDS, ("duration_ms",))  # the agent's own
            if run is not None:
                duration = measured or (max(ts - run[1], 0) if ts and run[1] else 0)
                end = _span_end(
                    entry,
                    "invoke_agent dm-agent",
                    fmt.LAYER_AGENT,
                    {semconv.GEN_AI_OPERATION_NAME: semconv.OP_INVOKE_AGENT},
                    span_id=run[0],
                    duration=duration,
                    error=error,
                    content=content,
                )
                end["id"] = entry["id"]
                yield end
                run = None
            yield _session_end(entry, measured or (max(ts - start_ts, 0) if ts and start_ts else 0), 0)
        elif event in ("checkpoint",):
            yield {
                "id": entry["id"],
                "parent_id": "",
                "type": fmt.SNAPSHOT,
                "layer": fmt.LAYER_AGENT,
                "ts": ts,
            }
        elif event == "file_backup":
            path = _text(entry.get("path") or entry.get("file") or entry.get("source"))
            yield _event(entry, "file.write", fmt.LAYER_SYS, run and run[0], {"file.path": path})
        else:
            yield _event(
                entry, _text(event), _text(entry.get("layer")) or fmt.LAYER_AGENT, run and run[0], {}
            )


# --- DevDuck ------------------------------------------------------------------------------------


def _access(mode: str) -> str:
    if "+" in mode:
        return "readwrite"
    if "a" in mode:
        return "append"
    if "w" in mode or "x" in mode:
        return "write"
    return "read"


def _error_of(data: dict[str, Any]) -> str | None:
    """The error a DevDuck event says happened, if any."""
    error = data.get("error") or data.get("exception")
    if error:
        return _text(error if not isinstance(error, dict) else error.get("message") or error)
    status = data.get("status")
    if isinstance(status, str) and status.lower() in ("error", "failed", "failure"):
        return _text(data.get("result_preview") or status)
    if data.get("success") is False:
        return _text(data.get("result_preview") or "failed")
    return None


def _evicted_start(entry: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
    """The session start of a DevDuck file whose ``session.start`` the ring dropped, made from
    ``metadata.json``: flagged ``evicted_start`` (no entry of the file: not to be counted as one,
    and the file still has no start)."""
    start = _session_start(entry, _text(meta.get("session_id")) or entry["id"], "devduck", meta)
    start["evicted_start"] = True
    meta["session_start_evicted"] = True
    return start


def devduck_entries(entries: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """A DevDuck session's events (as the loader maps them) as ours."""
    started = False
    present = 0
    stopped: dict[str, Any] | None = None
    meta: dict[str, Any] = {}
    calls: dict[str, list[tuple[str, int, Any]]] = {}  # tool name -> running calls (span id, ts, args)
    running: list[str] = []  # span ids of running tool calls, newest last
    for entry in entries:
        present += 1
        event = _text(entry.get("type"))
        ts = entry.get("ts") or 0
        data = entry
        current = running[-1] if running else None
        if not started:
            started = True
            if event == "session.start":
                meta = _own(entry)
                yield _session_start(entry, _text(meta.get("session_id")) or entry["id"], "devduck", meta)
                continue
            saved = entry.get("evicted_start")
            meta = {k: v for k, v in saved.items() if k != "format"} if isinstance(saved, dict) else {}
            yield _evicted_start(entry, meta)
        if event == "session.stop":
            stopped = entry
            duration = _seconds_ns(data, ("duration",), ())
            yield _session_end(entry, duration, len(running))
        elif event == fmt.MESSAGE:
            yield _message(entry, "content_preview")
        elif event == "tool.call":
            name = _text(data.get("name")) or "tool"
            calls.setdefault(name, []).append((entry["id"], ts, data.get("args")))
            running.append(entry["id"])
            yield {
                "id": entry["id"],
                "parent_id": entry.get("parent_id") or "",
                "type": fmt.SPAN_START,
                "layer": fmt.LAYER_TOOL,
                "ts": ts,
                "name": f"execute_tool {name}",
                "span_id": entry["id"],
                "parent_span_id": None,
                "attributes": {
                    semconv.GEN_AI_OPERATION_NAME: semconv.OP_EXECUTE_TOOL,
                    semconv.GEN_AI_TOOL_NAME: name,
                },
            }
        elif event in ("tool.result", "tool.error"):
            name = _text(data.get("name")) or "tool"
            pending = calls.get(name)
            span_id, start, args = pending.pop(0) if pending else (entry["id"], None, None)
            if span_id in running:
                running.remove(span_id)
            duration = _seconds_ns(data, (), ("duration_ms",))
            if not duration and start is not None:
                duration = max(ts - start, 0)
            error = _error_of(data) or (
                _text(data.get("result_preview")) or "error" if event == "tool.error" else None
            )
            yield _span_end(
                entry,
                f"execute_tool {name}",
                fmt.LAYER_TOOL,
                {semconv.GEN_AI_OPERATION_NAME: semconv.OP_EXECUTE_TOOL, semconv.GEN_AI_TOOL_NAME: name},
                span_id=span_id,
                duration=duration,
                error=error,
                content={"tool_arguments": args, "tool_result": data.get("result_preview")},
            )
        elif event.startswith("file."):
            mode = _text(data.get("mode"))
            attrs = {"file.path": _text(data.get("path")), "agent_trace.file.mode": mode}
            if event == "file.open":
                attrs["agent_trace.file.access"] = _access(mode)
            yield _event(entry, event, fmt.LAYER_SYS, current, attrs)
        elif event.startswith("http."):
            url = _text(data.get("url"))
            method = _text(data.get("method")) or event.removeprefix("http.").upper()
            attrs = {semconv.HTTP_REQUEST_METHOD: method, "url.full": url, semconv.SERVER_ADDRESS: _host(url)}
            code = _int(data, "status_code", "status")
            if code is not None:
                attrs[semconv.HTTP_RESPONSE_STATUS_CODE] = code
            yield _span_end(
                entry,
                method,
                fmt.LAYER_SYS,
                attrs,
                parent=current,
                duration=_seconds_ns(data, (), ("duration_ms",)),
                error=_error_of(data),
            )
        elif event.startswith(("process.", "subprocess.")) or event in ("process", "subprocess"):
            command = data.get("command") or data.get("args") or data.get("cmd")
            argv = command if isinstance(command, list) else _text(command).split()
            attrs = {
                semconv.PROCESS_COMMAND_ARGS: [_text(a) for a in argv],
                "process.executable.name": _text(argv[0]).rsplit("/", 1)[-1] if argv else "",
            }
            code = _int(data, "returncode", "exit_code")
            if code is not None:
                attrs[semconv.PROCESS_EXIT_CODE] = code
            yield _span_end(
                entry,
                f"process {attrs['process.executable.name']}".strip(),
                fmt.LAYER_SYS,
                attrs,
                parent=current,
                duration=_seconds_ns(data, ("duration",), ("duration_ms",)),
                error=_error_of(data),
            )
        elif event == "snapshot.created":
            yield {
                "id": entry["id"],
                "parent_id": "",
                "type": fmt.SNAPSHOT,
                "layer": fmt.LAYER_AGENT,
                "ts": ts,
            }
        else:
            yield _event(entry, event, _text(entry.get("layer")) or fmt.LAYER_AGENT, current, {})
    if meta.get("session_start_evicted"):  # how many the ring dropped (the loader's count)
        meta["events_present"] = present
        meta["events_evicted"] = devduck.evicted(
            present, stopped is not None, meta, None if stopped is None else stopped.get("events")
        )


def _host(url: str) -> str:
    try:
        return urlsplit(url).hostname or ""
    except ValueError:
        return ""
