"""The text and arguments of a message, whatever SDK wrote it."""

from __future__ import annotations

import json
from typing import Any, cast


def parse_arguments(arguments: Any) -> Any:
    """Tool-call arguments as JSON when they are a JSON string, else as given."""
    if isinstance(arguments, str):
        try:
            return json.loads(arguments)
        except ValueError:
            return arguments
    return arguments


def call_arguments(value: Any) -> Any:
    """A tool call's arguments as a model gives them back: parsed JSON, ``{}`` for none."""
    if isinstance(value, str):
        return parse_arguments(value)
    return value if value is not None else {}


def text_of(content: Any) -> str | None:
    """The text of a message content (a string, or a list of text parts of any of the SDKs)."""
    if content is None:
        return None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts: list[str] = []
        parts = cast("list[Any]", content)
        for part in parts:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, dict):
                block = cast("dict[str, Any]", part)
                text = block.get("text")
                if isinstance(text, str):
                    texts.append(text)
        return "".join(texts) if texts else None
    return None


def flat_text(content: Any) -> str:
    """A content as one string for a model: text parts joined, JSON parts (Strands' ``json``
    blocks) and any other value as JSON, nothing as ``""``."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts: list[str] = []
        for part in cast("list[Any]", content):
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, dict):
                block = cast("dict[str, Any]", part)
                text, value = block.get("text"), block.get("json")
                if isinstance(text, str):
                    texts.append(text)
                elif isinstance(value, (dict, list)):
                    texts.append(json.dumps(value))
        return "".join(texts)
    return "" if content is None else json.dumps(content)


def blocks_of(content: Any) -> list[dict[str, Any]]:
    """The dict blocks of a list content (none for a string)."""
    if not isinstance(content, list):
        return []
    return [cast("dict[str, Any]", b) for b in cast("list[Any]", content) if isinstance(b, dict)]


def result_text(value: Any) -> str:
    """A tool's result as the text a model is given (a string as it is, else as JSON)."""
    if isinstance(value, str):
        return value
    return flat_text(value) if isinstance(value, list) else json.dumps(value, ensure_ascii=False)
