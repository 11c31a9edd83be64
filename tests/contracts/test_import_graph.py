"""The import graph of the package holds its layers: no cycle anywhere, and what reads session
files never reaches what records them, however many imports away.

The graph is every import of every module (at any depth: module level, inside a function, under
``TYPE_CHECKING``), a ``from X import Y`` drawn to the module ``X.Y`` where that is a module. The
direct imports of each layer are checked in ``test_imports.py``; this checks what they lead to.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

from tests.contracts.test_imports import CAPTURE, PACKAGE

OFFLINE = ("otel_agent_trace.session_format", "otel_agent_trace.offline")
REPLAY = ("otel_agent_trace.model_replay",)
# The one capture module that imports model_replay: the entry point that runs every part starts
# the replay AGENT_TRACE_MODEL_REPLAY asks for (``start_from_settings``, a public name, when it
# runs). Everything else reads the replay in progress from the bridge, ``_internal.replay``.
STARTS_A_REPLAY = {"otel_agent_trace.instrumentation.parts"}


def _name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def _graph() -> dict[str, frozenset[str]]:
    """Module → the modules of the package it imports."""
    paths = {_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, frozenset[str]] = {}
    for module, path in paths.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")
                    up = up[: len(up) - (node.level - 1)]
                    base = ".".join(up + ([node.module] if node.module else []))
                names = [f"{base}.{a.name}" if f"{base}.{a.name}" in paths else base for a in node.names]
            else:
                continue
            for name in names:
                while name not in paths and "." in name:  # (an attribute of a module: the module)
                    name = name.rpartition(".")[0]
                if name in paths and name != module:
                    targets.add(name)
        graph[module] = frozenset(targets)
    return graph


def _under(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def _cycles(graph: dict[str, frozenset[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _path(graph: dict[str, frozenset[str]], start: str, forbidden: tuple[str, ...]) -> list[str] | None:
    """A chain of imports from ``start`` to a module under ``forbidden``, if there is one."""
    seen = {start}
    todo = [[start]]
    while todo:
        chain = todo.pop(0)
        for child in sorted(graph[chain[-1]]):
            if child in seen:
                continue
            if _under(child, forbidden):
                return [*chain, child]
            seen.add(child)
            todo.append([*chain, child])
    return None


def test_the_graph_is_the_package():
    graph = _graph()
    assert "otel_agent_trace.recording.recorder" in graph
    assert "otel_agent_trace.recording.writer" in graph["otel_agent_trace.recording.recorder"]
    assert "otel_agent_trace.redaction.values" in graph["otel_agent_trace.redaction"]


def test_no_module_imports_itself_through_others():
    assert _cycles(_graph()) == []


def test_a_cycle_is_found():
    """The check itself: two modules importing each other inside functions make a cycle."""
    graph = {"a": frozenset({"b"}), "b": frozenset({"c"}), "c": frozenset({"a"}), "d": frozenset({"a"})}
    assert _cycles(graph) == [["a", "b", "c"]]
    assert _cycles({"a": frozenset({"b"}), "b": frozenset()}) == []


def test_what_reads_sessions_never_reaches_capture_code():
    graph = _graph()
    reached = {m: _path(graph, m, CAPTURE) for m in graph if _under(m, OFFLINE)}
    assert reached and {m: chain for m, chain in reached.items() if chain} == {}


def test_capture_code_never_imports_model_replay():
    """Capture code asks the bridge (``_internal.replay``) for the replay in progress; the replay
    sets it there. Only the replay's start at start-up is the entry point's (``parts``) to make."""
    graph = _graph()
    capture = (*CAPTURE, "otel_agent_trace._internal")
    found = {
        module: sorted(t for t in targets if _under(t, REPLAY))
        for module, targets in graph.items()
        if _under(module, capture) and module not in STARTS_A_REPLAY
    }
    assert {m: t for m, t in found.items() if t} == {}
    starts = {t for m in STARTS_A_REPLAY for t in graph[m] if _under(t, REPLAY)}
    assert starts == {"otel_agent_trace.model_replay"}
