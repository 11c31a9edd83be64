"""A real recorded run with secrets planted everywhere (env, messages, tool arguments and results,
command lines, URLs, headers, paths under $HOME, exception messages), ``AGENT_TRACE_TIER=both``:
none reaches the trace tier, its ZIP or the spans a real OTLP receiver got; all are in the
checkpoint tier; file modes are as promised."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import orjson
import pytest

from otel_agent_trace import session_format as fmt
from tests.e2e.helpers import run_instrumented

from .planted import jsonl_text, leaks, make_secrets, needles, strings, zip_text

AGENT = Path(__file__).parent / "agents" / "planted_agent.py"


def _run(tmp_path: Path, extra: dict[str, str]) -> tuple[dict[str, str], Path, str]:
    home = tmp_path / "home-alice"
    home.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    planted = make_secrets(home)
    env = {
        **planted,
        "AGENT_TRACE_TIER": "both",
        "AGENT_TRACE_DIR": str(work / "sessions"),
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_AND_EVENT",
        **extra,
    }
    # A secret on the agent's own command line too (it lands in the session's metadata).
    done = run_instrumented(AGENT, work, env, "--api-token", planted["PLANTED_QUERY_VALUE"])
    assert done.returncode == 0, done.stderr
    return planted, work / "sessions", done


def _files(directory: Path) -> dict[str, Path]:
    found = {p.name: p for p in directory.iterdir()}
    own = [p for n, p in found.items() if n.endswith(fmt.JSONL_SUFFIX) and ".p" not in n]  # not children
    trace = [p for p in own if not p.name.endswith(".checkpoint.jsonl")]
    checkpoint = [p for p in own if p.name.endswith(".checkpoint.jsonl")]
    assert len(trace) == 1 and len(checkpoint) == 1, sorted(found)
    trace_zip = trace[0].with_suffix(fmt.ZIP_SUFFIX)
    checkpoint_zip = checkpoint[0].with_suffix(fmt.ZIP_SUFFIX)
    assert trace_zip.exists() and checkpoint_zip.exists(), sorted(found)
    return {
        "trace": trace[0],
        "checkpoint": checkpoint[0],
        "trace_zip": trace_zip,
        "checkpoint_zip": checkpoint_zip,
    }


def _assert_tiers(planted: dict[str, str], directory: Path) -> None:
    files = _files(directory)
    trace_text = jsonl_text(files["trace"])
    assert leaks(trace_text, planted) == [], "secrets in the shareable trace tier"
    for member, text in zip_text(files["trace_zip"]).items():
        assert leaks(text, planted) == [], f"secrets in the trace ZIP's {member}"
    # The redactions say what they removed.
    marks = ("<redacted:env:OPENAI_API_KEY>", "<redacted:env:LATE_LOADED_API_KEY>", "<redacted:github_token>")
    for mark in marks:
        assert mark in trace_text
    assert "~/projects/notes.txt" in trace_text

    checkpoint_text = jsonl_text(files["checkpoint"])
    assert leaks(checkpoint_text, planted) == sorted(needles(planted)), "the checkpoint tier must be complete"
    checkpoint_zip = "\n".join(zip_text(files["checkpoint_zip"]).values())
    assert leaks(checkpoint_zip, planted) == sorted(needles(planted))
    assert "<redacted:" not in checkpoint_text

    mode = lambda p: stat.S_IMODE(os.stat(p).st_mode)  # noqa: E731
    assert mode(files["checkpoint"]) == 0o600 and mode(files["checkpoint_zip"]) == 0o600
    assert mode(directory) == 0o700
    assert mode(files["trace"]) & 0o022 == 0 and mode(files["trace_zip"]) & 0o022 == 0

    for tier in ("trace", "checkpoint"):
        first = orjson.loads(files[tier].read_bytes().splitlines()[0])
        assert first["type"] == fmt.SESSION_START and first["tier"] == tier
    import zipfile

    for tier in ("trace", "checkpoint"):
        with zipfile.ZipFile(files[f"{tier}_zip"]) as zf:
            meta = orjson.loads(zf.read(fmt.ZIP_METADATA))
        assert meta["tier"] == tier and meta["private"] is (tier == "checkpoint")


def test_console_exporter_stream_and_tiers(tmp_path):
    """The forwarded stream (here the console exporter, on stdout) is shareable too."""
    planted, directory, done = _run(tmp_path, {"OTEL_TRACES_EXPORTER": "agent_session,console"})
    assert "<redacted:" in done.stdout
    assert leaks(done.stdout, planted) == []
    assert leaks(done.stderr, planted) == []
    _assert_tiers(planted, directory)


@pytest.mark.phoenix
@pytest.mark.parametrize("protocol", ["http/protobuf", "grpc"])
def test_phoenix_receives_no_secrets(tmp_path, phoenix, protocol):
    planted, directory, done = _run(tmp_path, phoenix.otlp_env(protocol))
    trace_id = done.stdout.strip().splitlines()[-1]
    trace_file = _files(directory)["trace"]
    expected = sum(1 for line in trace_file.read_bytes().splitlines() if b'"type":"span.end"' in line)
    spans = phoenix.spans(trace_id, expect=expected)
    received = "\n".join(strings(spans)) + "\n" + orjson.dumps(spans).decode()
    assert leaks(received, planted) == [], "secrets reached the OTLP receiver"
    assert "<redacted:env:OPENAI_API_KEY>" in received  # content arrived, redacted
    assert any(s["name"].startswith("POST https://api.example.com/v1?token=<redacted") for s in spans)
    _assert_tiers(planted, directory)
