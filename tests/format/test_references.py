"""Format 1.3: a list of message ids written by reference to runs of the file's latest snapshot
(``session_format/references.py``). A conversation kept in a sliding window — the system prompt,
then the latest turns — writes what is new each turn, not the window; a summary in place of
dropped turns and a message put in the middle read back exactly; a reference that does not
resolve is refused naming the file and line, as a bad 1.2 reference is. The 1.2 files kept under
``fixtures/v1_2/`` (recorded by the 1.2 recorder) still read back as they were recorded."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

import otel_agent_trace as oat
from otel_agent_trace import session_format as fmt
from otel_agent_trace.offline import SessionReadWarning, load_session
from otel_agent_trace.session_format.references import MIN_REFERENCE, reference, resolve
from otel_agent_trace.settings import Settings
from tests.format.window_session import conversations
from tests.genai.genai_helpers import strip_digests

HERE = Path(__file__).parent
ROOT = HERE.parents[1]
V12 = HERE / "fixtures" / "v1_2"
SESSION = "session-20231114-221320-0a0b0c0d"


def _lines(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def _snapshot_lines(path: Path) -> list[bytes]:
    return [line for line in path.read_bytes().splitlines() if b'"type":"snapshot"' in line]


def _record_window(directory: Path, tier: str) -> Path:
    """``tests/format/window_session.py`` in a fresh process (every id, clock and host fixed)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), HOME=str(directory))
    env.pop("AGENT_TRACE_SESSION_ID", None)
    subprocess.run(
        [sys.executable, "-m", "tests.format.window_session", str(directory), tier],
        check=True,
        cwd=ROOT,
        env=env,
        timeout=120,
    )
    suffix = ".checkpoint" if tier == "checkpoint" else ""
    return directory / f"{SESSION}{suffix}.jsonl"


def _contents(path: Path) -> list[list[Any]]:
    """Each snapshot's messages as the file rebuilds them (the checkpoint tier keeps the text)."""
    return [strip_digests(s["agent_messages"]) for s in load_session(path).snapshots]


def _hashes(path: Path) -> list[list[str]]:
    """Each snapshot's messages as hashes (the trace tier keeps no text)."""
    return [[m["content_sha256"] for m in s["agent_messages"]] for s in load_session(path).snapshots]


def _expected_hashes() -> list[list[str]]:
    return [[fmt.content_sha256(m["content"]) for m in ms] for ms in conversations()]


# --- a sliding window, through the public API -----------------------------------------------------


@pytest.fixture(scope="module")
def window_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    directory = tmp_path_factory.mktemp("window")
    (directory / "c").mkdir(mode=0o700)
    return {
        "trace": _record_window(directory / "t", "trace"),
        "checkpoint": _record_window(directory / "c", "checkpoint"),
    }


def test_a_window_reads_back_exactly(window_files: dict[str, Path]):
    assert _lines(window_files["checkpoint"])[0]["metadata"]["format_version"] == "1.3"
    assert _contents(window_files["checkpoint"]) == conversations()
    assert _hashes(window_files["trace"]) == _expected_hashes()
    for path in window_files.values():
        assert load_session(path, strict=True).snapshots  # no issue of any kind


def test_a_window_writes_runs_of_the_last_snapshot(window_files: dict[str, Path]):
    """Once the window is full (turn 20 on), every snapshot is by reference: the system prompt's
    run, the rest of the window, the new turn; the summary (turn 20) and the note put in the
    middle (turn 25) are the only new ids among the runs."""
    for path in window_files.values():
        refs = [orjson.loads(line)["message_ids"] for line in _snapshot_lines(path)]
        assert all(isinstance(r, dict) for r in refs[4:])  # (shorter lists are written whole)
        assert [type(r["keep"]).__name__ for r in refs[20:]] == ["list", "int", "int"] + ["list"] * 7
        assert all(r["keep"][0] == [0, 1] and len(r["add"]) == 2 for r in refs[23:])
        summary, note = refs[20]["keep"], refs[25]["keep"]
        assert [type(p).__name__ for p in summary] == ["list", "str", "list"]
        assert [type(p).__name__ for p in note] == ["list", "list", "str", "list"]


def test_a_window_costs_its_new_messages_not_its_length(window_files: dict[str, Path]):
    """In 1.2, a window's snapshot wrote its every id (41 here, ~16 bytes each); in 1.3 it is a
    line of about the same size whatever the window's length."""
    old = _snapshot_lines(V12 / "window.jsonl")
    new = _snapshot_lines(window_files["trace"])
    assert len(old) == len(new) == 30
    assert min(map(len, old[23:])) > 41 * 16  # (turns 21 and 22: the window grows again after the summary)
    assert max(map(len, new[23:])) < 360
    assert sum(map(len, new[23:])) < 0.45 * sum(map(len, old[23:]))


