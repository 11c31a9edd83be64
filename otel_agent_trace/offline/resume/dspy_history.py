"""Resuming a DSPy program: its recorded calls as a ``dspy.History``.

A DSPy module keeps no conversation between calls (``Module.history`` is a log of its LM calls,
never sent again): each call builds its prompt from the signature and the call's inputs, and the
one conversation input DSPy has is a ``dspy.History`` that the caller passes in a field the
signature declares (``history: dspy.History = dspy.InputField()``). Its messages are not chat
messages but one dict per earlier turn, of the signature's fields (the inputs and the outputs).
So there is no snapshot to put back into an agent object: what the session holds of each call —
the ``invoke_agent`` span's ``agent_input`` (the module's inputs) and ``agent_output`` (its
``Prediction``) — is made into those dicts, and the caller hands the ``History`` to the next call.
A ``dspy.ReAct`` run cannot be taken up in the middle: its trajectory lives inside one
``forward`` and ReAct takes none as input; its finished calls are turns like any other.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from .session import Session

_AGENT = "invoke_agent"
_INTERNAL_OUTPUTS = ("trajectory",)  # ReAct's steps of one call: not a field of the signature


def dspy_turns(
    session: Session, name: str | None = None, history_field: str = "history"
) -> list[dict[str, Any]]:
    """The finished top-level module calls of ``session`` (those of the module ``name``: the
    span's ``gen_ai.agent.name``, e.g. the signature class), in order, each as one dict of its
    inputs and outputs — the history it was given left out, it is the turns before."""
    spans = session.format.spans(session.events)
    by_id = {s.span_id: s for s in spans}

    def nested(span: Any) -> bool:
        parent = by_id.get(span.parent_span_id or "")
        while parent is not None:
            if parent.attributes.get("gen_ai.operation.name") == _AGENT:
                return True
            parent = by_id.get(parent.parent_span_id or "")
        return False

    turns: list[dict[str, Any]] = []
    for span in sorted(spans, key=lambda s: s.start_ns):
        attrs = span.attributes
        if attrs.get("gen_ai.operation.name") != _AGENT or span.status == "ERROR":
            continue
        if name is not None and attrs.get("gen_ai.agent.name") != name:
            continue
        inputs, outputs = span.content.get("agent_input"), span.content.get("agent_output")
        if not isinstance(inputs, dict) or not isinstance(outputs, dict) or nested(span):
            continue  # not a DSPy module call (its inputs are keywords), or unfinished
        inputs, outputs = cast("dict[str, Any]", inputs), cast("dict[str, Any]", outputs)
        turn = {k: v for k, v in inputs.items() if k != history_field}
        turn.update({k: v for k, v in outputs.items() if k not in _INTERNAL_OUTPUTS})
        turns.append(turn)
    return turns


def to_dspy_history(session: Session, name: str | None = None, history_field: str = "history") -> Any:
    """:func:`dspy_turns` as a ``dspy.History``, for the next call's ``history_field``."""
    return import_module("dspy").History(messages=dspy_turns(session, name, history_field))
