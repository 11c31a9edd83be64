"""An agent run with secrets planted everywhere a user's would be (run under opentelemetry-instrument).

The secrets come from the environment (the test sets them) and from ``PLANTED_*`` variables whose
names do not look secret, so only the shape or the context of each value can give it away.
Prints the trace id of the agent span.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from opentelemetry import trace

import otel_agent_trace as oat

env = os.environ
# Loaded "from .env" after start-up, as agents do: must be redacted too.
env["LATE_LOADED_API_KEY"] = env.pop("PLANTED_LATE_VALUE")
LATE = env["LATE_LOADED_API_KEY"]
OPENAI = env["OPENAI_API_KEY"]
DB_PASSWORD = env["DATABASE_PASSWORD"]
SERVICE_TOKEN = env["MY_SERVICE_TOKEN"]
GITHUB = env["PLANTED_GITHUB"]
AWS = env["PLANTED_AWS"]
SLACK = env["PLANTED_SLACK"]
JWT = env["PLANTED_WEB_CLAIM"]
ANTHROPIC = env["PLANTED_ANTHROPIC"]
PEM = env["PLANTED_PEM"].replace("\\n", "\n")
JSON_KEY_VALUE = env["PLANTED_JSON_VALUE"]  # no known shape: only its key gives it away
HEADER_VALUE = env["PLANTED_HEADER_VALUE"]
CLI_PASSWORD = env["PLANTED_CLI_VALUE"]
QUERY_VALUE = env["PLANTED_QUERY_VALUE"]
HOME = Path(env["HOME"])

messages = [
    {"role": "system", "content": f"You may use the key {OPENAI} for the API."},
    {"role": "user", "content": f"Deploy with this key:\n{PEM}\nand the token {GITHUB}."},
]


@oat.tool
def http_get(url: str, headers: dict) -> str:
    """Fetch a URL."""
    return f"200 OK from {url}; echo token={SLACK} aws={AWS}"


@oat.tool
def configure_service(config_json: str) -> dict:
    """Apply a JSON config."""
    config = json.loads(config_json)
    return {"applied": sorted(config), "api_key": config["api_key"], "note": f"jwt {JWT}"}


@oat.tool
def read_notes(path: str) -> str:
    """Read a file."""
    return Path(path).read_text()


@oat.tool
def login(user: str) -> None:
    """Log in (fails)."""
    raise PermissionError(f"login failed for {user} with token {SERVICE_TOKEN}")


with oat.agent("planted", model="gpt-4o") as agent_span:
    trace_id = format(trace.get_current_span().get_span_context().trace_id, "032x")
    for message in messages:
        oat.record_message(message["role"], message["content"])
    oat.record_message(
        "assistant",
        "",
        tool_calls=[
            {
                "id": "call_1",
                "name": "configure_service",
                "arguments": json.dumps({"config_json": json.dumps({"api_key": JSON_KEY_VALUE})}),
            }
        ],
    )
    http_get(
        f"https://admin:{DB_PASSWORD}@db.internal:5432/query?api_key={QUERY_VALUE}&q=1",
        {"Authorization": f"Bearer {JWT}", "X-Api-Key": HEADER_VALUE},
    )
    configure_service(json.dumps({"api_key": JSON_KEY_VALUE, "region": "eu"}))
    notes = HOME / "projects" / "notes.txt"
    notes.parent.mkdir(parents=True, exist_ok=True)
    notes.write_text(f"anthropic: {ANTHROPIC}\npassword={CLI_PASSWORD}\n")
    read_notes(str(notes))
    try:
        login("alice")
    except PermissionError:
        pass
    subprocess.run([sys.executable, "-c", "pass", "--password", CLI_PASSWORD, f"--late={LATE}"], check=True)
    # A third-party instrumentation's span: masking must not depend on who made the span.
    with trace.get_tracer("third.party.http").start_as_current_span(
        f"POST https://api.example.com/v1?token={QUERY_VALUE}",
        attributes={
            "url.full": f"https://bot:{DB_PASSWORD}@api.example.com/v1?access_token={QUERY_VALUE}",
            "http.request.header.authorization": [f"Basic {HEADER_VALUE}"],
            "process.command_args": ["curl", "-H", f"X-Api-Key: {HEADER_VALUE}", "--password", CLI_PASSWORD],
            "file.path": str(HOME / ".ssh" / "id_rsa"),
            "db.connection_string": f"postgresql://app:{DB_PASSWORD}@db/prod",
            "app.late_key": LATE,
        },
    ) as span:
        span.add_event("request.body", {"body": json.dumps({"password": CLI_PASSWORD, "q": "x"})})
        span.set_status(trace.Status(trace.StatusCode.ERROR, f"upstream rejected {OPENAI}"))
    oat.snapshot(
        "after deploy",
        messages=messages,
        system_prompt=f"Use {OPENAI} and never print it.",
        state={"db_password": DB_PASSWORD, "notes": f"token {GITHUB}", "cwd": str(HOME / "projects")},
        last_query=f"deploy with {ANTHROPIC}",
        last_result=f"done; key {AWS}",
        model_info={"model": "gpt-4o", "provider": "openai", "api_key": OPENAI},
    )

print(trace_id)
