"""``otel-agent-trace export`` and ``export-dir``: a recorded session sent to an OTLP backend after
the fact, or written as a file a viewer loads (OTLP/JSON lines, Jaeger JSON).

Exit status: 0 everything was sent or written; 1 the backend refused a batch or could not be
reached after the retries (the message says how many spans were sent before); 2 bad input (no
such file, a damaged session file, an output file that already exists, bad arguments).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import IO, Any

from otel_agent_trace import session_format as fmt
from otel_agent_trace.offline import export as ex
from otel_agent_trace.offline import terminal as term

FORMATS = ("otlp-json", "jaeger-json")
_SUFFIX = {"otlp-json": ".otlp.jsonl", "jaeger-json": ".jaeger.json"}


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "export",
        help="send a recorded session to an OTLP backend, or write it as OTLP/JSON or Jaeger JSON",
        description="Send a recorded session (JSONL with its child files, or ZIP) to an OTLP backend "
        "with its original ids and times, redacted as the shareable tier is; or write it to a file. "
        "Exit 0: done; 1: the backend refused or was unreachable; 2: bad input.",
    )
    p.add_argument("session", help="a session .jsonl or .zip")
    _target_arguments(p, out_help="output file ('-': standard output)")
    p.add_argument(
        "--json",
        action="store_true",
        help="print one JSON document: what was sent or written (spans, session id, target; "
        '"error" when it failed); not with --format FORMAT -',
    )
    p.set_defaults(func=run_export)

    d = sub.add_parser(
        "export-dir",
        help="export every session of a directory",
        description="export over every session of a directory (the ZIP when there is one, else the "
        "JSONL with its child files; trace tier). Exit 1 if any session failed.",
    )
    d.add_argument("directory", help="sessions directory")
    _target_arguments(d, out_help="output directory (one file per session)")
    d.add_argument(
        "--json",
        action="store_true",
        help='print one JSON document: {"directory", "sessions": [what export --json says, one per session]}',
    )
    d.set_defaults(func=run_export_dir)


def _target_arguments(p: argparse.ArgumentParser, out_help: str) -> None:
    p.add_argument("--otlp", metavar="ENDPOINT", help="OTLP endpoint, e.g. http://localhost:4318 or :4317")
    p.add_argument("--protocol", choices=ex.PROTOCOLS, default="http/protobuf", help="default http/protobuf")
    p.add_argument("--header", action="append", default=[], metavar="K=V", help="request header (repeat)")
    p.add_argument(
        "--format",
        nargs=2,
        metavar=("FORMAT", "OUT"),
        help=f"write a file instead of sending: FORMAT is {' or '.join(FORMATS)}; OUT is the {out_help}",
    )
    p.add_argument("--service-name", help="service.name of the exported resource (default otel-agent-trace)")
    p.add_argument("--batch-size", type=int, default=512, help="spans per request (default 512)")
    p.add_argument("--timeout", type=float, default=10.0, help="seconds per request (default 10)")
    p.add_argument("--retries", type=int, default=5, help="retries of a failed request (default 5)")


class _Usage(Exception):
    pass


def _check(args: argparse.Namespace) -> dict[str, str]:
    if bool(args.otlp) == bool(args.format):
        raise _Usage("give either --otlp ENDPOINT or --format FORMAT OUT")
    args.out = None
    if args.format:
        args.format, args.out = args.format
        if args.format not in FORMATS:
            raise _Usage(f"--format {args.format!r}: one of {', '.join(FORMATS)}")
    if args.batch_size < 1:
        raise _Usage("--batch-size must be at least 1")
    headers = {}
    for item in args.header:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise _Usage(f"--header {item!r}: expected KEY=VALUE")
        headers[key.strip()] = value.strip()
    return headers


def _fail(message: str, code: int) -> int:
    print(f"otel-agent-trace: {term.clean(message)}", file=sys.stderr)
    return code


class Progress:
    """A one-line progress bar on standard error when it is a terminal; nothing otherwise."""

    def __init__(self, label: str, stream: IO[str] | None = None) -> None:
        self.stream = stream or sys.stderr
        self.label = term.fit(label, 40)
        self.shown = False
        try:
            self.tty = self.stream.isatty()
        except (AttributeError, ValueError):
            self.tty = False

    def __call__(self, done: int, total: int) -> None:
        if not self.tty or total <= 0:
            return
        cells = 30
        filled = cells * done // total
        self.stream.write(f"\r{self.label} [{'#' * filled}{'.' * (cells - filled)}] {done}/{total} spans")
        self.stream.flush()
        self.shown = True

    def end(self) -> None:
        if self.shown:
            self.stream.write("\n")
            self.stream.flush()


def _export_one(
    path: Path, args: argparse.Namespace, headers: dict[str, str], out: Path | None, answer: dict[str, Any]
) -> int:
    """Export one session; prints what happened (with ``--json``, says it in ``answer``); returns
    its exit status."""
    answer["session"] = str(path)
    if args.format:
        assert out is not None
        return _write(path, args, out, answer)
    progress = Progress(path.name)
    try:
        result = ex.export_session(
            path,
            args.otlp,
            protocol=args.protocol,
            headers=headers,
            service_name=args.service_name,
            batch_size=args.batch_size,
            timeout=args.timeout,
            retries=args.retries,
            progress=progress,
        )
    except ex.ExportFailed as exc:
        progress.end()
        sent, total = getattr(exc, "sent", 0), getattr(exc, "total", 0)
        what = "refused" if exc.refused else "could not be reached"
        answer.update(endpoint=args.otlp, protocol=args.protocol, spans=sent, total=total)
        answer["error"] = f"the backend {what}: {exc}"
        return _fail(f"{path}: the backend {what}: {exc} ({sent} of {total} spans were sent)", 1)
    progress.end()
    for issue in result.session.issues:
        print(f"otel-agent-trace: note: {term.clean(issue)}", file=sys.stderr)
    answer.update(
        session_id=result.session.session_id,
        endpoint=args.otlp,
        protocol=args.protocol,
        spans=result.sent,
        unfinished=result.unfinished,
        rejected=result.rejected,
    )
    if args.json:
        return 1 if result.rejected else 0
    note = f", {result.unfinished} unfinished" if result.unfinished else ""
    rejected = f"; the backend rejected {result.rejected}" if result.rejected else ""
    print(
        f"{term.clean(path)}: sent {result.sent} spans{note} of session "
        f"{term.clean(result.session.session_id)} to {term.clean(args.otlp)} ({args.protocol}){rejected}"
    )
    return 1 if result.rejected else 0


def _write(path: Path, args: argparse.Namespace, out: Path, answer: dict[str, Any]) -> int:
    if str(out) == "-":
        session = ex.write_file(path, sys.stdout, args.format, service_name=args.service_name)
        for issue in session.issues:
            print(f"otel-agent-trace: note: {term.clean(issue)}", file=sys.stderr)
        return 0
    try:
        with open(out, "x", encoding="utf-8") as stream:  # never replaces a file
            try:
                session = ex.write_file(path, stream, args.format, service_name=args.service_name)
            except BaseException:
                out.unlink(missing_ok=True)  # no half-written file left behind
                raise
    except FileExistsError:
        answer.update(output=str(out), error="already exists; not overwritten")
        return _fail(f"{out}: already exists; not overwritten", 2)
    for issue in session.issues:
        print(f"otel-agent-trace: note: {term.clean(issue)}", file=sys.stderr)
    answer.update(
        session_id=session.session_id, output=str(out), format=args.format, spans=len(session.spans)
    )
    if args.json:
        return 0
    print(f"{term.clean(path)}: wrote {len(session.spans)} spans to {term.clean(out)} ({args.format})")
    return 0


def run_export(args: argparse.Namespace) -> int:
    try:
        headers = _check(args)
        if args.json and args.out == "-":
            raise _Usage("--json and --format FORMAT -: standard output can hold only one of them")
    except _Usage as exc:
        return _fail(str(exc), 2)
    answer: dict[str, Any] = {}
    code = _export_one(Path(args.session), args, headers, Path(args.out) if args.out else None, answer)
    if args.json and code != 2:  # bad input: the line on standard error says it
        sys.stdout.write(term.json_document(answer))
    return code


def sessions_in(directory: Path) -> list[Path]:
    """One file per session of the trace tier: its ZIP when there is one, else its JSONL."""
    chosen: dict[str, Path] = {}
    for path in sorted(directory.glob("session-*")):
        name = path.name
        for suffix in (fmt.ZIP_SUFFIX, fmt.JSONL_SUFFIX):
            if name.endswith(suffix):
                stem = name[: -len(suffix)]
                break
        else:
            continue
        if stem.endswith(fmt.CHECKPOINT_SUFFIX) or ".p" in stem:
            continue  # the private tier, or a child process's part (it goes with its session)
        if stem not in chosen or name.endswith(fmt.ZIP_SUFFIX):
            chosen[stem] = path
    return [chosen[k] for k in sorted(chosen)]


def run_export_dir(args: argparse.Namespace) -> int:
    try:
        headers = _check(args)
    except _Usage as exc:
        return _fail(str(exc), 2)
    directory = Path(args.directory)
    if not directory.is_dir():
        return _fail(f"{directory}: not a directory", 2)
    out_dir = Path(args.out) if args.out else None
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
    sessions = sessions_in(directory)
    answers: list[dict[str, Any]] = []
    if not sessions and not args.json:
        print(f"no sessions in {term.clean(directory)}")
        return 0
    worst = 0
    for path in sessions:
        target = None
        if out_dir is not None:
            suffix = fmt.ZIP_SUFFIX if path.name.endswith(fmt.ZIP_SUFFIX) else fmt.JSONL_SUFFIX
            stem = path.name[: -len(suffix)]
            target = out_dir / f"{stem}{_SUFFIX[args.format]}"
        answer: dict[str, Any] = {}
        try:
            code = _export_one(path, args, headers, target, answer)
        except (fmt.SessionFormatError, OSError) as exc:
            answer["error"] = str(exc)
            code = _fail(str(exc), 2)
        answers.append(answer)
        worst = max(worst, code)
    if args.json:
        sys.stdout.write(term.json_document({"directory": str(directory), "sessions": answers}))
    return worst
