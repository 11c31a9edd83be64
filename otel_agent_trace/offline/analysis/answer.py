"""A run's final answer as text, whatever shape its agent returned it in.

An agent's recorded output is often more than its answer: Strands returns the whole assistant
message (with ``metadata.metrics`` timings and a random ``tracking_id``), an ``AgentResult``, a
LangGraph graph its whole final state. Two runs that answered the same must compare the same, so
the answer is the text the user reads: the message's text blocks, the state's last AI message.
"""

from __future__ import annotations

from ..jsonvalue import JSONValue

_AI_TYPES = ("ai", "AIMessage", "AIMessageChunk", "assistant")
_TEXT_KEYS = ("final_output", "output", "answer", "text")


def _blocks_text(blocks: JSONValue) -> str | None:
    """The text of a content value: a string, or the ``text`` of its blocks joined."""
    if isinstance(blocks, str):
        return blocks
    if not isinstance(blocks, list):
        return None
    parts: list[str] = []
    for block in blocks:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict):
            text = block.get("text")
            if isinstance(text, str):
                parts.append(text)
    return "".join(parts) if parts else None


def _message_text(message: JSONValue) -> str | None:
    """An assistant message's text: ours and OpenAI's (``role``), LangChain's (``type``, or its
    serialised form with ``kwargs``) and Strands' (``content`` blocks)."""
    if not isinstance(message, dict):
        return None
    kwargs = message.get("kwargs")
    if message.get("lc") is not None and isinstance(kwargs, dict):
        ids = message.get("id")
        kind = ids[-1] if isinstance(ids, list) and ids else None
        return _blocks_text(kwargs.get("content")) if kind in _AI_TYPES else None
    if message.get("role", message.get("type")) not in _AI_TYPES:
        return None
    return _blocks_text(message.get("content"))


def answer_text(output: JSONValue) -> str | None:
    """The answer text in an agent's output, or ``None`` when no known shape holds one."""
    if isinstance(output, str):
        return output
    if isinstance(output, list):
        if all(isinstance(b, str) or (isinstance(b, dict) and "text" in b) for b in output):
            return _blocks_text(output)  # content blocks
        for item in reversed(output):  # a graph's streamed (mode, state) pair, a list of results
            text = answer_text(item) if isinstance(item, dict) else None
            if text is not None:
                return text
        return None
    if not isinstance(output, dict):
        return None
    text = _message_text(output)
    if text is not None:
        return text
    for key in ("message", "last_message"):  # a Strands AgentResult, a result wrapper
        text = _message_text(output.get(key))
        if text is not None:
            return text
    messages = output.get("messages")  # a LangGraph state: its last AI message
    if isinstance(messages, list):
        for message in reversed(messages):
            text = _message_text(message)
            if text is not None:
                return text
    for key in _TEXT_KEYS:
        text = output.get(key)
        if isinstance(text, str):
            return text
    return None


def is_digest(output: JSONValue) -> bool:
    """Whether the output is only its length and SHA-256 (the trace tier without content)."""
    return isinstance(output, dict) and set(output) <= {"chars", "sha256"} and "sha256" in output
