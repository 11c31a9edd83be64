"""The player: answers each request of a replayed run from the recording, in order.

It sits under the HTTP client, in place of the network (the transport hook of
:mod:`otel_agent_trace.instrumentation.system.http._exchange` hands it every request). Per request:

* to an origin the recording never talked to: refused (:class:`ModelReplayRefused`), never sent
  (a loopback address is taken for the recorded loopback origin of the same scheme whatever its
  port: a local server's port is often chosen as it starts; nothing is sent to it either way);
* the same as the next recorded one (method, path, JSON body; values that change from run to
  run by nature, such as the clock or a pid inside a prompt, aside: :mod:`._diff`): answered with
  the recorded response, its body streamed chunk by chunk as recorded (those values are reported
  as ``volatile`` on the call, and counted);
* different: a :class:`Divergence` is reported (which call, which recorded entry, a diff), then,
  by ``on_divergence``: ``stop`` raises :class:`ModelReplayDivergence`; ``continue`` answers with
  the recorded response anyway; ``live`` sends this request and every later one to ``live_url``.

The errors derive from ``BaseException``: the SDKs retry on ``Exception`` from their transport,
which would send the same refused request again and bury the report under a connection error.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from dataclasses import asdict, dataclass, field
from typing import Any
from urllib.parse import urlsplit

from otel_agent_trace._internal.replay import ModelReplayStop

from . import _diff
from ._recording import Exchange, Recording, is_loopback, origin, target

ON_DIVERGENCE = ("stop", "continue", "live")
_LOOKAHEAD = 8  # concurrent calls may reach the transport in another order than recorded


class ModelReplayDivergence(ModelReplayStop):
    """A request differs from the recorded one; the message is the report."""


class ModelReplayRefused(ModelReplayStop):
    """A request that would have left the machine during a replay; it was not sent."""


@dataclass
class Divergence:
    call: int  # 1-based number of the request in the replayed run
    recorded_index: int | None  # 1-based number of the recorded exchange it was compared with
    entry_id: str | None  # the recording's span.end entry that holds that exchange
    span_name: str | None
    request: str  # METHOD URL of the request made now
    differences: list[str] = field(default_factory=list)

    def text(self) -> str:
        where = (
            f"recorded exchange {self.recorded_index} (entry {self.entry_id}, span {self.span_name!r})"
            if self.recorded_index is not None
            else "beyond the end of the recording"
        )
        lines = [f"model replay: call {self.call} ({self.request}) diverges from {where}:"]
        lines += [f"  {d}" for d in self.differences] or ["  (no recorded request left to compare)"]
        return "\n".join(lines)


class Player:
    """Answers requests from a :class:`Recording` (thread-safe)."""

    def __init__(
        self,
        recording: Recording,
        *,
        on_divergence: str = "stop",
        live_url: str | None = None,
        tools: str = "recorded",
        report_path: str | os.PathLike[str] | None = None,
    ):
        if on_divergence not in ON_DIVERGENCE:
            raise ValueError(f"on_divergence={on_divergence!r}: expected one of {ON_DIVERGENCE}")
        if on_divergence == "live" and not live_url:
            raise ValueError("on_divergence='live' needs live_url (the endpoint to continue against)")
        if tools not in ("live", "recorded"):
            raise ValueError(f"tools={tools!r}: expected 'live' or 'recorded'")
        self.recording = recording
        self.on_divergence = on_divergence
        self.live_url = live_url
        self.tools = tools
        self.report_path = report_path
        self.origins = recording.origins
        # schemes of the recorded loopback origins (see _known_origin)
        self._loopback = {scheme for scheme, host, _port in self.origins if is_loopback(host)}
        self.calls: list[dict[str, Any]] = []
        self.divergences: list[Divergence] = []
        self.refused: list[str] = []
        self.volatile_values = 0  # values that differed only as volatile (see _diff), all calls
        self.live = False
        self.stopped = False
        self._used = [False] * len(recording.exchanges)
        self._next = 0
        self._lock = threading.RLock()
        self._streams: dict[tuple[str, bool], type] = {}

    # -- answering ------------------------------------------------------------------------------

    def answer(self, module: Any, request: Any, send: Any) -> Any:
        found = self._decide(request)
        if found is None:
            return send(self._live_request(module, request))
        return self._response(module, request, found, is_async=False)

    async def answer_async(self, module: Any, request: Any, send: Any) -> Any:
        found = self._decide(request)
        if found is None:
            return await send(self._live_request(module, request))
        return self._response(module, request, found, is_async=True)

    def _decide(self, request: Any) -> Exchange | None:
        method = request.method.decode() if isinstance(request.method, bytes) else str(request.method)
        return self.decide(method, str(request.url), getattr(request, "_content", None))

    def decide(self, method: str, url: str, body: bytes | None) -> Exchange | None:
        """The recorded exchange that answers this request, ``None`` to send it live (to
        :attr:`live_url`), or raise. For a transport of any HTTP client: it builds its own
        response from the exchange (``status``, ``response_headers``, ``chunks``)."""
        from otel_agent_trace.instrumentation.system.http import url_without_secrets

        url = url_without_secrets(url)  # compared as recorded: credentials left out
        with self._lock:
            number = len(self.calls) + 1
            call: dict[str, Any] = {"call": number, "request": f"{method} {url}"}
            self.calls.append(call)
            if self.stopped:
                call["status"] = "refused"
                raise ModelReplayRefused(
                    f"model replay: call {number} ({method} {url}) refused, not sent: the replay "
                    "stopped at an earlier divergence"
                )
            if not self._known_origin(url, call):
                call["status"] = "refused"
                self.refused.append(f"{method} {url}")
                self._save()
                raise ModelReplayRefused(
                    f"model replay: {method} {url} refused, not sent: the recording "
                    f"({self.recording.path}) never talked to {urlsplit(url).netloc}, and nothing "
                    "leaves the machine during a replay"
                )
            if self.live:
                call["status"] = "live"
                return None
            path = target(url)
            candidate = self._candidate()
            if candidate is not None:  # the next recorded one, or a same one just after it
                first_comparison = None
                for i in range(candidate, min(candidate + _LOOKAHEAD, len(self._used))):
                    if self._used[i]:
                        continue
                    found = _compare(method, path, body, self.recording.exchanges[i])
                    first_comparison = first_comparison or found
                    if not found.differences:
                        if found.volatile:
                            call["volatile"] = found.volatile
                            self.volatile_values += found.volatile_values
                        return self._take(call, i, "replayed")
                rec = self.recording.exchanges[candidate]
                diffs = (first_comparison or _compare(method, path, body, rec)).differences
                divergence = Divergence(
                    number, rec.index, rec.entry_id, rec.span_name, call["request"], diffs
                )
            else:
                divergence = Divergence(number, None, None, None, call["request"])
            self.divergences.append(divergence)
            call["divergence"] = True
            first = len(self.divergences) == 1
            if first:
                print(divergence.text(), file=sys.stderr, flush=True)
            if self.on_divergence == "continue" and candidate is not None:
                return self._take(call, candidate, "diverged, answered as recorded")
            if self.on_divergence == "live":
                self.live = True
                call["status"] = "live"
                print(f"model replay: continuing live against {self.live_url}", file=sys.stderr, flush=True)
                self._save()
                return None
            self.stopped = True
            call["status"] = "stopped"
            self._save()
            raise ModelReplayDivergence(divergence.text())

    def _known_origin(self, url: str, call: dict[str, Any]) -> bool:
        """Whether the recording talked to ``url``'s origin. A loopback address stands for the
        recorded loopback origin of the same scheme whatever its port (a local model server,
        such as the README's demo model, binds a free port each run): the request is still
        answered from the recording or refused, and only ``live_url`` is ever sent to."""
        scheme, host, port = origin(url)
        if (scheme, host, port) in self.origins:
            return True
        if scheme in self._loopback and is_loopback(host):
            call["origin"] = "loopback: port not compared"
            return True
        return False

    def _candidate(self) -> int | None:
        while self._next < len(self._used) and self._used[self._next]:
            self._next += 1
        return self._next if self._next < len(self._used) else None

    def _take(self, call: dict[str, Any], i: int, status: str) -> Exchange:
        self._used[i] = True
        rec = self.recording.exchanges[i]
        call.update(status=status, recorded_index=rec.index, entry_id=rec.entry_id)
        if rec.truncated:
            call["status"] = "refused"
            self.stopped = True
            raise ModelReplayRefused(
                f"model replay: recorded exchange {rec.index} (entry {rec.entry_id}) was over "
                "AGENT_TRACE_EXCHANGE_MAX_BYTES when recorded, so its body was not kept and it "
                "cannot be answered; record again with a larger cap"
            )
        return rec

    # -- responses ------------------------------------------------------------------------------

    def _response(self, module: Any, request: Any, rec: Exchange, *, is_async: bool) -> Any:
        extensions: dict[str, Any] = {}
        if rec.http_version:
            extensions["http_version"] = rec.http_version.encode("ascii", "replace")
        if rec.reason:
            extensions["reason_phrase"] = rec.reason.encode("ascii", "replace")
        return module.Response(
            rec.status,
            headers=[(k, v) for k, v in rec.response_headers],
            stream=self._stream_type(module, is_async)(rec.chunks),
            extensions=extensions,
            request=request,
        )

    def _stream_type(self, module: Any, is_async: bool) -> type:
        key = (module.__name__, is_async)
        found = self._streams.get(key)
        if found is None:
            found = self._streams[key] = _replay_stream(module, is_async)
        return found

    def _live_request(self, module: Any, request: Any) -> Any:
        """``request`` sent to ``live_url``'s origin instead (path, headers and body kept)."""
        base = urlsplit(self.live_url or "")
        url = request.url.copy_with(scheme=base.scheme, host=base.hostname, port=base.port)
        headers = module.Headers(request.headers)
        headers["host"] = url.netloc.decode("ascii")
        return module.Request(
            request.method, url, headers=headers, content=getattr(request, "_content", b"") or b""
        )

    # -- tools ----------------------------------------------------------------------------------

    def tool_result(self, name: str, call_id: str | None) -> tuple[bool, Any]:
        """``(True, recorded result)`` for a tool call answered from the recording; ``(False, None)``
        to run the tool (``tools="live"``, or no such call recorded and not stopping)."""
        if self.tools != "recorded":
            return False, None
        with self._lock:
            calls = [t for t in self.recording.tools if not t.used and t.name == name and not t.error]
            chosen = next((t for t in calls if call_id and t.call_id == call_id), None)
            if chosen is None and calls:
                chosen = calls[0]
            if chosen is not None:
                chosen.used = True
                return True, chosen.result
            divergence = Divergence(
                len(self.calls), None, None, None, f"tool {name} (call id {call_id})",
                ["no recorded call of this tool left to answer it"],
            )  # fmt: skip
            self.divergences.append(divergence)
            print(divergence.text(), file=sys.stderr, flush=True)
            if self.on_divergence == "stop":
                self.stopped = True
                self._save()
                raise ModelReplayDivergence(divergence.text())
            return False, None

    # -- report ---------------------------------------------------------------------------------

    def report(self) -> dict[str, Any]:
        """What happened so far: every request and how it was answered, the divergences."""
        with self._lock:
            return {
                "source_session": self.recording.session_id,
                "source_path": self.recording.path,
                "recorded_exchanges": len(self.recording.exchanges),
                "answered": sum(1 for c in self.calls if c.get("recorded_index")),
                "unused": self._used.count(False),
                "on_divergence": self.on_divergence,
                "live": self.live,
                "stopped": self.stopped,
                "volatile_values": self.volatile_values,
                "calls": [dict(c) for c in self.calls],
                "divergences": [asdict(d) for d in self.divergences],
                "refused": list(self.refused),
            }

    def _save(self) -> None:
        if self.report_path is None:
            return
        path = os.fspath(self.report_path)
        tmp = f"{path}.tmp{os.getpid()}"
        try:
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump(self.report(), f, indent=1)
            os.replace(tmp, path)
        except OSError as exc:
            print(f"model replay: cannot write the report to {path}: {exc}", file=sys.stderr)

    def save_report(self) -> None:
        with self._lock:
            self._save()


def _compare(method: str, path: str, body: bytes | None, rec: Exchange) -> _diff.Comparison:
    return _diff.compare(method, path, body, rec.method, target(rec.url), rec.request_body)


def _replay_stream(module: Any, is_async: bool) -> type:
    """A body that yields the recorded chunks once, like a network stream: iterating it again
    (an SDK draining what is left after its last event) continues where the last pass stopped."""
    if is_async:

        class AsyncRecordedStream(module.AsyncByteStream):  # type: ignore[misc,name-defined]
            def __init__(self, chunks: list[bytes]):
                self._chunks = chunks
                self._next = 0

            async def __aiter__(self) -> Any:
                while self._next < len(self._chunks):
                    self._next += 1
                    yield self._chunks[self._next - 1]

            async def aclose(self) -> None:
                self._next = len(self._chunks)

        return AsyncRecordedStream

    class RecordedStream(module.SyncByteStream):  # type: ignore[misc,name-defined]
        def __init__(self, chunks: list[bytes]):
            self._chunks = chunks
            self._next = 0

        def __iter__(self) -> Any:
            while self._next < len(self._chunks):
                self._next += 1
                yield self._chunks[self._next - 1]

        def close(self) -> None:
            self._next = len(self._chunks)

    return RecordedStream
