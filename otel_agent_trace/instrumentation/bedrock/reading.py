"""Reading Bedrock requests and responses: Converse's, and InvokeModel's bodies (Anthropic's shape
first; Amazon Nova's, Meta Llama's, Amazon Titan's, Mistral's, Cohere's and the OpenAI-shaped ones
as far as they can be read generically). Plain dicts in, a :class:`ModelResult` out."""

from __future__ import annotations

import json
from typing import Any

from otel_agent_trace import semconv
from otel_agent_trace.instrumentation._genai.jsonable import jsonable
from otel_agent_trace.instrumentation._genai.model_call import ModelResult

# Request parameters, in each family's words → the semconv attribute.
_PARAMS = {
    "temperature": semconv.GEN_AI_REQUEST_TEMPERATURE,
    "topP": semconv.GEN_AI_REQUEST_TOP_P,
    "top_p": semconv.GEN_AI_REQUEST_TOP_P,
    "p": semconv.GEN_AI_REQUEST_TOP_P,
    "topK": semconv.GEN_AI_REQUEST_TOP_K,
    "top_k": semconv.GEN_AI_REQUEST_TOP_K,
    "k": semconv.GEN_AI_REQUEST_TOP_K,
    "maxTokens": semconv.GEN_AI_REQUEST_MAX_TOKENS,
    "max_tokens": semconv.GEN_AI_REQUEST_MAX_TOKENS,
    "max_new_tokens": semconv.GEN_AI_REQUEST_MAX_TOKENS,
    "max_gen_len": semconv.GEN_AI_REQUEST_MAX_TOKENS,
    "maxTokenCount": semconv.GEN_AI_REQUEST_MAX_TOKENS,
    "max_completion_tokens": semconv.GEN_AI_REQUEST_MAX_TOKENS,
    "seed": semconv.GEN_AI_REQUEST_SEED,
}
_STOPS = ("stopSequences", "stop_sequences", "stop")
_NESTED = ("inferenceConfig", "textGenerationConfig")  # Converse and Nova; Titan


def params_of(*sources: Any) -> dict[str, Any]:
    """``gen_ai.request.*`` attributes from the dicts given (the first to say one wins)."""
    attrs: dict[str, Any] = {}
    for source in sources:
        if not isinstance(source, dict):
            continue
        for key, attr in _PARAMS.items():
            value = source.get(key)
            if isinstance(value, (int, float)) and not isinstance(value, bool) and attr not in attrs:
                attrs[attr] = value
        for key in _STOPS:
            stops = source.get(key)
            if semconv.GEN_AI_REQUEST_STOP_SEQUENCES in attrs or stops is None:
                continue
            if isinstance(stops, str):
                attrs[semconv.GEN_AI_REQUEST_STOP_SEQUENCES] = [stops]
            elif isinstance(stops, (list, tuple)):
                attrs[semconv.GEN_AI_REQUEST_STOP_SEQUENCES] = [str(s) for s in stops]
    return attrs


def converse_params(kwargs: dict[str, Any]) -> dict[str, Any]:
    return params_of(kwargs.get("inferenceConfig"), kwargs.get("additionalModelRequestFields"))


def body_of(kwargs: dict[str, Any]) -> dict[str, Any] | None:
    """InvokeModel's JSON body as a dict (bytes or text; a file object is never read)."""
    body = kwargs.get("body")
    if isinstance(body, (bytes, bytearray, str)):
        try:
            value = json.loads(body)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None
    return None


def body_params(body: dict[str, Any] | None) -> dict[str, Any]:
    if body is None:
        return {}
    return params_of(body, *(body.get(key) for key in _NESTED))


def body_input(body: dict[str, Any] | None) -> tuple[list[Any], Any, Any]:
    """The messages, system prompt and tool definitions of an InvokeModel body."""
    if body is None:
        return [], None, None
    messages = body.get("messages")
    if isinstance(messages, list):
        messages = jsonable(messages)
    else:
        prompt = next(
            (body[k] for k in ("prompt", "inputText", "message") if isinstance(body.get(k), str)), None
        )
        messages = [{"role": "user", "content": prompt}] if prompt is not None else []
    system = body.get("system")
    system = jsonable(system) if isinstance(system, (str, list)) else None
    tools = body.get("tools")
    return messages, system, tool_specs(tools) if isinstance(tools, list) else None


