"""Child processes receive the trace context and the session identity in their environment.

Whatever starts the child, its environment gets:

* ``TRACEPARENT`` / ``TRACESTATE`` (W3C, the OTEP 258 carrier) of the span current at the
  moment the child is made: the process span of the system layer when it is on, otherwise the
  tool or agent span that started the child;
* while a session records: ``AGENT_TRACE_SESSION_ID``, ``AGENT_TRACE_PARENT_SPAN`` (that span's
  id), ``AGENT_TRACE_DIR`` (absolute) and ``AGENT_TRACE_TIER``, so a Python child run under the
  plug-in records into the same session, under that span (``<session>.p<pid>.jsonl``).

Hooks: ``subprocess.Popen._execute_child`` (``subprocess.*``, ``asyncio`` subprocesses);
``os.execv``/``os.execve`` (every ``os.exec*``, ``os.spawn*``, ``pty.spawn`` goes through them,
including DevDuck's ``pty.fork()`` + ``os.execvp``); ``os.posix_spawn``/``posix_spawnp``;
``os.system`` (the variables are exported by the shell command, since ``system()`` reads the
process environment); ``multiprocessing``'s spawn (``spawnv_passfds``, through
``_posixsubprocess.fork_exec`` on the same thread); and an ``os.register_at_fork`` child hook
that updates ``os.environ`` of a forked child (in the child only), for whatever it runs next.
Each child gets its environment explicitly: this process's ``os.environ`` is never changed, so
children spawned at the same moment on other threads each get their own span's context.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from opentelemetry import trace
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from otel_agent_trace._internal import sink
from otel_agent_trace._internal.guard import internal_error, never_raise
from otel_agent_trace.settings import (
    ENV_DIR,
    ENV_PARENT_ENTRIES,
    ENV_PARENT_ENTRY,
    ENV_SESSION_ID,
    ENV_TIER,
    format_parent_entries,
    get_settings,
)

from ._patches import PATCHES

TRACEPARENT = "TRACEPARENT"
TRACESTATE = "TRACESTATE"
_PROPAGATOR = TraceContextTextMapPropagator()
_state = {"fork_hook": False, "mp_hook": False}


def child_variables() -> dict[str, str]:
    """The variables a child started now should receive (empty when there is nothing to pass)."""
    out: dict[str, str] = {}
    carrier: dict[str, str] = {}
    _PROPAGATOR.inject(carrier)
    if carrier.get("traceparent"):
        out[TRACEPARENT] = carrier["traceparent"]
        if carrier.get("tracestate"):
            out[TRACESTATE] = carrier["tracestate"]
    rec = sink.active()  # a stopped recorder is no longer active; a forked child's one still is
    if rec is not None:
        out[ENV_SESSION_ID] = rec.session_id
        settings = getattr(rec, "settings", None) or get_settings()
        directory = getattr(rec, "directory", None) or settings.directory
        out[ENV_DIR] = str(Path(directory).expanduser().absolute())
        out[ENV_TIER] = ",".join(settings.tiers)
        ctx = trace.get_current_span().get_span_context()
        if ctx.is_valid:
            out[ENV_PARENT_ENTRY] = f"{ctx.span_id:016x}"
        entries = rec.parent_entries(ctx.span_id if ctx.is_valid else None)
        if entries:
            out[ENV_PARENT_ENTRIES] = format_parent_entries(entries)
    return out


@never_raise("child environment", default=None)
def child_environment(env: Mapping[Any, Any] | None) -> dict[Any, Any] | None:
    """``env`` (``None``: this process's environment) with :func:`child_variables` added, as a new
    dict; ``None`` when nothing needs adding (the caller then passes ``env`` through unchanged)."""
    extra = child_variables()
    if not extra:
        return None
    base: Mapping[Any, Any] = os.environ if env is None else env
    out = dict(base)
    if base and isinstance(next(iter(base)), bytes):
        out.update({k.encode(): v.encode() for k, v in extra.items()})
    else:
        out.update(extra)
    return out


# --- hooks ---------------------------------------------------------------------------------


def _env_index() -> int:
    """Position of ``env`` after ``self`` in ``Popen._execute_child(args, executable, …, env, …)``."""
    import inspect
    import subprocess

    try:
        execute_child = vars(subprocess.Popen)["_execute_child"]  # (private: feature-detected)
        return list(inspect.signature(execute_child).parameters).index("env") - 1
    except (ValueError, TypeError, KeyError):
        return 6


_ENV_INDEX = _env_index()


def _execute_child(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    if PATCHES.on:
        if "env" in kwargs:
            new = child_environment(kwargs["env"])
            if new is not None:
                kwargs = {**kwargs, "env": new}
        elif len(args) > _ENV_INDEX:
            new = child_environment(args[_ENV_INDEX])
            if new is not None:
                args = (*args[:_ENV_INDEX], new, *args[_ENV_INDEX + 1 :])
    return wrapped(*args, **kwargs)


def _execv(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    if PATCHES.on and len(args) == 2 and not kwargs:
        new = child_environment(None)
        if new is not None:
            return os.execve(args[0], args[1], new)
    return wrapped(*args, **kwargs)


def _env_at(position: int) -> Any:
    def wrapper(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        if PATCHES.on:
            if "env" in kwargs:
                new = child_environment(kwargs["env"])
                if new is not None:
                    kwargs = {**kwargs, "env": new}
            elif len(args) > position:
                new = child_environment(args[position])
                if new is not None:
                    args = (*args[:position], new, *args[position + 1 :])
        return wrapped(*args, **kwargs)

    return wrapper


_execve = _env_at(2)  # os.execve(path, argv, env)
_posix_spawn = _env_at(2)  # os.posix_spawn(path, argv, env, ...)
_posix_spawnp = _env_at(2)


@never_raise("os.system environment", default=None)
def _exporting(command: Any) -> Any:
    extra = child_variables()
    if not extra:
        return None
    import shlex

    exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in extra.items())
    if isinstance(command, bytes):
        return b"export " + exports.encode() + b"; " + command
    return f"export {exports}; {command}"


def _system(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    if PATCHES.on and len(args) == 1 and not kwargs:
        command = _exporting(args[0])
        if command is not None:
            return wrapped(command)
    return wrapped(*args, **kwargs)


_spawning = threading.local()  # .env: the environment multiprocessing's spawn on this thread passes
_ENV_ARG = 5  # _posixsubprocess.fork_exec(args, executables, close_fds, pass_fds, cwd, env, ...)


def _spawnv_passfds(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    """``multiprocessing``'s spawn start method runs a fresh interpreter through
    ``_posixsubprocess.fork_exec`` with no environment (the child inherits this process's): the
    environment with the variables is handed, on this thread only, to :func:`_fork_exec`, which
    passes it explicitly. ``os.environ`` is never changed (another thread spawning at the same
    moment would inherit what it holds). Not for the forkserver: its workers are forked later, for
    other callers, so the context at its own start would be the wrong parent for them."""
    if not PATCHES.on or any("forkserver" in str(a) for a in (args[1] if len(args) > 1 else ())):
        return wrapped(*args, **kwargs)
    env = child_environment(None)
    if env is None:
        return wrapped(*args, **kwargs)
    _spawning.env = [os.fsencode(k) + b"=" + os.fsencode(v) for k, v in env.items()]
    try:
        return wrapped(*args, **kwargs)
    finally:
        _spawning.env = None


def _fork_exec(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    """``_posixsubprocess.fork_exec``: inside :func:`_spawnv_passfds` on this thread, the
    environment it prepared instead of the inherited one (``None``); anything else unchanged."""
    env = getattr(_spawning, "env", None)
    if env is not None and not kwargs and len(args) > _ENV_ARG and args[_ENV_ARG] is None:
        _spawning.env = None  # one child per spawn
        args = (*args[:_ENV_ARG], env, *args[_ENV_ARG + 1 :])
    return wrapped(*args, **kwargs)


def _after_fork_in_child() -> None:
    if not PATCHES.on:
        return
    try:
        for key, value in child_variables().items():
            os.environ[key] = value
    except Exception as exc:  # never into the forked child's code
        internal_error("fork child environment", exc)


def _targets() -> list[tuple[Any, str, Any]]:
    import subprocess

    targets: list[tuple[Any, str, Any]] = [(subprocess.Popen, "_execute_child", _execute_child)]
    if os.name == "posix":
        targets += [(os, "execv", _execv), (os, "execve", _execve), (os, "system", _system)]
        targets += [(os, "posix_spawn", _posix_spawn), (os, "posix_spawnp", _posix_spawnp)]
        import _posixsubprocess

        targets.append((_posixsubprocess, "fork_exec", _fork_exec))
        mp_util = sys.modules.get("multiprocessing.util")  # not imported for it (~20 ms): see instrument()
        if mp_util is not None:
            targets.append((mp_util, "spawnv_passfds", _spawnv_passfds))
    return targets


def _on_multiprocessing_util(module: Any) -> None:
    if PATCHES.on:
        PATCHES.wrap(module, "spawnv_passfds", _spawnv_passfds)


def instrument() -> None:
    """Wrap (the instrumentor switches :data:`PATCHES` on and off, and removes the wrappers)."""
    for owner, name, wrapper in _targets():
        PATCHES.wrap(owner, name, wrapper)
    if os.name == "posix" and "multiprocessing.util" not in sys.modules and not _state["mp_hook"]:
        import wrapt

        wrapt.register_post_import_hook(_on_multiprocessing_util, "multiprocessing.util")
        _state["mp_hook"] = True
    if hasattr(os, "register_at_fork") and not _state["fork_hook"]:
        os.register_at_fork(after_in_child=_after_fork_in_child)  # cannot be unregistered: a flag
        _state["fork_hook"] = True
