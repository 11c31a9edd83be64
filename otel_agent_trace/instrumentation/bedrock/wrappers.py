"""The wrapper of ``BaseClient._make_api_call`` and the proxies of Bedrock's response streams.

A call is read as the client hands it over (``_make_api_call(operation_name, api_params)``, the
keyword arguments the user passed). What the caller gets back is botocore's response dict, the
same dict, with its stream or body wrapped in a proxy that passes every item, byte and attribute
through unchanged and ends the span when it is read to its end, closed, or dropped:

* ``converse``: the span ends with the call;
* ``converse_stream``: ``response["stream"]`` (an ``EventStream``) → :class:`EventStreamProxy`;
* ``invoke_model``: ``response["body"]`` (a ``StreamingBody``) → :class:`BodyProxy`;
* ``invoke_model_with_response_stream``: ``response["body"]`` (an ``EventStream``) →
  :class:`EventStreamProxy`.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Callable
from typing import Any

import wrapt

from otel_agent_trace import semconv
from otel_agent_trace._internal.guard import internal_error
from otel_agent_trace.instrumentation._genai import model_call as mc
from otel_agent_trace.instrumentation._genai.jsonable import jsonable, jsonable_list
from otel_agent_trace.instrumentation._genai.params import messages_list
from otel_agent_trace.instrumentation._genai.streams import _Base
from otel_agent_trace.instrumentation._patching import Patches
from otel_agent_trace.instrumentation.bedrock import reading
from otel_agent_trace.session_format.messages import bedrock_converse_to_semconv

PROVIDER = "aws.bedrock"
SERVICE = "bedrock-runtime"
AWS_REQUEST_ID = "aws.request_id"  # the request id AWS gave the call (x-amzn-RequestId)


class _Spec:
    """One operation: how to read its request, and what to do with its response."""

    stream = False

    def read(self, params: dict[str, Any]) -> tuple[str | None, dict[str, Any], Any]:
        """(model id, request attributes, what :meth:`input` reads)."""
        raise NotImplementedError

    def input(self, request: Any) -> tuple[list[Any], Any, Any]:
        raise NotImplementedError

    def begin(self, params: dict[str, Any], patches: Patches) -> mc.ModelCall | None:
        try:
            model, attrs, request = self.read(params)
            call = mc.begin(
                PROVIDER, semconv.OP_CHAT, model, attrs, stream=self.stream, tracer=patches.tracer()
            )
            if call is not None and call.mode == "claimed":
                _enrich(call.span, attrs)
            # (under a framework's span that claimed the call, the framework records the content)
            if call is not None and call.mode != "claimed" and call.wants_content:
                messages, system, tools = self.input(request)
                call.set_input(messages, system, tools, bedrock_converse_to_semconv)
            return call
        except Exception as exc:
            internal_error("starting a bedrock call", exc)
            return None

    def finish(self, call: mc.ModelCall, response: Any) -> Any:
        """The response, its stream or body proxied; the call finished or handed to the proxy."""
        try:
            request_id = _request_id(call, response)
            if not self._hand_over(call, response, request_id):
                call.finish(self.result(response, request_id, call.content))
        except Exception as exc:
            if not call.ended:
                call.finish(mc.ModelResult())
            internal_error("finishing a bedrock call", exc)
        return response

    def _hand_over(self, call: mc.ModelCall, response: Any, request_id: str | None) -> bool:
        return False

    def result(self, response: Any, request_id: str | None, content: bool) -> mc.ModelResult:
        result = mc.ModelResult()
        result.response_id = request_id
        return result


class ConverseSpec(_Spec):
    def __init__(self, stream: bool):
        self.stream = stream

    def read(self, params: dict[str, Any]) -> tuple[str | None, dict[str, Any], Any]:
        model = params.get("modelId")
        return model if isinstance(model, str) else None, reading.converse_params(params), params

    def input(self, request: Any) -> tuple[list[Any], Any, Any]:
        messages = messages_list(request.get("messages")) or []
        system = request.get("system")
        system = jsonable(system) if isinstance(system, (list, tuple)) else None
        tools = request.get("toolConfig")
        tools = reading.tool_specs(tools.get("tools")) if isinstance(tools, dict) else None
        return jsonable_list(messages), system, tools

    def _hand_over(self, call: mc.ModelCall, response: Any, request_id: str | None) -> bool:
        if not self.stream:
            return False
        return _proxy_stream(response, "stream", call, request_id)

    def result(self, response: Any, request_id: str | None, content: bool) -> mc.ModelResult:
        return reading.read_converse(response, request_id, content)


class InvokeSpec(_Spec):
    def __init__(self, stream: bool):
        self.stream = stream

    def read(self, params: dict[str, Any]) -> tuple[str | None, dict[str, Any], Any]:
        model = params.get("modelId")
        body = reading.body_of(params)
        return model if isinstance(model, str) else None, reading.body_params(body), body

    def input(self, request: Any) -> tuple[list[Any], Any, Any]:
        return reading.body_input(request)

    def _hand_over(self, call: mc.ModelCall, response: Any, request_id: str | None) -> bool:
        if self.stream:
            return _proxy_stream(response, "body", call, request_id)
        from botocore.response import StreamingBody

        body = response.get("body") if isinstance(response, dict) else None
        if not isinstance(body, StreamingBody):
            return False
        response["body"] = BodyProxy(body, call, request_id)
        return True


SPECS: dict[str, _Spec] = {
    "Converse": ConverseSpec(stream=False),
    "ConverseStream": ConverseSpec(stream=True),
    "InvokeModel": InvokeSpec(stream=False),
    "InvokeModelWithResponseStream": InvokeSpec(stream=True),
}


def _enrich(span: Any, attrs: dict[str, Any]) -> None:
    """The request parameters on a framework's model span that claimed the call (Strands' says
    the model, not the temperature or token limit it sent), where it has none of its own."""
    if not attrs or not span.is_recording():
        return
    have = getattr(span, "attributes", None) or {}
    span.set_attributes({k: v for k, v in attrs.items() if k not in have})


def _request_id(call: mc.ModelCall, response: Any) -> str | None:
    meta = response.get("ResponseMetadata") if isinstance(response, dict) else None
    found = meta.get("RequestId") if isinstance(meta, dict) else None
    if not isinstance(found, str) or not found:
        return None
    if call.mode != "adopt" and call.span.is_recording():  # (ours, or a framework's we claimed)
        call.span.set_attribute(AWS_REQUEST_ID, found)
    return found


def _proxy_stream(response: Any, key: str, call: mc.ModelCall, request_id: str | None) -> bool:
    from botocore.eventstream import EventStream

    stream = response.get(key) if isinstance(response, dict) else None
    if not isinstance(stream, EventStream):
        return False
    response[key] = EventStreamProxy(stream, call, reading.StreamAccumulator(request_id))
    return True


def _service(instance: Any) -> Any:
    try:
        return instance._service_model.service_name
    except Exception:  # not a botocore client as we know it: left alone
        return None


def api_call(patches: Patches) -> Callable[..., Any]:
    """The wrapper of ``BaseClient._make_api_call(operation_name, api_params)``."""

    def wrapper(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        operation = args[0] if args else kwargs.get("operation_name")
        spec = SPECS.get(operation) if type(operation) is str else None
        if spec is None or _service(instance) != SERVICE:
            return wrapped(*args, **kwargs)
        params = args[1] if len(args) > 1 else kwargs.get("api_params")
        call = spec.begin(params, patches) if isinstance(params, dict) else None
        if call is None:
            return wrapped(*args, **kwargs)
        response = call.call(wrapped, args, kwargs)
        return spec.finish(call, response)

    return wrapper


class EventStreamProxy(_Base):
    """botocore's ``EventStream``, unchanged for its reader: iterating it yields its events, the
    same objects, one by one; ``close()`` closes it. The span ends when the events run out, when
    one is an error (raised unchanged), on ``close()``, when the iteration is dropped before the
    end (a ``break``), or when the stream is collected unread (then with what was received and
    ``agent_trace.stream.abandoned = true``)."""

    def __iter__(self) -> Any:
        return self._self_events(iter(self.__wrapped__))

    def _self_events(self, events: Any) -> Any:
        try:
            for event in events:
                self._self_observe(event)
                yield event
        except GeneratorExit:  # the reader stopped early (a break, or the generator dropped)
            self._self_end()
            raise
        except BaseException as exc:
            self._self_fail(exc)
            raise
        self._self_end(exhausted=True)

    def close(self) -> Any:
        try:
            return self.__wrapped__.close()
        finally:
            self._self_end()


def _body_end(call: mc.ModelCall, data: list[bytes], request_id: str | None, exhausted: bool) -> None:
    if call.ended:
        return
    result = None
    if exhausted:
        try:
            body = json.loads(b"".join(data)) if data else None
            result = reading.read_body(body, request_id, call.content)
        except Exception as exc:  # (a body that is not JSON: the call's facts without its result)
            if not isinstance(exc, ValueError):
                internal_error("reading a bedrock response body", exc)
    if result is None:
        result = mc.ModelResult()
        result.response_id = request_id
    call.finish(result, abandoned=not exhausted)


class BodyProxy(wrapt.ObjectProxy):
    """botocore's ``StreamingBody`` of an InvokeModel response, unchanged for its reader: the same
    bytes from ``read``, ``readinto``, ``readlines``, ``iter_chunks``, ``iter_lines`` and iteration.
    The span ends when the body has been read to its end (with the model's answer read from it),
    on ``close()`` before that, or when the body is collected unread (then abandoned)."""

    def __init__(self, wrapped: Any, call: mc.ModelCall, request_id: str | None):
        super().__init__(wrapped)
        self._self_call = call
        self._self_data: list[bytes] = []
        self._self_request_id = request_id
        self._self_finalizer = weakref.finalize(self, _body_end, call, self._self_data, request_id, False)

    def _self_end(self, exhausted: bool) -> None:
        if self._self_finalizer.detach() is None:  # already ended
            return
        try:
            _body_end(self._self_call, self._self_data, self._self_request_id, exhausted)
        except Exception as exc:
            internal_error("ending a bedrock body", exc)

    def _self_fail(self, exc: BaseException) -> None:
        if self._self_finalizer.detach() is not None:
            self._self_call.fail(exc)

    def read(self, amt: Any = None) -> Any:
        try:
            chunk = self.__wrapped__.read(amt)
        except BaseException as exc:
            self._self_fail(exc)
            raise
        if self._self_finalizer.alive:
            if chunk:
                self._self_data.append(chunk)
            if amt is None or amt < 0 or (not chunk and amt > 0):  # all of it, or its end
                self._self_end(exhausted=True)
        return chunk

    def readinto(self, b: Any) -> Any:
        try:
            count = self.__wrapped__.readinto(b)
        except BaseException as exc:
            self._self_fail(exc)
            raise
        if self._self_finalizer.alive:
            if count:
                self._self_data.append(bytes(memoryview(b)[:count]))
            elif len(b) > 0:
                self._self_end(exhausted=True)
        return count

    def readlines(self) -> Any:
        try:
            lines = self.__wrapped__.readlines()
        except BaseException as exc:
            self._self_fail(exc)
            raise
        if self._self_finalizer.alive:
            self._self_data.extend(lines)
            self._self_end(exhausted=True)
        return lines

    # botocore's own iteration, run over this proxy so that it reads through ``read`` above
    def iter_chunks(self, *args: Any, **kwargs: Any) -> Any:
        return type(self.__wrapped__).iter_chunks(self, *args, **kwargs)

    def iter_lines(self, *args: Any, **kwargs: Any) -> Any:
        return type(self.__wrapped__).iter_lines(self, *args, **kwargs)

    def __iter__(self) -> Any:
        return type(self.__wrapped__).__iter__(self)

    def __next__(self) -> Any:
        return type(self.__wrapped__).__next__(self)

    next = __next__

    def close(self) -> Any:
        try:
            return self.__wrapped__.close()
        finally:
            self._self_end(exhausted=False)

    def __exit__(self, *exc_info: Any) -> Any:
        try:
            return self.__wrapped__.__exit__(*exc_info)
        finally:
            self._self_end(exhausted=False)
