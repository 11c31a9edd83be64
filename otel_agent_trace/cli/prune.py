"""``otel-agent-trace prune --older-than DURATION [DIR]``: delete old sessions' files.

Only files ``list`` recognises as session files (by name *and* content) directly inside DIR are
deleted, all the files of a session together; a session's age is that of its newest file, so a
session still being written is never old. Symbolic links, FIFOs, directories and anything else
are left alone, and nothing outside DIR is touched.

A session ZIP's temporary file (``.<session>.zip.<pid>.<random>.tmp``: a big session's ZIP is
copied while it runs) is left behind only when its process was killed (SIGKILL): it is deleted
with its session, once it is older than DURATION too and its process is gone.
"""

from __future__ import annotations

import argparse
import os
import re
import stat
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from otel_agent_trace import session_format as fmt
from otel_agent_trace.offline import terminal as term

from .listing import find_sessions, sessions_directory

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")
# A ZIP's temporary file (recording/zip_container.temporary): ".<ZIP name>.<pid>.<8 hex>.tmp"
_TEMPORARY = re.compile(r"^\.(?P<zip>[^/]+)\.(?P<pid>[0-9]+)\.[0-9a-f]{8}\.tmp$")


class Duration(float):
    """Seconds, remembering how the user wrote them."""

    text: str


def parse_duration(text: str) -> Duration:
    """``90s``, ``30m``, ``12h``, ``7d``, ``2w`` in seconds."""
    match = _DURATION.match(text)
    if match is None:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a number and a unit (s, m, h, d, w), e.g. 7d")
    seconds = Duration(float(match[1]) * _UNITS[match[2]])
    seconds.text = text.strip()
    return seconds


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "prune",
        help="delete sessions older than a duration",
        description="Delete the files of sessions whose newest file is older than DURATION. "
        "Exit codes: 0 ok, 1 some file could not be deleted, 2 bad input.",
    )
    p.add_argument(
        "directory", nargs="?", help="sessions directory (default: AGENT_TRACE_DIR or ./agent-sessions)"
    )
    p.add_argument(
        "--older-than", required=True, type=parse_duration, metavar="DURATION", help="e.g. 30m, 12h, 7d, 2w"
    )
    p.add_argument("--dry-run", action="store_true", help="say what would be deleted, delete nothing")
    p.add_argument(
        "--json",
        action="store_true",
        help="print one JSON document: the sessions whose files were (or, with --dry-run, would be) "
        "deleted, and the files that could not be",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    directory = sessions_directory(args.directory)
    cutoff = time.time() - args.older_than
    failed = 0
    answer: dict[str, Any] = {
        "directory": str(directory),
        "older_than_s": float(args.older_than),
        "dry_run": args.dry_run,
        "deleted": [],
        "not_deleted": [],
    }
    say: Callable[[str], None] = _quiet if args.json else print  # --json: the document says it all
    old = [group for group in find_sessions(directory) if group.mtime < cutoff]
    verb = "would delete" if args.dry_run else "deleted"
    for group in old:
        removed = []
        for path in group.files:
            if path.parent != directory:  # never outside DIR
                continue
            try:
                st = os.lstat(path)
                if not stat.S_ISREG(st.st_mode) or st.st_mtime >= cutoff:  # replaced or written since
                    continue
                if not args.dry_run:
                    os.unlink(path)
                removed.append(path.name)
            except FileNotFoundError:
                continue
            except OSError as exc:
                failed += 1
                answer["not_deleted"].append({"file": str(path), "error": exc.strerror})
                print(f"otel-agent-trace: {term.clean(path)}: not deleted ({exc.strerror})", file=sys.stderr)
        if removed:
            answer["deleted"].append({"session_id": group.session_id, "files": removed})
            say(f"{verb} {term.clean(group.session_id)}: {term.clean(', '.join(removed))}")
    young = {group.session_id for group in find_sessions(directory) if group.mtime >= cutoff}
    leftovers = _leftovers(directory, cutoff, young)
    for session_id, path in leftovers:
        try:
            if not args.dry_run:
                os.unlink(path)
        except FileNotFoundError:
            continue
        except OSError as exc:
            failed += 1
            answer["not_deleted"].append({"file": str(path), "error": exc.strerror})
            print(f"otel-agent-trace: {term.clean(path)}: not deleted ({exc.strerror})", file=sys.stderr)
            continue
        answer["deleted"].append({"session_id": session_id, "files": [path.name], "unfinished_zip": True})
        say(f"{verb} {term.clean(session_id)}: {term.clean(path.name)} (a ZIP left unfinished)")
    if not old and not leftovers:
        say(f"no sessions older than {term.clean(args.older_than.text)} in {term.clean(directory)}")
    if args.json:
        sys.stdout.write(term.json_document(answer))
    return 1 if failed else 0


def _quiet(line: str) -> None:
    pass


def _leftovers(directory: Path, cutoff: float, young: set[str]) -> list[tuple[str, Path]]:
    """The ZIP temporaries in ``directory`` older than ``cutoff`` whose session has no file
    younger and whose process is not running: ``(session id, path)``."""
    found = []
    with os.scandir(directory) as it:
        entries = sorted(it, key=lambda e: e.name)
    for item in entries:
        match = _TEMPORARY.match(item.name)
        if match is None:
            continue
        name = match["zip"]
        if not name.endswith(fmt.ZIP_SUFFIX):
            continue
        session_id = name[: -len(fmt.ZIP_SUFFIX)]
        session_id = session_id.removesuffix(fmt.CHECKPOINT_SUFFIX)
        try:
            st = item.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISREG(st.st_mode) or st.st_mtime >= cutoff or session_id in young:
            continue
        if _running(int(match["pid"])):
            continue
        found.append((session_id, Path(item.path)))
    return found


def _running(pid: int) -> bool:
    """Whether a process ``pid`` runs here (a temporary of a running session is never deleted)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True
    return True
