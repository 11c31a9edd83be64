"""LangChain messages as plain dicts (``role``, ``content``, ``tool_calls``, ``tool_call_id``) and
as GenAI semconv messages."""

from __future__ import annotations

from typing import Any

from otel_agent_trace.instrumentation._genai.jsonable import jsonable
from otel_agent_trace.session_format.messages import langchain_to_semconv as to_semconv  # noqa: F401

_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool", "function": "function"}

# LangChain provider ids (``ls_provider``) → gen_ai.provider.name
PROVIDERS = {
    "openai": "openai",
    "anthropic": "anthropic",
    "azure": "azure.ai.openai",
    "azure_openai": "azure.ai.openai",
    "bedrock": "aws.bedrock",
    "amazon_bedrock": "aws.bedrock",
    "google_genai": "gcp.gemini",
    "google_vertexai": "gcp.vertex_ai",
    "mistral": "mistral_ai",
    "mistralai": "mistral_ai",
    "groq": "groq",
    "deepseek": "deepseek",
    "xai": "x_ai",
    "ollama": "ollama",
    "cohere": "cohere",
}


def to_dict(message: Any) -> dict[str, Any]:
    """One LangChain ``BaseMessage`` (or a dict already) as a plain message dict."""
    if isinstance(message, dict):
        return jsonable(message)
    kind = getattr(message, "type", None)
    if kind is None:
        return {"role": "unknown", "content": jsonable(message)}
    role = getattr(message, "role", None) if kind == "chat" else _ROLES.get(kind.removesuffix("Chunk"), kind)
    out: dict[str, Any] = {"role": role or kind, "content": jsonable(getattr(message, "content", None))}
    name = getattr(message, "name", None)
    if name:
        out["name"] = name
    calls = getattr(message, "tool_calls", None)
    if calls:
        out["tool_calls"] = [
            {"id": c.get("id"), "name": c.get("name"), "arguments": jsonable(c.get("args"))} for c in calls
        ]
    call_id = getattr(message, "tool_call_id", None)
    if call_id:
        out["tool_call_id"] = call_id
    return out
