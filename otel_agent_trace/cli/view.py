"""``otel-agent-trace view FILE``: the session tree, one line per span, event, message, snapshot.

The file is streamed and printed as it is read: a span's line waits for the span's end (so it can
show duration, tokens, exit code, status) only while few lines are pending; a span with a large
subtree (the agent's run) is printed when it starts and gets a closing ``└ end`` line. The same
happens with ``--follow`` whenever the writer pauses.

Here: the command (its options, the input checked, ``--html``, ``--follow``); the lines are
printed by :mod:`.view_tree` and say what :mod:`.view_text` makes of each entry.
"""

from __future__ import annotations

import argparse
import os
import stat
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson

from otel_agent_trace import session_format as fmt
from otel_agent_trace.offline import terminal as term
from otel_agent_trace.offline.loader import iter_entries

from .view_tree import NAMES_KEPT, Filter, JsonLines, TreePrinter

__all__ = ["NAMES_KEPT", "add_parser", "run"]  # NAMES_KEPT: tests/offline read it here


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "view",
        help="print a session's tree",
        description="Print a session's tree: one line per span with what it did, its events, "
        "messages and snapshots. Exit codes: 0 ok, 1 a bad line in the file (other than a torn "
        "last line), 2 bad input (missing, empty or not a session file).",
    )
    p.add_argument("path", help="session .jsonl or .zip")
    p.add_argument(
        "other",
        nargs="?",
        metavar="OTHER",
        help="with --html: a second session, the two compared on one page (as diff --html)",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print the entries as JSON Lines: one JSON object a line, streamed as the file is read (memory "
        "stays bounded whatever its size); with --html, one JSON document saying what was written",
    )
    p.add_argument("--layer", choices=fmt.LAYERS, help="only entries of this layer")
    p.add_argument(
        "--type",
        dest="types",
        action="append",
        metavar="TYPE",
        help="only these entries: an entry type (span, message, snapshot, span.event, session), an "
        "operation (chat, execute_tool, invoke_agent) or an event name (file.open); repeatable",
    )
    p.add_argument("--depth", type=int, metavar="N", help="only the first N levels of the tree (0: the root)")
    p.add_argument("--errors", action="store_true", help="only spans that failed, and exception events")
    p.add_argument("--full", action="store_true", help="print values whole (no cut to the width)")
    p.add_argument("--lenient", action="store_true", help="skip bad lines, count them, exit 0")
    p.add_argument("--follow", "-f", action="store_true", help="keep watching a live session (like tail -f)")
    p.add_argument(
        "--html",
        metavar="OUT",
        help="write a self-contained HTML timeline to OUT instead (a new file: never overwritten)",
    )
    p.set_defaults(func=run)


# --- reading ----------------------------------------------------------------------------------


def _check_input(path: Path) -> None:
    """Refuse what is not a regular session file before opening it (a FIFO would hang, a device
    never ends, an empty file holds no session)."""
    try:
        st = path.stat()
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: no such session file") from None
    except OSError as exc:
        raise fmt.SessionFormatError(path, None, f"cannot read ({exc.strerror})") from None
    if stat.S_ISDIR(st.st_mode):
        if (path / fmt.ZIP_EVENTS).is_file():  # an unpacked session ZIP
            return
        raise fmt.SessionFormatError(path, None, "is a directory (list it with `otel-agent-trace list DIR`)")
    if not stat.S_ISREG(st.st_mode):
        raise fmt.SessionFormatError(path, None, "not a regular file (a FIFO, a device or a socket)")
    if st.st_size == 0:
        raise fmt.SessionFormatError(path, None, "empty file: no session entries")
    if not os.access(path, os.R_OK):
        raise fmt.SessionFormatError(path, None, "cannot read (permission denied)")


def _entries(path: Path, issues: list[fmt.ReadIssue]) -> Iterator[dict[str, Any]]:
    """The session's entries in our shape (DevDuck and DM files mapped by the loader), its child
    processes' files after its own, one line in memory at a time."""
    return iter_entries(path, issues)


def _follow(
    path: Path,
    sink: Callable[[dict[str, Any]], None],
    idle: Callable[[], None],
    issues: list[fmt.ReadIssue],
    poll: float = 0.2,
) -> None:
    """Hand each entry of a live ``.jsonl`` file to ``sink`` as the file grows (``idle`` when the
    writer pauses), until its ``session.end`` (or Ctrl-C). Each line is read as ``view`` reads it
    (a compact 1.2+ file upgraded to whole entries, ours checked), so the lines say the same."""
    from otel_agent_trace.session_format.checks import BadEntry, check_entry
    from otel_agent_trace.session_format.reader import LineReader

    reader = LineReader()
    ours: bool | None = None
    number = 0
    partial = b""
    with open(path, "rb") as stream:
        while True:
            chunk = stream.readline()
            if chunk and not chunk.endswith(b"\n"):
                partial += chunk  # the writer is mid-line: wait for the rest
                chunk = b""
            elif chunk:
                chunk, partial = partial + chunk, b""
            if not chunk:
                idle()
                time.sleep(poll)
                continue
            number += 1
            if not chunk.strip():
                continue
            entry = reader.entry(chunk.rstrip(b"\r\n"))
            reason = ""
            if entry is None:
                try:
                    reason = f"expected a JSON object, got {type(orjson.loads(chunk)).__name__}"
                except orjson.JSONDecodeError as exc:
                    reason = f"not JSON ({exc})"
            else:
                if ours is None:  # told from the first entry, as the reader does
                    ours = "type" in entry or ("event_type" not in entry and "event" not in entry)
                if ours:
                    try:
                        entry = check_entry(entry)
                    except BadEntry as exc:
                        entry, reason = None, f"{exc}; skipped"
            if entry is None:
                issue = fmt.ReadIssue(str(path), number, reason)
                issues.append(issue)
                print(f"warning: {term.clean(issue)}", file=sys.stderr, flush=True)
                continue
            sink(entry)
            if entry.get("type") == fmt.SESSION_END:
                return


def run(args: argparse.Namespace) -> int:
    path = Path(args.path).expanduser()
    _check_input(path)
    other = None if args.other is None else Path(args.other).expanduser()
    if other is not None:
        if not args.html:
            print("otel-agent-trace: view shows a second session only with --html OUT", file=sys.stderr)
            return 2
        _check_input(other)
    if args.html:
        from otel_agent_trace.offline.html import write_compare_html, write_html

        target = Path(args.html)
        try:  # the name is ours, or refused: never overwritten (as report -o, fork, export)
            os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        except FileExistsError:
            print(
                f"otel-agent-trace: {term.clean(target)} exists: view --html never overwrites a file",
                file=sys.stderr,
            )
            return 2
        except OSError as exc:
            print(
                f"otel-agent-trace: {term.clean(target)}: {term.clean(exc.strerror or exc)}", file=sys.stderr
            )
            return 2
        try:
            # written beside it, then renamed over the empty file
            if other is None:
                out = write_html(path, target, lenient=args.lenient)
            else:
                out = write_compare_html(path, other, target, lenient=args.lenient)
        except BaseException:
            target.unlink(missing_ok=True)  # bad input leaves no page
            raise
        if args.json:
            written = {"session": str(path), "html": str(out)}
            if other is not None:
                written["other"] = str(other)
            sys.stdout.write(term.json_document(written))
        else:
            print(f"wrote {term.clean(out)}")
        return 0
    issues: list[fmt.ReadIssue] = []
    keep = Filter(args)
    out = sys.stdout
    columns = None if args.full else term.width(out)
    printer: TreePrinter | JsonLines
    printer = JsonLines(out, keep) if args.json else TreePrinter(out, keep, full=args.full, columns=columns)
    reported = 0
    if args.follow and path.suffix == fmt.JSONL_SUFFIX:

        def idle() -> None:
            printer.flush(0)
            out.flush()

        try:
            _follow(path, printer.add, idle, issues)
        except KeyboardInterrupt:
            pass
        reported = len(issues)  # already told, as they came
    else:
        for entry in _entries(path, issues):
            printer.add(entry)
    printer.finish()
    count = printer.count
    out.flush()
    bad = [issue for issue in issues if not issue.reason.startswith("torn")]
    if args.lenient:
        for issue in issues:
            if issue.reason.startswith("torn"):
                print(f"warning: {term.clean(issue)}", file=sys.stderr)
        if bad:
            print(f"warning: {term.clean(path)}: skipped {len(bad)} bad line(s)", file=sys.stderr)
    else:
        for issue in issues[reported:]:
            print(f"warning: {term.clean(issue)}", file=sys.stderr)
    if count == 0:
        raise fmt.SessionFormatError(path, None, "no session entries")
    # A torn last line is what a killed writer leaves: expected. Any other bad line is not.
    return 1 if bad and not args.lenient else 0
