"""Parent agent run under opentelemetry-instrument: starts Python children from a tool span,
one through subprocess and one through pty.fork + os.execvp (DevDuck's shell), and a shell."""

import os
import pty
import subprocess
import sys

import otel_agent_trace as oat

HERE = os.path.dirname(os.path.abspath(__file__))
INSTRUMENT = os.path.join(os.path.dirname(sys.executable), "opentelemetry-instrument")


def read_all(fd: int) -> bytes:
    out = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # EIO: the child closed the terminal
            return out
        if not chunk:
            return out
        out += chunk


with oat.agent("parent"):
    with oat.tool("run-child", call_id="call_child"):
        done = subprocess.run(
            [INSTRUMENT, sys.executable, os.path.join(HERE, "child.py"), "subprocess"],
            capture_output=True,
            text=True,
        )
        sys.stdout.write(done.stdout)
        sys.stderr.write(done.stderr)
    with oat.tool("shell", call_id="call_shell"):
        pid, fd = pty.fork()
        if pid == 0:  # the child: exactly what DevDuck's shell tool does
            os.execvp(sys.executable, [sys.executable, os.path.join(HERE, "child.py"), "pty"])
        sys.stdout.write(read_all(fd).decode())
        os.waitpid(pid, 0)
        echo = subprocess.run(
            ["sh", "-c", 'echo "sh TRACEPARENT=$TRACEPARENT"'], capture_output=True, text=True
        )
        sys.stdout.write(echo.stdout)
