"""Child processes as child spans; ``exec`` and ``fork`` as events.

* ``subprocess.Popen`` (so ``run``, ``call``, ``check_output`` and asyncio's subprocesses): the
  span starts in ``__init__`` and is current while the child is created (so the child inherits
  it as its parent through ``TRACEPARENT``); it ends when the process is reaped
  (``Popen._handle_exitstatus``, or asyncio's ``_process_exited``) with ``process.exit.code``.
* ``os.system``: a span around the call.
* ``os.exec*``: a ``process.exec`` event before the call (a successful exec never returns).
* ``os.fork`` / ``os.forkpty`` (so ``pty.fork``): a ``process.fork`` event in the parent.
* ``os.posix_spawn`` / ``posix_spawnp`` called directly: a ``process.spawn`` event (audit hook).
"""

from __future__ import annotations

import os
import subprocess
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import SpanKind

from otel_agent_trace._internal import sink
from otel_agent_trace._internal.guard import internal_error
from otel_agent_trace.instrumentation._patching import Patches

from .. import _names as n
from .._common import _tl, emit, flush, recorder, state

_SPAN_ATTR = "_oat_process_span"
PATCHES = Patches("agent_trace_processes")  # the patches, switch and tracer of agent_trace_processes
_MAX_ARGS = 256
_MAX_ARG_CHARS = 4096


def _active() -> Any:
    if sink._active is None or not PATCHES.on:
        return None
    return recorder()


def _text(value: Any) -> str:
    try:
        text = os.fsdecode(value) if isinstance(value, (bytes, os.PathLike)) else str(value)
    except Exception:  # the agent's own object whose str() fails: shown as repr, not our failure
        text = repr(value)
    return text if len(text) <= _MAX_ARG_CHARS else text[:_MAX_ARG_CHARS] + "…"


def command_args(args: Any, shell: bool = False, executable: Any = None) -> list[str]:
    """``process.command_args`` of a Popen-style ``args`` (a shell command as ``sh -c …``)."""
    if isinstance(args, (str, bytes, os.PathLike)):
        argv = [_text(args)]
    else:
        try:
            argv = [_text(a) for a in list(args)[:_MAX_ARGS]]
        except TypeError:
            argv = [_text(args)]
    if shell:
        sh = _text(executable) if executable else "/bin/sh"
        return [sh, "-c", *argv]
    return argv


def _span_attributes(argv: list[str], cwd: Any) -> dict[str, Any]:
    attrs: dict[str, Any] = {n.PROCESS_COMMAND_ARGS: argv}
    if argv:
        attrs[n.PROCESS_EXECUTABLE_NAME] = os.path.basename(argv[0])
    where = _text(cwd) if cwd is not None else (state.cwd or _getcwd())
    if where:
        attrs[n.PROCESS_WORKING_DIRECTORY] = where
    return attrs


def _getcwd() -> str:
    try:
        return os.getcwd()
    except OSError:
        return ""


def _start(argv: list[str], cwd: Any) -> Any:
    name = f"process {os.path.basename(argv[0])}" if argv else "process"
    return PATCHES.tracer().start_span(name, kind=SpanKind.INTERNAL, attributes=_span_attributes(argv, cwd))


def _finish(span: Any, exit_code: Any) -> None:
    if exit_code is not None:
        span.set_attribute(n.PROCESS_EXIT_CODE, int(exit_code))
    span.end()


# --- subprocess.Popen -------------------------------------------------------------------------


def _arg(args: tuple[Any, ...], kwargs: dict[str, Any], index: int, name: str, default: Any = None) -> Any:
    return args[index] if len(args) > index else kwargs.get(name, default)


