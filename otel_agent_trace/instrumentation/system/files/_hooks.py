"""File activity: thin wrappers where the outcome matters, the audit hook for coverage.

* Wrappers on ``builtins.open``, ``io.open`` (so ``pathlib``), ``os.open``, ``os.remove`` /
  ``unlink``, ``os.rename`` / ``replace``, ``os.rmdir``, ``os.mkdir`` and ``shutil.rmtree``
  record the event after the call, with ``error.type`` when it failed. While one runs, nothing
  nested is recorded (an ``rmtree`` is one event, not one per file).
* The audit hook's ``open`` / ``os.remove`` / … events catch what the wrappers cannot name
  (``io.FileIO``, C extensions, a function captured before we patched): recorded as attempts
  (``agent_trace.file.seen_by = "audit"``: the hook runs before the call, so no outcome).
  Interpreter housekeeping (imports, ``.pyc`` writes, ``linecache``) comes only this way and is
  recognised by the calling frame.
"""

from __future__ import annotations

import builtins
import importlib
import io
import linecache
import os
import shutil
import sys
import tokenize
from typing import Any

from otel_agent_trace._internal import sink
from otel_agent_trace._internal.guard import internal_error
from otel_agent_trace.instrumentation._patching import Patches

from .. import _names as n
from .._common import _tl, emit, excluded, fs_path, recorder

PATCHES = Patches("agent_trace_files")  # the patches and switch of agent_trace_files

_O_ACCMODE = getattr(os, "O_ACCMODE", 3)
_O_CREAT = os.O_CREAT
_FLAG_ACCESS = {os.O_RDONLY: "read", os.O_WRONLY: "write", os.O_RDWR: "read_write"}


def _housekeeping_files() -> frozenset[str]:
    names = {linecache.__file__, tokenize.__file__}
    base = os.path.dirname(importlib.__file__)
    for mod in ("_bootstrap.py", "_bootstrap_external.py"):
        names.add(os.path.join(base, mod))
    zipimport = sys.modules.get("zipimport")
    found = getattr(zipimport, "__file__", None) if zipimport is not None else None
    if found:
        names.add(found)
    return frozenset(names)


_HOUSEKEEPING = _housekeeping_files()


# --- attributes ----------------------------------------------------------------------------


_MODES: dict[str, tuple[str, bool]] = {}  # mode string -> (access, create), memoised


def _mode_attrs(attrs: dict[str, Any], mode: Any, flags: int) -> None:
    if isinstance(mode, str):
        known = _MODES.get(mode)
        if known is None:
            access = "read_write" if "+" in mode else ("read" if "r" in mode else "write")
            known = (access, "r" not in mode)
            if len(_MODES) < 256:
                _MODES[mode] = known
        attrs[n.FILE_MODE] = mode
        attrs[n.FILE_ACCESS] = known[0]
        attrs[n.FILE_CREATE] = known[1]
    else:
        access = _FLAG_ACCESS.get(flags & _O_ACCMODE, "read")
        create = bool(flags & _O_CREAT)
        attrs[n.FILE_ACCESS] = access
        attrs[n.FILE_CREATE] = create
        attrs[n.FILE_MODE] = _flags_mode(flags, access, create)


def _flags_mode(flags: int, access: str, create: bool) -> str:
    if flags & os.O_APPEND:
        mode = "a"
    elif create and flags & getattr(os, "O_EXCL", 0):
        mode = "x"
    elif access == "read":
        mode = "r"
    elif flags & os.O_TRUNC or create:
        mode = "w"
    else:
        mode = "r"
    return mode + "+" if access == "read_write" else mode


def _path(raw: Any, dir_fd: Any = None) -> str | None:
    if dir_fd is not None:  # relative to a directory descriptor: keep it as given
        text = fs_path(raw) if not isinstance(raw, (str, bytes)) or os.path.isabs(raw) else os.fsdecode(raw)
    else:
        text = fs_path(raw)
    if text is None or excluded(text):
        return None
    return text


def _failed(attrs: dict[str, Any], exc: BaseException | None) -> dict[str, Any]:
    if exc is not None:
        attrs[n.ERROR_TYPE] = type(exc).__qualname__
    return attrs


# --- wrappers ------------------------------------------------------------------------------


def _call(rec: Any, original: Any, args: tuple[Any, ...], kwargs: dict[str, Any], record: Any) -> Any:
    """Run ``original`` with nothing nested recorded; then ``record(rec, args, kwargs, exc)``."""
    _tl.busy = True
    try:
        result = original(*args, **kwargs)
    except Exception as exc:
        _tl.busy = False
        _safe(record, rec, args, kwargs, exc)
        raise
    finally:
        _tl.busy = False
    _safe(record, rec, args, kwargs, None)
    return result


def _safe(record: Any, rec: Any, args: Any, kwargs: Any, exc: BaseException | None) -> None:
    try:
        record(rec, args, kwargs, exc)
    except Exception as err:  # recording must never break the call it watches (tests: it does)
        internal_error("recording a file event", err)