def test_a_200_message_window_writes_a_short_line_per_snapshot(recording: oat.Session):
    system = {"role": "system", "content": "Be brief."}
    history: list[dict[str, Any]] = []
    given = []
    for turn in range(150):
        history += [{"role": "user", "content": f"q{turn}"}, {"role": "assistant", "content": f"a{turn}"}]
        del history[: max(0, len(history) - 200)]
        given.append([system, *history])
        oat.snapshot(f"turn {turn}", messages=given[-1])
    path = recording.files[0]
    recording.stop()
    lines = _snapshot_lines(path)
    ids = orjson.loads(lines[-1])["message_ids"]
    assert ids["keep"] == [[0, 1], [3, 201]] and len(ids["add"]) == 2
    # A list of 201 ids is over 3 KB; the line says what changed.
    assert len(orjson.dumps([f"{i:08x}-{i:04d}" for i in range(201)])) > 3200
    assert max(map(len, lines[100:])) < 400
    assert _hashes(path) == [[fmt.content_sha256(m["content"]) for m in ms] for ms in given]


def test_a_growing_conversation_is_written_as_in_1_2(recording: oat.Session):
    """The leading run alone is 1.2's form, byte for byte (``"keep": n``)."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "s"}]
    for turn in range(12):
        messages += [{"role": "user", "content": f"q{turn}"}, {"role": "assistant", "content": f"a{turn}"}]
        oat.snapshot("t", messages=messages)
    path = recording.files[0]
    recording.stop()
    refs = [orjson.loads(line)["message_ids"] for line in _snapshot_lines(path)]
    assert all(type(r["keep"]) is int and len(r["add"]) == 2 for r in refs[4:])


# --- the 1.2 files still read ----------------------------------------------------------------------


def test_a_12_window_reads_back_as_recorded():
    assert _lines(V12 / "window.jsonl")[0]["metadata"]["format_version"] == "1.2"
    assert _contents(V12 / "window.checkpoint.jsonl") == conversations()
    assert _hashes(V12 / "window.jsonl") == _expected_hashes()


def test_a_12_and_a_13_recording_of_one_window_read_alike(window_files: dict[str, Path]):
    """The same run recorded by the 1.2 and the 1.3 recorder: the same entries once read (the
    ids too: every source of variation is fixed), but for the version in the root entry."""
    for tier, suffix in (("trace", ""), ("checkpoint", ".checkpoint")):
        old, new = load_session(V12 / f"window{suffix}.jsonl"), load_session(window_files[tier])
        assert old.snapshots == new.snapshots
        said_then, said_now = ([_without_version(e.data) for e in s.events] for s in (old, new))
        assert said_then == said_now


def _without_version(entry: dict[str, Any]) -> dict[str, Any]:
    if entry.get("type") != fmt.SESSION_START:
        return entry
    return {**entry, "metadata": {**entry["metadata"], "format_version": None}}


# --- hostile references ----------------------------------------------------------------------------

_HOSTILE = {
    "a run past the base": [[0, 1], [3, 99]],
    "a run before the start": [[-1, 1], [3, 41]],
    "an empty run": [[0, 1], [3, 3], [3, 41]],
    "runs not increasing": [[3, 41], [0, 1]],
    "runs overlapping": [[0, 10], [5, 41]],
    "a run of floats": [[0.0, 1.0], [3, 41]],
    "a run of strings": [["0", "1"], [3, 41]],
    "a run of booleans": [[False, True], [3, 41]],
    "a run of three": [[0, 1, 2], [3, 41]],
    "a run of one": [[0], [3, 41]],
    "a run as an object": [{"start": 0, "stop": 1}, [3, 41]],
    "a null piece": [[0, 1], None, [3, 41]],
    "a number piece": [[0, 1], 7, [3, 41]],
    "keep an object": {"0": 1},
    "keep a string": "[[0, 1]]",
    "keep a float": 38.0,
    "keep past the base": 42,
    "keep negative": -1,
}


def _broken(tmp_path: Path, source: Path, change: Any) -> tuple[Path, int]:
    """``source`` with the last snapshot's reference changed by ``change(ref)``; the line's number."""
    lines = source.read_bytes().splitlines(keepends=True)
    number = max(i for i, line in enumerate(lines) if b'"type":"snapshot"' in line)
    entry = orjson.loads(lines[number])
    change(entry["message_ids"])
    lines[number] = orjson.dumps(entry) + b"\n"
    path = tmp_path / "broken.jsonl"
    path.write_bytes(b"".join(lines))
    return path, number + 1


@pytest.mark.parametrize("keep", list(_HOSTILE.values()), ids=list(_HOSTILE))
def test_a_reference_that_does_not_resolve_is_refused_naming_the_line(
    tmp_path: Path, window_files: dict[str, Path], keep: Any
):
    path, line = _broken(tmp_path, window_files["trace"], lambda ref: ref.update(keep=keep))
    with pytest.raises(fmt.SessionFormatError, match=rf"broken.jsonl:{line}: .*message_ids"):
        load_session(path)
    with pytest.warns(SessionReadWarning, match=rf"broken.jsonl:{line}: .*message_ids.*skipped"):
        lenient = load_session(path, lenient=True)  # skipped and counted, the rest read
    assert [(i.path, i.line) for i in lenient.issues] == [(str(path), line)]
    assert len(lenient.snapshots) == 29


@pytest.mark.parametrize(
    "change",
    [
        lambda ref: ref.update(base="0a0b0c0d-9999"),  # a snapshot the file does not have
        lambda ref: ref.update(base=None),
        lambda ref: ref.pop("base"),
        lambda ref: ref.update(add="0a0b0c0d-0001"),
        lambda ref: ref.pop("add"),
        lambda ref: ref.update(add=[["0a0b0c0d-0001"]]),
        lambda ref: ref["keep"].insert(1, ["0a0b0c0d-0001"]),  # an id not as a string
    ],
    ids=["unknown base", "null base", "no base", "add a string", "no add", "add nested", "id in a list"],
)
def test_a_reference_to_nothing_is_refused_naming_the_line(
    tmp_path: Path, window_files: dict[str, Path], change: Any
):
    path, line = _broken(tmp_path, window_files["trace"], change)
    with pytest.raises(fmt.SessionFormatError, match=rf"broken.jsonl:{line}: .*message_ids"):
        load_session(path)


def test_a_reference_to_an_earlier_snapshot_is_refused(tmp_path: Path, window_files: dict[str, Path]):
    """Only the file's latest snapshot is a base (the reader keeps no other)."""
    snapshots = [orjson.loads(line) for line in _snapshot_lines(window_files["trace"])]
    earlier = snapshots[-3]["id"]
    path, line = _broken(tmp_path, window_files["trace"], lambda ref: ref.update(base=earlier))
    with pytest.raises(fmt.SessionFormatError, match=rf"broken.jsonl:{line}: .*message_ids"):
        load_session(path)


