"""What the recorder reads from the world: the clock, the host, the process.

Injected (``SessionRecorder(environment=...)``) so a recording can be made reproducible byte for
byte (:func:`otel_agent_trace.testing.fixed_environment`), and gathered with no effect the agent
can see: no child process (``platform.platform()`` would run ``uname -p`` and fill the
``platform`` module's cache that the OpenAI SDK reads), no cache of the agent's libraries filled.
"""

from __future__ import annotations

import functools
import os
import sys
import time
from collections.abc import Callable
from typing import Any

from otel_agent_trace._version import __version__


@functools.cache
def _host() -> dict[str, Any]:
    """The machine, once per process (package metadata reads files: learned before a session's
    files are opened, not between its entries)."""
    import socket  # here, not at start-up: every Python child of an agent pays the import

    versions = {"otel-agent-trace": __version__}
    try:
        from importlib.metadata import PackageNotFoundError, version

        for dist in ("opentelemetry-sdk", "opentelemetry-api"):
            try:
                versions[dist] = version(dist)
            except PackageNotFoundError:
                pass
    except ImportError:
        pass
    try:
        u = os.uname()
        system = f"{u.sysname}-{u.release}-{u.machine}"
    except AttributeError:  # Windows: no uname; sys.platform says enough
        system = sys.platform
    return {
        "hostname": socket.gethostname(),
        "platform": system,
        "python_version": "{}.{}.{}".format(*sys.version_info[:3]),
        "packages": versions,
    }


def _new_session_id() -> str:
    from otel_agent_trace.session_format import new_session_id  # hashing loads on first use

    return new_session_id()


def _argv() -> list[str]:
    return list(sys.argv)


class Environment:
    """The recorder's sources of time, of session ids, and of facts about the host and the process.

    (A plain class: a dataclass costs a millisecond to define, paid by every Python child process
    of an agent at start-up.)"""

    __slots__ = ("clock", "session_id", "host", "pid", "ppid", "cwd", "argv", "localtime")

    def __init__(
        self,
        *,
        clock: Callable[[], int] = time.time_ns,  # ns since the epoch
        session_id: Callable[[], str] = _new_session_id,
        host: Callable[[], dict[str, Any]] = _host,
        pid: Callable[[], int] = os.getpid,
        ppid: Callable[[], int] = os.getppid,
        cwd: Callable[[], str] = os.getcwd,
        argv: Callable[[], list[str]] = _argv,
        localtime: Callable[[float], time.struct_time] = time.localtime,
    ):
        self.clock = clock
        self.session_id = session_id
        self.host = host
        self.pid = pid
        self.ppid = ppid
        self.cwd = cwd
        self.argv = argv
        self.localtime = localtime


LIVE = Environment()
