"""A Strands ``Model`` that plays a script: each call to ``stream`` answers with the next turn.

Clearly scripted (no model behind it): a turn is a list of content blocks, ``{"text": ...}`` or
``{"toolUse": {"toolUseId", "name", "input"}}``, streamed as Strands' own event shapes.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from strands.models.model import Model


class ScriptedModel(Model):
    def __init__(self, turns: list[list[dict[str, Any]]]):
        self.turns = list(turns)
        self.calls = 0
        self.config: dict[str, Any] = {"model_id": "scripted"}

    def update_config(self, **model_config: Any) -> None:
        self.config.update(model_config)

    def get_config(self) -> Any:
        return self.config

    async def structured_output(
        self, output_model: Any, prompt: Any, system_prompt: Any = None, **kwargs: Any
    ):
        raise NotImplementedError("scripted model: no structured output")
        yield  # pragma: no cover

    async def stream(
        self, messages: Any, tool_specs: Any = None, system_prompt: Any = None, **kwargs: Any
    ) -> AsyncIterator[Any]:
        turn = self.turns[min(self.calls, len(self.turns) - 1)]
        self.calls += 1
        yield {"messageStart": {"role": "assistant"}}
        for block in turn:
            if "toolUse" in block:
                use = block["toolUse"]
                yield {
                    "contentBlockStart": {
                        "start": {"toolUse": {"toolUseId": use["toolUseId"], "name": use["name"]}}
                    }
                }
                yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(use["input"])}}}}
            else:
                yield {"contentBlockDelta": {"delta": {"text": block["text"]}}}
            yield {"contentBlockStop": {}}
        stop = "tool_use" if any("toolUse" in b for b in turn) else "end_turn"
        yield {"messageStop": {"stopReason": stop}}
        yield {
            "metadata": {
                "usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
                "metrics": {"latencyMs": 0},
            }
        }
