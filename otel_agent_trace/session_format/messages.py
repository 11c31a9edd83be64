"""Message normalisation: each SDK's message shape as GenAI semantic-convention messages
(``role`` + ``parts``), by the names capture imports. Each shape lives in its own module of
:mod:`.shapes` (both directions); this module keeps the names."""

from __future__ import annotations

from .shapes.anthropic import to_semconv as anthropic_to_semconv
from .shapes.bedrock_converse import to_semconv as bedrock_converse_to_semconv
from .shapes.gemini import to_semconv as gemini_to_semconv
from .shapes.langchain import to_semconv as langchain_to_semconv
from .shapes.openai_chat import to_semconv as openai_chat_to_semconv
from .shapes.openai_responses import to_semconv as openai_responses_to_semconv
from .shapes.text import parse_arguments, text_of

__all__ = [
    "anthropic_to_semconv",
    "bedrock_converse_to_semconv",
    "gemini_to_semconv",
    "langchain_to_semconv",
    "openai_chat_to_semconv",
    "openai_responses_to_semconv",
    "parse_arguments",
    "text_of",
]
