"""Model replay: run an agent's own code again with every model call answered from a recording.

``with model_replay("agent-sessions/<id>.checkpoint.jsonl"): run_agent()`` — or, for a whole
program, ``otel-agent-trace replay SESSION --model-replay -- python agent.py`` — answers every
``httpx``/``httpx2`` request (so every OpenAI, Anthropic and framework model call) from the
checkpoint-tier recording, in order, and refuses anything else. See ``docs/model-replay.md``.

Loads nothing until a name is used. The player in progress is set in the bridge capture code
reads (:mod:`otel_agent_trace._internal.replay`): capture code never imports this package.
"""

from __future__ import annotations

import sys
import types
from typing import Any

from otel_agent_trace._lazy import lazy_names

_LAZY = {
    "model_replay": "_api",
    "start": "_api",
    "stop": "_api",
    "start_from_settings": "_api",
    "Player": "_player",
    "Divergence": "_player",
    "ModelReplayStop": "_player",
    "ModelReplayDivergence": "_player",
    "ModelReplayRefused": "_player",
    "RecordingError": "_recording",
    "load_recording": "_recording",
}
__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals())
__all__ = sorted(_LAZY)


class _CallableModule(types.ModuleType):
    """``oat.model_replay(session)`` as the issue writes it: the root package exports this
    subpackage, and importing a subpackage sets the parent's attribute of that name to the
    module — so the module itself is the ``model_replay`` block (see :func:`._api.model_replay`)."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from ._api import model_replay

        return model_replay(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
