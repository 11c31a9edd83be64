"""HTTP clients instrumented when present (each one optional: absent clients are skipped).

``httpx`` and ``httpx2`` are also hooked at their transports (``HTTPTransport.handle_request``,
``AsyncHTTPTransport.handle_async_request``) to keep exchanges for model replay.

``instrumentation_dependencies()`` returns nothing, because one instrumentor covers several
optional clients; these ranges are the versions each client hook was written and tested for.
"""

_instruments_by_client: dict[str, str] = {
    "requests": "requests >= 2.20",
    "httpx": "httpx >= 0.23",
    "httpx2": "httpx2 >= 2.0",
    "urllib3": "urllib3 >= 1.26",
    "aiohttp": "aiohttp >= 3.8",
}
_instruments: tuple[str, ...] = ()