def _popen_init(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    rec = _active()
    if rec is None:
        return wrapped(*args, **kwargs)
    try:
        # Popen(args, bufsize, executable, stdin, stdout, stderr, preexec_fn, close_fds, shell, cwd)
        argv = command_args(
            _arg(args, kwargs, 0, "args"),
            bool(_arg(args, kwargs, 8, "shell")),
            _arg(args, kwargs, 2, "executable"),
        )
        span = _start(argv, _arg(args, kwargs, 9, "cwd"))
    except Exception as exc:
        internal_error("starting a process span", exc)
        return wrapped(*args, **kwargs)
    token = otel_context.attach(trace.set_span_in_context(span))
    _tl.busy = True  # Popen's own plumbing (opening /dev/null for DEVNULL, pipes) is not the tool's
    try:
        result = wrapped(*args, **kwargs)
    except Exception as exc:
        _tl.busy = False
        _record_error(span, exc)
        span.end()
        raise
    finally:
        _tl.busy = False
        otel_context.detach(token)
    try:
        span.set_attribute(n.PROCESS_PID, instance.pid)
        if instance.returncode is not None:  # already reaped (cannot happen in CPython, but be sure)
            _finish(span, instance.returncode)
        else:
            setattr(instance, _SPAN_ATTR, span)
    except Exception as exc:
        span.end()
        internal_error("recording a started process", exc)
    return result


def _end_for(proc: Any) -> None:
    span = proc.__dict__.pop(_SPAN_ATTR, None) if hasattr(proc, "__dict__") else None
    if span is not None and proc.returncode is not None:
        _finish(span, proc.returncode)
    elif span is not None:
        setattr(proc, _SPAN_ATTR, span)


def _handle_exitstatus(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    result = wrapped(*args, **kwargs)
    try:
        _end_for(instance)
    except Exception as exc:
        internal_error("ending a process span", exc)
    return result


def _process_exited(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    try:
        return wrapped(*args, **kwargs)
    finally:
        try:
            proc = getattr(instance, "_proc", None)
            if proc is not None:
                _end_for(proc)
        except Exception as exc:
            internal_error("ending a process span", exc)


# --- os.system, os.exec*, os.fork ---------------------------------------------------------------


def _system(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    rec = _active()
    if rec is None:
        return wrapped(*args, **kwargs)
    try:
        span = _start(command_args(_arg(args, kwargs, 0, "command"), shell=True), None)
    except Exception as exc:
        internal_error("starting an os.system span", exc)
        return wrapped(*args, **kwargs)
    token = otel_context.attach(trace.set_span_in_context(span))
    try:
        status = wrapped(*args, **kwargs)
    except Exception as exc:
        _record_error(span, exc)
        span.end()
        raise
    finally:
        otel_context.detach(token)
    try:
        code = (
            os.waitstatus_to_exitcode(status)
            if status >= 0 and hasattr(os, "waitstatus_to_exitcode")
            else status
        )
    except ValueError:
        code = status
    _finish(span, code)
    return status


def _exec_argv(name: str, args: tuple[Any, ...]) -> tuple[Any, list[str]]:
    path = args[0] if args else None
    if name in ("execv", "execve", "execvp", "execvpe"):
        rest = args[1] if len(args) > 1 else ()
    elif name in ("execle", "execlpe"):
        rest = args[1:-1]
    else:
        rest = args[1:]
    return path, command_args(rest)


def _exec(name: str) -> Any:
    def wrapper(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        rec = _active()
        if rec is None:
            return wrapped(*args, **kwargs)
        attrs: dict[str, Any] = {}
        try:
            path, argv = _exec_argv(name, args)
            attrs = {n.PROCESS_EXECUTABLE_PATH: _text(path), n.PROCESS_COMMAND_ARGS: argv}
            emit(rec, n.PROCESS_EXEC, attrs)
        except Exception as exc:
            internal_error("recording an exec", exc)
        flush(rec)  # on disk before this process image is gone
        _tl.busy = True  # execvp tries each PATH entry through execv: one event, not one per try
        try:
            return wrapped(*args, **kwargs)
        except Exception as exc:
            _tl.busy = False
            emit(rec, n.PROCESS_EXEC + ".error", {**attrs, n.ERROR_TYPE: type(exc).__qualname__})
            raise
        finally:
            _tl.busy = False

    return wrapper


def _fork(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    rec = _active()
    if rec is None:
        return wrapped(*args, **kwargs)
    _tl.busy = True  # pty.fork falls back from forkpty to fork: one event
    try:
        result = wrapped(*args, **kwargs)
    finally:
        _tl.busy = False
    pid = result[0] if isinstance(result, tuple) else result
    if pid:  # the parent (the child sees 0)
        emit(rec, n.PROCESS_FORK, {n.PROCESS_PID: pid, "agent_trace.process.api": wrapped.__name__})
    return result


def _audit_exec(rec: Any, args: tuple[Any, ...]) -> None:
    path, argv = args[0], args[1]
    emit(
        rec,
        n.PROCESS_EXEC,
        {n.PROCESS_EXECUTABLE_PATH: _text(path), n.PROCESS_COMMAND_ARGS: command_args(argv)},
    )
    flush(rec)  # on disk before this process image is gone


def _audit_spawn(rec: Any, args: tuple[Any, ...]) -> None:
    # os.posix_spawn/posix_spawnp called directly (inside Popen the process span covers it)
    path, argv = args[0], args[1]
    attrs = {n.PROCESS_EXECUTABLE_PATH: _text(path), n.PROCESS_COMMAND_ARGS: command_args(argv)}
    emit(rec, n.PROCESS_SPAWN, attrs)


AUDIT_HANDLERS = {"os.exec": _audit_exec, "os.posix_spawn": _audit_spawn}


def _targets() -> list[tuple[Any, str, Any]]:
    out: list[tuple[Any, str, Any]] = [
        (subprocess, "Popen.__init__", _popen_init),
        (subprocess, "Popen._handle_exitstatus", _handle_exitstatus),
        (os, "system", _system),
        (os, "fork", _fork),
        (os, "forkpty", _fork),
    ]
    for name in ("execv", "execve", "execl", "execle", "execlp", "execlpe", "execvp", "execvpe"):
        out.append((os, name, _exec(name)))
    try:
        from asyncio import base_subprocess

        out.append((base_subprocess, "BaseSubprocessTransport._process_exited", _process_exited))
    except ImportError:
        pass
    return out


def install() -> None:
    """Wrap and listen (the instrumentor switches :data:`PATCHES` on before, off after)."""
    from .. import _audit

    for module, dotted, wrapper in _targets():
        PATCHES.wrap(module, dotted, wrapper)
    _audit.listen(AUDIT_HANDLERS)


def uninstall() -> None:
    from .. import _audit

    _audit.stop_listening(AUDIT_HANDLERS)
    PATCHES.stop()


def _record_error(span: Any, exc: BaseException) -> None:
    """A failed start of a child process on its span (the span helpers load on the first failure,
    not at start-up)."""
    from otel_agent_trace._internal.genai_spans import record_error

    record_error(span, exc)
