"""The tools a replay may run: only those of the code the user named (``--tools-from``).

A source is a module (``notes_tools``), a module attribute (``pkg.agent:TOOLS``, a tool or a list
of tools) or a script path (``agent.py``, run as a module named ``__oat_tools__``, so its
``if __name__ == "__main__":`` block does not run). A module or script registers what it holds at
top level (or in a top-level list, tuple or dict) that is a tool: an ``@oat.tool`` function, a
LangChain ``BaseTool``, a Strands ``AgentTool`` or an Agents SDK ``FunctionTool``. An attribute
named with ``:`` registers what it names, whatever it is.

A recorded call then selects one of these by its recorded import path, or by its tool name when
exactly one registered tool has it. Nothing named by the file alone is ever imported or called.

What a tool is allowed to do is judged by what it *is*: its own declaration
(``@oat.tool(effects=...)``), a list of tools known to run commands, write files or use the
network, and the user's flags; see :mod:`._guard` for what holds while it runs.
"""

from __future__ import annotations

import importlib
import inspect
import os
import runpy
import sys
from dataclasses import dataclass, field
from typing import Any, TypedDict, TypeGuard

from ..jsonvalue import JSONValue

SHELL, WRITES, NETWORK = "shell", "writes", "network"
EFFECTS = (SHELL, WRITES, NETWORK)
SCRIPT_MODULE = "__oat_tools__"

_TOOL_CLASSES = {
    "langchain_core.tools.base.BaseTool",
    "strands.types.tools.AgentTool",
    "agents.tool.FunctionTool",
}
_WRAPPED = ("original_function", "_tool_func", "func", "coroutine", "__wrapped__")

# Tools known to run commands, write files or use the network, by the module of their function
# or the import path of their class (what the tool is, not what a recording says it did).
KNOWN_EFFECTS: dict[str, tuple[str, ...]] = {
    "strands_tools.shell": (SHELL,),
    "strands_tools.python_repl": (SHELL,),
    "strands_tools.use_computer": (SHELL,),
    "strands_tools.cron": (SHELL,),
    "strands_tools.file_write": (WRITES,),
    "strands_tools.editor": (WRITES,),
    "strands_tools.journal": (WRITES,),
    "strands_tools.http_request": (NETWORK,),
    "strands_tools.use_aws": (NETWORK,),
    "strands_tools.slack": (NETWORK,),
    "langchain_community.tools.shell.tool:ShellTool": (SHELL,),
    "langchain_experimental.tools.python.tool:PythonREPLTool": (SHELL,),
    "langchain_community.tools.file_management.write:WriteFileTool": (WRITES,),
    "langchain_community.tools.file_management.delete:DeleteFileTool": (WRITES,),
    "langchain_community.tools.file_management.move:MoveFileTool": (WRITES,),
    "langchain_community.tools.file_management.copy:CopyFileTool": (WRITES,),
    "langchain_community.tools.requests.tool:RequestsPostTool": (NETWORK,),
    "agents.tool:LocalShellTool": (SHELL,),
    "agents.tool:ComputerTool": (SHELL,),
}


class Declared(TypedDict, total=False):
    """What ``oat.tool`` sets on a tool as ``__agent_trace_tool__`` (``api/spans.py``)."""

    name: str
    effects: tuple[str, ...]


class SourceError(Exception):
    """A ``--tools-from`` source cannot be loaded."""


@dataclass
class Tool:
    """One tool of the user's code."""

    name: str
    function: Any  # the plain function under any tool wrapper
    import_paths: set[str] = field(default_factory=set[str])
    effects: tuple[str, ...] = ()
    source: str = ""
    strands: Any = None  # a Strands tool: called as Strands calls it (``stream``), not bare


def _path_of(obj: Any, script_stem: str | None) -> set[str]:
    module = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qualname, str) or "<" in qualname:
        return set()
    if module == SCRIPT_MODULE:  # defined in the script: recorded as __main__ (or its file name)
        return {f"__main__:{qualname}", *([f"{script_stem}:{qualname}"] if script_stem else [])}
    return {f"{module}:{qualname}"}


def _classes(obj: Any) -> set[str]:
    return {f"{c.__module__}.{c.__qualname__}" for c in type(obj).__mro__}


def _module_tool(obj: Any) -> Any:
    """A module given as a tool, as Strands takes one (``from strands_tools import file_read``):
    a ``TOOL_SPEC`` and a function of its name, as the ``PythonAgentTool`` Strands makes of it,
    or a tool object named like the module (``strands_tools.shell.shell``); else ``None``."""
    if not inspect.ismodule(obj):
        return None
    spec: JSONValue = getattr(obj, "TOOL_SPEC", None)
    if not isinstance(spec, dict):
        inner = getattr(obj, obj.__name__.rpartition(".")[2], None)
        return inner if inner is not None and _is_tool_object(inner) else None
    name = spec.get("name")
    fn = getattr(obj, name, None) if isinstance(name, str) else None
    if not callable(fn):
        return None
    from strands.tools.tools import PythonAgentTool  # (Strands is there: its module tool is)

    return PythonAgentTool(name, spec, fn)  # type: ignore[arg-type]


