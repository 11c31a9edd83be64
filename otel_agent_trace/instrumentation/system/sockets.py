"""Raw socket connects as ``network.connect`` events, when no HTTP client is involved (inside an
HTTP span the connect is the client's business, already described by the span)."""

from __future__ import annotations

import socket
from typing import Any

from . import _audit
from . import _names as n
from ._common import emit
from .http._span import IN_HTTP

_TRANSPORTS: dict[Any, str] = {socket.SOCK_STREAM: "tcp", socket.SOCK_DGRAM: "udp"}


def _audit_connect(rec: Any, args: tuple[Any, ...]) -> None:
    if IN_HTTP.get():
        return
    sock, address = args[0], args[1]
    attrs: dict[str, Any] = {}
    family = getattr(sock, "family", None)
    if family == getattr(socket, "AF_UNIX", None):
        attrs[n.NETWORK_TRANSPORT] = "unix"
        attrs[n.NETWORK_PEER_ADDRESS] = address if isinstance(address, str) else repr(address)
    else:
        attrs[n.NETWORK_TRANSPORT] = _TRANSPORTS.get(getattr(sock, "type", None), "tcp")
        if isinstance(address, tuple) and len(address) >= 2:
            attrs[n.NETWORK_PEER_ADDRESS] = str(address[0])
            attrs[n.NETWORK_PEER_PORT] = int(address[1])
        else:
            attrs[n.NETWORK_PEER_ADDRESS] = repr(address)
    emit(rec, n.NETWORK_CONNECT, attrs)


AUDIT_HANDLERS = {"socket.connect": _audit_connect}


def install() -> None:
    _audit.listen(AUDIT_HANDLERS)


def uninstall() -> None:
    _audit.stop_listening(AUDIT_HANDLERS)
