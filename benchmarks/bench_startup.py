"""Start-up cost of the plug-in: ``opentelemetry-instrument python -c pass`` with otel-agent-trace
against opentelemetry-distro alone, each in its own virtualenv, exporters off, paired runs
alternating in one process (the machine is shared and noisy: read the median ratio).

Every child Python process of an agent run under ``opentelemetry-instrument`` pays this.

    python benchmarks/bench_startup.py --rounds 20          # venvs cached in ~/.cache/otel-agent-trace
    python benchmarks/bench_startup.py --instructions       # + instructions under valgrind (exact)

``--instructions`` counts the instructions of one start-up of a child Python process (what an
agent's subprocesses run: ``python -c pass`` with the auto-instrumentation ``sitecustomize`` on
``PYTHONPATH``, as ``opentelemetry-instrument`` leaves it) with ``valgrind --tool=callgrind``:
the same count every run whatever else the machine does, so small changes are seen.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "otel-agent-trace" / "bench-startup"
QUIET = {
    "OTEL_TRACES_EXPORTER": "none",
    "OTEL_METRICS_EXPORTER": "none",
    "OTEL_LOGS_EXPORTER": "none",
    "PIP_DISABLE_PIP_VERSION_CHECK": "1",
}


def _venv(name: str, packages: list[str], *, refresh: bool) -> Path:
    path = CACHE / name
    marker = path / ".installed"
    if refresh or not marker.exists():
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(path)], check=True)
        pip = [str(path / "bin" / "python"), "-m", "pip", "install", "-q"]
        subprocess.run([*pip, "--upgrade", "pip"], check=True)
        subprocess.run([*pip, *packages], check=True)
        marker.write_text(" ".join(packages))
    return path


def _run(venv: Path, env: dict[str, str]) -> tuple[float, float]:
    """Wall time and CPU time (user + system, the process and its children) of one start-up.
    CPU time is what the start-up costs; on a shared machine it varies far less than wall time."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        [str(venv / "bin" / "opentelemetry-instrument"), str(venv / "bin" / "python"), "-c", "pass"],
        check=True,
        env=env,
        cwd=CACHE,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def _instructions(venv: Path, env: dict[str, str]) -> int:
    site = next(
        (venv / "lib").glob("python3*/site-packages/opentelemetry/instrumentation/auto_instrumentation")
    )
    out = CACHE / f"callgrind.{venv.name}"
    subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            f"--callgrind-out-file={out}",
            str(venv / "bin" / "python"),
            "-c",
            "pass",
        ],
        check=True,
        env=dict(env, PYTHONPATH=str(site), PYTHONHASHSEED="0"),
        cwd=CACHE,
        capture_output=True,
    )
    for line in out.read_text().splitlines():
        if line.startswith("summary:"):
            return int(line.split()[1])
    raise RuntimeError(f"no summary in {out}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--refresh", action="store_true", help="rebuild the virtualenvs")
    parser.add_argument("--instructions", action="store_true", help="also count instructions (valgrind)")
    args = parser.parse_args()
    CACHE.mkdir(parents=True, exist_ok=True)
    distro = _venv("distro", ["opentelemetry-distro", "opentelemetry-exporter-otlp"], refresh=args.refresh)
    # Ours installed from this checkout (not editable: what users get), refreshed every run.
    ours = _venv("ours", [str(ROOT)], refresh=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "AGENT_TRACE_"))}
    env.update(QUIET)
    for venv in (distro, ours):  # warm the page cache and the bytecode caches
        for _ in range(3):
            _run(venv, env)
    pairs = []
    for i in range(args.rounds):
        order = (distro, ours) if i % 2 == 0 else (ours, distro)
        times = {venv: _run(venv, env) for venv in order}
        pairs.append((times[distro], times[ours]))
    print(f"rounds: {args.rounds} (paired, alternating order); median of each")
    print(f"{'':28} {'wall ms':>9} {'CPU ms':>9}")
    for label, side in (("opentelemetry-distro alone", 0), ("otel-agent-trace", 1)):
        wall = statistics.median(p[side][0] for p in pairs)
        cpu = statistics.median(p[side][1] for p in pairs)
        print(f"{label:28} {wall * 1000:9.1f} {cpu * 1000:9.1f}")
    wall_ratio = statistics.median(p[1][0] / p[0][0] for p in pairs)
    cpu_ratio = statistics.median(p[1][1] / p[0][1] for p in pairs)
    print(f"{'ratio (median of pairs)':28} {wall_ratio:8.3f}x {cpu_ratio:8.3f}x")
    if args.instructions:
        d, o = _instructions(distro, env), _instructions(ours, env)
        print(f"instructions, one child process: distro {d / 1e6:.1f} M, ours {o / 1e6:.1f} M: {o / d:.3f}x")


if __name__ == "__main__":
    main()