def _wrapper(record: Any) -> Any:
    def make(original: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if sink._active is None or not PATCHES.on:
                return original(*args, **kwargs)
            rec = recorder()
            if rec is None:
                return original(*args, **kwargs)
            return _call(rec, original, args, kwargs, record)

        return wrapper

    return make


def _arg(args: tuple[Any, ...], kwargs: dict[str, Any], index: int, name: str, default: Any = None) -> Any:
    if len(args) > index:
        return args[index]
    return kwargs.get(name, default)


def _record_open(rec: Any, args: Any, kwargs: Any, exc: BaseException | None) -> None:
    path = _path(_arg(args, kwargs, 0, "file"))
    if path is None:
        return
    attrs: dict[str, Any] = {n.FILE_PATH: path}
    _mode_attrs(attrs, _arg(args, kwargs, 1, "mode", "r"), 0)
    emit(rec, n.FILE_OPEN, _failed(attrs, exc))


def _record_os_open(rec: Any, args: Any, kwargs: Any, exc: BaseException | None) -> None:
    path = _path(_arg(args, kwargs, 0, "path"), kwargs.get("dir_fd"))
    if path is None:
        return
    attrs: dict[str, Any] = {n.FILE_PATH: path}
    _mode_attrs(attrs, None, _arg(args, kwargs, 1, "flags", 0))
    emit(rec, n.FILE_OPEN, _failed(attrs, exc))


def _deletion(operation: str) -> Any:
    def record(rec: Any, args: Any, kwargs: Any, exc: BaseException | None) -> None:
        path = _path(_arg(args, kwargs, 0, "path"), kwargs.get("dir_fd"))
        if path is not None:
            attrs = {n.FILE_PATH: path, n.FILE_OPERATION: operation}
            emit(rec, n.FILE_DELETE, _failed(attrs, exc))

    return record


def _renaming(operation: str) -> Any:
    def record(rec: Any, args: Any, kwargs: Any, exc: BaseException | None) -> None:
        src = _path(_arg(args, kwargs, 0, "src"), kwargs.get("src_dir_fd"))
        dst = _path(_arg(args, kwargs, 1, "dst"), kwargs.get("dst_dir_fd"))
        if src is not None and dst is not None:
            attrs = {n.FILE_PATH: src, n.FILE_NEW_PATH: dst, n.FILE_OPERATION: operation}
            emit(rec, n.FILE_RENAME, _failed(attrs, exc))

    return record


def _record_mkdir(rec: Any, args: Any, kwargs: Any, exc: BaseException | None) -> None:
    path = _path(_arg(args, kwargs, 0, "path"), kwargs.get("dir_fd"))
    if path is not None:
        emit(rec, n.FILE_MKDIR, _failed({n.FILE_PATH: path, n.FILE_OPERATION: "mkdir"}, exc))


_WRAPPED: tuple[tuple[Any, str, Any], ...] = (
    (builtins, "open", _record_open),
    (io, "open", _record_open),
    (os, "open", _record_os_open),
    (os, "remove", _deletion("unlink")),
    (os, "unlink", _deletion("unlink")),
    (os, "rmdir", _deletion("rmdir")),
    (shutil, "rmtree", _deletion("rmtree")),
    (os, "rename", _renaming("rename")),
    (os, "replace", _renaming("replace")),
    (os, "mkdir", _record_mkdir),
)


# --- the audit hook's view -------------------------------------------------------------------


def _housekeeping(depth: int) -> bool:
    """Whether the Python code that made the audited call is the interpreter's own."""
    try:
        frame = sys._getframe(depth)
    except ValueError:
        return True
    filename = frame.f_code.co_filename
    return filename.startswith("<frozen ") or filename in _HOUSEKEEPING


def _audit_open(rec: Any, args: tuple[Any, ...]) -> None:
    raw, mode, flags = args
    if isinstance(raw, int):
        return
    path = _path(raw)
    if path is None or _housekeeping(3):
        return
    attrs: dict[str, Any] = {n.FILE_PATH: path, n.FILE_SEEN_BY: "audit"}
    _mode_attrs(attrs, mode, flags or 0)
    emit(rec, n.FILE_OPEN, attrs)


def _audit_path_event(event: str, operation: str) -> Any:
    def handle(rec: Any, args: tuple[Any, ...]) -> None:
        path = _path(args[0], args[-1] if len(args) > 1 else None)
        if path is None or _housekeeping(3):
            return
        attrs: dict[str, Any] = {n.FILE_PATH: path, n.FILE_OPERATION: operation, n.FILE_SEEN_BY: "audit"}
        emit(rec, event, attrs)

    return handle


def _audit_rename(rec: Any, args: tuple[Any, ...]) -> None:
    src_path, dst_path, *dirs = args  # (src, dst, src_dir_fd, dst_dir_fd)
    src = _path(src_path, dirs[0] if dirs else None)
    dst = _path(dst_path, dirs[1] if len(dirs) > 1 else None)
    if src is None or dst is None or _housekeeping(3):
        return
    attrs = {n.FILE_PATH: src, n.FILE_NEW_PATH: dst, n.FILE_OPERATION: "rename", n.FILE_SEEN_BY: "audit"}
    emit(rec, n.FILE_RENAME, attrs)


AUDIT_HANDLERS = {
    "open": _audit_open,
    "os.remove": _audit_path_event(n.FILE_DELETE, "unlink"),
    "os.rmdir": _audit_path_event(n.FILE_DELETE, "rmdir"),
    "shutil.rmtree": _audit_path_event(n.FILE_DELETE, "rmtree"),
    "os.mkdir": _audit_path_event(n.FILE_MKDIR, "mkdir"),
    "os.rename": _audit_rename,
}


def install() -> None:
    """Patch and listen (the instrumentor switches :data:`PATCHES` on before, off after)."""
    from .. import _audit

    for owner, name, record in _WRAPPED:
        PATCHES.replace(owner, name, _wrapper(record))
    _audit.listen(AUDIT_HANDLERS)


def uninstall() -> None:
    from .. import _audit

    _audit.stop_listening(AUDIT_HANDLERS)
    PATCHES.stop()
