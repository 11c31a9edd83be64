"""Tool replay: re-run recorded tool calls with the user's own tools, in a workspace, and compare
each new result with the recorded one.

A session file may be anyone's, so it chooses nothing that runs. Safety rules:

* nothing runs unless asked (``execute=True`` / ``--execute-tools``);
* the tools come from the code the user names (``tools_from`` / ``--tools-from``); a recorded
  import path or tool name only selects among them (:mod:`._registry`);
* each call runs in a child process whose working directory is the workspace (this process never
  changes its own), with a guard (:mod:`._guard`) that refuses commands, writes and the network
  unless allowed, and any path outside the workspace, whatever the file says the tool did;
* a tool known or declared to run commands, write files or use the network is blocked before it
  runs unless allowed, and so is one whose recording shows it did;
* calls that failed or never finished in the original run are not re-run.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from otel_agent_trace import semconv
from otel_agent_trace import session_format as fmt

from ..jsonvalue import JSONObject, JSONValue
from .compare import inexact_reason, results_match

OK, MISMATCH, BLOCKED, UNKNOWN, ERROR, SKIPPED = "ok", "mismatch", "blocked", "unknown", "error", "skipped"
STATUSES = (OK, MISMATCH, BLOCKED, UNKNOWN, ERROR, SKIPPED)

_WRITE_EVENTS = ("file.delete", "file.rename", "file.mkdir")
_PROCESS_EVENTS = ("process.exec", "process.spawn", "process.fork")


@dataclass
class ToolCall:
    """One recorded tool call and what its recording says about it."""

    entry_id: str
    span_id: str
    name: str
    import_path: str | None
    arguments: Any
    has_arguments: bool
    result: Any
    has_result: bool
    failed: str | None  # why it did not succeed originally (None: it did)
    commands: list[str] = field(default_factory=list[str])  # processes it started
    writes: list[str] = field(default_factory=list[str])  # files it wrote, deleted, renamed or made


@dataclass
class CallReport:
    call: ToolCall
    status: str
    detail: str = ""
    new_result: Any = None


@dataclass
class ToolReplayReport:
    tier: str
    executed: bool
    calls: list[CallReport]

    def count(self, status: str) -> int:
        return sum(1 for c in self.calls if c.status == status)

    @property
    def exit_code(self) -> int:
        """1 when a re-run call gave another result or failed where it had succeeded."""
        return 1 if any(c.status in (MISMATCH, ERROR) for c in self.calls) else 0


def _descendants(spans: list[Any]) -> dict[str, list[Any]]:
    children: dict[str, list[Any]] = {}
    for span in spans:
        if span.parent_span_id:
            children.setdefault(span.parent_span_id, []).append(span)
    return children


def _effects(span: Any, children: dict[str, list[Any]]) -> tuple[list[str], list[str]]:
    """Processes started and files written under ``span`` (its own events and its sub-spans')."""
    commands: list[str] = []
    writes: list[str] = []
    stack = [span]
    while stack:
        current = stack.pop()
        attrs: JSONObject = current.attributes or {}
        if current is not span and (
            semconv.PROCESS_COMMAND_ARGS in attrs or current.name.startswith("process ")
        ):
            args = attrs.get(semconv.PROCESS_COMMAND_ARGS)
            commands.append(" ".join(map(str, args)) if isinstance(args, list) else current.name)
        for event in current.events:
            name = event.get("name", "")
            ev: JSONObject = event.get("attributes") or {}
            if name == "file.open" and (ev.get("agent_trace.file.access") in ("write", "read_write")):
                writes.append(str(ev.get(semconv.FILE_PATH)))
            elif name in _WRITE_EVENTS:
                writes.append(f"{name} {ev.get(semconv.FILE_PATH)}")
            elif name in _PROCESS_EVENTS:
                commands.append(f"{name} {ev.get(semconv.PROCESS_COMMAND_ARGS) or ''}".strip())
        stack.extend(children.get(current.span_id, ()))
    return commands, writes


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def recorded_calls(session: Any) -> list[ToolCall]:
    """Every tool call of the session (``execute_tool`` spans), in start order."""
    spans = session.spans
    children = _descendants(spans)
    calls: list[ToolCall] = []
    for span in spans:
        attrs: JSONObject = span.attributes or {}
        if attrs.get(semconv.GEN_AI_OPERATION_NAME) != semconv.OP_EXECUTE_TOOL:
            continue
        content: JSONObject = span.content or {}
        failed = None
        if not span.finished:
            failed = "it never finished in the original run"
        elif span.status == fmt.STATUS_ERROR:
            why: JSONValue = span.status_description or attrs.get(semconv.ERROR_TYPE) or "error"
            failed = f"it failed in the original run ({why})"
        commands, writes = _effects(span, children)
        calls.append(
            ToolCall(
                entry_id=span.entry_id,
                span_id=span.span_id,
                name=_text(attrs.get(semconv.GEN_AI_TOOL_NAME)) or str(span.name),
                import_path=_text(attrs.get(semconv.TOOL_IMPORT_PATH)),
                arguments=content.get("tool_arguments"),
                has_arguments="tool_arguments" in content,
                result=content.get("tool_result"),
                has_result="tool_result" in content,
                failed=failed,
                commands=commands,
                writes=writes,
            )
        )
    return calls


def why_not_replayable(call: ToolCall, tier: str) -> str | None:
    """Why a call cannot be re-run from this recording (``None``: it can)."""
    if not call.has_arguments:
        return "its arguments were not recorded"
    if not call.has_result:
        return "its result was not recorded"
    if tier != "checkpoint":
        reason = inexact_reason(call.arguments)
        if reason:
            return f"trace tier: {reason}; the checkpoint tier keeps exact arguments"
    return None


# The child's command: the working directory (the workspace, where a re-run tool may have
# written files) is dropped from the import path before anything is imported.
BOOT = (
    "import sys; sys.path[:] = [p for p in sys.path if p not in ('', '.')]; "
    "from otel_agent_trace.offline.replay._call import main; sys.exit(main())"
)


@dataclass
class Permissions:
    """What re-run tools may do besides reading and computing (the user's flags)."""

    shell: bool = False
    writes: bool = False
    network: bool = False


def _child_env(workspace: Path, import_paths: list[str] | None = None) -> dict[str, str]:
    """The environment of a tool's child process: no recording, no OTLP export, temporary files in
    the workspace, and the importable paths of this process (so the tools import as they would
    here), ``import_paths`` first; never the workspace, where a re-run tool may have written."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "AGENT_TRACE_"))}
    env["AGENT_TRACE_RECORD"] = "false"
    env["OTEL_SDK_DISABLED"] = "true"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["TMPDIR"] = str(workspace)
    paths = (
        [str(p) for p in import_paths or ()]
        + [os.getcwd()]
        + [p for p in sys.path if p and "auto_instrumentation" not in p]
    )
    root = os.path.realpath(workspace)
    kept = [p for p in paths if os.path.commonpath([root, os.path.realpath(p)]) != root]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(kept))
    return env


def run_call(
    call: ToolCall,
    workspace: Path,
    tools_from: list[str],
    permissions: Permissions,
    timeout: float = 60.0,
    import_paths: list[str] | None = None,
) -> dict[str, Any]:
    """Run one call with the user's tools in a child process with ``cwd=workspace``; its JSON
    answer (see :mod:`._call`)."""
    request = fmt.dumps(
        {
            "sources": tools_from,
            "import_path": call.import_path,
            "name": call.name,
            "arguments": call.arguments,
            "workspace": str(workspace),
            "allow_shell": permissions.shell,
            "allow_writes": permissions.writes,
            "allow_network": permissions.network,
            "code_dirs": [str(p) for p in import_paths or ()],
        }
    )
    try:
        done = subprocess.run(
            [sys.executable, "-c", BOOT],
            input=request,
            capture_output=True,
            cwd=workspace,
            env=_child_env(workspace, import_paths),
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return {"ok": False, "stage": "call", "error": f"timed out after {timeout:g}s"}
    try:
        answer: JSONValue = orjson.loads(done.stdout)
    except orjson.JSONDecodeError:
        answer = None
    if not isinstance(answer, dict):
        tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
        return {
            "ok": False,
            "stage": "call",
            "error": f"the tool process exited {done.returncode}: {tail[0]}",
        }
    return answer


def _sources(tools_from: list[str] | None) -> list[str]:
    """Script paths made absolute (the child runs in the workspace); module names as given."""
    out: list[str] = []
    for source in tools_from or ():
        is_script = source.endswith(".py") or os.sep in source
        out.append(os.path.abspath(source) if is_script else source)
    return out


def _report(call: ToolCall, answer: dict[str, Any], exact: bool) -> CallReport:
    refused = [str(r) for r in answer.get("refused") or ()]
    if refused:
        more = f" (and {len(refused) - 1} more)" if len(refused) > 1 else ""
        return CallReport(call, BLOCKED, f"refused while it ran: {refused[0]}{more}")
    if not answer.get("ok"):
        stage = answer.get("stage")
        if stage == "blocked":
            return CallReport(call, BLOCKED, str(answer.get("error")))
        if stage == "import":
            return CallReport(call, UNKNOWN, f"cannot load --tools-from {answer.get('error')}")
        if stage == "select":
            return CallReport(call, UNKNOWN, str(answer.get("error")))
        return CallReport(call, ERROR, f"it failed: {answer.get('error')}")
    new = answer.get("result")
    if results_match(call.result, new, exact=exact):
        return CallReport(call, OK, "same result", new)
    return CallReport(call, MISMATCH, "the result differs from the recorded one", new)


def replay_tools(
    session: Any,
    *,
    execute: bool = False,
    workspace: str | os.PathLike[str] | None = None,
    tools_from: list[str] | None = None,
    allow_shell: bool = False,
    allow_writes: bool = False,
    allow_network: bool = False,
    only: str | None = None,
    timeout: float = 60.0,
    import_paths: list[str] | None = None,
) -> ToolReplayReport:
    """Check (and with ``execute``, re-run in ``workspace``) every recorded tool call; one
    :class:`CallReport` each: ok / mismatch / blocked / unknown / error / skipped.

    The tools are those of ``tools_from`` (modules, ``module:attribute``s or script paths: the
    user's own code; see :mod:`._registry`), imported from ``import_paths``, the current
    directory and this process's ``sys.path``. Nothing the file names is imported otherwise."""
    if execute and workspace is None:
        raise ValueError("tool replay needs a workspace directory")
    root = Path(workspace).expanduser().resolve() if workspace is not None else None
    if execute and root is not None:
        root.mkdir(parents=True, exist_ok=True)
    sources = _sources(tools_from)
    permissions = Permissions(allow_shell, allow_writes, allow_network)
    exact = session.tier == "checkpoint"
    reports: list[CallReport] = []
    for call in recorded_calls(session):
        if only is not None and call.name != only:
            continue
        if call.failed:
            reports.append(CallReport(call, SKIPPED, f"not re-run: {call.failed}"))
            continue
        reason = why_not_replayable(call, session.tier)
        if reason:
            reports.append(CallReport(call, UNKNOWN, reason))
            continue
        blocked: list[str] = []
        if call.commands and not allow_shell:
            blocked.append(f"its recorded run ran commands ({call.commands[0]}); allow with --allow-shell")
        if call.writes and not allow_writes:
            blocked.append(f"its recorded run wrote files ({call.writes[0]}); allow with --allow-writes")
        if blocked:
            reports.append(CallReport(call, BLOCKED, "; ".join(blocked)))
            continue
        if not sources:
            reports.append(CallReport(call, UNKNOWN, NO_SOURCES))
            continue
        if not execute or root is None:
            reports.append(CallReport(call, UNKNOWN, "replayable (not run: dry)"))
            continue
        answer = run_call(call, root, sources, permissions, timeout, import_paths)
        reports.append(_report(call, answer, exact))
    return ToolReplayReport(session.tier, execute, reports)


NO_SOURCES = (
    "no tools to run it with: name the code that defines them with --tools-from MODULE|SCRIPT "
    "(a session file never chooses what runs)"
)
