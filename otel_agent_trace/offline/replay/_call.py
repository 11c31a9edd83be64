"""Run one recorded tool call in this (child) process.

Started by tool replay (``tools.BOOT``) with the workspace as working directory (the
replaying process never changes its own), it reads one JSON request on stdin::

    {"sources": [...], "import_path": ..., "name": ..., "arguments": ...,
     "workspace": ..., "allow_shell": ..., "allow_writes": ..., "allow_network": ...,
     "code_dirs": [...]}

loads the tools of the sources the user named (:mod:`._registry`), selects the one the recorded
call names among them, turns the guard on (:mod:`._guard`) and calls it. It writes one JSON
object on stdout: ``{"ok": true, "result": …, "refused": [...]}``, or ``{"ok": false, "stage":
"import"|"select"|"blocked"|"call", "error": …, "refused": [...]}``. The tool's own prints go to
stderr.
"""

from __future__ import annotations

import asyncio
import inspect
import sys
from typing import Any

import orjson

from otel_agent_trace import session_format as fmt

from ..jsonvalue import JSONValue
from . import _registry
from ._guard import Guard


def _answer(out: Any, **fields: Any) -> int:
    out.write(fmt.dumps(fields).decode())
    out.flush()
    return 0


def main() -> int:
    request = orjson.loads(sys.stdin.buffer.read())
    out = sys.stdout
    sys.stdout = sys.stderr
    tools: list[_registry.Tool] = []
    try:
        for source in request.get("sources") or ():
            tools.extend(_registry.load(source))
    except _registry.SourceError as exc:
        return _answer(out, ok=False, stage="import", error=str(exc), refused=[])
    tool = _registry.select(tools, request.get("import_path"), request.get("name"))
    if tool is None:
        names = ", ".join(sorted({t.name for t in tools})) or "none"
        return _answer(
            out,
            ok=False,
            stage="select",
            error=f"not a tool of --tools-from {' '.join(request.get('sources') or ())} (its tools: {names})",
            refused=[],
        )
    allowed = {
        _registry.SHELL: request.get("allow_shell"),
        _registry.WRITES: request.get("allow_writes"),
        _registry.NETWORK: request.get("allow_network"),
    }
    missing = [e for e in tool.effects if not allowed[e]]
    if missing:
        flags = ", ".join(f"--allow-{e}" for e in missing)
        why = f"{tool.name} is a tool that {' and '.join(_SAYS[e] for e in missing)}: allow with {flags}"
        return _answer(out, ok=False, stage="blocked", error=why, refused=[])
    guard = Guard(
        request["workspace"],
        allow_shell=bool(request.get("allow_shell")),
        allow_writes=bool(request.get("allow_writes")),
        allow_network=bool(request.get("allow_network")),
        code_dirs=[*(request.get("code_dirs") or ()), *sys.path],
    )
    guard.install()
    try:
        args = request.get("arguments")
        result = call(tool, {} if args is None else args)
    except Exception as exc:
        return _answer(
            out, ok=False, stage="call", error=f"{type(exc).__name__}: {exc}", refused=guard.refused
        )
    return _answer(out, ok=True, result=result, refused=guard.refused)


class ToolFailed(Exception):
    """The framework ran the tool and reports it failed (a Strands result with status error)."""


def call(tool: _registry.Tool, args: dict[str, JSONValue] | list[JSONValue]) -> Any:
    """Call ``tool`` the way its framework does (``args``: the recorded arguments, keyword or
    positional); its result in the shape the recording keeps."""
    if tool.strands is not None and isinstance(args, dict):
        result: JSONValue = asyncio.run(_strands(tool, args))
        if isinstance(result, dict) and result.get("status") == "error":
            raise ToolFailed(_text_of(result.get("content")))
        return result.get("content") if isinstance(result, dict) else result
    returned = tool.function(**args) if isinstance(args, dict) else tool.function(*args)
    if inspect.isawaitable(returned):
        returned = asyncio.run(_awaited(returned))
    return returned


async def _strands(tool: _registry.Tool, args: dict[str, Any]) -> Any:
    """Strands' own call: ``stream(tool_use, invocation_state)``; its last event's result (a
    ``ToolResult``, whose ``content`` is what the recording keeps)."""
    last = None
    async for event in tool.strands.stream({"toolUseId": "replay", "name": tool.name, "input": args}, {}):
        last = event
    return getattr(last, "tool_result", last)


def _text_of(content: JSONValue) -> str:
    if isinstance(content, list):
        return " ".join(str(b.get("text", b)) if isinstance(b, dict) else str(b) for b in content)
    return str(content)


async def _awaited(result: Any) -> Any:
    return await result


_SAYS = {
    _registry.SHELL: "runs commands",
    _registry.WRITES: "writes files",
    _registry.NETWORK: "uses the network",
}


if __name__ == "__main__":
    sys.exit(main())
