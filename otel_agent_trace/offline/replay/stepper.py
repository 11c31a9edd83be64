"""Step through a recorded session like code in a debugger: next, back, continue to a breakpoint,
jump to an entry, show an entry in full or the conversation as it stood there.

Every value printed comes from a file someone else may have written, so it goes through
:func:`otel_agent_trace.offline.terminal.clean` (no raw control characters reach the terminal).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from otel_agent_trace import semconv
from otel_agent_trace import session_format as fmt
from otel_agent_trace.offline.terminal import clean, fit

from ..jsonvalue import JSONObject
from .timeline import EntryNotFound, resolve_id

HELP = """commands:
  n, Enter      next entry              b             back one entry
  c             continue to the next breakpoint (or the end)
  j ID          jump to an entry (id or unique prefix)
  break type T  stop at entries of type T (span.end, message, file.open, …)
  break tool N  stop at calls of tool N  break error   stop at errors
  breaks        list breakpoints         clear         remove every breakpoint
  s             show this entry in full  conv          the conversation as it stood here
  q             quit                     h             this help"""


def is_error(event: Any) -> bool:
    d = event.data
    if event.type == fmt.SPAN_END:
        status: JSONObject = d.get("status") or {}
        if status.get("code") == fmt.STATUS_ERROR:
            return True
    return event.type == fmt.SPAN_EVENT and d.get("name") == "exception"


def tool_name(event: Any, known: dict[str, str] | None = None) -> str | None:
    """The tool a span entry is a call of: its own attributes, else what the whole span says
    (``known``: span id -> tool name; a start written while the span runs may have no attributes
    yet, as Strands' tool spans do), else its name (``execute_tool {name}``)."""
    if event.type not in (fmt.SPAN_START, fmt.SPAN_END):
        return None
    attributes: JSONObject = event.data.get("attributes") or {}
    name = attributes.get(semconv.GEN_AI_TOOL_NAME)
    if isinstance(name, str):
        return name
    span_id = event.data.get("span_id")
    if known and isinstance(span_id, str) and span_id in known:
        return known[span_id]
    title = event.data.get("name")
    prefix = f"{semconv.OP_EXECUTE_TOOL} "
    if isinstance(title, str) and title.startswith(prefix):
        return title[len(prefix) :]
    return None


def _tool_spans(session: Any) -> dict[str, str]:
    """Span id -> tool name, from each tool span's attributes as a whole."""
    out: dict[str, str] = {}
    for span in session.spans:
        attributes: JSONObject = span.attributes or {}
        name = attributes.get(semconv.GEN_AI_TOOL_NAME)
        if isinstance(name, str) and isinstance(span.span_id, str):
            out[span.span_id] = name
    return out


def describe(event: Any) -> str:
    """One line for an entry: its type, name and the gist of it."""
    d = event.data
    kind = event.event_type
    if event.type in (fmt.SPAN_START, fmt.SPAN_END):
        fields: JSONObject = d.get("status") or {}
        status = fields.get("code")
        tail = f" {((d.get('duration_ns') or 0) / 1e6):.1f}ms {status}" if event.type == fmt.SPAN_END else ""
        return f"{event.type} {d.get('name')}{tail}"
    if event.type == fmt.MESSAGE:
        content = d.get("content")
        text = content if isinstance(content, str) else f"<{d.get('content_chars')} chars>"
        return f"message {d.get('role')}: {text}"
    if event.type == fmt.SNAPSHOT:
        return f"snapshot #{d.get('snapshot_id')} {d.get('description', '')}"
    if event.type == fmt.SPAN_EVENT:
        attrs: JSONObject = d.get("attributes") or {}
        return f"{kind} " + " ".join(f"{k}={v}" for k, v in list(attrs.items())[:3])
    return str(kind)


class Stepper:
    """The stepper's state and commands; :meth:`run` drives it from a terminal."""

    def __init__(self, session: Any, out: Callable[[str], None] = print, width: int = 200):
        self.session = session
        self.events = session.events
        self.ids = [e.id for e in self.events]
        self.pos = 0
        self.out = out
        self.width = width
        self.break_types: set[str] = set()
        self.break_tools: set[str] = set()
        self.break_errors = False
        self._tools = _tool_spans(session)

    # -- display -----------------------------------------------------------------------------------

    def line(self) -> None:
        event = self.events[self.pos]
        head = f"[{self.pos + 1}/{len(self.events)}] {fit(event.id, 40)} {fit(event.layer, 10):<5} "
        self.out(head + fit(describe(event), max(self.width - len(head), 20)))

    def show(self) -> None:
        text = orjson.dumps(self.events[self.pos].data, option=orjson.OPT_INDENT_2).decode()
        for row in text.splitlines():
            self.out(clean(row))

    def conversation(self) -> None:
        from otel_agent_trace.offline.resume import rebuild_context

        messages = rebuild_context(self.session, until=self.events[self.pos].id)
        if not messages:
            self.out("(no conversation yet)")
        for m in messages:
            content = m.get("content")
            if content is None:
                content = f"<{m.get('missing') and 'missing' or 'not kept'}>"
            elif not isinstance(content, str):
                content = orjson.dumps(content).decode()
            extra = f" tool_calls={len(m['tool_calls'])}" if m.get("tool_calls") else ""
            self.out(fit(f"  {m.get('role')}: {content}{extra}", self.width))

    # -- moving --------------------------------------------------------------------------------------

    def hits_break(self, event: Any) -> str | None:
        if event.event_type in self.break_types or event.type in self.break_types:
            return f"type {event.event_type}"
        name = tool_name(event, self._tools)
        if name is not None and name in self.break_tools:
            return f"tool {name}"
        if self.break_errors and is_error(event):
            return "error"
        return None

    def continue_(self) -> None:
        while self.pos < len(self.events) - 1:
            self.pos += 1
            why = self.hits_break(self.events[self.pos])
            if why:
                self.out(f"breakpoint: {clean(why)}")
                break
        else:
            self.out("(end of session)")
        self.line()

    def handle(self, command: str) -> bool:
        """Run one command; ``False`` to quit."""
        words = command.strip().split()
        cmd = words[0] if words else "n"
        if cmd in ("q", "quit", "exit"):
            return False
        if cmd in ("n", "next"):
            if self.pos < len(self.events) - 1:
                self.pos += 1
            else:
                self.out("(end of session)")
            self.line()
        elif cmd in ("b", "back"):
            if self.pos > 0:
                self.pos -= 1
            else:
                self.out("(start of session)")
            self.line()
        elif cmd in ("c", "continue"):
            self.continue_()
        elif cmd in ("j", "jump") and len(words) == 2:
            try:
                self.pos = self.ids.index(resolve_id(self.ids, words[1]))
            except EntryNotFound as exc:
                self.out(clean(str(exc)))
            self.line()
        elif cmd == "break" and len(words) >= 2:
            kind, arg = words[1], " ".join(words[2:])
            if kind == "error":
                self.break_errors = True
            elif kind == "type" and arg:
                self.break_types.add(arg)
            elif kind == "tool" and arg:
                self.break_tools.add(arg)
            else:
                self.out("break type T | break tool NAME | break error")
                return True
            self.out(f"breakpoint set: {clean(' '.join(words[1:]))}")
        elif cmd == "breaks":
            items = [f"type {t}" for t in sorted(self.break_types)] + [
                f"tool {t}" for t in sorted(self.break_tools)
            ]
            items += ["error"] if self.break_errors else []
            self.out("breakpoints: " + (clean(", ".join(items)) if items else "none"))
        elif cmd == "clear":
            self.break_types.clear()
            self.break_tools.clear()
            self.break_errors = False
            self.out("breakpoints cleared")
        elif cmd in ("s", "show"):
            self.show()
        elif cmd in ("conv", "conversation"):
            self.conversation()
        elif cmd in ("h", "help", "?"):
            self.out(HELP)
        else:
            self.out(f"unknown command {clean(command.strip())!r} (h for help)")
        return True

    def run(self, read: Callable[[str], str] = input) -> None:
        self.out(
            f"session {clean(self.session.session_id)}: {len(self.events)} entries (h for help, q to quit)"
        )
        self.line()
        while True:
            try:
                command = read("(step) ")
            except (EOFError, KeyboardInterrupt):
                self.out("")
                return
            if not self.handle(command):
                return
