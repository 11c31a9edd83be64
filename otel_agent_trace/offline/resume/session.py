"""What resuming reads of a loaded session: a protocol, so ``resume`` does not import the loader.

:class:`otel_agent_trace.offline.loader.LoadedSession` is one; the loader's convenience methods
(``rebuild_context``, ``resume_from_snapshot``, …) call into this package, not the other way.
"""

from __future__ import annotations

from typing import Protocol

from ..formats import Format
from ..formats.protocol import Session as FormatSession


class Session(FormatSession, Protocol):
    """What a format reads of a session, and the format itself."""

    @property
    def format(self) -> Format: ...
