"""``otel-agent-trace resume SESSION [--snapshot N | --at ID] --agent module:factory ["query"]``:
restore a recorded conversation into your agent and, given a query, continue it — recorded as a
new session linked to the point it resumed from.

The agent factory comes from the command line only, never from the file; the recorded working
directory is used only with ``--cwd recorded``.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
from typing import Any

from otel_agent_trace.cli.loading import add_max_entries, load
from otel_agent_trace.offline.replay import EntryNotFound
from otel_agent_trace.offline.resume import ResumeError, resume_and_continue, resume_from_snapshot
from otel_agent_trace.offline.terminal import clean, fit, json_document, width


class _IntermixedParser(argparse.ArgumentParser):
    """Options and the query in any order (``SESSION --agent m:f "query"``): plain argparse gives
    the optional positional away before it sees the options."""

    _inside = False

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[no-untyped-def, override]
        if self._inside:
            return super().parse_known_args(args, namespace)
        self._inside = True
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._inside = False


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "resume",
        help="restore a recorded conversation into your agent and continue it",
        description="Restore the conversation of SESSION into the agent your --agent factory returns; "
        "with a query, run it. The file chooses no code: the agent, its model and its tools are yours and "
        "run live. Without a query nothing runs. The restored conversation is the file's data: one you did "
        "not record can try to steer your model, so continue a file from elsewhere only with tools you "
        "would let that model use.",
    )
    p.add_argument(
        "path",
        help="checkpoint-tier session .jsonl or .zip (a DevDuck ZIP, a DM-Code-Agent --checkpoint file)",
    )
    where = p.add_mutually_exclusive_group()
    where.add_argument("--snapshot", type=int, help="snapshot number (default: the latest)")
    where.add_argument("--at", help="the conversation as it stood at this entry (id or unique prefix)")
    p.add_argument(
        "--agent", required=True, help="module:factory that returns your agent (called with no arguments)"
    )
    p.add_argument(
        "--cwd",
        choices=["here", "recorded"],
        default="here",
        help="run in the current directory (default) or the one the snapshot recorded",
    )
    p.add_argument("--directory", help="where the continuation is recorded (default: AGENT_TRACE_DIR)")
    p.add_argument("query", nargs="?", help="what to ask next (without it: restore and report only)")
    p.add_argument(
        "--json",
        action="store_true",
        help="print one JSON document: where the conversation was restored from and, with a query, the "
        "answer and the files recording it (what the agent prints goes to standard error)",
    )
    add_max_entries(p)
    p.set_defaults(func=run)
    p.__class__ = _IntermixedParser


def load_factory(spec: str) -> Any:
    """``module:attribute`` from the current directory or the installed packages."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"--agent {spec!r}: expected module:factory")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    obj: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def run(args: argparse.Namespace) -> int:
    if not args.json:
        return _run(args, None)
    answer: dict[str, Any] = {}
    with contextlib.redirect_stdout(sys.stderr):  # the agent's own output: not in the document
        code = _run(args, answer)
    if code == 0:
        sys.stdout.write(json_document(answer))
    return code


def _run(args: argparse.Namespace, answer: dict[str, Any] | None) -> int:
    """Restore, and continue with the query; with ``answer`` (``--json``) what is printed for
    people is said there too."""
    session = load(args)
    why = session.format.unresumable(session)
    if why is not None:  # (before the agent is made: there is nothing to give it)
        print(f"otel-agent-trace: {clean(session.path)}: {why}", file=sys.stderr)
        return 2
    try:
        factory = load_factory(args.agent)
    except (ValueError, ImportError, AttributeError) as exc:
        print(f"otel-agent-trace: cannot load the agent factory: {clean(exc)}", file=sys.stderr)
        return 2
    agent = factory()
    try:
        preview = resume_from_snapshot(session, args.snapshot, at=args.at)
    except (ResumeError, EntryNotFound) as exc:
        print(f"otel-agent-trace: {clean(exc)}", file=sys.stderr)
        return 2
    if args.cwd == "recorded":
        if not preview.cwd or not os.path.isdir(preview.cwd):
            print(
                f"otel-agent-trace: the recorded directory {clean(preview.cwd)!r} does not exist here",
                file=sys.stderr,
            )
            return 2
        print(f"working directory: {clean(preview.cwd)} (recorded; asked by --cwd recorded)")
        os.chdir(preview.cwd)
    if answer is not None:
        answer.update(
            session_id=session.session_id,
            entry_id=preview.entry_id,
            snapshot_id=preview.snapshot_id,
            messages=len(preview.messages),
            cut=preview.cut or None,
            cwd=os.getcwd(),
        )
    cols = width()
    where = f"snapshot #{preview.snapshot_id}" if args.at is None else "entry"
    print(
        f"restoring {clean(session.session_id)} at {where} {clean(preview.entry_id)}: "
        f"{len(preview.messages)} messages"
    )
    if preview.cut:
        print(clean(preview.cut))
    if not args.query:
        restored = resume_from_snapshot(session, args.snapshot, at=args.at, agent=agent)
        print(f"restored into {restored.target}; no query given, nothing run")
        if answer is not None:
            answer.update(restored_into=restored.target, answer=None, recorded=[])
        return 0
    import otel_agent_trace.api as oat  # the continuation is recorded: only here is capture code loaded

    done, recorded = _continue(oat, args, session, preview, agent)
    print(fit(f"answer: {done.answer}", cols))
    if answer is not None:
        answer.update(restored_into=done.target, answer=done.answer, recorded=[str(p) for p in recorded])
    return 0


def _continue(
    oat: Any, args: argparse.Namespace, session: Any, preview: Any, agent: Any
) -> tuple[Any, list[Any]]:
    """Run the query inside a new recorded session whose metadata and root span name the source:
    what it answered, and the files recording it."""
    link = {
        "session_id": session.session_id,
        "entry_id": preview.entry_id,
        "snapshot_id": preview.snapshot_id,
        "path": str(session.path),
    }
    name = f"resume {session.session_id} at {preview.entry_id}"
    kwargs: dict[str, Any] = {"metadata": {"resumed_from": link}}
    if args.directory:
        kwargs["directory"] = args.directory
    if not os.environ.get("AGENT_TRACE_TIER"):
        kwargs["tier"] = "checkpoint"  # the source was private: so is its continuation
    with oat.session(name, **kwargs) as rec, oat.agent(name) as span:
        span.set_attribute("agent_trace.resume.source_session", session.session_id)
        span.set_attribute("agent_trace.resume.source_entry", preview.entry_id)
        for message in preview.messages:
            oat.record_message(message.get("role", "user"), message.get("content"))
        oat.record_message("user", args.query)
        done = resume_and_continue(session, args.snapshot, args.query, agent, at=args.at)
        oat.record_message("assistant", done.answer)
        messages = getattr(agent, "messages", None)
        if not isinstance(messages, list):
            messages = [
                *preview.messages,
                {"role": "user", "content": args.query},
                {"role": "assistant", "content": done.answer},
            ]
        oat.snapshot(
            f"resumed from {session.session_id} at {preview.entry_id}",
            messages=messages,
            system_prompt=preview.system_prompt,
            last_query=args.query,
            last_result=done.answer,
        )
    for path in rec.files:
        print(f"recorded: {clean(path)}")
    return done, list(rec.files)
