"""LangChain messages as plain dicts (``role``, ``content``, ``tool_calls``, ``tool_call_id``) and
as GenAI semconv messages."""

from __future__ import annotations

from typing import Any

from otel_agent_trace.instrumentation._genai.jsonable import jsonable

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


def to_semconv(messages: list[Any]) -> list[dict[str, Any]]:
    out = []
    for m in messages:
        if not isinstance(m, dict):
            continue
        parts: list[dict[str, Any]] = []
        content = m.get("content")
        if m.get("role") == "tool":
            parts.append({"type": "tool_call_response", "id": m.get("tool_call_id"), "response": content})
        elif isinstance(content, str):
            if content:
                parts.append({"type": "text", "content": content})
        elif isinstance(content, list):
            for p in content:
                if isinstance(p, str):
                    parts.append({"type": "text", "content": p})
                elif isinstance(p, dict) and p.get("type") == "text":
                    parts.append({"type": "text", "content": p.get("text")})
        for call in m.get("tool_calls") or ():
            parts.append(
                {
                    "type": "tool_call",
                    "id": call.get("id"),
                    "name": call.get("name"),
                    "arguments": call.get("arguments"),
                }
            )
        out.append({"role": m.get("role"), "parts": parts})
    return out
