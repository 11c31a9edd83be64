"""``otel-agent-trace export`` and ``export-dir``: a recorded session sent to an OTLP backend after
the fact, or written as a file a viewer loads (OTLP/JSON lines, Jaeger JSON).

Sending goes through the OpenTelemetry OTLP exporters, configured as any exporter is: the flags
here, else the ``OTEL_EXPORTER_OTLP_*`` variables (endpoint, protocol, headers, timeout,
compression, certificates).

Exit status: 0 everything was sent or written; 1 the backend refused a batch, or rejected some
spans of a batch it took (OTLP's ``partial_success``: every batch is still sent, and the message
says how many spans were rejected and why), or could not be reached (at once when it takes no
connection; else within the timeout: the message says how many spans were sent before); 2 bad
input (no such file, a damaged session file, a session with no span, an output file that already
exists, bad arguments).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from otel_agent_trace import session_format as fmt
from otel_agent_trace.offline import export as ex
from otel_agent_trace.offline import terminal as term

from .progress import Progress

FORMATS = ("otlp-json", "jaeger-json")
_SUFFIX = {"otlp-json": ".otlp.jsonl", "jaeger-json": ".jaeger.json"}


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "export",
        help="send a recorded session to an OTLP backend, or write it as OTLP/JSON or Jaeger JSON",
        description="Send a recorded session (JSONL with its child files, or ZIP; a DevDuck session "
        "ZIP or a DM-Code-Agent JSONL as the loader reads them) to an OTLP backend with its original "
        "ids and times, redacted as the shareable tier is; or write it to a file. An entry with no time "
        "(a DM timestamp that is not ISO-8601) gets one estimated from file order, its span marked "
        "agent_trace.time.estimated (see docs/export.md). The OTLP exporter "
        "takes what the flags do not say from OTEL_EXPORTER_OTLP_* (endpoint, protocol, headers, "
        "timeout, compression, certificates). "
        "Headers: OTEL_EXPORTER_OTLP_TRACES_HEADERS (else OTEL_EXPORTER_OTLP_HEADERS), then each "
        "--header over them (the flag wins per key), for HTTP and gRPC alike. "
        "Exit 0: done; 1: the backend refused, was unreachable, or rejected some spans "
        "(partial success: the count and its message are said); 2: bad input or no spans.",
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
        description="export over every session file of a directory that analyze-dir reads: ours, "
        "DevDuck's session ZIPs, DM-Code-Agent's JSONL, whatever their names (each session once: "
        "its trace-tier .jsonl with its child files, else its checkpoint .jsonl, else its ZIP). A "
        "file that cannot be read (or exported) is said and the others still go. Exit 0: every "
        "session exported; 1: a session failed (unreadable, no spans, refused, spans rejected, "
        "output file exists); 2: bad arguments or no such directory.",
    )
    d.add_argument("directory", help="sessions directory")
    _target_arguments(d, out_help="output directory (one file per session)")
    d.add_argument(
        "--json",
        action="store_true",
        help='print one JSON document: {"directory", "failed", "sessions": [what export --json says, '
        "one per session]}",
    )
    d.set_defaults(func=run_export_dir)


def _target_arguments(p: argparse.ArgumentParser, out_help: str) -> None:
    p.add_argument(
        "--otlp",
        metavar="ENDPOINT",
        help="OTLP endpoint, e.g. http://localhost:4318 or localhost:4317 (plaintext; https:// for TLS); "
        "default OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT when set",
    )
    p.add_argument(
        "--protocol",
        choices=ex.PROTOCOLS,
        help="default OTEL_EXPORTER_OTLP_TRACES_PROTOCOL or OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf",
    )
    p.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="K=V",
        help="request header, added to those of OTEL_EXPORTER_OTLP_HEADERS (this one wins for its key; "
        "repeat)",
    )
    p.add_argument(
        "--format",
        nargs=2,
        metavar=("FORMAT", "OUT"),
        help="write a file instead of sending: FORMAT is otlp-json (one OTLP/JSON request a line: the "
        "Collector's otlpjsonfile receiver) or jaeger-json (one document: Jaeger UI's Upload); OUT is "
        f"the {out_help}",
    )
    p.add_argument("--service-name", help="service.name of the exported resource (default otel-agent-trace)")
    p.add_argument("--batch-size", type=int, default=512, help="spans per request (default 512)")
    p.add_argument(
        "--timeout",
        type=float,
        help="seconds a batch may take, its retries included "
        "(default OTEL_EXPORTER_OTLP_TRACES_TIMEOUT or OTEL_EXPORTER_OTLP_TIMEOUT, else 10)",
    )


class _Usage(Exception):
    pass


def _check(args: argparse.Namespace) -> dict[str, str]:
    if args.otlp and args.format:
        raise _Usage("give either --otlp ENDPOINT or --format FORMAT OUT, not both")
    args.out = None
    if not args.format:
        protocol = args.protocol or ex.env_protocol() or "http/protobuf"
        if protocol not in ex.PROTOCOLS:
            raise _Usage(f"OTLP protocol {protocol!r}: one of {', '.join(ex.PROTOCOLS)}")
        args.protocol = protocol
        args.otlp = args.otlp or ex.env_endpoint(protocol)
        if not args.otlp:
            raise _Usage(
                "give either --otlp ENDPOINT (or set OTEL_EXPORTER_OTLP_ENDPOINT) or --format FORMAT OUT"
            )
    if args.format:
        args.format, args.out = args.format
        if args.format not in FORMATS:
            raise _Usage(f"--format {args.format!r}: one of {', '.join(FORMATS)}")
    if args.batch_size < 1:
        raise _Usage("--batch-size must be at least 1")
    if args.timeout is not None and not args.timeout > 0:
        raise _Usage("--timeout must be more than 0 seconds")
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


def _export_one(
    path: Path, args: argparse.Namespace, headers: dict[str, str], out: Path | None, answer: dict[str, Any]
) -> int:
    """Export one session; prints what happened (with ``--json``, says it in ``answer``); returns
    its exit status."""
    answer["session"] = str(path)
    try:
        if args.format:
            assert out is not None
            return _write(path, args, out, answer)
        return _send(path, args, headers, answer)
    except ex.NothingToExport as exc:
        for issue in exc.issues:
            print(f"otel-agent-trace: note: {term.clean(issue)}", file=sys.stderr)
        answer["error"] = str(exc)
        return _fail(str(exc), 2)


def _notes(session: ex.SessionSpans) -> None:
    """What reading the session tolerated (lines skipped, times estimated), on standard error."""
    for issue in session.issues:
        print(f"otel-agent-trace: note: {term.clean(issue)}", file=sys.stderr)


def _send(path: Path, args: argparse.Namespace, headers: dict[str, str], answer: dict[str, Any]) -> int:
    progress = Progress(path.name, "spans sent")

    def note(message: str) -> None:
        progress.end()
        print(f"otel-agent-trace: note: {term.clean(message)}", file=sys.stderr)

    try:
        result = ex.export_session(
            path,
            args.otlp,
            protocol=args.protocol,
            headers=headers,
            service_name=args.service_name,
            batch_size=args.batch_size,
            timeout=args.timeout,
            progress=progress,
            note=note,
        )
    except ex.ExportFailed as exc:
        progress.end()
        what = "refused" if exc.refused else "could not be reached"
        answer.update(endpoint=args.otlp, protocol=args.protocol, spans=exc.sent)
        answer["error"] = f"the backend {what}: {exc}"
        return _fail(f"{path}: the backend {what}: {exc} ({exc.sent} spans were sent before)", 1)
    finally:
        progress.end()
    _notes(result.session)
    answer.update(
        session_id=result.session.session_id,
        endpoint=args.otlp,
        protocol=args.protocol,
        spans=result.spans,
        unfinished=result.unfinished,
    )
    said = "; ".join(result.messages)
    code = 0
    if result.rejected:
        answer.update(rejected=result.rejected, error=f"the backend rejected {result.rejected} spans: {said}")
        _fail(
            f"{path}: the backend rejected {result.rejected} of the {result.spans} spans sent"
            + (f": {said}" if said else " (it gave no reason)"),
            1,
        )
        code = 1
    elif said:  # a partial success that rejects nothing is a warning
        print(f"otel-agent-trace: note: the backend said: {term.clean(said)}", file=sys.stderr)
    if args.json:
        return code
    note_unfinished = f", {result.unfinished} unfinished" if result.unfinished else ""
    note_rejected = f" ({result.rejected} rejected)" if result.rejected else ""
    print(
        f"{term.clean(path)}: sent {result.spans} spans{note_unfinished}{note_rejected} of session "
        f"{term.clean(result.session.session_id)} to {term.clean(args.otlp)} ({args.protocol})"
    )
    return code


def _write(path: Path, args: argparse.Namespace, out: Path, answer: dict[str, Any]) -> int:
    if str(out) == "-":
        result = ex.write_file(path, sys.stdout, args.format, service_name=args.service_name)
        _notes(result.session)
        return 0
    try:
        with open(out, "x", encoding="utf-8") as stream:  # never replaces a file
            try:
                result = ex.write_file(path, stream, args.format, service_name=args.service_name)
            except BaseException:
                out.unlink(missing_ok=True)  # no half-written (or empty) file left behind
                raise
    except FileExistsError:
        answer.update(output=str(out), error="already exists; not overwritten")
        return _fail(f"{out}: already exists; not overwritten", 2)
    session = result.session
    _notes(session)
    answer.update(session_id=session.session_id, output=str(out), format=args.format, spans=result.spans)
    if session.format != "otel-agent-trace":
        answer["source_format"] = session.format
    if args.json:
        return 0
    note = f", {result.unfinished} unfinished" if result.unfinished else ""
    print(f"{term.clean(path)}: wrote {result.spans} spans{note} to {term.clean(out)} ({args.format})")
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


def _output_name(path: Path, fmt_name: str) -> str:
    """``<session>.otlp.jsonl`` / ``<session>.jaeger.json`` for a session file (any format's)."""
    name = path.name
    for suffix in (fmt.CHECKPOINT_SUFFIX + fmt.JSONL_SUFFIX, fmt.JSONL_SUFFIX, fmt.ZIP_SUFFIX):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    return f"{name}{_SUFFIX[fmt_name]}"


def run_export_dir(args: argparse.Namespace) -> int:
    from otel_agent_trace.offline.analysis import find_sessions

    try:
        headers = _check(args)
    except _Usage as exc:
        return _fail(str(exc), 2)
    directory = Path(args.directory)
    if not directory.is_dir():
        return _fail(
            f"{directory}: no such directory" if not directory.exists() else f"{directory}: not a directory",
            2,
        )
    out_dir = Path(args.out) if args.out else None
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
    sessions = find_sessions(directory)  # what analyze-dir reads: ours, DevDuck's, DM's
    answers: list[dict[str, Any]] = []
    if not sessions and not args.json:
        print(f"no sessions in {term.clean(directory)}")
        return 0
    failed = 0
    names: set[str] = set()
    for path in sessions:
        target = None
        if out_dir is not None:
            name = _output_name(path, args.format)
            if name in names:  # x.jsonl and x.zip of different sessions: the ZIP's by its whole name
                name = f"{path.name}{_SUFFIX[args.format]}"
            names.add(name)
            target = out_dir / name
        answer: dict[str, Any] = {}
        try:
            code = _export_one(path, args, headers, target, answer)
        except (fmt.SessionFormatError, OSError) as exc:  # a file it cannot read: said, and on
            answer["error"] = str(exc)
            code = _fail(str(exc), 1)
        answers.append(answer)
        failed += code != 0
    if args.json:
        sys.stdout.write(
            term.json_document({"directory": str(directory), "failed": failed, "sessions": answers})
        )
    else:
        done = "written" if args.format else "sent"
        print(
            f"{term.clean(directory)}: {len(sessions) - failed} of {len(sessions)} sessions {done}"
            + (f" ({failed} failed: see above)" if failed else "")
        )
    return 1 if failed else 0
