"""Wrong types (issue 39): every field of every entry type of a real recorded session, set to every
JSON type, is read fine or refused with a SessionFormatError naming file and line (the CLI: exit 2,
or 1 for a skipped line, with the file named) — never another exception — by every reader and verb.

The API readers and the verbs run in-process (``otel_agent_trace.cli.main.main``) so the thousands
of files take seconds; a few examples run as real subprocesses of the command too."""

from __future__ import annotations

import contextlib
import io
import json
import re
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from otel_agent_trace import session_format as fmt
from otel_agent_trace.cli.main import main
from otel_agent_trace.offline import iter_entries, load_session
from otel_agent_trace.offline.analysis.summary import summarize

from ..cli.helpers import cli

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "session.jsonl"
BASE: list[dict[str, Any]] = [json.loads(line) for line in GOLDEN.read_text().splitlines()]
SESSION_ID = BASE[0]["session_id"]
FILE_NAME = f"{SESSION_ID}.jsonl"  # named by its session: its child files are looked for too


def _extra_types() -> list[dict[str, Any]]:
    """The entry types of the schema the golden session has not: a child's ``session.join`` (as a
    ZIP's events.jsonl has it after the parent's lines), ``checkpoint`` and ``fork``."""
    end = BASE[-1]
    join = {
        "id": "1a1b1c1d-0000",
        "parent_id": "0a0b0c0d-0001",
        "type": fmt.SESSION_JOIN,
        "layer": "agent",
        "ts": end["ts"] - 10,
        "session_id": SESSION_ID,
        "tier": "trace",
        "metadata": {
            "format": fmt.FORMAT_NAME,
            "format_version": "1.1",
            "parent_span_id": "0" * 16,
            "ppid": 1,
        },
    }
    checkpoint = {
        "id": "0a0b0c0d-0100",
        "parent_id": "0a0b0c0d-0000",
        "type": fmt.CHECKPOINT,
        "layer": "agent",
    }
    fork = {
        "id": "0a0b0c0d-0101",
        "parent_id": "0a0b0c0d-0001",
        "type": fmt.FORK,
        "layer": "agent",
        "source_session": SESSION_ID,
        "source_path": "x.jsonl",
        "forked_from_entry_id": "0a0b0c0d-0001",
        "tier": "trace",
    }
    checkpoint["ts"] = fork["ts"] = end["ts"] - 5
    return [join, checkpoint, fork]


ENTRIES = [*BASE[:-1], *_extra_types(), BASE[-1]]
VALUES: dict[str, Any] = {
    "null": None,
    "bool": True,
    "int": 7,
    "float": 2.5,
    "str": "x",
    "list": ["x", 1],
    "object": {"x": [1]},
}


def _signature(entry: dict[str, Any]) -> tuple[Any, ...]:
    attributes = entry.get("attributes") or {}
    return (entry["type"], str(attributes.get("gen_ai.operation.name")), tuple(sorted(entry)))


def _representatives() -> list[int]:
    """One entry of each shape (type, operation, fields) of the session: every entry type."""
    seen: dict[tuple[Any, ...], int] = {}
    for index, entry in enumerate(ENTRIES):
        seen.setdefault(_signature(entry), index)
    return sorted(seen.values())


def _fields(entry: dict[str, Any]) -> Iterator[tuple[str, ...]]:
    """Every field of an entry and of its objects one level down (attributes, status, content,
    metadata, …)."""
    for key, value in entry.items():
        yield (key,)
        if isinstance(value, dict):
            for inner in value:
                yield (key, inner)


MUTATIONS = [
    (index, path, kind)
    for index in _representatives()
    for path in _fields(ENTRIES[index])
    for kind in VALUES
    if not (len(path) == 1 and kind == "str" and path[0] in ("id", "parent_id", "type"))  # a str is fine
]


def mutated(index: int, path: tuple[str, ...], value: Any) -> list[dict[str, Any]]:
    return _mutated_from(ENTRIES, index, path, value)


def write(directory: Path, entries: list[dict[str, Any]], name: str = FILE_NAME) -> Path:
    path = directory / name
    path.write_bytes(b"".join(json.dumps(e).encode() + b"\n" for e in entries))
    return path


