"""What a span is and what a failure means: kinds of spans, verification commands, failure stages.

Pure functions on values read from a file (no I/O). A span is a model call, a tool call, a
process, an HTTP request or an agent run; a failure belongs to one stage of
:data:`STAGES`; a command that tests, lints, type-checks or runs the work is a verification.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from otel_agent_trace import semconv

from ..jsonvalue import JSONValue

# Failure stages, in the DM-Code-Agent checklist's spirit, for any agent.
MODEL = "model"  # the model call failed (server error, refused request)
PARSE = "parse"  # the model's output could not be used (bad JSON, wrong tool arguments)
TOOL = "tool"  # a tool raised
SYS = "sys"  # a process, an HTTP request or the agent process itself (a crash)
VERIFICATION = "verification"  # a test, lint or type-check run failed
LIMITS = "limits"  # a token, turn, rate, recursion or time limit was hit
STAGES = (MODEL, PARSE, TOOL, SYS, VERIFICATION, LIMITS)

# Kinds of spans.
KIND_MODEL = "model"
KIND_TOOL = "tool"
KIND_PROCESS = "process"
KIND_HTTP = "http"
KIND_AGENT = "agent"
KIND_OTHER = "other"

MODEL_OPERATIONS = frozenset(
    {semconv.OP_CHAT, semconv.OP_TEXT_COMPLETION, semconv.OP_GENERATE_CONTENT, semconv.OP_EMBEDDINGS}
)
AGENT_OPERATIONS = frozenset({semconv.OP_INVOKE_AGENT, semconv.OP_INVOKE_WORKFLOW, semconv.OP_CREATE_AGENT})

# Finish reasons that mean the model was cut off by a limit.
LIMIT_FINISH_REASONS = frozenset(
    {"length", "max_tokens", "max_output_tokens", "model_context_window_exceeded"}
)

_LIMITS = re.compile(
    r"rate.?limit|\b429\b|quota|context.?length|context.?window|too many tokens|max.?tokens|"
    r"max.?turns|max.?steps|max.?iterations|recursion.?limit|GraphRecursion|token limit|"
    r"timeout|timed out|TimeoutExpired|deadline",
    re.IGNORECASE,
)
_PARSE = re.compile(
    r"JSONDecodeError|json|ValidationError|parse|decod|unexpected keyword argument|"
    r"missing \d+ required|invalid tool|unknown tool|malformed",
    re.IGNORECASE,
)


def span_kind(name: str, layer: Any, attributes: dict[str, Any]) -> str:
    """The kind of a span from its attributes, layer and name."""
    op = attributes.get(semconv.GEN_AI_OPERATION_NAME)
    if op.__class__ is not str:
        op = None
    elif op in MODEL_OPERATIONS:
        return KIND_MODEL
    if op == semconv.OP_EXECUTE_TOOL or layer == "tool":
        return KIND_TOOL
    if semconv.PROCESS_COMMAND_ARGS in attributes or name.startswith("process "):
        return KIND_PROCESS
    if semconv.HTTP_REQUEST_METHOD in attributes:
        return KIND_HTTP
    if op in AGENT_OPERATIONS or name.startswith(("invoke_agent", "invoke_workflow")):
        return KIND_AGENT
    return KIND_OTHER


def start_kind(name: str, layer: Any, op: Any) -> str:
    """The kind of a running span from what its start says (no process or HTTP attributes yet)."""
    if op.__class__ is not str:
        op = None
    elif op in MODEL_OPERATIONS:
        return KIND_MODEL
    if op == semconv.OP_EXECUTE_TOOL or layer == "tool":
        return KIND_TOOL
    if op in AGENT_OPERATIONS or name.startswith(("invoke_agent", "invoke_workflow")):
        return KIND_AGENT
    if name.startswith("process "):
        return KIND_PROCESS
    return KIND_OTHER


def failure_stage(text: str, default: str) -> str:
    """The stage an error belongs to, from its type and description; ``default`` otherwise."""
    if _LIMITS.search(text):
        return LIMITS
    if _PARSE.search(text):
        return PARSE
    return default


# --- verification ------------------------------------------------------------------------------

_VERIFY_PATTERNS = (
    (
        "test",
        re.compile(
            r"\b(pytest|py\.test|unittest|tox|nox|hatch test|npm (run )?test|yarn test|"
            r"pnpm test|go test|cargo test|make (check|test)|jest|vitest|mocha|rspec|ctest)\b"
        ),
    ),
    (
        "lint",
        re.compile(
            r"\b(ruff|flake8|pylint|pycodestyle|eslint|black --check|isort --check|"
            r"golangci-lint|clippy|shellcheck|pre-commit)\b"
        ),
    ),
    ("typecheck", re.compile(r"\b(mypy|pyright|tsc|pytype)\b")),
    (
        "run",
        re.compile(
            r"(^|[\s/])python[0-9.]*\s+(-c\b|-m\s+(?!pip\b)[\w.]+|[^-\s][^\s]*\.py\b)|"
            r"(^|[\s/])(node|deno|bun)\s+[^-\s][^\s]*\.[jt]s\b"
        ),
    ),
)
_VERIFY_TOOL_NAMES = re.compile(r"(^|_)(run_?)?(tests?|lint(er)?|check|verify|typecheck|pytest)($|_)", re.I)


def verification_kind(command: str) -> str | None:
    """``test``, ``lint``, ``typecheck`` or ``run`` when ``command`` verifies the work, else None."""
    for kind, pattern in _VERIFY_PATTERNS:
        if pattern.search(command):
            return kind
    return None


_RUN_TOOL_NAMES = re.compile(r"(^|_)(run|exec(ute)?)_?(python|code|script|program)($|_)", re.I)


def tool_name_verification_kind(tool: str) -> str | None:
    """Verification by a tool's name alone: ``run_tests``, ``lint``, ``typecheck``, ``verify``;
    ``run_python``, ``run_code``, ``execute_script`` run the work (``run``)."""
    if not _VERIFY_TOOL_NAMES.search(tool):
        return "run" if _RUN_TOOL_NAMES.search(tool) else None
    lowered = tool.lower()
    return "lint" if "lint" in lowered else "typecheck" if "type" in lowered else "test"


# Argument names under which a tool takes a command to run (a shell tool, a code runner).
COMMAND_KEYS = frozenset(
    {"command", "cmd", "commands", "argv", "args", "script", "shell", "cmdline", "command_line", "code"}
)


def command_in_arguments(arguments: JSONValue) -> str:
    """The command a tool was asked to run, from its arguments (``""`` when it takes none): the
    values under :data:`COMMAND_KEYS`, so a file's text written by a tool is never mistaken for
    a test run."""
    if isinstance(arguments, str):
        if not arguments.startswith("{"):
            return arguments[:4000]
        try:
            arguments = orjson.loads(arguments)
        except orjson.JSONDecodeError:
            return ""
    if type(arguments) is not dict or arguments.keys().isdisjoint(COMMAND_KEYS):
        return ""
    parts: list[str] = []
    for key, value in arguments.items():
        if key in COMMAND_KEYS:
            if isinstance(value, str):
                parts.append(value[:4000])
            elif isinstance(value, list):
                parts.append(" ".join(str(item) for item in value[:100]))
    return " ".join(parts)


def command_text(attributes: dict[str, Any]) -> str:
    """A process span's command line as one string."""
    args: JSONValue = attributes.get(semconv.PROCESS_COMMAND_ARGS)
    if isinstance(args, list):
        return " ".join(str(a) for a in args)
    if isinstance(args, str):
        return args
    return str(
        attributes.get(semconv.PROCESS_EXECUTABLE_PATH) or attributes.get("process.executable.name") or ""
    )
