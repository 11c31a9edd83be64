"""The demo agent with another script, for comparing two runs: it lists a folder more, skips
reading the file, its command fails (``python -c 'raise SystemExit(3)'``), then it reads a file
that is not there: the tool raises, the run ends with that error (the script catches it)."""

from __future__ import annotations

import sys
from pathlib import Path

EXAMPLES = Path.cwd() / "examples"  # the demo's folder, copied where the run is recorded
sys.path.insert(0, str(EXAMPLES))

import demo_agent  # noqa: E402  (found in the examples folder)

demo_agent.SCRIPT[:] = [
    {"tool": "list_files", "arguments": {"directory": str(EXAMPLES)}},
    {"tool": "list_files", "arguments": {"directory": str(EXAMPLES / "replay")}},
    {"tool": "run_command", "arguments": {"argv": [sys.executable, "-c", "raise SystemExit(3)"]}},
    {"tool": "read_file", "arguments": {"path": str(EXAMPLES / "missing.txt")}},
    {"answer": "never given"},
]
try:
    demo_agent.main()
except FileNotFoundError as exc:
    print(f"the agent failed: {exc.strerror}")
