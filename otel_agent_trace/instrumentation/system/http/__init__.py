"""``agent_trace_http``: HTTP requests of ``requests``, ``httpx`` and ``httpx2`` (sync and async),
``urllib.request`` / ``http.client``, ``urllib3`` and ``aiohttp`` as CLIENT child spans (method,
redacted URL, status, duration), and raw socket connects outside them as events.

One instrumentor covers several optional clients, so it requires none: a client that is not
installed is skipped silently (``package.py`` lists the versions each hook was written for).

It also keeps each ``httpx`` / ``httpx2`` / botocore / requests / aiohttp / lm15 (DSPy's native
engine) exchange in the checkpoint tier for model replay, and starts a model replay asked for by
``AGENT_TRACE_MODEL_REPLAY`` (:mod:`._exchange`, :mod:`otel_agent_trace.model_replay`).
"""

from __future__ import annotations

import sys
from collections.abc import Collection
from typing import Any

from opentelemetry.instrumentation.instrumentor import BaseInstrumentor
from wrapt import register_post_import_hook

from otel_agent_trace._internal import replay

from .. import sockets
from . import _span
from ._clients import CLIENTS

# the clients whose exchanges model replay keeps
_EXCHANGE_TRANSPORTS = (
    "httpx",
    "httpx2",
    "botocore.httpsession",
    "requests.adapters",
    "aiohttp.client",
    "dspy._vendor.lm15.transports._sync",  # DSPy 3.4's native engine: its own HTTP client
    "dspy._vendor.lm15.transports._async",
)
_keep_exchanges = False


def _keep_exchanges_of(module: Any) -> None:
    """A post-import hook of ``httpx`` / ``httpx2`` / botocore / requests / aiohttp: the exchange
    recorder is imported only for a program that uses them (most child processes never do)."""
    if _keep_exchanges:
        from . import _exchange

        _exchange.install("instrumentor")  # wraps the transport of each one imported, now or later


def _replay_changed(player: Any) -> None:
    """A model replay started or ended: the exchange hooks answer requests from its player."""
    from . import _exchange

    (_exchange.install if player is not None else _exchange.uninstall)("model_replay")


replay.on_change(_replay_changed)


def url_without_secrets(url: str) -> str:
    """``url`` as a recorded exchange keeps it: without user info and without query parameters
    named like credentials (how a model replay compares a request with the recorded one)."""
    from ._exchange import url_without_secrets as without

    return without(url)


def _wrap_client(module: Any) -> None:
    """Wrap one client's entry points (a post-import hook: clients are never imported by us)."""
    if not _span.PATCHES.on:
        return
    for _client, module_name, dotted, factory in CLIENTS:
        if module_name == module.__name__:
            _span.PATCHES.wrap(module, dotted, factory())  # a version without it: skipped


class HTTPInstrumentor(BaseInstrumentor):
    def instrumentation_dependencies(self) -> Collection[str]:
        from .package import _instruments  # read when asked, not at start-up

        return _instruments

    def _instrument(self, **kwargs: Any) -> None:
        _span.configure()
        _span.PATCHES.start(kwargs.get("tracer_provider"))
        for module_name in dict.fromkeys(module for _c, module, _d, _f in CLIENTS):
            # Now if already imported, else when it is (absent clients: never).
            register_post_import_hook(_wrap_client, module_name)
        sockets.install()
        global _keep_exchanges
        _keep_exchanges = True
        for module_name in _EXCHANGE_TRANSPORTS:
            register_post_import_hook(_keep_exchanges_of, module_name)

    def _uninstrument(self, **kwargs: Any) -> None:
        global _keep_exchanges
        _keep_exchanges = False
        exchange = sys.modules.get(f"{__name__}._exchange")
        if exchange is not None:
            exchange.uninstall("instrumentor")
        sockets.uninstall()
        _span.PATCHES.stop()


__all__ = ["HTTPInstrumentor"]
