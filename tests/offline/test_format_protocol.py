"""The formats the loader reads are one protocol (``offline/formats``): the loader asks the format
it found and never which one it holds, so a format registered from outside is loaded and streamed
with no change to the loader, and its own entries (``as_ours``) feed the analysis as DevDuck's and
DM's do."""

from __future__ import annotations

import ast
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from otel_agent_trace import session_format as fmt
from otel_agent_trace.offline import formats, iter_entries, load_session
from otel_agent_trace.offline.analysis import Accumulator, analyze, foreign
from otel_agent_trace.offline.formats import BadEntry, Event, Format, Heading, Session, SpanRecord, ours
from otel_agent_trace.offline.loader import session_format_of
from otel_agent_trace.session_format.reader import ReadIssue, Source

from .samples import write_devduck_zip, write_dm

OFFLINE = Path(formats.__file__).parent.parent
_NS = 1_000_000_000


class _TinyNormalizer:
    def __init__(self) -> None:
        self.previous = ""

    def normalize(self, raw: dict[str, Any]) -> dict[str, Any]:
        kind = raw.get("tiny")
        if not isinstance(kind, str):
            raise BadEntry("not a tiny line (no 'tiny')")
        entry_id = f"tiny-{raw.get('n')}"
        entry = {
            "id": entry_id,
            "parent_id": self.previous,
            "type": kind,
            "layer": "tool" if kind == "tool" else "agent",
            "ts": int(raw.get("t", 0) * _NS),
            **{k: v for k, v in raw.items() if k not in ("tiny", "n", "t")},
        }
        self.previous = entry_id
        return entry


