"""``agent_trace_http``: HTTP requests of ``requests``, ``httpx`` and ``httpx2`` (sync and async),
``urllib.request`` / ``http.client``, ``urllib3`` and ``aiohttp`` as CLIENT child spans (method,
redacted URL, status, duration), and raw socket connects outside them as events.

One instrumentor covers several optional clients, so it requires none: a client that is not
installed is skipped silently (``package.py`` lists the versions each hook was written for).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from opentelemetry.instrumentation.instrumentor import BaseInstrumentor
from wrapt import register_post_import_hook, wrap_function_wrapper

from .. import sockets
from . import _span
from ._clients import CLIENTS
from .package import _instruments

_wrapped: list[tuple[Any, str, Any]] = []


def _owner(module: Any, dotted: str) -> tuple[Any, str]:
    parts = dotted.split(".")
    owner = module
    for part in parts[:-1]:
        owner = getattr(owner, part)
    return owner, parts[-1]


def _wrap_client(module: Any) -> None:
    """Wrap one client's entry points (a post-import hook: clients are never imported by us)."""
    if not _span._on[0]:
        return
    present = {(owner, name) for owner, name, _ in _wrapped}
    for _client, module_name, dotted, factory in CLIENTS:
        if module_name != module.__name__:
            continue
        try:
            owner, name = _owner(module, dotted)
            if (owner, name) in present or getattr(owner, name, None) is None:
                continue
            wrapper = factory()
            wrap_function_wrapper(module, dotted, wrapper)
            _wrapped.append((owner, name, wrapper))
        except AttributeError:  # a client version without this entry point
            continue


class HTTPInstrumentor(BaseInstrumentor):
    def instrumentation_dependencies(self) -> Collection[str]:
        return _instruments

    def _instrument(self, **kwargs: Any) -> None:
        _span.configure()
        _span._on[0] = True
        for module_name in dict.fromkeys(module for _c, module, _d, _f in CLIENTS):
            # Now if already imported, else when it is (absent clients: never).
            register_post_import_hook(_wrap_client, module_name)
        sockets.install()

    def _uninstrument(self, **kwargs: Any) -> None:
        _span._on[0] = False
        sockets.uninstall()
        # Our wrappers come off where they are outermost; one another library wrapped over stays
        # as a pass-through (``_on`` is off).
        for owner, name, wrapper in list(_wrapped):
            current = owner.__dict__.get(name)
            if getattr(current, "_self_wrapper", None) is wrapper:
                setattr(owner, name, current.__wrapped__)
                _wrapped.remove((owner, name, wrapper))


__all__ = ["HTTPInstrumentor"]
