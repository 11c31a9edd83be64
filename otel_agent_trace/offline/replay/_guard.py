"""What a re-run tool may touch, enforced in its child process with an audit hook (PEP 578).

The tool is the user's code; its arguments come from the session file, which may be anyone's.
So, whatever the file says the tool did, once the guard is on:

* a process (``subprocess``, ``os.system``, ``exec``, ``spawn``, ``fork``, ``kill``) is refused
  unless ``allow_shell``;
* a file written, made, removed, renamed or linked is refused unless ``allow_writes``, and even
  then only inside the workspace (the path resolved, symlinks and ``..`` included);
* a file read or a directory listed is refused outside the workspace, except the interpreter's
  and installed packages' files, the named tools' own code and a few system files that reading
  leaks nothing from (time zones, CA certificates, ``/dev/null``, ``/dev/urandom``);
* the network (connect, send, bind, name look-ups) is refused unless ``allow_network``;
* ``ctypes`` (a way around every rule above) is refused.

A refusal raises ``PermissionError`` in the tool and is kept in :attr:`Guard.refused`, so a tool
that catches the error still ends up ``blocked``. This is a fence against a file pointing the
user's own tools elsewhere, not a sandbox for hostile code: the code is the user's own.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from typing import Any

_CODE_SUFFIXES = (".py", ".pyc", ".so", ".pyd", ".pth", ".pyi", ".typed")
_SYSTEM_READS = (
    "/dev/null",
    "/dev/urandom",
    "/dev/random",
    "/etc/localtime",
    "/usr/share/zoneinfo",
    "/etc/ssl",
    "/usr/lib/ssl",
    "/etc/pki",
)

# audit event -> the positions of its path arguments
_WRITE_EVENTS: dict[str, tuple[int, ...]] = {
    "os.remove": (0,),
    "os.rmdir": (0,),
    "os.mkdir": (0,),
    "os.rename": (0, 1),
    "os.link": (0, 1),
    "os.symlink": (1,),
    "os.truncate": (0,),
    "os.chmod": (0,),
    "os.lchmod": (0,),
    "os.chown": (0,),
    "os.lchown": (0,),
    "os.chflags": (0,),
    "os.lchflags": (0,),
    "os.utime": (0,),
    "os.mkfifo": (0,),
    "os.mknod": (0,),
    "os.setxattr": (0,),
    "os.removexattr": (0,),
    "shutil.rmtree": (0,),
    "shutil.move": (0, 1),
    "shutil.copytree": (1,),
    "shutil.copyfile": (1,),
    "shutil.copymode": (1,),
    "shutil.copystat": (1,),
    "shutil.chown": (0,),
    "shutil.make_archive": (0,),
    "shutil.unpack_archive": (1,),
    "sqlite3.connect": (0,),
}
_READ_EVENTS: dict[str, tuple[int, ...]] = {
    "os.listdir": (0,),
    "os.scandir": (0,),
    "glob.glob": (0,),
    "os.chdir": (0,),
}
_PROCESS_EVENTS = frozenset(
    {
        "subprocess.Popen",
        "os.system",
        "os.exec",
        "os.posix_spawn",
        "os.spawn",
        "os.fork",
        "os.forkpty",
        "os.startfile",
        "os.kill",
        "os.killpg",
        "pty.spawn",
    }
)
_NETWORK_EVENTS = frozenset(
    {
        "socket.connect",
        "socket.sendto",
        "socket.sendmsg",
        "socket.bind",
        "socket.getaddrinfo",
        "socket.gethostbyname",
        "socket.gethostbyaddr",
        "socket.getnameinfo",
        "http.client.connect",
        "ftplib.connect",
        "smtplib.connect",
        "poplib.connect",
        "imaplib.open",
        "nntplib.connect",
        "telnetlib.Telnet.open",
    }
)
_NEVER = frozenset({"ctypes.dlopen", "ctypes.call_function", "ctypes.dlsym"})
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


def _real(path: str) -> str:
    return os.path.realpath(os.path.abspath(path))


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _as_path(value: str | bytes | int | os.PathLike[str] | os.PathLike[bytes]) -> str | None:
    """A path argument as text; ``None`` for a descriptor or anything that is not a path."""
    if isinstance(value, int):
        return None
    try:
        return os.fsdecode(os.fspath(value))
    except TypeError:
        return None


class Guard:
    """The rules for one call; :meth:`install` makes them hold for the rest of the process."""

    def __init__(
        self,
        workspace: str,
        *,
        allow_shell: bool = False,
        allow_writes: bool = False,
        allow_network: bool = False,
        code_dirs: Iterable[str] = (),
    ) -> None:
        self.workspace = _real(workspace)
        self.allow_shell = allow_shell
        self.allow_writes = allow_writes
        self.allow_network = allow_network
        prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
        home = _real(os.path.expanduser("~"))
        # (an interpreter installed at / or in the home directory itself would open everything)
        self._installed = tuple(p for p in map(_real, filter(None, prefixes)) if p not in ("/", home))
        self._code_dirs = tuple(_real(p) for p in code_dirs if p and not _inside(_real(p), self.workspace))
        self.refused: list[str] = []
        self.active = False

    # -- the rules ------------------------------------------------------------------------------

    def why_not_read(self, path: str, listing: bool = False) -> str | None:
        real = _real(path)
        if _inside(real, self.workspace) or any(_inside(real, p) for p in self._installed):
            return None
        if any(_inside(real, p) for p in _SYSTEM_READS):
            return None
        if any(_inside(real, d) for d in self._code_dirs) and (listing or real.endswith(_CODE_SUFFIXES)):
            return None
        return f"{path!r} is outside the workspace"

    def why_not_write(self, path: str) -> str | None:
        if not self.allow_writes:
            return "writing files needs --allow-writes"
        real = _real(path)
        if not _inside(real, self.workspace):
            return f"{path!r} is outside the workspace (writes stay in --workspace)"
        return None

    def check(self, event: str, args: tuple[Any, ...]) -> str | None:
        """Why ``event`` is refused, ``None`` if it may go on."""
        if event == "open":
            path = _as_path(args[0]) if args else None
            if path is None:
                return None
            mode, flags = (args[1] if len(args) > 1 else None), (args[2] if len(args) > 2 else 0)
            writing = bool(flags & _WRITE_FLAGS) if isinstance(flags, int) else False
            if isinstance(mode, str):
                writing = writing or any(c in mode for c in "wax+")
            return self.why_not_write(path) if writing else self.why_not_read(path)
        if event in _WRITE_EVENTS:
            for at in _WRITE_EVENTS[event]:
                path = _as_path(args[at]) if len(args) > at else None
                if event == "sqlite3.connect" and path in (":memory:", ""):
                    continue
                if path is not None and (reason := self.why_not_write(path)):
                    return reason
            return None
        if event in _READ_EVENTS:
            path = _as_path(args[0]) if args else None
            if path is None:
                return None
            return self.why_not_read(path, listing=True)
        if event in _PROCESS_EVENTS:
            return None if self.allow_shell else "running commands needs --allow-shell"
        if event in _NETWORK_EVENTS:
            return None if self.allow_network else "network access needs --allow-network"
        if event in _NEVER:
            return "ctypes is not allowed in tool replay"
        return None

    # -- enforcement ----------------------------------------------------------------------------

    def _hook(self, event: str, args: tuple[Any, ...]) -> None:
        if not self.active:
            return
        reason = self.check(event, args)
        if reason is None:
            return
        what = f"{event} {_describe(args)}".strip()
        self.refused.append(f"{what}: {reason}")
        raise PermissionError(f"refused by otel-agent-trace tool replay: {what}: {reason}")

    def install(self) -> None:
        """From now on, in this process, the rules hold (an audit hook cannot be removed)."""
        sys.addaudithook(self._hook)
        self.active = True


def _describe(args: tuple[Any, ...]) -> str:
    first = args[0] if args else ""
    text = repr(first)
    return text if len(text) <= 200 else text[:200] + "…"
