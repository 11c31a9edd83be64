"""Each SDK's message shapes, to the GenAI conventions (``role`` + ``parts``: what capture
records) and back (what resume gives an agent): one module per shape — :mod:`.openai_chat`,
:mod:`.openai_responses` (and the OpenAI Agents SDK's input items), :mod:`.anthropic`,
:mod:`.strands`, :mod:`.langchain`, :mod:`.gemini` (google-genai), :mod:`.bedrock_converse` (Amazon
Bedrock's Converse and InvokeModel bodies) — each with ``to_semconv`` where capture converts that
shape and ``from_recorded`` (recorded messages of any shape as that SDK's). Going back goes through one
neutral form (:mod:`.neutral`) that reads every recorded shape; :mod:`.text` holds the text and
arguments of a message whatever its shape.

Pure functions over plain dicts: no SDK, no OpenTelemetry. The SDKs whose agents take message
objects (LangChain, Pydantic AI, smolagents, LlamaIndex, AutoGen, Google ADK) get them from
``otel_agent_trace/offline/resume/sdk_objects.py``, built from the neutral form, importing each
SDK only when an agent of it is given.
"""
