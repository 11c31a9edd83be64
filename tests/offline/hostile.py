"""Hostile and broken session files, built for real on disk (the cases of issue 13)."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import warnings
import zipfile
from pathlib import Path

ROOT = {
    "id": "abcd0000-0000",
    "parent_id": "",
    "type": "session.start",
    "layer": "agent",
    "ts": 1_795_942_143_798_726_429,
    "session_id": "session-20261129-084903-abcd0000",
    "tier": "trace",
    "metadata": {"format": "otel-agent-trace/session", "format_version": "1.1"},
}


def entry(seq: int, kind: str = "span.start", **fields: object) -> dict[str, object]:
    out: dict[str, object] = {
        "id": f"abcd0000-{seq:04d}",
        "parent_id": "abcd0000-0000",
        "type": kind,
        "layer": "agent",
        "ts": ROOT["ts"] + seq,  # type: ignore[operator]
    }
    if kind.startswith("span."):
        out.update(name=f"s{seq}", trace_id="0" * 32, span_id=f"{seq:016x}", parent_span_id=None)
    out.update(fields)
    return out


def jsonl(path: Path, *entries: dict[str, object]) -> Path:
    path.write_bytes(b"".join(json.dumps(e).encode() + b"\n" for e in entries))
    return path


def our_zip(path: Path, events: bytes, *, compression: int = zipfile.ZIP_DEFLATED, **members: bytes) -> Path:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Duplicate name" for the two-events.jsonl case
        with zipfile.ZipFile(path, "w", compression) as zf:
            zf.writestr("events.jsonl", events)
            for name, data in members.items():
                zf.writestr(name.replace("__", "/"), data)
    return path


def patch_zip_headers(path: Path, *, flags: int | None = None, method: int | None = None) -> Path:
    """Rewrite the general-purpose flags or compression method in every local and central header."""
    data = bytearray(path.read_bytes())
    for sig, flag_at, method_at in ((b"PK\x03\x04", 6, 8), (b"PK\x01\x02", 8, 10)):
        at = data.find(sig)
        while at >= 0:
            if flags is not None:
                struct.pack_into("<H", data, at + flag_at, flags)
            if method is not None:
                struct.pack_into("<H", data, at + method_at, method)
            at = data.find(sig, at + 4)
    path.write_bytes(bytes(data))
    return path


def deflate_bomb(path: Path, member: str, size: int, fill: bytes = b"a", others: bool = True) -> Path:
    """A ZIP whose ``member`` inflates to ``size`` bytes of ``fill`` (no newline) from ~size/1000."""
    chunk = fill * (1 << 20)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        if member != "events.jsonl" and others:
            zf.writestr("events.jsonl", json.dumps(ROOT) + "\n")
        with zf.open(member, "w", force_zip64=True) as out:
            for _ in range(size >> 20):
                out.write(chunk)
    return path


def build(directory: Path) -> dict[str, Path]:
    """Every hostile input of issue 13's loading part: name → path. Each must be refused with a
    ``SessionFormatError`` naming the file (and line, for a line)."""
    d = directory
    d.mkdir(parents=True, exist_ok=True)
    root = json.dumps(ROOT).encode() + b"\n"
    cases: dict[str, Path] = {}
    cases["events_bomb_no_newline"] = deflate_bomb(d / "bomb.zip", "events.jsonl", 2 << 30)
    cases["metadata_bomb"] = deflate_bomb(d / "meta-bomb.zip", "metadata.json", 512 << 20, b" ")
    cases["snapshots_bomb"] = deflate_bomb(d / "snap-bomb.zip", "snapshots.json", 512 << 20, b"[")
    lying = deflate_bomb(d / "lying.zip", "events.jsonl", 256 << 20, b"b")
    data = bytearray(lying.read_bytes())  # the central directory claims 2 GB of compressed data
    central = data.find(b"PK\x01\x02")
    struct.pack_into("<I", data, central + 20, 0x7FFF0000)
    lying.write_bytes(bytes(data))
    cases["lying_compressed_size"] = lying
    cases["newlines_zip"] = our_zip(d / "newlines.zip", b"\n" * (250 << 20))
    stored_line = b'{"id": "' + b"x" * (40 << 20) + b'"}'
    cases["long_line_stored_zip"] = our_zip(d / "long.zip", stored_line, compression=zipfile.ZIP_STORED)
    (d / "long.jsonl").write_bytes(root + stored_line + b"\n" + root)
    cases["long_line_jsonl"] = d / "long.jsonl"
    big_meta = b'{"a": "' + b"y" * (70 << 20) + b'"}'
    cases["metadata_over_cap"] = our_zip(
        d / "bigmeta.zip", root, compression=zipfile.ZIP_STORED, **{"metadata.json": big_meta}
    )
    (d / "zero.jsonl").symlink_to("/dev/zero")
    cases["dev_zero_jsonl"] = d / "zero.jsonl"
    (d / "zero.zip").symlink_to("/dev/zero")
    cases["dev_zero_zip"] = d / "zero.zip"
    os.mkfifo(d / "fifo.jsonl")
    cases["fifo"] = d / "fifo.jsonl"
    (d / "dir.jsonl").mkdir()
    cases["directory"] = d / "dir.jsonl"
    (d / "mem.jsonl").symlink_to("/proc/self/mem")
    cases["unreadable"] = d / "mem.jsonl"
    cases["encrypted_zip"] = patch_zip_headers(our_zip(d / "enc.zip", root), flags=0x1)
    cases["unknown_compression"] = patch_zip_headers(our_zip(d / "ppmd.zip", root), method=98)
    cases["two_events_members"] = our_zip(d / "two.zip", root, **{"events.jsonl": root})
    with zipfile.ZipFile(d / "noevents.zip", "w") as zf:
        zf.writestr("metadata.json", "{}")
    cases["no_events_member"] = d / "noevents.zip"
    cases["snapshots_42"] = our_zip(d / "snap42.zip", root, **{"snapshots.json": b"42"})
    cases["metadata_list_zip"] = our_zip(d / "metalist.zip", root, **{"metadata.json": b"[1]"})
    cases["newer_version_zip"] = our_zip(
        d / "v9.zip", root, **{"metadata.json": b'{"format_version": "9.0"}'}
    )
    latin = json.dumps(entry(1, "message", role="user")).encode().replace(b"user", b"us\xe9r")
    (d / "latin1.jsonl").write_bytes(root + latin + b"\n")
    cases["wrong_encoding"] = d / "latin1.jsonl"
    (d / "utf16.jsonl").write_bytes((json.dumps(ROOT) + "\n").encode("utf-16"))
    cases["utf16"] = d / "utf16.jsonl"
    newer = dict(ROOT, metadata={"format_version": "2.0"})
    cases["newer_version"] = jsonl(d / "v2.jsonl", newer)
    cases["ts_nan"] = jsonl(d / "nan.jsonl", ROOT, entry(1, ts="NaN"))
    span = entry(1)
    del span["span_id"]
    cases["span_without_span_id"] = jsonl(d / "nospan.jsonl", ROOT, span)
    cases["span_id_list"] = jsonl(d / "spanlist.jsonl", ROOT, entry(1, "span.end", span_id=["a", "b"]))
    cases["metadata_list"] = jsonl(d / "metalist.jsonl", dict(ROOT, metadata=[1, 2]))
    cases["message_ids_int"] = jsonl(d / "msgids.jsonl", ROOT, entry(1, "snapshot", message_ids=7))
    cases["status_list"] = jsonl(d / "status.jsonl", ROOT, entry(1, "span.end", status=["OK"]))
    cases["corrupt_line"] = jsonl(d / "corrupt.jsonl", ROOT)
    with open(cases["corrupt_line"], "ab") as out:
        out.write(b"{oops\n" + root)
    (d / "empty.jsonl").write_bytes(b"")
    cases["empty"] = d / "empty.jsonl"
    (d / "blank.jsonl").write_bytes(b"\n \n\t\n")
    cases["blank"] = d / "blank.jsonl"
    (d / "emptydir").mkdir()
    cases["empty_directory"] = d / "emptydir"
    return cases


# --- issue 39: lines and members whose values, not their bytes, would fill memory ----------------


def _dense_list(size: int) -> bytes:
    """``[{},{},…]`` of about ``size`` bytes: a value every 3 bytes, ~100 bytes each once parsed."""
    return b"[" + b"{}," * (size // 3 - 1) + b"{}]"


def build_dense(directory: Path) -> dict[str, Path]:
    """The memory cases of issue 39 (name → path): lines and ZIP members under their byte caps
    whose JSON values would take 1-2.5 GB once parsed, and 1 M span starts never ended."""
    d = directory
    d.mkdir(parents=True, exist_ok=True)
    root = json.dumps(ROOT).encode() + b"\n"
    dense = _dense_list(31 << 20)
    start = json.dumps(entry(1)).encode() + b"\n"
    end = json.dumps(entry(2, "span.end", span_id=f"{1:016x}", duration_ns=1, content={"tool_result": 0}))
    end_line = end.encode().replace(b'"tool_result": 0', b'"tool_result": ' + dense) + b"\n"
    cases: dict[str, Path] = {}
    (d / "dense-end.jsonl").write_bytes(root + start + end_line)
    cases["dense_span_end"] = d / "dense-end.jsonl"
    with open(d / "dense-starts.jsonl", "wb") as out:
        out.write(root)
        for seq in (1, 2, 3):
            line = json.dumps(entry(seq, attributes={"x": 0})).encode()
            out.write(line.replace(b'"x": 0', b'"x": ' + dense) + b"\n")
    cases["dense_unfinished_starts"] = d / "dense-starts.jsonl"
    cases["dense_snapshots_zip"] = our_zip(
        d / "dense-snap.zip",
        root,
        compression=zipfile.ZIP_STORED,
        **{"snapshots.json": _dense_list(60_000_000)},
    )
    cases["million_unfinished"] = unfinished_spans(d / "unfinished.jsonl", 1_000_000, 231)
    return cases


def unfinished_spans(path: Path, count: int, line_bytes: int) -> Path:
    """A session of ``count`` span starts (about ``line_bytes`` each) that never end: a crashed run."""
    sample = json.dumps(entry(0), separators=(",", ":")).encode()
    line = sample.replace(b'"abcd0000-0000"', b'"abcd0000-%07d"', 1)
    line = line.replace(b'"span_id":"0000000000000000"', b'"span_id":"%016x"').replace(b'"s0"', b'"s%07d"')
    pad = line_bytes - len(line % (0, 0, 0)) - 1
    line = line.replace(b'"s%07d"', b'"s%07d' + b"p" * max(pad, 0) + b'"') + b"\n"
    with open(path, "wb", buffering=1 << 22) as out:
        out.write(json.dumps(ROOT).encode() + b"\n")
        for seq in range(1, count + 1):
            out.write(line % (seq, seq, seq))
    return path


# --- peak memory of a reader, measured in a fresh process --------------------------------------

# Linux carries a process's peak RSS across fork and exec, so a worker started straight from
# pytest would report pytest's peak: a small launcher starts it and reads its peak afterwards.
PROBE = """
import json, resource, subprocess, sys
done = subprocess.run([sys.executable, "-c", *sys.argv[1:]], capture_output=True, text=True)
if done.returncode:
    sys.exit(done.stderr)
