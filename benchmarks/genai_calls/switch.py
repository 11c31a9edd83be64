"""Switch an instrumentation's patches off and on again without ``uninstrument()``.

Peers' ``uninstrument()`` is not always clean (OpenLLMetry leaves wrappers behind, so each
re-instrument adds a span per call), and ours is not needed to be. Instead: note every module
attribute and class attribute of the modules already imported, instrument, and note what
changed; switching off puts the originals back, switching on the patched values. The same for
every configuration, whatever its instrumentation does.
"""

from __future__ import annotations

import sys
from typing import Any

_MISSING = object()


def _state() -> dict[tuple[int, str], tuple[Any, Any]]:
    """(id of owner, name) -> (owner, value) for module globals and the classes they define."""
    out: dict[tuple[int, str], tuple[Any, Any]] = {}
    for name, module in list(sys.modules.items()):
        md = getattr(module, "__dict__", None)
        if not isinstance(md, dict):
            continue
        for key, value in list(md.items()):
            out[(id(module), key)] = (module, value)
            if isinstance(value, type) and getattr(value, "__module__", None) == name:
                for ckey, cvalue in list(vars(value).items()):
                    out[(id(value), ckey)] = (value, cvalue)
    return out


class PatchSwitch:
    """``s = PatchSwitch(); instrument(); s.capture(); s.off(); s.on()``."""

    def __init__(self) -> None:
        self._before = _state()
        self._changes: list[tuple[Any, str, Any, Any]] = []

    def capture(self) -> int:
        after = _state()
        for key, (owner, old) in self._before.items():
            new = after.get(key, (owner, old))[1]
            # a callable replaced by another (a wrapper), never a cache or a lazy import
            if new is not old and callable(old) and callable(new) and not isinstance(old, type):
                self._changes.append((owner, key[1], old, new))
        known = {id(owner) for owner, _value in self._before.values() if isinstance(owner, type)}
        for key, (owner, new) in after.items():
            # a wrapper set on a class over an inherited method (``wrapt`` on ``OpenAI.request``)
            if key not in self._before and key[0] in known and hasattr(new, "__wrapped__"):
                self._changes.append((owner, key[1], _MISSING, new))
        self._before = {}
        return len(self._changes)

    def _set(self, which: int) -> None:
        for change in self._changes:
            owner, name, value = change[0], change[1], change[2 + which]
            if value is _MISSING:
                if name in vars(owner):
                    delattr(owner, name)
            else:
                setattr(owner, name, value)

    def off(self) -> None:
        self._set(0)

    def on(self) -> None:
        self._set(1)
