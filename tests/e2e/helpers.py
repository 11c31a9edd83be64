"""Running agents under the real ``opentelemetry-instrument`` and checking what they leave."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from otel_agent_trace import session_format as fmt
from otel_agent_trace.offline import LoadedSession, load_session

REPO = Path(__file__).resolve().parents[2]
AGENTS = Path(__file__).resolve().parent / "agents"
DEMO_AGENT = REPO / "examples" / "demo_agent.py"
INSTRUMENT = str(Path(sys.executable).parent / "opentelemetry-instrument")


def clean_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The test process's environment without any OpenTelemetry or otel-agent-trace setting."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OTEL_", "AGENT_TRACE_")) and k not in ("PYTHONPATH", "TRACEPARENT")
    }
    # An internal error of ours fails the run under the tests (tests/conftest.py).
    env["AGENT_TRACE_INTERNAL_ERRORS"] = os.environ.get("AGENT_TRACE_INTERNAL_ERRORS", "")
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra or {})
    return env


def run_instrumented(
    script: Path | str,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    *args: str,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """``opentelemetry-instrument python script`` in ``cwd`` with a clean environment."""
    return subprocess.run(
        [INSTRUMENT, sys.executable, str(script), *args],
        cwd=cwd,
        env=clean_env(env),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def start_instrumented(
    script: Path | str, cwd: Path, env: Mapping[str, str] | None = None, *args: str
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [INSTRUMENT, sys.executable, str(script), *args],
        cwd=cwd,
        env=clean_env(env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def sessions_in(directory: Path, suffix: str = fmt.JSONL_SUFFIX) -> list[Path]:
    """Session files of the trace tier (not checkpoint, not child files) in ``directory``."""
    out = []
    for path in sorted(directory.glob(f"session-*{suffix}")):
        stem = path.name[: -len(suffix)]
        if stem.endswith(fmt.CHECKPOINT_SUFFIX) or ".p" in stem:
            continue
        out.append(path)
    return out


def only_session(directory: Path, suffix: str = fmt.JSONL_SUFFIX) -> Path:
    found = sessions_in(directory, suffix)
    assert len(found) == 1, f"expected one session{suffix} in {directory}, found {found}"
    return found[0]


def assert_one_tree(session: LoadedSession) -> None:
    """Every entry reaches the single root through parent links (no orphans, no cycles)."""
    root = session.events[0]
    assert root.type == fmt.SESSION_START and root.parent_id == ""
    by_id = {e.id: e for e in session.events}
    assert len(by_id) == len(session.events), "duplicate entry ids"
    roots = [e.id for e in session.events if not e.parent_id]
    assert roots == [root.id], f"several roots: {roots}"
    for event in session.events:
        seen = set()
        cur = event
        while cur.parent_id:
            assert cur.parent_id in by_id, f"{cur.id} ({cur.type}) has unknown parent {cur.parent_id}"
            assert cur.id not in seen, f"cycle at {cur.id}"
            seen.add(cur.id)
            cur = by_id[cur.parent_id]
        assert cur.id == root.id


def load(path: Path) -> LoadedSession:
    return load_session(path)


def stderr_problems(stderr: str) -> list[str]:
    """Lines of stderr that talk about exporters, collectors or failed connections."""
    words = ("export", "collector", "connection", "refused", "otlp", "4317", "4318", "traceback", "error")
    return [line for line in stderr.splitlines() if any(w in line.lower() for w in words)]
