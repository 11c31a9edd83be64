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
        args = {} if args is None else args
        result = tool.function(**args) if isinstance(args, dict) else tool.function(*args)
        if inspect.isawaitable(result):
            result = asyncio.run(_awaited(result))
    except Exception as exc:
        return _answer(
            out, ok=False, stage="call", error=f"{type(exc).__name__}: {exc}", refused=guard.refused
        )
    return _answer(out, ok=True, result=result, refused=guard.refused)


async def _awaited(result: Any) -> Any:
    return await result


_SAYS = {
    _registry.SHELL: "runs commands",
    _registry.WRITES: "writes files",
    _registry.NETWORK: "uses the network",
}


if __name__ == "__main__":
    sys.exit(main())
