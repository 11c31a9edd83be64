"""Writing the session ZIP at exit: MB of session per second, this tree's ``recording/archive``
side by side with another commit's (default ``5c6c48c``, the code before issue 12's "Exit" goal).

A session of ``--size-mb`` (default 250) is recorded once by the real recorder through the public
API (conversation turns: a user message, a tool call, an assistant message; a snapshot every
``--every`` turns, default 50, naming the last ``--window`` messages, default 40; ``--every 1`` is
the shape of a zero-code agent, whose every model call ends with an automatic snapshot) and kept under
``~/.cache/otel-agent-trace/bench-zip/`` (made again when missing). Each measurement exports its
ZIP in a fresh interpreter (``export_zip`` of the code under test, the session file hard-linked
into a new directory), in turn old/new for ``--rounds`` rounds; the median is reported, wall and
CPU time (the exporting process's, all its threads: less sensitive to a busy machine), with the
load average before and after. The new ZIP is then read back with ``load_session`` (the reader's
caps) and its snapshots compared with those ``load_session`` builds from the JSONL and reads from
the old code's ZIP (``snapshots.json`` itself may differ in shape: format 2 names the messages by
id); its ``resume.json`` is compared with the old code's byte for byte, and its ``metadata.json``
entry count.

The session is exported as at the recording process's exit: with what its writer knew of the
file (the bytes it wrote, where its snapshot lines are; saved beside the session when it is
recorded), unless ``--scan`` (the file scanned as a child process's file is).

    python benchmarks/bench_zip.py                        # 250 MB, 3 rounds, against 5c6c48c
    python benchmarks/bench_zip.py --size-mb 1000 --rounds 2 --json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CACHE = Path.home() / ".cache" / "otel-agent-trace" / "bench-zip"

_TURNS = """
import json, os, random, sys, time
import otel_agent_trace as oat
target, directory, window, every = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
rng = random.Random(12)
words = [f"w{rng.randrange(16**6):x}" for _ in range(20000)]

@oat.tool
def lookup(query: str) -> str:
    return " ".join(rng.choices(words, k=60))

def record(s):
    history = []
    path = s.files[0]
    turn = 0
    while os.path.getsize(path) < target:
        for _ in range(every):
            user = {"role": "user", "content": " ".join(rng.choices(words, k=150))}
            oat.record_message("user", user["content"])
            lookup(user["content"][:200])
            answer = {"role": "assistant", "content": " ".join(rng.choices(words, k=300))}
            oat.record_message("assistant", answer["content"])
            history += [user, answer]
            turn += 1
        oat.snapshot(f"turn {turn}", messages=history[-window:], system_prompt="You are a bench agent.")
    return path
"""

_GENERATE = (
    _TURNS
    + """
with oat.session("bench-zip", directory=directory) as s:
    path = record(s)
w = s._recorder.tiers[0].writer  # what the writer knows of the file, as export_zip finds it at exit
known = {k: getattr(w, k) for k in ("entries", "written", "failed", "partial")}
known.update(snapshot_offsets=list(w.snapshot_offsets), snapshot_lines=list(w.snapshot_lines))
with open(str(path)[: -len(".jsonl")] + ".writer.json", "w") as out:
    json.dump(known, out)
print(path)
"""
)

# --live: the session recorded and stopped as an agent's is (the ZIP written by stop(), with what
# the code under test does while the session runs), both timed.
_LIVE = (
    _TURNS
    + """
s = oat.session("bench-zip", directory=directory).start()
t, cpu = time.perf_counter(), time.process_time()
path = record(s)
recorded, recorded_cpu = time.perf_counter() - t, time.process_time() - cpu
size = os.path.getsize(path)
t, cpu = time.perf_counter(), time.process_time()
zips = s.stop()
print(json.dumps({"record_s": recorded, "record_cpu": recorded_cpu, "stop_s": time.perf_counter() - t,
                  "stop_cpu": time.process_time() - cpu, "bytes": size, "zip": zips[0], "jsonl": str(path)}))
