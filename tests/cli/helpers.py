"""Running the command line as a user does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

CLI = [sys.executable, "-m", "otel_agent_trace.cli.main"]
# What a terminal acts on: ESC, BEL, the C1 CSI/OSC introducers.
RAW_CONTROLS = ("\x1b", "\x07", "\x9b", "\x9d")


def cli(
    *args: str, cwd: Path | None = None, timeout: float = 60, **kwargs: Any
) -> subprocess.CompletedProcess[str]:
    """The ``otel-agent-trace`` command, as a user runs it (output to a pipe)."""
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=timeout, cwd=cwd, **kwargs)