def tool_specs(tools: Any) -> list[Any] | None:
    """Tool definitions, Converse's ``{"toolSpec": {...}}`` unwrapped (the shape Strands' tool specs
    and Anthropic's tools have: ``name`` first-level)."""
    if not isinstance(tools, list):
        return None
    out = []
    for tool in tools:
        if isinstance(tool, dict) and isinstance(tool.get("toolSpec"), dict):
            out.append(jsonable(tool["toolSpec"]))
        elif isinstance(tool, dict) and "cachePoint" not in tool:
            out.append(jsonable(tool))
    return out or None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _usage(result: ModelResult, usage: Any, keys: tuple[str, str, str, str]) -> None:
    """A usage dict's counts (its ``keys``: input, output, cache read, cache written). Its input
    count leaves out the tokens read from and written to the cache; the semconv input count
    includes them (as for Anthropic)."""
    if not isinstance(usage, dict):
        return
    inp, out, read, written = (_int(usage.get(key)) for key in keys)
    if inp is not None:
        result.input_tokens = inp + (read or 0) + (written or 0)
    if out is not None:
        result.output_tokens = out
    if read is not None:
        result.cache_read_tokens = read
    if written is not None:
        result.cache_creation_tokens = written


_CONVERSE_USAGE = ("inputTokens", "outputTokens", "cacheReadInputTokens", "cacheWriteInputTokens")
_ANTHROPIC_USAGE = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")


def converse_usage(result: ModelResult, usage: Any) -> None:
    """Converse's usage (``inputTokens``, ``cacheReadInputTokens``, …)."""
    _usage(result, usage, _CONVERSE_USAGE)


def anthropic_usage(result: ModelResult, usage: Any) -> None:
    """An Anthropic-on-Bedrock body's usage (``input_tokens``, ``cache_read_input_tokens``, …)."""
    _usage(result, usage, _ANTHROPIC_USAGE)


def tool_calls_of(content: Any) -> list[tuple[str | None, str | None]]:
    """The tool calls in a message's content blocks (Converse's ``toolUse``, Anthropic's ``tool_use``)."""
    calls: list[tuple[str | None, str | None]] = []
    for block in content if isinstance(content, list) else ():
        if not isinstance(block, dict):
            continue
        use = block.get("toolUse")
        if isinstance(use, dict):
            calls.append((use.get("toolUseId"), use.get("name")))
        elif block.get("type") == "tool_use":
            calls.append((block.get("id"), block.get("name")))
    return calls


def _message_result(result: ModelResult, message: Any, content: bool) -> None:
    if not isinstance(message, dict):
        return
    if content:
        result.output_messages = [jsonable(message)]
    result.tool_calls = tool_calls_of(message.get("content"))


def read_converse(response: Any, request_id: str | None, content: bool = True) -> ModelResult:
    """A Converse response (and Amazon Nova's InvokeModel body, which has its shape)."""
    result = ModelResult()
    result.response_id = request_id
    if not isinstance(response, dict):
        return result
    output = response.get("output")
    _message_result(result, output.get("message") if isinstance(output, dict) else None, content)
    if isinstance(response.get("stopReason"), str):
        result.finish_reasons = [response["stopReason"]]
    converse_usage(result, response.get("usage"))
    return result


