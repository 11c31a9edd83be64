"""Tools of the scripted replay example, in a module of their own: tool replay re-runs them with
``--tools-from notes_tools`` (each recorded call selects its tool here by its recorded
``agent_trace.tool.import_path``, ``notes_tools:<name>``). The tools that write files or run
commands say so (``effects``): replay blocks them unless ``--allow-writes`` / ``--allow-shell``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import otel_agent_trace as oat


@oat.tool
def count_words(text: str) -> dict[str, int]:
    """Count the words and characters of a text."""
    return {"words": len(text.split()), "chars": len(text)}


@oat.tool
def read_note(path: str) -> str:
    """Read a note (a path relative to the working directory)."""
    return Path(path).read_text(encoding="utf-8")


@oat.tool(effects=("writes",))
def write_note(path: str, text: str) -> str:
    """Write a note (a path relative to the working directory)."""
    Path(path).write_text(text, encoding="utf-8")
    return f"wrote {len(text)} chars to {path}"


@oat.tool(effects=("shell",))
def python_version() -> str:
    """The Python version, asked of a child process."""
    done = subprocess.run([sys.executable, "--version"], capture_output=True, text=True, timeout=30)
    return done.stdout.strip().split()[0]


@oat.tool
def divide(a: float, b: float) -> float:
    """Divide two numbers."""
    return a / b
