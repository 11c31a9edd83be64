"""Arize Phoenix as a real OTLP receiver for tests (installed and started here, never mocked).

Interface — the session-scoped pytest fixture ``phoenix`` yields a :class:`Phoenix` with:

* ``http_endpoint``: base URL for OTLP/HTTP, e.g. ``http://127.0.0.1:PORT`` (traces at ``/v1/traces``);
* ``grpc_endpoint``: ``http://127.0.0.1:GRPCPORT`` for OTLP/gRPC;
* ``otlp_env(protocol)``: the ``OTEL_EXPORTER_OTLP_*`` variables for a subprocess
  (``"grpc"`` or ``"http/protobuf"``);
* ``spans(trace_id, project="default", expect=N, timeout=60)``: polls
  ``GET /v1/projects/{project}/spans?trace_id=...`` until at least ``expect`` spans arrived and
  returns them (Phoenix's JSON: ``name``, ``context.{trace_id,span_id}``, ``parent_id``,
  ``attributes``, ``events``, ``status_code``); raises ``AssertionError`` on timeout.

Use it from any test folder by importing it in that folder's ``conftest.py``::

    from tests.services.phoenix import phoenix  # noqa: F401

and mark the tests ``@pytest.mark.phoenix``.

Phoenix lives in a virtualenv of its own (it pins its own libraries): ``$AGENT_TRACE_PHOENIX_VENV``,
default ``~/.cache/otel-agent-trace/phoenix-venv``; it is created and ``arize-phoenix`` installed
there if missing (about 2 minutes, once; a file lock serialises concurrent installs).
``python -m tests.services.phoenix install`` does the install up front (CI).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

PHOENIX_VERSION = "20.26.1"
ENV_VENV = "AGENT_TRACE_PHOENIX_VENV"
READY_TIMEOUT = 240.0  # seconds; 15-45 s is usual, a busy CI machine is slower


def venv_dir() -> Path:
    raw = os.environ.get(ENV_VENV) or "~/.cache/otel-agent-trace/phoenix-venv"
    return Path(raw).expanduser()


def _phoenix_bin(venv: Path) -> Path:
    return venv / "bin" / "phoenix"


def ensure_installed(venv: Path | None = None) -> Path:
    """The ``phoenix`` executable, installing Phoenix into its own venv first if needed."""
    venv = venv or venv_dir()
    exe = _phoenix_bin(venv)
    if exe.exists():
        return exe
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.parent / f".{venv.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another test run may be installing right now
        if exe.exists():
            return exe
        if venv.exists():
            shutil.rmtree(venv)  # a half-made venv from an interrupted install
        python = getattr(sys, "_base_executable", None) or sys.executable
        subprocess.run([python, "-m", "venv", str(venv)], check=True)
        pip = [str(venv / "bin" / "python"), "-m", "pip", "--disable-pip-version-check", "-q"]
        subprocess.run([*pip, "install", "--upgrade", "pip"], check=True)
        try:
            subprocess.run([*pip, "install", f"arize-phoenix=={PHOENIX_VERSION}"], check=True)
        except subprocess.CalledProcessError:
            shutil.rmtree(venv, ignore_errors=True)
            raise
    return exe


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get_json(url: str, timeout: float = 10.0) -> Any:
    with urllib.request.urlopen(url, timeout=timeout) as resp:
        return json.loads(resp.read())


class Phoenix:
    """A running Phoenix server (see the module docstring for the interface)."""

    def __init__(self, exe: Path, workdir: Path):
        self.exe = exe
        self.workdir = workdir
        self.port = free_port()
        self.grpc_port = free_port()
        while self.grpc_port == self.port:
            self.grpc_port = free_port()
        self.http_endpoint = f"http://127.0.0.1:{self.port}"
        self.grpc_endpoint = f"http://127.0.0.1:{self.grpc_port}"
        self.log_path = workdir / "phoenix.log"
        self.proc: subprocess.Popen[bytes] | None = None

    # --- lifecycle -------------------------------------------------------------------------

    def start(self, timeout: float = READY_TIMEOUT) -> Phoenix:
        env = dict(os.environ)
        for key in [k for k in env if k.startswith(("OTEL_", "PHOENIX_"))]:
            del env[key]  # the tests' own settings must not configure the receiver
        env.update(
            PHOENIX_WORKING_DIR=str(self.workdir),
            PHOENIX_HOST="127.0.0.1",
            PHOENIX_PORT=str(self.port),
            PHOENIX_GRPC_PORT=str(self.grpc_port),
            PHOENIX_TELEMETRY_ENABLED="false",
            PHOENIX_ALLOW_EXTERNAL_RESOURCES="false",
        )
        env.pop("PYTHONPATH", None)
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                [str(self.exe), "serve"],
                env=env,
                cwd=self.workdir,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"phoenix exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.http_endpoint}/readyz", timeout=5) as resp:
                    if resp.status == 200:
                        return self
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"phoenix not ready after {timeout:.0f}s:\n{self.log_tail()}")

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    # --- for tests -------------------------------------------------------------------------

    def otlp_env(self, protocol: str = "http/protobuf") -> dict[str, str]:
        """Environment variables that point an OTLP exporter at this server."""
        endpoint = self.grpc_endpoint if protocol == "grpc" else self.http_endpoint
        return {"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_EXPORTER_OTLP_PROTOCOL": protocol}

    def spans(
        self, trace_id: str, project: str = "default", expect: int = 1, timeout: float = 60.0
    ) -> list[dict[str, Any]]:
        """The spans of one trace (32 hex), polled until at least ``expect`` have arrived."""
        deadline = time.monotonic() + timeout
        found: list[dict[str, Any]] = []
        while True:
            with contextlib.suppress(urllib.error.HTTPError, urllib.error.URLError, OSError, ValueError):
                found = self._fetch(trace_id, project)
            if len(found) >= expect:
                return found
            if time.monotonic() >= deadline:
                raise AssertionError(
                    f"phoenix: {len(found)} of {expect} spans of trace {trace_id} in project {project!r} "
                    f"after {timeout:.0f}s"
                )
            time.sleep(0.5)

    def _fetch(self, trace_id: str, project: str) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        cursor = None
        while True:
            url = f"{self.http_endpoint}/v1/projects/{project}/spans?trace_id={trace_id}&limit=1000"
            if cursor:
                url += f"&cursor={cursor}"
            page = _get_json(url)
            out.extend(page.get("data") or [])
            cursor = page.get("next_cursor")
            if not cursor:
                return out


@pytest.fixture(scope="session")
def phoenix() -> Iterator[Phoenix]:
    """A Phoenix server for the whole test session (installed if needed; stopped with SIGTERM)."""
    exe = ensure_installed()
    with tempfile.TemporaryDirectory(prefix="phoenix-") as tmp:
        server = Phoenix(exe, Path(tmp))
        try:
            server.start()
        except RuntimeError:
            server.stop()
            server = Phoenix(exe, Path(tmp))  # e.g. a port taken between choosing and binding
            server.start()
        try:
            yield server
        finally:
            server.stop()


def main(argv: list[str]) -> int:
    if argv[:1] == ["install"]:
        print(ensure_installed())
        return 0
    if argv[:1] == ["serve"]:  # start one by hand, for poking at it
        with tempfile.TemporaryDirectory(prefix="phoenix-") as tmp:
            server = Phoenix(ensure_installed(), Path(tmp)).start()
            print(f"http {server.http_endpoint}  grpc {server.grpc_endpoint}  (Ctrl-C stops)", flush=True)
            try:
                server.proc.wait()  # type: ignore[union-attr]
            except KeyboardInterrupt:
                server.stop()
        return 0
    print("usage: python -m tests.services.phoenix install|serve", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
