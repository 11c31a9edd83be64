"""One streaming pass over a session's entries: :class:`Accumulator` is fed them one by one
(:func:`.summary.summarize` does it for a file) and counts, as it goes, what each entry says:
its kind of span (model, tool, process, HTTP, agent), its time, its failure or success. Nothing
keeps entries; every value is read defensively (:mod:`.values`).
"""

from __future__ import annotations

import heapq
import sys
import zlib
from collections.abc import Iterable
from typing import Any

import orjson

from otel_agent_trace import semconv
from otel_agent_trace import session_format as fmt

from ..jsonvalue import JSONObject, JSONValue
from . import classify as cls
from . import foreign
from .facts import OPEN_DESCRIBED, SLOWEST, SYS_EVENT_NAMES_KEPT, TOOL_NAME_KEPT
from .outcomes import Outcomes
from .records import Failure, Stat
from .values import PREVIEW, as_int, as_object, as_text, error_text, id_of, name_of, open_span, preview

_MODEL_OPS = cls.MODEL_OPERATIONS
_LIMIT_REASONS = cls.LIMIT_FINISH_REASONS
_OP = semconv.GEN_AI_OPERATION_NAME
_TOKENS_IN, _TOKENS_OUT = semconv.GEN_AI_USAGE_INPUT_TOKENS, semconv.GEN_AI_USAGE_OUTPUT_TOKENS
_TOKENS_CACHE = semconv.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS
_KIND_TOOL, _KIND_PROCESS = cls.KIND_TOOL, cls.KIND_PROCESS
_KIND_HTTP, _KIND_AGENT = cls.KIND_HTTP, cls.KIND_AGENT
_SPAN_END, _SPAN_START, _SPAN_EVENT = fmt.SPAN_END, fmt.SPAN_START, fmt.SPAN_EVENT
_MESSAGE, _SNAPSHOT, _LAYER_SYS, _ERROR = fmt.MESSAGE, fmt.SNAPSHOT, fmt.LAYER_SYS, fmt.STATUS_ERROR
_OP_TOOL = semconv.OP_EXECUTE_TOOL
_TOOL_NAME, _TOOL_ARGS = semconv.GEN_AI_TOOL_NAME, semconv.GEN_AI_TOOL_CALL_ARGUMENTS
_REQUEST_MODEL, _RESPONSE_MODEL = semconv.GEN_AI_REQUEST_MODEL, semconv.GEN_AI_RESPONSE_MODEL
_FINISH_REASONS = semconv.GEN_AI_RESPONSE_FINISH_REASONS
_COMMAND_KEYS = cls.COMMAND_KEYS
_FILE_ACCESS = "agent_trace.file.access"
_WRITE_ACCESS = ("write", "readwrite", "append")
_WRITE_EVENTS = ("file.delete", "file.rename", "file.write")
_NO_ATTRS: JSONObject = {}  # read, never written
_dumps, _SORT_KEYS, _crc32 = orjson.dumps, orjson.OPT_SORT_KEYS, zlib.crc32