out = json.loads(done.stdout)
out["max_rss_mb"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(json.dumps(out))
"""

# Every reader of a session file: the two Python ones and the commands that read one.
READERS = (
    "load_session",
    "iter_entries",
    "analyze",
    "view",
    "view --html",
    "report",
    "diff",
    "export otlp-json",
    "replay",
    "fork",
)

_READ = """
import json, os, sys, warnings
name, path, work = sys.argv[1:4]
warnings.simplefilter("ignore")
out = os.fdopen(os.dup(1), "w")
err_path = os.path.join(work, "stderr.txt")
with open(os.devnull, "wb") as null, open(err_path, "wb") as err:
    os.dup2(null.fileno(), 1)
    os.dup2(err.fileno(), 2)
good = os.path.join(work, "good.jsonl")
argv = {
    "analyze": ["analyze", path],
    "view": ["view", path],
    "view --html": ["view", "--html", os.path.join(work, "page.html"), path],
    "report": ["report", path],
    "diff": ["diff", good, path],
    "export otlp-json": ["export", "--format", "otlp-json", os.path.join(work, "otlp.json"), path],
    "replay": ["replay", path],
    "fork": ["fork", "--at", "abcd0000-0000", "--output", os.path.join(work, "fork.jsonl"), path],
}.get(name)
try:
    if name == "load_session":
        from otel_agent_trace.offline import load_session
        result = f"loaded {len(load_session(path).events)} entries"
    elif name == "iter_entries":
        from otel_agent_trace.offline import iter_entries
        result = f"read {sum(1 for _ in iter_entries(path))} entries"
    else:
        from otel_agent_trace.cli.main import main
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code
        sys.stderr.flush()
        with open(err_path, errors="replace") as told:
            last = [line for line in told.read().splitlines() if line.strip()][-1:]
        result = f"exit {code}: {last[0][:300] if last else ''}"
except Exception as exc:
    result = f"{type(exc).__name__}: {str(exc)[:300]}"
out.write(json.dumps({"result": result}))
out.flush()
"""


def peak_rss(reader: str, path: Path, work: Path, timeout: float = 600) -> dict[str, object]:
    """``{"result": …, "max_rss_mb": …}`` of ``reader`` (one of :data:`READERS`) reading ``path``
    in a fresh process (``work``: a directory for its output files)."""
    work.mkdir(parents=True, exist_ok=True)
    good = work / "good.jsonl"
    if not good.exists():
        jsonl(good, ROOT, entry(1, "message", role="user"))
    done = subprocess.run(
        [sys.executable, "-c", PROBE, _READ, reader, str(path), str(work)],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if done.returncode:
        raise RuntimeError(f"{reader} {path}: {done.stderr[-2000:]}")
    for produced in ("page.html", "otlp.json", "fork.jsonl"):
        (work / produced).unlink(missing_ok=True)
    return json.loads(done.stdout)