def _is_tool_object(obj: Any) -> bool:
    if _classes(obj) & _TOOL_CLASSES:
        return True  # (a Strands tool is a descriptor, so it passes for a routine too)
    return inspect.isroutine(obj) and hasattr(obj, "__agent_trace_tool__")


def _function_of(obj: Any) -> Any:
    """The plain function under ``@oat.tool``, Strands, LangChain and Agents SDK tool objects."""
    fn = obj
    if not inspect.isfunction(fn):
        inner = next((getattr(obj, a) for a in _WRAPPED if callable(getattr(obj, a, None))), None)
        fn = inner if inner is not None else obj
    return inspect.unwrap(fn) if inspect.isroutine(fn) else fn


def _name_of(obj: Any, fn: Any) -> str:
    declared: Declared | None = getattr(obj, "__agent_trace_tool__", None)
    if isinstance(declared, dict):
        name = declared.get("name")
        if isinstance(name, str):
            return name
    for attr in ("tool_name", "name"):
        value = getattr(obj, attr, None)
        if isinstance(value, str) and value and not inspect.isfunction(obj):
            return value
    return str(getattr(fn, "__name__", None) or getattr(obj, "__name__", "tool"))


def _effects_of(obj: object, fn: object, paths: set[str]) -> tuple[str, ...]:
    found: set[str] = set()
    declared: Declared | None = getattr(obj, "__agent_trace_tool__", None)
    if isinstance(declared, dict):
        found.update(e for e in declared.get("effects", ()) if e in EFFECTS)
    cls = type(obj)
    candidates = {f"{cls.__module__}:{cls.__qualname__}", str(getattr(fn, "__module__", "")), *paths}
    for key in candidates:
        found.update(KNOWN_EFFECTS.get(key, ()))
        found.update(KNOWN_EFFECTS.get(key.partition(":")[0], ()))
    return tuple(e for e in EFFECTS if e in found)


def make_tool(obj: Any, source: str, script_stem: str | None = None) -> Tool:
    obj = _module_tool(obj) or obj
    fn = _function_of(obj)
    paths = _path_of(fn, script_stem) | _path_of(obj, script_stem)
    strands = obj if "strands.types.tools.AgentTool" in _classes(obj) else None
    return Tool(_name_of(obj, fn), fn, paths, _effects_of(obj, fn, paths), source, strands)


def _held(value: object) -> list[object]:
    if _is_sequence(value):
        return list(value)
    if _is_mapping(value):
        return list(value.values())
    return [value]


def _is_sequence(value: object) -> TypeGuard[list[object] | tuple[object, ...]]:
    return isinstance(value, (list, tuple))


def _is_mapping(value: object) -> TypeGuard[dict[object, object]]:
    return isinstance(value, dict)


def _from_namespace(namespace: dict[str, Any], source: str, stem: str | None) -> list[Tool]:
    tools: list[Tool] = []
    seen: set[int] = set()
    for name, value in list(namespace.items()):
        if name.startswith("__"):
            continue
        for obj in _held(value):
            if id(obj) not in seen and (_is_tool_object(obj) or _module_tool(obj) is not None):
                seen.add(id(obj))
                tools.append(make_tool(obj, source, stem))
    return tools


def load(source: str) -> list[Tool]:
    """The tools of one source the user named (see the module's docstring)."""
    try:
        if source.endswith(".py") or os.sep in source or (os.altsep and os.altsep in source):
            path = os.path.abspath(source)
            if not os.path.isfile(path):
                raise SourceError(f"{source}: no such script")
            directory = os.path.dirname(path)
            if directory not in sys.path:
                sys.path.insert(0, directory)  # the script's own imports, as when it ran
            stem = os.path.splitext(os.path.basename(path))[0]
            return _from_namespace(runpy.run_path(path, run_name=SCRIPT_MODULE), source, stem)
        module_name, sep, attr = source.partition(":")
        module = importlib.import_module(module_name)
        if not sep:
            return _from_namespace(vars(module), source, None)
        obj: Any = module
        for part in attr.split("."):
            obj = getattr(obj, part)
        return [make_tool(o, source) for o in _held(obj) if callable(o) or _is_tool_object(o)]
    except SourceError:
        raise
    except BaseException as exc:  # the user's code failed to load: say so, whatever it raised
        raise SourceError(f"{source}: {type(exc).__name__}: {exc}") from None


def select(tools: list[Tool], import_path: Any, name: Any) -> Tool | None:
    """The registered tool a recorded call names: by its import path, else by a name that
    exactly one registered tool has. The recorded values only ever choose among ``tools``."""
    if isinstance(import_path, str) and import_path:
        by_path = {id(t.function): t for t in tools if import_path in t.import_paths}
        if len(by_path) == 1:
            return next(iter(by_path.values()))
    if isinstance(name, str) and name:
        by_name = {id(t.function): t for t in tools if t.name == name}
        if len(by_name) == 1:
            return next(iter(by_name.values()))
    return None