def _text_message(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def read_body(body: Any, request_id: str | None, content: bool = True) -> ModelResult:
    """An InvokeModel response body, whichever model family's shape it has."""
    if not isinstance(body, dict):
        result = ModelResult()
        result.response_id = request_id
        return result
    if isinstance(body.get("output"), dict):  # Amazon Nova: Converse's shape
        return read_converse(body, request_id, content)
    result = ModelResult()
    result.response_id = body["id"] if isinstance(body.get("id"), str) else request_id
    if isinstance(body.get("model"), str):
        result.response_model = body["model"]
    texts: list[str] = []
    reasons: list[Any] = []
    if isinstance(body.get("content"), list):  # Anthropic
        message = {"role": body.get("role", "assistant"), "content": body["content"]}
        _message_result(result, message, content)
        reasons.append(body.get("stop_reason"))
        anthropic_usage(result, body.get("usage"))
    elif isinstance(body.get("choices"), list):  # OpenAI's shape (gpt-oss, AI21 Jamba, Mistral Large)
        for choice in body["choices"]:
            if not isinstance(choice, dict):
                continue
            message = choice.get("message")
            if isinstance(message, dict):
                if content:
                    result.output_messages.append(jsonable(message))
                for call in message.get("tool_calls") or ():
                    fn = call.get("function") if isinstance(call, dict) else None
                    result.tool_calls.append(
                        (call.get("id"), fn.get("name") if isinstance(fn, dict) else None)
                    )
            reasons.append(choice.get("finish_reason") or choice.get("stop_reason"))
        usage = body.get("usage")
        if isinstance(usage, dict):
            result.input_tokens = _int(usage.get("prompt_tokens"))
            result.output_tokens = _int(usage.get("completion_tokens"))
    elif isinstance(body.get("generation"), str):  # Meta Llama
        texts.append(body["generation"])
        reasons.append(body.get("stop_reason"))
        result.input_tokens = _int(body.get("prompt_token_count"))
        result.output_tokens = _int(body.get("generation_token_count"))
    elif isinstance(body.get("results"), list):  # Amazon Titan Text
        result.input_tokens = _int(body.get("inputTextTokenCount"))
        for item in body["results"]:
            if isinstance(item, dict):
                texts.append(str(item.get("outputText") or ""))
                reasons.append(item.get("completionReason"))
                result.output_tokens = _int(item.get("tokenCount"))
    elif isinstance(body.get("outputs"), list):  # Mistral (text completion)
        for item in body["outputs"]:
            if isinstance(item, dict):
                texts.append(str(item.get("text") or ""))
                reasons.append(item.get("stop_reason"))
    elif isinstance(body.get("generations"), list):  # Cohere Command
        for item in body["generations"]:
            if isinstance(item, dict):
                texts.append(str(item.get("text") or ""))
                reasons.append(item.get("finish_reason"))
    elif isinstance(body.get("text"), str):  # Cohere Command R
        texts.append(body["text"])
        reasons.append(body.get("finish_reason"))
        if isinstance(body.get("response_id"), str):
            result.response_id = body["response_id"]
    if texts and content:
        result.output_messages = [_text_message("".join(texts))]
    result.finish_reasons = [str(r) for r in reasons if r]
    metrics = body.get("amazon-bedrock-invocationMetrics")
    if isinstance(metrics, dict):
        _invocation_metrics(result, metrics)
    return result


def _invocation_metrics(result: ModelResult, metrics: dict[str, Any]) -> None:
    """Bedrock's own token counts (the last chunk of an InvokeModel stream), where the model's
    body had none."""
    if result.input_tokens is None:
        result.input_tokens = _int(metrics.get("inputTokenCount"))
    if result.output_tokens is None:
        result.output_tokens = _int(metrics.get("outputTokenCount"))


def _json(text: Any) -> Any:
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return text if isinstance(text, str) else None


_CONVERSE_EVENTS = (
    "messageStart",
    "contentBlockStart",
    "contentBlockDelta",
    "contentBlockStop",
    "messageStop",
    "metadata",
)


class StreamAccumulator:
    """Builds the result of a stream from its events: ConverseStream's (``messageStart``,
    ``contentBlock*``, ``messageStop``, ``metadata``), and InvokeModelWithResponseStream's
    ``{"chunk": {"bytes": ...}}``, whose JSON is Anthropic's stream events, Amazon Nova's (Converse's
    events) or another family's text pieces."""

    def __init__(self, request_id: str | None) -> None:
        self.request_id = request_id
        self.role = "assistant"
        self.blocks: dict[int, dict[str, Any]] = {}
        self.partial: dict[int, list[str]] = {}
        self.texts: list[str] = []
        self.anthropic = False
        self.message: dict[str, Any] = {}
        self.stop: str | None = None
        self.usage: dict[str, Any] | None = None
        self.output_tokens: int | None = None
        self.metrics: dict[str, Any] | None = None

    def observe(self, event: Any) -> None:
        if not isinstance(event, dict):
            return
        chunk = event.get("chunk")
        if isinstance(chunk, dict):
            body = _json(chunk.get("bytes"))
            if isinstance(body, dict):
                self._body_event(body)
            return
        self._converse_event(event)

    # -- ConverseStream (and Nova) ------------------------------------------------------------

    def _converse_event(self, event: dict[str, Any]) -> None:
        for kind, data in event.items():
            if not isinstance(data, dict):
                continue
            if kind == "messageStart":
                self.role = data.get("role") or self.role
            elif kind == "contentBlockStart":
                use = (data.get("start") or {}).get("toolUse")
                if isinstance(use, dict):
                    block = {k: v for k, v in use.items() if k in ("toolUseId", "name")}
                    self.blocks[data.get("contentBlockIndex", len(self.blocks))] = {"toolUse": block}
            elif kind == "contentBlockDelta":
                self._converse_delta(data.get("contentBlockIndex", 0), data.get("delta") or {})
            elif kind == "messageStop":
                self.stop = data.get("stopReason") or self.stop
            elif kind == "metadata":
                self.usage = data.get("usage") if isinstance(data.get("usage"), dict) else self.usage

    def _converse_delta(self, index: int, delta: dict[str, Any]) -> None:
        if "text" in delta:
            block = self.blocks.setdefault(index, {"text": ""})
            block["text"] = (block.get("text") or "") + str(delta["text"])
        elif isinstance(delta.get("toolUse"), dict):
            self.partial.setdefault(index, []).append(str(delta["toolUse"].get("input") or ""))
        elif isinstance(delta.get("reasoningContent"), dict):
            piece = delta["reasoningContent"]
            block = self.blocks.setdefault(index, {"reasoningContent": {"reasoningText": {"text": ""}}})
            reasoning = block.setdefault("reasoningContent", {}).setdefault("reasoningText", {})
            if "text" in piece:
                reasoning["text"] = (reasoning.get("text") or "") + str(piece["text"])
            if "signature" in piece:
                reasoning["signature"] = piece["signature"]

    # -- InvokeModelWithResponseStream --------------------------------------------------------

    def _body_event(self, body: dict[str, Any]) -> None:
        metrics = body.get("amazon-bedrock-invocationMetrics")
        if isinstance(metrics, dict):
            self.metrics = metrics
        kind = body.get("type")
        if isinstance(kind, str):
            self._anthropic_event(kind, body)
        elif any(key in body for key in _CONVERSE_EVENTS):
            self._converse_event(body)
        else:
            self._text_piece(body)

    def _anthropic_event(self, kind: str, event: dict[str, Any]) -> None:
        self.anthropic = True
        if kind == "message_start" and isinstance(event.get("message"), dict):
            self.message = event["message"]
            self.role = self.message.get("role") or self.role
        elif kind == "content_block_start" and isinstance(event.get("content_block"), dict):
            self.blocks[event.get("index", len(self.blocks))] = dict(event["content_block"])
        elif kind == "content_block_delta" and isinstance(event.get("delta"), dict):
            index, delta = event.get("index", 0), event["delta"]
            block = self.blocks.setdefault(index, {"type": "text", "text": ""})
            dtype = delta.get("type")
            if dtype == "text_delta":
                block["text"] = (block.get("text") or "") + str(delta.get("text") or "")
            elif dtype == "input_json_delta":
                self.partial.setdefault(index, []).append(str(delta.get("partial_json") or ""))
            elif dtype == "thinking_delta":
                block["thinking"] = (block.get("thinking") or "") + str(delta.get("thinking") or "")
        elif kind == "message_delta":
            delta = event.get("delta")
            if isinstance(delta, dict) and delta.get("stop_reason"):
                self.stop = delta["stop_reason"]
            usage = event.get("usage")
            if isinstance(usage, dict) and _int(usage.get("output_tokens")) is not None:
                self.output_tokens = usage["output_tokens"]

    def _text_piece(self, body: dict[str, Any]) -> None:
        """Llama (``generation``), Titan (``outputText``), Mistral (``outputs``), Cohere (``text``),
        the OpenAI shape (``choices[].delta``)."""
        pieces: list[Any] = [body.get("generation"), body.get("outputText"), body.get("text")]
        stops: list[Any] = [body.get("stop_reason"), body.get("completionReason"), body.get("finish_reason")]
        for key in ("outputs", "choices"):
            for item in body.get(key) or ():
                if isinstance(item, dict):
                    delta = item.get("delta")
                    pieces.append(delta.get("content") if isinstance(delta, dict) else item.get("text"))
                    stops.append(item.get("stop_reason") or item.get("finish_reason"))
        self.texts.extend(p for p in pieces if isinstance(p, str))
        stop = next((s for s in stops if isinstance(s, str) and s), None)
        if stop:
            self.stop = stop

    # -- the result ---------------------------------------------------------------------------

    def result(self) -> ModelResult:
        result = ModelResult()
        result.response_id = self.request_id
        if self.anthropic:
            if isinstance(self.message.get("id"), str):
                result.response_id = self.message["id"]
            if isinstance(self.message.get("model"), str):
                result.response_model = self.message["model"]
            anthropic_usage(result, self.message.get("usage"))
            if self.output_tokens is not None:
                result.output_tokens = self.output_tokens
        else:
            converse_usage(result, self.usage)
        if self.metrics is not None:
            _invocation_metrics(result, self.metrics)
        if self.stop:
            result.finish_reasons = [str(self.stop)]
        content: list[Any] = []
        for index in sorted(self.blocks):
            block = self.blocks[index]
            text = "".join(self.partial.get(index) or ())
            if "toolUse" in block:
                block["toolUse"]["input"] = _json(text) if text else {}
            elif block.get("type") == "tool_use" and text:
                block["input"] = _json(text)
            content.append(block)
        result.tool_calls = tool_calls_of(content)
        if content:
            result.output_messages = [{"role": self.role, "content": content}]
        elif self.texts:
            result.output_messages = [_text_message("".join(self.texts))]
        return result