class Tiny:
    """A made-up format of the test's own: ``{"tiny": KIND, "n": N, "t": SECONDS, ...}`` lines."""

    NAME = "tiny-test"
    END_TYPES = frozenset({"bye"})
    SNAPSHOT_TYPES = frozenset({"save"})
    SNAPSHOT_NAME = "save"
    SNAPSHOTS_HOLD_CONVERSATION = True
    FORKS_IN_OWN_LINES = False
    RECORD_RESUMABLE = "save as you go"

    def matches(self, raw: dict[str, Any]) -> bool:
        return "tiny" in raw

    def normalizer(self, source: Source | None) -> _TinyNormalizer:
        return _TinyNormalizer()

    def child_files(self, path: Path, root: dict[str, Any], issues: list[ReadIssue]) -> list[Path]:
        return []

    def session_id(self, root: dict[str, Any], archive: dict[str, Any] | None) -> str | None:
        return root.get("session")

    def tier(self, session: Session) -> str:
        return "trace"

    def metadata(self, session: Session) -> dict[str, Any]:
        return {"format": self.NAME, "said": session.root.data.get("said")}

    def duration(self, session: Session) -> float | None:
        end = session.end_event
        return None if end is None else (end.timestamp_ns - session.root.timestamp_ns) / _NS

    def evicted(self, session: Session) -> int:
        return 0

    def evicted_note(self, session: Session) -> str:
        return ""

    def spans(self, events: list[Event]) -> list[SpanRecord]:
        return [
            SpanRecord(
                e.id,
                "t",
                f"execute_tool {e.data['name']}",
                "tool",
                None,
                e.timestamp_ns,
                e.timestamp_ns + int(e.data["took"] * _NS),
                fmt.STATUS_OK,
                entry_id=e.id,
            )
            for e in events
            if e.type == "tool"
        ]

    def snapshots(self, events: list[Event]) -> list[dict[str, Any]]:
        return [
            {"snapshot_id": i, "agent_messages": e.data["messages"]}
            for i, e in enumerate((e for e in events if e.type == "save"), 1)
        ]

    def conversation(self, session: Session, until: str | None) -> list[dict[str, Any]]:
        return [
            {"role": e.data["role"], "content": e.data["text"]} for e in session.events if e.type == "say"
        ]

    def unresumable(self, session: Session) -> str | None:
        return None

    def fork_name(self, session: Session, point: str) -> str:
        return f"{session.session_id}.fork-{point}.jsonl"

    def fork_lines(self, session: Session, point: str) -> Iterator[bytes]:
        raise NotImplementedError("forked as our entries")

    def heading(self, first: dict[str, Any], file_base: str) -> Heading | None:
        if first.get("tiny") != "hello":
            return None
        return Heading(first.get("session"), first.get("t"), b'"bye"')

    def listed_end(self, entry: dict[str, Any]) -> tuple[float | None, str] | None:
        return (None, "bye") if entry.get("tiny") == "bye" else None

    def matches_archive(self, metadata: dict[str, Any]) -> bool:
        return False

    def as_ours(self, entries: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        for entry in entries:
            if entry["type"] == "hello":
                yield ours.session_start(entry, entry["session"], self.NAME, {})
            elif entry["type"] == "tool":
                yield ours.span_end(
                    entry,
                    f"execute_tool {entry['name']}",
                    fmt.LAYER_TOOL,
                    {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": entry["name"]},
                    duration=int(entry["took"] * _NS),
                    error=entry.get("error"),
                )
            elif entry["type"] == "bye":
                yield ours.session_end(entry, entry["ts"] - int(1.0 * _NS), 0)


TINY_LINES = [
    {"tiny": "hello", "n": 0, "t": 1.0, "session": "tiny-session-1", "said": "hi"},
    {"tiny": "say", "n": 1, "t": 1.5, "role": "user", "text": "list the files"},
    {"tiny": "tool", "n": 2, "t": 2.0, "name": "ls", "took": 0.5},
    {"tiny": "save", "n": 3, "t": 2.5, "messages": [{"role": "user", "content": "list the files"}]},
    {"tiny": "tool", "n": 4, "t": 3.0, "name": "cat", "took": 0.25, "error": "no such file"},
    {"tiny": "bye", "n": 5, "t": 4.0},
]


@pytest.fixture
def tiny(tmp_path):
    format = Tiny()
    path = tmp_path / "run.tiny.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in TINY_LINES))
    formats.register(format)
    try:
        yield format, path
    finally:
        formats.unregister(format)
    assert format not in formats.FORMATS


def test_a_registered_format_loads_with_no_change_to_the_loader(tiny):
    format, path = tiny
    session = load_session(path)
    assert session.format is format and session_format_of(path) is format
    assert session.session_id == "tiny-session-1" and session.tier == "trace"
    assert session.complete and session.duration == 3.0
    assert session.metadata == {"format": "tiny-test", "said": "hi"}
    assert [(s.name, s.duration_s) for s in session.spans] == [
        ("execute_tool ls", 0.5),
        ("execute_tool cat", 0.25),
    ]
    assert session.conversation() == [{"role": "user", "content": "list the files"}]
    assert session.get_snapshot(1)["agent_messages"] == [{"role": "user", "content": "list the files"}]
    assert [e.id for e in session.get_events_until_snapshot(1)] == ["tiny-0", "tiny-1", "tiny-2"]
    assert session.to_dict()["format"] == "tiny-test"
    assert [e["id"] for e in iter_entries(path)] == [f"tiny-{n}" for n in range(6)]


def test_a_registered_formats_own_entries_are_analysed(tiny):
    """Its ``as_ours`` feeds the analysis as DevDuck's and DM's do (``summarize`` itself reads a
    file through ``session_format``'s reader, which tells only ours, DevDuck's and DM's apart)."""
    format, path = tiny
    acc = Accumulator()
    acc.format = format.NAME
    acc.consume(foreign.as_ours(format, iter_entries(path)))
    report = analyze(acc, [], path=str(path))
    assert report["format"] == "tiny-test" and report["session_id"] == "tiny-session-1"
    assert report["counts"]["tool_calls"] == 2 and report["duration_s"] == 3.0
    first = report["failure"]["first"]
    assert (first["stage"], first["name"], first["reason"]) == ("tool", "execute_tool cat", "no such file")


def test_a_bad_line_of_a_registered_format_names_file_and_line(tiny):
    _, path = tiny
    path.write_text(path.read_text() + json.dumps({"tiny": 3, "n": 9}) + "\n")
    with pytest.raises(fmt.SessionFormatError, match=r"run\.tiny\.jsonl:7: not a tiny line"):
        load_session(path)


def test_unregistered_its_files_are_read_as_ours_again(tmp_path):
    format = Tiny()
    formats.register(format)
    formats.unregister(format)
    path = tmp_path / "run.tiny.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in TINY_LINES))
    assert session_format_of(path) is formats.native


def _protocol_names() -> set[str]:
    names = {n for n in vars(Format) if not n.startswith("_")}
    return names


@pytest.mark.parametrize(
    "module", [formats.native, formats.devduck, formats.dm, Tiny()], ids=lambda m: m.NAME
)
def test_every_format_offers_the_whole_protocol(module):
    missing = sorted(n for n in _protocol_names() if not hasattr(module, n))
    assert not missing, f"{module.NAME} lacks {missing}"
    assert "spans" in _protocol_names() and "as_ours" in _protocol_names()


def _named(tree: ast.AST) -> set[str]:
    """Every name, attribute and imported name in a module."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            out.add(node.id)
        elif isinstance(node, ast.Attribute):
            out.add(node.attr)
        elif isinstance(node, ast.ImportFrom):
            out.add(node.module or "")
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
    return out


def test_the_loader_never_names_a_format_but_ours():
    """``LoadedSession`` asks its format; it never branches on DevDuck or DM."""
    named = _named(ast.parse((OFFLINE / "loader.py").read_text()))
    assert not named & {"devduck", "dm", "formats.devduck", "formats.dm"}
    assert not any(n.endswith((".devduck", ".dm")) for n in named)


def test_the_analysis_converts_no_format_of_its_own():
    """``analysis/foreign.py`` hands each format's entries to that format's ``as_ours``."""
    source = (OFFLINE / "analysis" / "foreign.py").read_text()
    assert "def as_ours" in source and ".as_ours(" in source
    assert "tool.call" not in source and "run_start" not in source and "llm_call" not in source


@pytest.mark.parametrize("name", ["devduck", "dm"])
def test_the_analysis_entries_are_the_formats_own(tmp_path, name):
    """What ``analyze`` reads of a DevDuck or DM file is its format's ``as_ours`` (the stage of a
    failure that is no span added by the analysis)."""
    path = write_devduck_zip(tmp_path / "d.zip") if name == "devduck" else write_dm(tmp_path / "dm.jsonl")
    format = session_format_of(path)
    assert format is formats.by_name(load_session(path).format.NAME)
    direct = list(format.as_ours(iter_entries(path)))
    through = list(foreign.as_ours(format, iter_entries(path)))
    assert [e["type"] for e in direct] == [e["type"] for e in through]
    assert any(e["type"] == fmt.SPAN_END for e in through)
