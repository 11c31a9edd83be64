"""Helpers for the genai tests: reading session files and finished spans."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import orjson

MODEL_OPS = ("chat", "text_completion", "generate_content")


def entries(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in open(path, "rb") if line.strip()]


def model_spans(memory_exporter: Any) -> list[Any]:
    return [
        s
        for s in memory_exporter.get_finished_spans()
        if (s.attributes or {}).get("gen_ai.operation.name") in MODEL_OPS
    ]


def strip_digests(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A rebuilt conversation without the size/hash fields the session adds to each message."""
    return [{k: v for k, v in m.items() if k not in ("content_chars", "content_sha256")} for m in messages]


def one_model_span(memory_exporter: Any) -> Any:
    """The one model span finished (fails naming the spans if there are more or none)."""
    spans = model_spans(memory_exporter)
    assert len(spans) == 1, [s.name for s in spans]
    return spans[0]


T = TypeVar("T")


def uninstrumented(instrumentor: type[Any], provider: Any, call: Callable[[], T]) -> T:
    """``call()`` with ``instrumentor`` switched off, switched on again after."""
    instrumentor().uninstrument()
    try:
        return call()
    finally:
        instrumentor().instrument(tracer_provider=provider)