class Accumulator(Outcomes):
    """Facts about a session gathered entry by entry (:class:`~.facts.SessionFacts`);
    :mod:`.checks` turns them into verdicts.

    ``actions``: keep the sequence of tool names (for ``diff``); ``steps``: keep up to this many
    model and tool calls with previews (for ``report``).
    """

    # --- feeding --------------------------------------------------------------------------
    #
    # The hot path. Most entries are messages, span starts, span ends and file events: those are
    # handled inline in :meth:`consume` or by one bound method each, with no per-entry dicts or
    # tuples; what a span's end needs (its name, the error text, the loop key, the verification
    # check) is computed only for the kinds of span that use it. Times: a span's end, a session
    # entry and the last entry of each file move the clock (``last_ts``); messages and span
    # starts in between never end a run later than the entries after them.

    def feed(self, entry: dict[str, Any]) -> None:
        """Take one entry into account."""
        self.entries += 1
        self._ts(entry)
        kind = entry.get("type")
        if kind == _SPAN_END:
            self._span_end(entry)
        elif kind == _MESSAGE:
            self.messages += 1
            if entry.get("role") == "assistant" and not entry.get("tool_calls"):
                self.last_answer = entry  # read once at the end (the entry is small in the trace tier)
        elif kind == _SPAN_START:
            self._span_start(entry)
        elif kind == _SPAN_EVENT:
            self.events += 1
            if entry.get("layer") == _LAYER_SYS:
                self._sys_event(entry)
        else:
            self._other(entry, kind)

    def consume(self, entries: Iterable[dict[str, Any]]) -> None:
        """:meth:`feed` every entry (the same result), the common ones inline."""
        it = iter(entries)
        for entry in it:
            self.feed(entry)  # the first entry of a file starts the clock
            break
        else:
            return
        span_start, span_end = self._span_start, self._span_end
        sys_event, other = self._sys_event, self._other
        count = messages = events = 0
        last_answer = self.last_answer
        try:
            for entry in it:
                count += 1
                kind = entry.get("type")
                if kind == _SPAN_END:
                    span_end(entry)
                elif kind == _MESSAGE:
                    messages += 1
                    if entry.get("role") == "assistant" and not entry.get("tool_calls"):
                        last_answer = entry
                elif kind == _SPAN_START:
                    span_start(entry)
                elif kind == _SPAN_EVENT:
                    events += 1
                    if entry.get("layer") == _LAYER_SYS:
                        sys_event(entry)
                else:
                    other(entry, kind)
        finally:
            self.entries += count
            self.messages += messages
            self.events += events
            self.last_answer = last_answer
            self._ts(entry)  # the file's last entry: the run lasted at least until then

    def _ts(self, entry: dict[str, Any]) -> int:
        """An entry's time (0 when it has none), moving the session's first and last times."""
        ts = entry.get("ts")
        if type(ts) is not int or ts <= 0:
            return 0
        if ts > self.last_ts:
            self.last_ts = ts
            if not self.first_ts:
                self.first_ts = ts
        return ts

    def _other(self, entry: dict[str, Any], kind: object) -> None:
        """Entries met once or rarely: snapshots, session start, join and end."""
        ts = self._ts(entry)
        if kind == _SNAPSHOT:
            self.snapshots += 1
        elif kind == fmt.SESSION_START or kind == fmt.SESSION_JOIN:
            self._session_start(entry, kind, ts)
        elif kind == fmt.SESSION_END and self.files <= 1:  # the parent's end, not a child's
            self.ended = True
            self.end_duration_ns = as_int(entry.get("duration_ns"))
            self.end_unfinished = as_int(entry.get("unfinished_spans"))
        elif kind is foreign.FAILURE:  # a foreign format's failure that is no span
            self.span_eid = id_of(entry)
            self._fail(entry["stage"], entry["key"], entry, entry["reason"], ts)
        elif kind is foreign.REPLAN:
            self.replans += 1

    def _session_start(self, entry: dict[str, Any], kind: object, ts: int) -> None:
        self.files += 1
        if kind == fmt.SESSION_START and not self.has_root:
            self.has_root = True
            self.session_id = as_text(entry.get("session_id"))
            self.tier = as_text(entry.get("tier"))
            self.metadata = as_object(entry.get("metadata"))
            self.start_ts = ts

    def _sys_event(self, entry: dict[str, Any]) -> None:
        name = entry.get("name")
        if type(name) is not str:
            return
        counts = self.sys_events
        count = counts.get(name)
        if count is not None:
            counts[name] = count + 1
        elif len(counts) < SYS_EVENT_NAMES_KEPT:
            counts[name] = 1
        if name == "file.open":
            attrs: JSONValue = entry.get("attributes")
            if type(attrs) is not dict or attrs.get(_FILE_ACCESS) not in _WRITE_ACCESS:
                return
        elif name not in _WRITE_EVENTS:
            return
        self.writes += 1
        ts = entry.get("ts")
        if type(ts) is int and ts > self.last_write_ts:
            self.last_write_ts = ts

    def _span_start(self, entry: dict[str, Any]) -> None:
        """A span's start: remembered by id until its end (what its children ask of it, and a
        description while few spans run at once)."""
        sid = entry.get("span_id")
        if type(sid) is not str:
            return
        eid = entry.get("id")
        self.open[sid] = eid if type(eid) is str else as_text(eid)
        name, _, kind, _, _ = described = open_span(entry)
        if kind == cls.KIND_AGENT or kind == cls.KIND_MODEL:
            self.open_kinds[sid] = kind
        elif name.startswith("execute_tool"):
            attrs: JSONValue = entry.get("attributes")
            tool = attrs.get(_TOOL_NAME) if type(attrs) is dict else None
            if type(tool) is not str or not tool:
                tool = name.removeprefix("execute_tool ").strip()
            self.open_tools[sid] = tool[:TOOL_NAME_KEPT]
        if len(self.open_described) < OPEN_DESCRIBED:
            self.open_described[sid] = described

    def _span_end(self, entry: dict[str, Any]) -> None:
        """A span's end: the stats every span has, then its kind's own handler."""
        attrs: JSONValue = entry.get("attributes")
        if type(attrs) is not dict:
            attrs = _NO_ATTRS
        sid = entry.get("span_id")
        eid = None
        if type(sid) is str:
            eid = self.open.pop(sid, None)  # one span, one id everywhere: its start entry's
            if eid is not None:
                if self.open_kinds:
                    self.open_kinds.pop(sid, None)
                if self.open_tools:
                    self.open_tools.pop(sid, None)
                self.open_described.pop(sid, None)
        if eid is None:
            eid = entry.get("id")
        self.span_eid = eid if type(eid) is str else as_text(eid)
        ts = entry.get("ts")
        if type(ts) is not int or ts <= 0:
            ts = 0
        elif ts > self.last_ts:
            self.last_ts = ts
            if not self.first_ts:
                self.first_ts = ts
        duration = entry.get("duration_ns")
        if type(duration) is not int or duration < 0:
            duration = 0
        status: JSONValue = entry.get("status")
        error = type(status) is dict and status.get("code") == _ERROR
        layer = entry.get("layer")
        if type(layer) is not str:
            layer = as_text(layer)
        stat = self.by_layer.get(layer)
        if stat is None:
            stat = self.by_layer[layer] = Stat()
        stat.add(duration, error)
        if duration > self.slow_floor:
            self._slow(entry, duration, layer)
        op = attrs.get(_OP)
        if op == _OP_TOOL:
            self._tool(entry, attrs, duration, error, status, ts)
        elif type(op) is str and op in _MODEL_OPS:
            self._model(entry, attrs, duration, error, status, ts)
        else:
            kind = cls.span_kind(name_of(entry), layer, attrs)
            if kind == _KIND_TOOL:
                self._tool(entry, attrs, duration, error, status, ts)
            elif kind == _KIND_PROCESS:
                self._process(entry, attrs, error, status, ts)
            elif kind == _KIND_HTTP:
                self._http(entry, attrs, error, ts)
            elif kind == _KIND_AGENT:
                self._agent(entry, error, status, ts)

    def _within_same_tool(self, entry: dict[str, Any], tool: str) -> bool:
        """Whether this tool span runs directly inside a span of the same tool still open: a
        framework's tool over an ``@oat.tool`` function, one call (a model replay answering the
        outer one runs no inner one, and must count the same)."""
        parent_id = entry.get("parent_span_id")
        return type(parent_id) is str and self.open_tools.get(parent_id) == tool[:TOOL_NAME_KEPT]

    def _slow(self, entry: dict[str, Any], duration: int, layer: str) -> None:
        """One of the slowest spans so far (a bounded heap; ``slow_floor`` its smallest)."""
        self._slow_seq += 1
        item = (duration, self._slow_seq, name_of(entry), self.span_eid, layer)
        slow = self.slowest
        if len(slow) < SLOWEST:
            heapq.heappush(slow, item)
            if len(slow) < SLOWEST:
                return
        else:
            heapq.heapreplace(slow, item)
        self.slow_floor = slow[0][0]

    def _agent(self, entry: dict[str, Any], error: bool, status: JSONValue, ts: int) -> None:
        if not self._outermost_agent(entry.get("parent_span_id")):
            return
        content: JSONValue = entry.get("content")
        if type(content) is dict and "agent_output" in content:
            self.agent_answer = content["agent_output"]
        if error:  # the run failed; the stage is decided by what failed under it (checks.outcome)
            why = error_text(entry.get("attributes"), status)
            self.root_errors.append(
                Failure(cls.failure_stage(why, ""), "agent", self.span_eid, name_of(entry), why, ts)
            )

    def _outermost_agent(self, parent: Any) -> bool:
        """No agent span above this one (a trace root, or under a plain span or another file's)."""
        return not isinstance(parent, str) or self.open_kinds.get(parent) != cls.KIND_AGENT

    # --- kinds of spans -------------------------------------------------------------------

    def _model(
        self, entry: dict[str, Any], attrs: JSONObject, duration: int, error: bool, status: JSONValue, ts: int
    ) -> None:
        # the model asked for: the same key for a failed call and its retry
        model = attrs.get(_REQUEST_MODEL) or attrs.get(_RESPONSE_MODEL) or name_of(entry)
        if type(model) is not str:
            model = as_text(model)
        stat = self.by_model.get(model)
        if stat is None:
            stat = self.by_model[model] = Stat()
        stat.add(duration, error)
        tokens_in = attrs.get(_TOKENS_IN, 0)
        if type(tokens_in) is not int:
            tokens_in = 0
        tokens_out = attrs.get(_TOKENS_OUT, 0)
        if type(tokens_out) is not int:
            tokens_out = 0
        stat.input_tokens += tokens_in
        stat.output_tokens += tokens_out
        cache = attrs.get(_TOKENS_CACHE)
        if type(cache) is int:
            stat.cache_read_tokens += cache
        reasons = attrs.get(_FINISH_REASONS)
        limited = False
        if type(reasons) is not list:
            reasons = []
        elif reasons:
            try:
                limited = not _LIMIT_REASONS.isdisjoint(reasons)
            except TypeError:  # an unhashable reason: look at the strings one by one
                limited = any(type(r) is str and r in _LIMIT_REASONS for r in reasons)
        if error:
            why = error_text(attrs, status)
            self._fail(cls.failure_stage(why, cls.MODEL), "model:" + model, entry, why, ts)
        elif limited:
            reason = f"finish reason {', '.join(map(str, reasons))}"
            self._fail(cls.LIMITS, "model:" + model, entry, reason, ts)
        elif self.unrecovered:
            self._ok("model:" + model)
        if self.steps:
            asked = attrs.get(semconv.TOOL_CALL_NAMES)
            detail = f"tokens {tokens_in}→{tokens_out}"
            if reasons:
                detail += f", finish {', '.join(map(str, reasons))}"
            if isinstance(asked, list) and asked:
                detail += f", asks {', '.join(str(a) for a in asked)}"
            why = error_text(attrs, status) if error else ""
            self._step("model", model, ts - duration if ts else 0, duration, why, detail, self.span_eid)

    def _tool(
        self, entry: dict[str, Any], attrs: JSONObject, duration: int, error: bool, status: JSONValue, ts: int
    ) -> None:
        tool = attrs.get(_TOOL_NAME)
        if type(tool) is not str or not tool:
            name = name_of(entry)
            tool = as_text(tool) or name.removeprefix("execute_tool ").strip() or name
        if self._within_same_tool(entry, tool):
            return  # one call, recorded by two layers: counted at the outer span
        stat = self.by_tool.get(tool)
        if stat is None:
            stat = self.by_tool[tool] = Stat()
        stat.add(duration, error)
        if self.actions:
            self.action_list.append(sys.intern(tool))
        content: JSONValue = entry.get("content")
        if type(content) is not dict:
            content = _NO_ATTRS
        args: JSONValue
        if "tool_arguments" in content:
            has_args, args = True, content["tool_arguments"]
        else:
            has_args = _TOOL_ARGS in attrs
            args = attrs.get(_TOOL_ARGS)
        if error:
            why = error_text(attrs, status)
            self._fail(cls.failure_stage(why, cls.TOOL), "tool:" + tool, entry, why, ts)
        elif self.unrecovered:
            self._ok("tool:" + tool)
        if has_args:
            try:  # the loop key: length and CRC-32 of the arguments' canonical JSON
                raw = _dumps(args, option=_SORT_KEYS)
            except (TypeError, orjson.JSONEncodeError):
                raw = repr(args).encode("utf-8", "replace")
            digest = (len(raw) << 32) | _crc32(raw)
            self._loop(digest ^ hash(tool), tool, digest, error, entry)
        verified = self.verified_parents
        if verified and entry.get("span_id") in verified:
            verified.discard(entry.get("span_id"))  # a verification process under it already counted
        else:
            if not has_args or (type(args) is dict and args.keys().isdisjoint(_COMMAND_KEYS)):
                command = ""  # the common case: no command among the arguments
            else:
                command = cls.command_in_arguments(args)
            vkind = self._verification_kind(command) if command else None
            if vkind is None:
                vkind = self.tool_kinds.get(tool, "")
                if vkind == "":
                    vkind = self.tool_kinds[tool] = cls.tool_name_verification_kind(tool)
            if vkind is not None:
                result = content.get("tool_result")
                code = None
                if isinstance(result, dict):
                    code = result.get("exit_code", result.get("returncode"))
                passed = not error and (code is None or code == 0)
                self._verify(vkind, preview(command or args, PREVIEW) or tool, passed, entry, ts)
        if self.steps:
            detail = f"args {preview(args, 120)}" if has_args else ""
            if "tool_result" in content:
                detail += f"{'; ' if detail else ''}result {preview(content['tool_result'], 120)}"
            call_id = attrs.get(semconv.GEN_AI_TOOL_CALL_ID)
            if call_id:
                detail = f"[{as_text(call_id)}] {detail}"
            why = error_text(attrs, status) if error else ""
            self._step("tool", tool, ts - duration if ts else 0, duration, why, detail, self.span_eid)

    def _process(
        self, entry: dict[str, Any], attrs: JSONObject, error: bool, status: JSONValue, ts: int
    ) -> None:
        self.processes += 1
        command = cls.command_text(attrs)
        exit_code = attrs.get(semconv.PROCESS_EXIT_CODE)
        failed = error or (type(exit_code) is int and exit_code != 0)
        vkind = self._verification_kind(command)
        if vkind is not None:
            parent = entry.get("parent_span_id")
            if isinstance(parent, str) and parent in self.open:
                self.verified_parents.add(parent)
            self._verify(vkind, preview(command, PREVIEW), not failed, entry, ts)
            return
        exe = as_text(attrs.get("process.executable.name")) or name_of(entry).removeprefix("process ").strip()
        if failed:
            why = error_text(attrs, status) if error else ""
            reason = why or f"exit code {exit_code}"
            self._fail(cls.failure_stage(why, cls.SYS), "sys:" + exe, entry, reason, ts)
        elif self.unrecovered:
            self._ok("sys:" + exe)

    def _http(self, entry: dict[str, Any], attrs: JSONObject, error: bool, ts: int) -> None:
        self.http_requests += 1
        parent = entry.get("parent_span_id")
        if isinstance(parent, str) and self.open_kinds.get(parent) == cls.KIND_MODEL:
            return  # the model span says how the call went
        code = attrs.get(semconv.HTTP_RESPONSE_STATUS_CODE)
        host = as_text(attrs.get(semconv.SERVER_ADDRESS)) or "?"
        key = "http:" + host
        if error or (type(code) is int and code >= 400):
            reason = f"HTTP {code}" if code is not None else "request failed"
            stage = cls.LIMITS if code == 429 else cls.SYS
            self._fail(stage, key, entry, reason, ts)
        else:
            self._ok(key)