def test_a_model_calls_message_ids_with_a_bad_run_are_refused(tmp_path: Path):
    """A ``span.end``'s ``input_message_ids`` is read by the same rules."""
    golden = ROOT / "tests" / "golden" / "session.jsonl"
    lines = golden.read_bytes().splitlines(keepends=True)
    number = next(i for i, line in enumerate(lines) if b'"input_message_ids":{' in line)
    entry = orjson.loads(lines[number])
    ref = entry["content"]["input_message_ids"]
    good = dict(ref, keep=[[0, ref["keep"]]])  # the same list, as runs
    for keep, ok in ((good["keep"], True), ([[0, 99]], False)):
        entry["content"]["input_message_ids"] = dict(ref, keep=keep)
        path = tmp_path / f"{ok}.jsonl"
        path.write_bytes(b"".join([*lines[:number], orjson.dumps(entry) + b"\n", *lines[number + 1 :]]))
        if ok:
            assert load_session(path).spans == load_session(golden).spans
        else:
            where = rf"{ok}.jsonl:{number + 1}: .*input_message_ids"
            with pytest.raises(fmt.SessionFormatError, match=where):
                load_session(path)


# --- the writer and the reader, against each other ----------------------------------------------


def _edited(rng: random.Random, base: list[str], fresh: list[str]) -> list[str]:
    """``base`` after a few edits as agents make them: turns dropped anywhere, ids put anywhere
    (a summary, a note), one replaced, new ones appended."""
    ids = list(base)
    for _ in range(rng.randint(0, 4)):
        op = rng.random()
        if op < 0.3 and ids:
            at = rng.randrange(len(ids))
            del ids[at : at + rng.randint(1, 6)]
        elif op < 0.55:
            at = rng.randint(0, len(ids))
            ids[at:at] = [fresh.pop() for _ in range(rng.randint(1, 3))]
        elif op < 0.8:
            ids += [fresh.pop() for _ in range(rng.randint(1, 4))]
        elif ids:
            ids[rng.randrange(len(ids))] = rng.choice([*base, fresh.pop()])
    return ids


