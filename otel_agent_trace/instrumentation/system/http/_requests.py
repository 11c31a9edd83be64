"""requests' transport, ``HTTPAdapter.send``: each exchange kept for model replay, and answered
by the player during one.

The adapter gets the final ``PreparedRequest`` (method, URL, headers, body) and returns a
``Response`` whose ``raw`` (urllib3's response) is not read yet: it is replaced by a proxy that
keeps a copy of what requests reads (decoded, as requests asks urllib3 to decode it). Replaying,
the recorded pieces come back from a real urllib3 response that decodes nothing (so its
``content-encoding`` is left out of it; the ``Response``'s headers are the recorded ones),
through the adapter's own ``build_response``.

Our own requests (the OTLP exporter's) are neither kept nor answered: they go to the network.
"""

from __future__ import annotations

from typing import Any

from otel_agent_trace._internal import replay as _replay
from otel_agent_trace._internal import sink
from otel_agent_trace._internal.guard import internal_error

from . import _exchange, _urllib3

MODULE = "requests.adapters"
METHOD = "HTTPAdapter.send"


def wrap(patches: Any, module: Any) -> None:
    patches.wrap(module, METHOD, _send)


def _send(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    player = _replay.player
    if player is None and sink._active is None:
        return wrapped(*args, **kwargs)
    request = args[0] if args else kwargs["request"]
    if _exchange.own_request(str(request.url)):
        return wrapped(*args, **kwargs)
    target = _exchange.recording_target(request.url)
    if player is not None:
        response = _answer(player, instance, request, wrapped, args, kwargs)
    else:
        response = wrapped(*args, **kwargs)
    if target is not None:
        _keep(target, request, response)
    return response


def _keep(target: tuple[Any, Any], request: Any, response: Any) -> None:
    try:
        raw = response.raw
        kept = _exchange.keep(
            target,
            method=str(request.method),
            url=str(request.url),
            headers=_urllib3.pairs(request.headers),
            body=_urllib3.body_of(request.body),
            status=response.status_code,
            http_version=_urllib3.http_version(raw),
            reason=response.reason,
            response_headers=_urllib3.pairs(getattr(raw, "headers", None) or response.headers),
        )
        if kept is not None:
            response.raw = _urllib3.TeeRaw(raw, kept)
    except Exception as exc:
        internal_error("keeping a requests exchange", exc)


def _answer(player: Any, adapter: Any, request: Any, wrapped: Any, args: Any, kwargs: Any) -> Any:
    found = player.decide(str(request.method), str(request.url), _urllib3.body_of(request.body))
    if found is None:  # on to the live endpoint: path, headers and body kept
        request.url = _exchange.on_live_origin(player, request.url)
        request.headers.pop("Host", None)
        return wrapped(*args, **kwargs)
    from requests.structures import CaseInsensitiveDict

    raw = _urllib3.recorded_response(
        found, str(request.method), str(request.url), leave_out=("content-encoding", "content-length")
    )
    response = adapter.build_response(request, raw)
    response.headers = CaseInsensitiveDict({name: value for name, value in found.response_headers})
    return response
