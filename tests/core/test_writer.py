"""The session file writer: reentrant (a signal handler may write while the main thread is
mid-entry), ids never reused, and a forked child never writes the parent's file."""

from __future__ import annotations

import threading

import orjson

from otel_agent_trace.recording.writer import TierWriter


class _WritesWhileSerialized:
    """Serializing this value writes another entry first, as a SIGTERM handler stopping the
    session does when the signal arrives while the main thread is inside ``write``."""

    def __init__(self, writer: TierWriter):
        self.writer = writer

    def __repr__(self) -> str:
        self.writer.write("", {"type": "session.end"})
        return "interrupted value"


def test_a_write_interrupted_by_another_write_on_the_same_thread(tmp_path):
    writer = TierWriter(tmp_path / "s.jsonl", "trace", "abcd1234")
    result: list[str | None] = []
    fields = {"type": "span.start", "v": _WritesWhileSerialized(writer)}
    worker = threading.Thread(target=lambda: result.append(writer.write("", fields)))
    worker.start()
    worker.join(timeout=10)
    assert not worker.is_alive(), "the writer deadlocked on its own lock"
    writer.close()
    entries = [orjson.loads(line) for line in (tmp_path / "s.jsonl").read_bytes().splitlines()]
    assert [e["type"] for e in entries] == ["session.end", "span.start"]
    assert len({e["id"] for e in entries}) == 2, "the interrupting entry reused the interrupted one's id"
    assert result == [entries[1]["id"]]


def test_abandon_lets_go_of_the_file_without_writing(tmp_path):
    writer = TierWriter(tmp_path / "s.jsonl", "trace", "abcd1234")
    writer.write("", {"type": "session.start"})
    writer.abandon()
    assert writer.closed and writer.write("", {"type": "span.start"}) is None
    assert len((tmp_path / "s.jsonl").read_bytes().splitlines()) == 1


def test_fsync_mode_writes_the_same_lines(tmp_path):
    writer = TierWriter(tmp_path / "s.jsonl", "trace", "abcd1234", fsync=True)
    ids = [writer.write("", {"type": "session.start"}), writer.write("abcd1234-0000", {"type": "span.start"})]
    writer.close()
    entries = [orjson.loads(line) for line in (tmp_path / "s.jsonl").read_bytes().splitlines()]
    assert ids == ["abcd1234-0000", "abcd1234-0001"] == [e["id"] for e in entries]


def test_a_session_id_taken_on_disk_is_never_reused(tmp_path):
    """Two recorders asked for the same explicit id: the second fails loudly, naming the file,
    and never appends to the first one's file."""
    from otel_agent_trace.recording import SessionFileExists, SessionRecorder
    from otel_agent_trace.settings import Settings

    settings = Settings(directory=tmp_path)
    first = SessionRecorder(settings, session_id="session-20260101-000000-0000abcd").start()
    size = first.files[0].stat().st_size
    second = SessionRecorder(settings, session_id="session-20260101-000000-0000abcd")
    try:
        second.start()
    except SessionFileExists as exc:
        assert "session-20260101-000000-0000abcd.jsonl" in str(exc)
    else:  # pragma: no cover - the assertion below explains
        raise AssertionError("a second recorder wrote into an existing session file")
    finally:
        first.stop()
    assert first.files[0].stat().st_size > size  # only the first recorder's session.end was added


def test_a_session_file_exists_only_with_its_root_entry_in_it(tmp_path):
    """A process killed while starting to record (multiprocessing terminates pool workers so)
    must not leave an empty file: the file gets its name once its root line is in it."""
    import orjson

    from otel_agent_trace.recording.writer import SessionFileExists, TierWriter

    path = tmp_path / "s.jsonl"
    writer = TierWriter(path, "trace", "abcd0123", root={"type": "session.start", "ts": 1})
    assert orjson.loads(path.read_bytes()) == {
        "id": "abcd0123-0000",
        "parent_id": "",
        "type": "session.start",
        "ts": 1,
    }
    assert writer.root_id == "abcd0123-0000"
    assert writer.write(writer.root_id, {"type": "session.end"}) == "abcd0123-0001"  # appends
    writer.close()
    try:
        TierWriter(path, "trace", "ffff0000", root={"type": "session.start"})
    except SessionFileExists:
        pass
    else:  # pragma: no cover
        raise AssertionError("a second writer replaced an existing session file")
    assert len(path.read_bytes().splitlines()) == 2
    assert list(tmp_path.iterdir()) == [path]  # nothing left behind by the refused one