def test_every_list_written_by_reference_reads_back_exactly_and_shorter():
    rng = random.Random(13)
    forms = {"list": 0, "int": 0, "runs": 0}
    for trial in range(4000):
        fresh = [f"0a0b0c0d-{i:04d}" for i in range(1000, 1100)]
        pool = [f"0a0b0c0d-{i:04d}" for i in range(rng.choice((12, 400)))]  # few: ids repeat
        base = [rng.choice(pool) for _ in range(rng.randint(0, 80))]
        ids = _edited(rng, base, fresh)
        shared = min(len(ids), len(base))
        same = next((i for i in range(shared) if ids[i] != base[i]), shared)
        written = reference("0a0b0c0d-0999", base, ids, rng.randint(0, same))
        if isinstance(written, list):
            assert written == ids
            forms["list"] += 1
            continue
        forms["int" if type(written["keep"]) is int else "runs"] += 1
        as_read = orjson.loads(orjson.dumps(written))
        assert resolve(as_read, "0a0b0c0d-0999", base) == ids, (trial, base, ids, written)
        assert len(orjson.dumps(written)) < len(orjson.dumps(ids)) - MIN_REFERENCE * 5
    assert min(forms.values()) > 400, forms


def test_a_window_of_runs_is_found_in_c_not_per_id():
    """A 10,000-message window: the writer's Python code runs per piece, not per id (the lines
    it runs are counted; every id is compared, in C)."""
    from otel_agent_trace.session_format import references

    base = ["s", *(f"0a0b0c0d-{i:05d}" for i in range(10_000))]
    ids = ["s", *base[3:], "0a0b0c0d-x", "0a0b0c0d-y"]
    lines = 0

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        nonlocal lines
        if frame.f_code.co_filename != references.__file__:
            return None
        if event == "line":
            lines += 1
        return tracer

    sys.settrace(tracer)
    try:
        written = reference("b", base, ids)
    finally:
        sys.settrace(None)
    assert written == {"base": "b", "keep": [[0, 1], [3, 10_001]], "add": ["0a0b0c0d-x", "0a0b0c0d-y"]}
    assert 0 < lines < 200  # (a loop per id would run 10,000 times)


def test_a_conversation_that_moved_everything_is_written_whole():
    base = [f"0a0b0c0d-{i:04d}" for i in range(100)]
    assert reference("b", base, base[::-1]) == base[::-1]  # no run long enough
    shuffled = base[50:] + base[:50]  # two runs, out of order: only the first can be kept
    written = reference("b", base, shuffled)
    assert written["keep"] == [[50, 100]] and written["add"] == base[:50]


def test_the_session_settings_do_not_change_the_form(tmp_path: Path):
    """Both tiers of one session write the same references (their ids differ, not their shape)."""
    settings = Settings(directory=tmp_path)
    session = oat.session("both", settings=settings, tier="both").start()
    for messages in conversations():
        oat.snapshot("t", messages=messages)
    paths = list(session.files)
    session.stop()

    def shapes(path: Path) -> list[Any]:
        return [_shape(orjson.loads(line)["message_ids"]) for line in _snapshot_lines(path)]

    assert shapes(paths[0]) == shapes(paths[1])


def _shape(ids: Any) -> Any:
    if isinstance(ids, list):
        return len(ids)
    keep = ids["keep"]
    return [p if isinstance(p, (int, list)) else "id" for p in keep] if isinstance(keep, list) else keep


def test_common_prefix_is_where_two_lists_first_differ():
    """The capture, the recorder and the ZIP's snapshots find how far two conversations agree by
    it: items equal but not the same objects agree too; lists of any lengths and parting anywhere."""
    from otel_agent_trace.session_format.alignment import common_prefix

    rng = random.Random(7)
    for _ in range(3000):
        shared = [{"n": rng.randrange(5)} for _ in range(rng.randint(0, 40))]
        a = shared + [{"n": rng.randrange(5)} for _ in range(rng.randint(0, 12))]
        b = [dict(item) if rng.random() < 0.3 else item for item in shared]  # equal copies
        b += [{"n": rng.randrange(5)} for _ in range(rng.randint(0, 12))]
        expected = next(
            (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
        )
        assert common_prefix(a, b) == expected, (a, b)
