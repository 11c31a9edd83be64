"""Run one recorded tool call in this (child) process: ``python -m
otel_agent_trace.offline.replay._call`` reads ``{"import_path", "arguments"}`` as JSON on stdin and
writes one JSON object on stdout: ``{"ok": true, "result": …}``, or ``{"ok": false, "stage":
"import"|"call", "error": …}``. The tool's own prints go to stderr.

Started by tool replay with the workspace as working directory; the replaying process never
changes its own.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import sys
from typing import Any

import orjson

from otel_agent_trace import session_format as fmt

_TOOL_WRAPPERS = ("original_function", "_tool_func", "func", "coroutine")


def resolve(import_path: str) -> Any:
    """``module:qualname`` to the plain function (through ``@oat.tool``, Strands and LangChain
    tool objects)."""
    module_name, _, qualname = import_path.partition(":")
    obj: Any = importlib.import_module(module_name)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    if not inspect.isroutine(obj):  # a tool object: the function it wraps
        inner = next((getattr(obj, a) for a in _TOOL_WRAPPERS if callable(getattr(obj, a, None))), None)
        obj = inner if inner is not None else obj
    return inspect.unwrap(obj) if inspect.isroutine(obj) else obj


def main() -> int:
    request = orjson.loads(sys.stdin.buffer.read())
    out = sys.stdout
    sys.stdout = sys.stderr
    try:
        fn = resolve(request["import_path"])
    except Exception as exc:
        out.write(
            orjson.dumps({"ok": False, "stage": "import", "error": f"{type(exc).__name__}: {exc}"}).decode()
        )
        return 0
    try:
        args = request.get("arguments") or {}
        result = fn(**args) if isinstance(args, dict) else fn(*args)
        if inspect.isawaitable(result):
            result = asyncio.run(result)  # type: ignore[arg-type]
    except Exception as exc:
        out.write(
            orjson.dumps({"ok": False, "stage": "call", "error": f"{type(exc).__name__}: {exc}"}).decode()
        )
        return 0
    out.write(fmt.dumps({"ok": True, "result": result}).decode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