"""
)

_EXPORT = """
import json, sys, time, types
from array import array
from pathlib import Path
import orjson
from otel_agent_trace.recording.archive import export_zip
path = Path(sys.argv[1])
first = orjson.loads(path.open("rb").readline())
stopped = int(sys.argv[2])
recorder = types.SimpleNamespace(
    session_id=first["session_id"], name="bench-zip", started_ns=first["ts"], stopped_ns=stopped,
    counts={}, user_metadata={}, is_child=False,
    env=types.SimpleNamespace(localtime=time.localtime, clock=time.time_ns),
)
known = json.loads(Path(sys.argv[3]).read_text()) if sys.argv[3] else {}
for key in ("snapshot_offsets", "snapshot_lines"):
    if key in known:
        known[key] = array("q", known[key])
writer = types.SimpleNamespace(path=path, tier=first.get("tier", "trace"), **known)
t, cpu = time.perf_counter(), time.process_time()
out = export_zip(recorder, writer)
print(time.perf_counter() - t, time.process_time() - cpu, out)
"""


def _known(session: Path) -> Path:
    """What the writer knew of ``session`` when the recording stopped (saved beside it)."""
    return session.with_suffix(".writer.json")


def _session(size_mb: int, window: int, every: int = 50) -> Path:
    name = f"{size_mb}mb" + (f"-w{window}" if window != 40 else "") + (f"-e{every}" if every != 50 else "")
    directory = CACHE / name
    found = sorted(p for p in directory.glob("session-*.jsonl") if p.name.count(".") == 1)
    if found and _known(found[0]).exists():
        return found[0]
    for old in found:  # made before the writer's knowledge was saved: made again
        old.unlink()
    directory.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, AGENT_TRACE_ZIP="0", OTEL_SDK_DISABLED="false")
    out = subprocess.run(
        [sys.executable, "-c", _GENERATE, str(size_mb << 20), str(directory), str(window), str(every)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    return Path(out.stdout.strip().splitlines()[-1])


def _old_tree(commit: str) -> Path:
    tree = Path(tempfile.gettempdir()) / f"otel-agent-trace-{commit}"
    if not (tree / "otel_agent_trace").is_dir():
        tree.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "archive", commit, "otel_agent_trace"], cwd=REPO, check=True, capture_output=True
        )
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    return tree


def _export(session: Path, pythonpath: Path, work: Path, known: str) -> tuple[float, float, Path]:
    work.mkdir(parents=True)
    linked = work / session.name
    os.link(session, linked)
    stopped = str(os.stat(session).st_mtime_ns)
    env = dict(os.environ, PYTHONPATH=str(pythonpath))
    out = subprocess.run(
        [sys.executable, "-c", _EXPORT, str(linked), stopped, known],
        env=env,
        check=True,
        capture_output=True,
        text=True,
        cwd=work,
    )
    seconds, cpu, path = out.stdout.split()
    return float(seconds), float(cpu), Path(path)


def _live(size_mb: int, window: int, every: int, pythonpath: Path, work: Path) -> dict[str, Any]:
    """A session of ``size_mb`` recorded and stopped in a fresh interpreter with the code at
    ``pythonpath``: the recording's and the stop's wall and CPU seconds, its files."""
    work.mkdir(parents=True)
    env = dict(os.environ, PYTHONPATH=str(pythonpath), OTEL_SDK_DISABLED="false")
    env.pop("AGENT_TRACE_ZIP", None)
    out = subprocess.run(
        [sys.executable, "-c", _LIVE, str(size_mb << 20), str(work), str(window), str(every)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
        cwd=work,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _live_main(args: argparse.Namespace) -> None:
    """``--live``: stop() of a session being recorded, this tree against ``--against``."""
    old = _old_tree(args.against)
    runs: dict[str, list[dict[str, Any]]] = {"old": [], "new": []}
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="bench-zip-live-") as tmp:
        for r in range(args.rounds):
            for label, pythonpath in (("old", old), ("new", REPO)):
                run = _live(args.size_mb, args.window, args.every, pythonpath, Path(tmp) / f"{label}{r}")
                with zipfile.ZipFile(run["zip"]) as zf:  # a whole ZIP, the session in it
                    whole = zf.testzip() is None
                    run["zip_ok"] = whole and zf.read("events.jsonl") == Path(run["jsonl"]).read_bytes()
                for path in (run["zip"], run["jsonl"]):
                    os.unlink(path)
                runs[label].append(run)
    load_after = os.getloadavg()
    result: dict[str, Any] = {
        "mode": "live",
        "size_mb": args.size_mb,
        "window": args.window,
        "every": args.every,
        "rounds": args.rounds,
        "python": platform.python_version(),
        "against": args.against,
        "load_average": {"before": load_before, "after": load_after},
    }
    for label, rows in runs.items():
        mb = statistics.median(r["bytes"] for r in rows) / 1e6
        stop = [r["stop_s"] for r in rows]
        result[label] = {
            "session_mb": round(mb, 1),
            "stop_seconds": round(statistics.median(stop), 3),
            "stop_seconds_min_max": [round(min(stop), 3), round(max(stop), 3)],
            "stop_mb_per_s": round(mb / statistics.median(stop), 1),
            "stop_cpu_seconds": round(statistics.median(r["stop_cpu"] for r in rows), 3),
            "record_seconds": round(statistics.median(r["record_s"] for r in rows), 2),
            "record_cpu_seconds": round(statistics.median(r["record_cpu"] for r in rows), 2),
            "zips_whole": all(r["zip_ok"] for r in rows),
            "raw": rows,
        }
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(
        f"sessions of {args.size_mb} MB recorded and stopped, {args.rounds} rounds, window {args.window}, "
        f"a snapshot every {args.every} turns"
    )
    head = f"{'code':<12}{'stop s':>9}{'MB/s':>9}{'stop CPU s':>11}{'record s':>10}{'record CPU s':>13}"
    print(head + "  stop min-max")
    for label in ("old", "new"):
        row = result[label]
        name = args.against if label == "old" else "this tree"
        low, high = row["stop_seconds_min_max"]
        print(
            f"{name:<12}{row['stop_seconds']:>9.3f}{row['stop_mb_per_s']:>9.1f}{row['stop_cpu_seconds']:>11.3f}"
            f"{row['record_seconds']:>10.2f}{row['record_cpu_seconds']:>13.2f}  {low:.3f}-{high:.3f}"
        )
    print(
        "every ZIP whole (testzip) and holding the session:",
        result["old"]["zips_whole"] and result["new"]["zips_whole"],
    )
    before, after = (" ".join(f"{x:.2f}" for x in load) for load in (load_before, load_after))
    print(f"load average before / after: {before} / {after}")


def _members(path: Path) -> list[dict[str, object]]:
    with zipfile.ZipFile(path) as zf:
        return [
            {
                "name": i.filename,
                "size": i.file_size,
                "compressed": i.compress_size,
                "method": "stored" if i.compress_type == zipfile.ZIP_STORED else "deflated",
            }
            for i in zf.infolist()
        ]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size-mb", type=int, default=250)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--window", type=int, default=40, help="messages each snapshot names (its snapshots.json share)"
    )
    parser.add_argument(
        "--every",
        type=int,
        default=50,
        help="turns between snapshots (1: a zero-code agent's: every model call's)",
    )
    parser.add_argument("--against", default="5c6c48c", help="the commit to compare with")
    parser.add_argument(
        "--scan",
        action="store_true",
        help="export without what the writer knew of the file (as for a child process's file)",
    )
    parser.add_argument(
        "--live",
        action="store_true",
        help="time stop() of a session being recorded (the ZIP as an agent's exit writes it)",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.live:
        _live_main(args)
        return

    session = _session(args.size_mb, args.window, args.every)
    known = "" if args.scan else str(_known(session))
    size_mb = session.stat().st_size / 1e6
    load_before = os.getloadavg()
    old = _old_tree(args.against)
    times: dict[str, list[float]] = {"old": [], "new": []}
    cpus: dict[str, list[float]] = {"old": [], "new": []}
    zips: dict[str, Path] = {}
    with tempfile.TemporaryDirectory(prefix="bench-zip-") as tmp:
        for r in range(args.rounds):
            for label, pythonpath in (("old", old), ("new", REPO)):
                seconds, cpu, path = _export(session, pythonpath, Path(tmp) / f"{label}{r}", known)
                times[label].append(seconds)
                cpus[label].append(cpu)
                zips[label] = path
        from otel_agent_trace.offline import load_session

        load_after = os.getloadavg()
        loaded = load_session(zips["new"])
        same_snapshots = loaded.snapshots == load_session(session).snapshots
        # snapshots.json's shape may differ (format 2 names messages by id): compared as loaded.
        same_loaded = load_session(zips["old"]).snapshots == loaded.snapshots
        with zipfile.ZipFile(zips["old"]) as old_zip, zipfile.ZipFile(zips["new"]) as new_zip:
            same_bytes = old_zip.read("resume.json") == new_zip.read("resume.json")
            same_members = same_loaded and (
                json.loads(old_zip.read("metadata.json"))["total_events"]
                == json.loads(new_zip.read("metadata.json"))["total_events"]
            )
            snapshot_bytes = {
                label: zf.getinfo("snapshots.json").file_size
                for label, zf in (("old", old_zip), ("new", new_zip))
            }
        result = {
            "session_mb": round(size_mb, 1),
            "entries": len(loaded.events),
            "snapshots": len(loaded.snapshots),
            "rounds": args.rounds,
            "window": args.window,
            "python": platform.python_version(),
            "against": args.against,
            "load_average": {"before": load_before, "after": load_after},
            **{
                label: {
                    "seconds": round(statistics.median(ts), 3),
                    "seconds_min_max": [round(min(ts), 3), round(max(ts), 3)],
                    "mb_per_s": round(size_mb / statistics.median(ts), 1),
                    "cpu_seconds": round(statistics.median(cpus[label]), 3),
                    "mb_per_cpu_s": round(size_mb / statistics.median(cpus[label]), 1),
                    "zip_mb": round(zips[label].stat().st_size / 1e6, 1),
                    "members": _members(zips[label]),
                }
                for label, ts in times.items()
            },
            "new_zip_loads_and_snapshots_match_the_jsonl": same_snapshots,
            "snapshots_as_loaded_and_entry_count_as_the_old_code": same_members,
            "resume_byte_for_byte_as_the_old_code": same_bytes,
            "snapshots_json_bytes": snapshot_bytes,
        }
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(
        f"session {result['session_mb']} MB, {result['entries']} entries, {result['snapshots']} snapshots "
        f"of {args.window} messages"
    )
    header = f"{'code':<12}{'seconds':>10}{'MB/s':>10}{'CPU s':>10}{'MB/CPU s':>10}{'ZIP MB':>10}"
    print(header + "  seconds min-max")
    for label in ("old", "new"):
        row = result[label]
        name = args.against if label == "old" else "this tree"
        low, high = row["seconds_min_max"]
        print(
            f"{name:<12}{row['seconds']:>10.3f}{row['mb_per_s']:>10.1f}{row['cpu_seconds']:>10.3f}"
            f"{row['mb_per_cpu_s']:>10.1f}{row['zip_mb']:>10.1f}  {low:.3f}-{high:.3f}"
        )
    print("new ZIP loads with load_session; its snapshots equal the JSONL's:", same_snapshots)
    print("snapshots as load_session reads them from the ZIP, entry count, as the old code's:", same_members)
    print("resume.json byte for byte as the old code's:", same_bytes)
    print("snapshots.json bytes, old / new:", snapshot_bytes["old"], "/", snapshot_bytes["new"])
    before, after = (" ".join(f"{x:.2f}" for x in load) for load in (load_before, load_after))
    print(f"load average before / after: {before} / {after}")


if __name__ == "__main__":
    main()
