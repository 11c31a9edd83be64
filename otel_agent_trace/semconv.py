"""Attribute and span names we write: the GenAI semantic conventions plus our own few.

The ``opentelemetry-semantic-conventions`` gen_ai constants are deprecated upstream, so the names
live here as plain strings. Our own attributes use the ``agent_trace.`` / ``session.`` prefixes.
"""

# --- GenAI -------------------------------------------------------------------------------------
# The instrumentation scope of every span we make (the tracer name).
INSTRUMENTATION_SCOPE = "otel_agent_trace"

GEN_AI_OPERATION_NAME = "gen_ai.operation.name"
GEN_AI_PROVIDER_NAME = "gen_ai.provider.name"
GEN_AI_REQUEST_MODEL = "gen_ai.request.model"
GEN_AI_REQUEST_TEMPERATURE = "gen_ai.request.temperature"
GEN_AI_REQUEST_TOP_P = "gen_ai.request.top_p"
GEN_AI_REQUEST_MAX_TOKENS = "gen_ai.request.max_tokens"
GEN_AI_REQUEST_STOP_SEQUENCES = "gen_ai.request.stop_sequences"
GEN_AI_REQUEST_STREAM = "gen_ai.request.stream"
GEN_AI_REQUEST_TOP_K = "gen_ai.request.top_k"
GEN_AI_REQUEST_FREQUENCY_PENALTY = "gen_ai.request.frequency_penalty"
GEN_AI_REQUEST_PRESENCE_PENALTY = "gen_ai.request.presence_penalty"
GEN_AI_REQUEST_SEED = "gen_ai.request.seed"
GEN_AI_REQUEST_CHOICE_COUNT = "gen_ai.request.choice.count"
GEN_AI_RESPONSE_MODEL = "gen_ai.response.model"
GEN_AI_RESPONSE_ID = "gen_ai.response.id"
GEN_AI_RESPONSE_FINISH_REASONS = "gen_ai.response.finish_reasons"
GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK = "gen_ai.response.time_to_first_chunk"
GEN_AI_USAGE_INPUT_TOKENS = "gen_ai.usage.input_tokens"
GEN_AI_USAGE_OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS = "gen_ai.usage.cache_read.input_tokens"
GEN_AI_USAGE_REASONING_OUTPUT_TOKENS = "gen_ai.usage.reasoning.output_tokens"
GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS = "gen_ai.usage.cache_creation.input_tokens"
GEN_AI_AGENT_ID = "gen_ai.agent.id"
GEN_AI_AGENT_NAME = "gen_ai.agent.name"
GEN_AI_AGENT_DESCRIPTION = "gen_ai.agent.description"
GEN_AI_AGENT_VERSION = "gen_ai.agent.version"
GEN_AI_CONVERSATION_ID = "gen_ai.conversation.id"
GEN_AI_TOOL_NAME = "gen_ai.tool.name"
GEN_AI_TOOL_CALL_ID = "gen_ai.tool.call.id"
GEN_AI_TOOL_TYPE = "gen_ai.tool.type"
GEN_AI_TOOL_DESCRIPTION = "gen_ai.tool.description"
GEN_AI_TOOL_CALL_ARGUMENTS = "gen_ai.tool.call.arguments"
GEN_AI_TOOL_CALL_RESULT = "gen_ai.tool.call.result"
GEN_AI_TOOL_DEFINITIONS = "gen_ai.tool.definitions"
GEN_AI_SYSTEM_INSTRUCTIONS = "gen_ai.system_instructions"
GEN_AI_INPUT_MESSAGES = "gen_ai.input.messages"
GEN_AI_OUTPUT_MESSAGES = "gen_ai.output.messages"
ERROR_TYPE = "error.type"

# gen_ai.operation.name values
OP_CHAT = "chat"
OP_TEXT_COMPLETION = "text_completion"
OP_GENERATE_CONTENT = "generate_content"
OP_EMBEDDINGS = "embeddings"
OP_CREATE_AGENT = "create_agent"
OP_INVOKE_AGENT = "invoke_agent"
OP_INVOKE_WORKFLOW = "invoke_workflow"
OP_EXECUTE_TOOL = "execute_tool"

# --- system layer ------------------------------------------------------------------------------
PROCESS_COMMAND_ARGS = "process.command_args"
PROCESS_EXECUTABLE_PATH = "process.executable.path"
PROCESS_PID = "process.pid"
PROCESS_EXIT_CODE = "process.exit.code"
PROCESS_WORKING_DIRECTORY = "process.working_directory"
FILE_PATH = "file.path"
FILE_SIZE = "file.size"
HTTP_REQUEST_METHOD = "http.request.method"
HTTP_RESPONSE_STATUS_CODE = "http.response.status_code"
URL_FULL = "url.full"
SERVER_ADDRESS = "server.address"
SERVER_PORT = "server.port"
HTTP_REQUEST_RESEND_COUNT = "http.request.resend_count"  # past the first attempt

# --- ours --------------------------------------------------------------------------------------
SESSION_ID = "session.id"  # ours unless the agent set its own (never replaced)
AGENT_TRACE_SESSION_ID = "agent_trace.session.id"  # always ours, on every span: the key to search
LAYER = "agent_trace.layer"
TOOL_IMPORT_PATH = "agent_trace.tool.import_path"
SYS_EVENTS_DROPPED = "agent_trace.sys_events.dropped"
# seconds from a model call's HTTP request sent to its response headers (on the model span)
HTTP_DURATION = "agent_trace.http.duration"
STREAM_ABANDONED = "agent_trace.stream.abandoned"  # the caller stopped reading a model stream early
TOOL_CALL_IDS = "agent_trace.tool_calls.ids"  # tool calls a model asked for (parallel to the names)
TOOL_CALL_NAMES = "agent_trace.tool_calls.names"