def read_every_way(path: Path) -> None:
    """The API readers, in-process: only a SessionFormatError may come out."""
    for kwargs in ({}, {"lenient": True}):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                session = load_session(path, **kwargs)
            repr(session)
            _ = (session.metadata, session.complete, session.duration, session.spans, session.snapshots)
            session.conversation()
            json.dumps(session.to_dict(), default=str)
            for event in session.events[:: max(1, len(session.events) // 4)]:
                session.ancestors(event.id)
                session.children(event.id)
        except fmt.SessionFormatError:
            pass
    for read in (
        lambda: sum(1 for _ in iter_entries(path, [])),
        lambda: sum(1 for _ in iter_entries(path)),
        lambda: sum(1 for _ in fmt.iter_entries(path)),
        lambda: summarize(path, actions=True, steps=50),
        lambda: summarize(path, strict=True),
    ):
        try:
            read()
        except fmt.SessionFormatError:
            pass


def verbs(path: Path, good: Path, out: Path) -> list[list[str]]:
    return [
        ["view", str(path)],
        ["view", "--full", str(path)],
        ["view", "--json", "--depth", "2", str(path)],
        ["view", "--html", str(out / "o.html"), str(path)],
        ["analyze", str(path)],
        ["analyze", "--json", "--strict", str(path)],
        ["report", "-o", str(out / "r.md"), str(path)],
        ["diff", str(good), str(path)],
        ["diff", "--json", str(path), str(good)],
        ["export", "--format", "otlp-json", str(out / "o.json"), str(path)],
        ["export", "--format", "jaeger-json", str(out / "j.json"), str(path)],
    ]


def run_in_process(argv: list[str]) -> tuple[int, str]:
    """``otel-agent-trace <argv>`` in this process: (exit code, standard error). An exception other
    than the command's own handling comes out as it is (a traceback, in a real run)."""
    err = io.StringIO()
    with (
        contextlib.redirect_stdout(io.StringIO()),
        contextlib.redirect_stderr(err),
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("ignore")
        code = main(argv)
    return code, err.getvalue()


def check_verbs(path: Path, good: Path, out: Path) -> None:
    for argv in verbs(path, good, out):
        code, err = run_in_process(argv)
        assert code in (0, 1, 2), (argv, code, err)
        if code == 2:
            assert err.startswith("otel-agent-trace: ") and str(path) in err, (argv, err)
            assert err.count("\n") == 1, (argv, err)  # one line


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write(tmp_path_factory.mktemp("good"), ENTRIES, "good.jsonl")


def test_the_base_session_reads_cleanly(good: Path, tmp_path: Path) -> None:
    session = load_session(good)
    assert {e.type for e in session.events} == set(fmt.ENTRY_TYPES)  # every entry type is mutated
    assert len(MUTATIONS) > 500
    for argv in verbs(good, good, tmp_path):
        assert run_in_process(argv)[0] in (0, 1), argv  # (analyze: 1, the run failed)


def test_every_field_of_every_entry_type_as_every_json_type(tmp_path: Path) -> None:
    """Exhaustive: each mutation alone, read by the API readers (the verbs on a sample below)."""
    failures = []
    for index, path, kind in MUTATIONS:
        file = write(tmp_path, mutated(index, path, VALUES[kind]))
        try:
            read_every_way(file)
        except Exception as exc:  # noqa: BLE001 - collected, reported together
            failures.append(f"line {index + 1} {'.'.join(path)} = {kind}: {type(exc).__name__}: {exc}")
    assert failures == [], f"{len(failures)} failures:\n" + "\n".join(failures[:40])


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(st.sampled_from(MUTATIONS), st.sampled_from(sorted(VALUES)) | json_values),
        min_size=1,
        max_size=3,
    )
)
def test_mutated_sessions_through_every_verb(changes: list[tuple[Any, Any]]) -> None:
    """Random mutations (one to three at once, of each JSON type, or any JSON value) through every
    verb in-process: exit 0, 1 (a skipped line) or 2 with a one-line message naming the file."""
    entries = ENTRIES
    for (index, path, _), value in changes:
        value = VALUES[value] if isinstance(value, str) and value in VALUES else value
        entries = _mutated_from(entries, index, path, value)
    with tempfile.TemporaryDirectory(prefix="types-") as directory:
        d = Path(directory)
        file = write(d, entries)
        read_every_way(file)
        check_verbs(file, write(d, ENTRIES, "good.jsonl"), d)


def _mutated_from(
    entries: list[dict[str, Any]], index: int, path: tuple[str, ...], value: Any
) -> list[dict[str, Any]]:
    out = [dict(e) for e in entries]
    target = out[index]
    for key in path[:-1]:
        if not isinstance(target.get(key), dict):
            return out  # an earlier change made it something else
        target[key] = dict(target[key])
        target = target[key]
    target[path[-1]] = value
    return out


@pytest.mark.parametrize(
    ("index", "path", "kind", "named"),
    [
        (1, ("type",), "list", True),
        (1, ("id",), "object", True),
        (2, ("parent_id",), "list", True),
        (2, ("attributes", "gen_ai.operation.name"), "list", False),  # an attribute: as if absent
    ],
)
def test_the_command_line_names_the_file_and_line(
    tmp_path: Path, index: int, path: tuple[str, ...], kind: str, named: bool
) -> None:
    """Real subprocesses of the command, as a user runs it: no traceback; a wrong field of ours
    named by file and line (``view``: skipped with a warning, exit 1; ``analyze``: skipped and
    reported; ``--strict``, ``load_session``: exit 2, one line), an interpreted attribute of a
    wrong type read as absent."""
    file = write(tmp_path, mutated(index, path, VALUES[kind]))
    where = f"{file}:{index + 1}: "
    for argv in (["view", str(file)], ["analyze", str(file)], ["analyze", "--strict", str(file)]):
        done = cli(*argv)
        assert "Traceback" not in done.stderr, (argv, done.stderr)
        assert done.returncode in (0, 1, 2), (argv, done.returncode, done.stderr)
        assert (where in done.stdout + done.stderr) == named, (argv, done.stdout[-300:], done.stderr)
        if "--strict" in argv and named:
            assert done.returncode == 2 and done.stderr.startswith(f"otel-agent-trace: {where}"), done.stderr
            assert done.stderr.count("\n") == 1, done.stderr
    if named:
        with pytest.raises(fmt.SessionFormatError, match=f"^{re.escape(where)}"):
            load_session(file)
    else:
        start = load_session(file).entry(ENTRIES[index]["id"])
        assert "gen_ai.operation.name" not in start.data["attributes"]


def test_analyze_dir_reports_a_bad_file_and_goes_on(tmp_path: Path) -> None:
    write(tmp_path, ENTRIES, "good.jsonl")
    write(tmp_path, mutated(1, ("type",), ["x"]), "bad.jsonl")
    done = cli("analyze-dir", "--json", str(tmp_path))
    assert "Traceback" not in done.stderr, done.stderr
    assert f"{tmp_path / 'bad.jsonl'}:2: " in done.stdout + done.stderr
    assert "good.jsonl" in done.stdout
