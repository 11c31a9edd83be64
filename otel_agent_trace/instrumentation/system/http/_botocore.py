"""botocore's transport, ``URLLib3Session.send``: each exchange kept for model replay, and
answered by the player during one (boto3 clients: Amazon Bedrock, as Strands and DevDuck call it).

botocore hands ``send`` a final request (``AWSPreparedRequest``: method, URL, signed headers, body
bytes) and gets back an ``AWSResponse`` whose ``raw`` is urllib3's response. For a call whose
output is not streamed, ``send`` reads the whole body before returning (``response.content``):
it is kept as one chunk. For a streamed output (``converse_stream``'s event stream, an
``invoke_model`` body) ``raw`` is handed on unread: it is replaced by a proxy that passes every
byte through and keeps a copy as the caller reads it (:mod:`._urllib3`).

Replaying: the player decides as for ``httpx`` (refusal, divergence, live); a recorded answer is a
real urllib3 ``HTTPResponse`` over the recorded chunks (read back one chunk a read, as recorded),
so botocore parses it, event stream and errors included, exactly as it parsed the original.
"""

from __future__ import annotations

from typing import Any

from otel_agent_trace._internal import replay as _replay
from otel_agent_trace._internal import sink
from otel_agent_trace._internal.guard import internal_error

from . import _exchange, _urllib3

MODULE = "botocore.httpsession"
METHOD = "URLLib3Session.send"


def wrap(patches: Any, module: Any) -> None:
    patches.wrap(module, METHOD, _send)


def _send(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    player = _replay.player
    if player is None and sink._active is None:
        return wrapped(*args, **kwargs)
    request = args[0] if args else kwargs["request"]
    target = _exchange.recording_target(request.url)
    if player is not None:
        response = _answer(player, request, wrapped, args, kwargs)
    else:
        response = wrapped(*args, **kwargs)
    if target is not None:
        _keep(target, request, response)
    return response


# --- recording ---------------------------------------------------------------------------------


def _keep(target: tuple[Any, Any], request: Any, response: Any) -> None:
    try:
        raw = response.raw
        kept = _exchange.keep(
            target,
            method=str(request.method),
            url=str(request.url),
            headers=_urllib3.pairs(request.headers),
            body=_urllib3.body_of(getattr(request, "body", None)),
            status=response.status_code,
            http_version=_urllib3.http_version(raw),
            reason=getattr(raw, "reason", None),
            response_headers=_urllib3.pairs(response.headers),
        )
        if kept is None:
            return
        content = response.__dict__.get("_content")
        if content is not None:  # read by send() already (an output that is not streamed)
            if content:
                kept.add(content)
            kept.done()
        else:
            response.raw = _urllib3.TeeRaw(raw, kept)
    except Exception as exc:
        internal_error("keeping a botocore exchange", exc)


# --- replaying ---------------------------------------------------------------------------------


def _answer(player: Any, request: Any, wrapped: Any, args: Any, kwargs: Any) -> Any:
    found = player.decide(str(request.method), str(request.url), _urllib3.body_of(request.body))
    if found is None:  # on to the live endpoint: path, headers and body kept
        request.url = _exchange.on_live_origin(player, request.url)
        return wrapped(*args, **kwargs)
    from botocore.awsrequest import AWSResponse

    raw = _urllib3.recorded_response(found, str(request.method), str(request.url))
    response = AWSResponse(request.url, found.status, raw.headers, raw)
    if not getattr(request, "stream_output", False):
        response.content  # noqa: B018 -- read now, as send() does for an output not streamed
    return response
