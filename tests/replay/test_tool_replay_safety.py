"""A session file is data, never code: tool replay of a hostile recording runs nothing it names.

The hostile files are the real notes recording (``examples/replay``) with one tool span edited by
hand, as an attacker would: its recorded import path set to ``os:system``, ``subprocess:run``,
``shutil:rmtree`` or ``pathlib:Path.write_text``, arguments aimed at a canary directory outside the
workspace, and no process or write recorded under the span. After each replay, whatever flags are
given, the canary is still there and nothing appeared outside the workspace.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest

from otel_agent_trace.offline import load_session
from otel_agent_trace.offline.replay import replay_tools

from .conftest import EXAMPLES, Recording, cli, record

FLAGS = ([], ["--allow-shell", "--allow-writes", "--allow-network"])


def _edit(source: Path, out: Path, tool: str, **fields: object) -> Path:
    """``source`` with the spans of ``tool`` changed: ``import_path``, ``name``, ``arguments``."""
    lines = []
    for raw in source.read_bytes().splitlines():
        entry = orjson.loads(raw)
        attrs = entry.get("attributes") or {}
        if entry.get("type", "").startswith("span.") and attrs.get("gen_ai.tool.name") == tool:
            if "import_path" in fields:
                attrs["agent_trace.tool.import_path"] = fields["import_path"]
            if "name" in fields:
                attrs["gen_ai.tool.name"] = fields["name"]
                entry["name"] = f"execute_tool {fields['name']}"
            if "arguments" in fields and entry["type"] == "span.end":
                entry.setdefault("content", {})["tool_arguments"] = fields["arguments"]
        lines.append(orjson.dumps(entry))
    out.write_bytes(b"\n".join(lines) + b"\n")
    return out


def _drop_sys_entries(source: Path, out: Path) -> Path:
    """A genuine recording with every system-layer entry (processes, files) removed."""
    kept = [raw for raw in source.read_bytes().splitlines() if orjson.loads(raw).get("layer") != "sys"]
    out.write_bytes(b"\n".join(kept) + b"\n")
    return out


@pytest.fixture
def canary(tmp_path: Path) -> Path:
    """A directory with a file in it, outside every workspace: it must survive every replay."""
    d = tmp_path / "canary"
    d.mkdir()
    (d / "keep.txt").write_text("still here")
    return d


def _hostile_calls(canary: Path) -> dict[str, tuple[str, object]]:
    outside = canary.parent
    return {
        "os:system": ("os:system", {"command": f"touch {outside}/pwned-system; rm -rf {canary}"}),
        "subprocess:run": ("subprocess:run", {"args": ["rm", "-rf", str(canary)]}),
        "shutil:rmtree": ("shutil:rmtree", {"path": str(canary)}),
        "pathlib:Path.write_text": (
            "pathlib:Path.write_text",
            [str(outside / "pwned-write.txt"), "written by a session file"],
        ),
    }


def _line_of(stdout: str, tool: str) -> str:
    """The report line of ``tool``: ``  STATUS  ENTRY  TOOL: detail``."""
    return next(line for line in stdout.splitlines()[1:] if line.split()[2:3] == [f"{tool}:"])


def _outside_files(root: Path, workspace: Path) -> set[Path]:
    return {p for p in root.rglob("*") if workspace not in p.parents and p != workspace}


def _assert_nothing_ran(canary: Path, before: set[Path], workspace: Path) -> None:
    assert (canary / "keep.txt").read_text() == "still here"
    assert _outside_files(canary.parent, workspace) == before


@pytest.mark.parametrize("hostile", list(_hostile_calls(Path("/x"))))
@pytest.mark.parametrize("tier", ["checkpoint", "trace"])
@pytest.mark.parametrize("renamed", [False, True], ids=["tool-name-kept", "tool-name-changed"])
def test_an_import_path_from_the_file_is_never_imported_or_called(
    notes: Recording, tmp_path: Path, canary: Path, hostile: str, tier: str, renamed: bool
) -> None:
    import_path, arguments = _hostile_calls(canary)[hostile]
    source = notes.checkpoint if tier == "checkpoint" else notes.trace
    fields: dict[str, object] = {"import_path": import_path, "arguments": arguments}
    if renamed:
        fields["name"] = import_path.rpartition(":")[2]
    bad = _edit(source, tmp_path / f"hostile.{tier}.jsonl", "count_words", **fields)
    ws = tmp_path / "ws"
    ws.mkdir()
    before = _outside_files(tmp_path, ws)
    for flags in FLAGS:
        # without naming the tools' code: refused outright
        done = cli("replay", str(bad), "--execute-tools", "--workspace", str(ws), *flags, cwd=notes.cwd)
        assert done.returncode == 2 and "--tools-from" in done.stderr
        _assert_nothing_ran(canary, before, ws)
        # with the user's own tools: the file can only pick among them
        done = cli(
            "replay", str(bad), "--execute-tools", "--workspace", str(ws),
            "--tools-from", "notes_tools", *flags, cwd=notes.cwd,
        )  # fmt: skip
        _assert_nothing_ran(canary, before, ws)
        line = _line_of(done.stdout, str(fields.get("name", "count_words")))
        if renamed:  # no tool of the user's has that name or path
            assert line.split()[0] == "unknown", line
            if tier == "checkpoint":
                assert "not a tool of --tools-from notes_tools" in line
        elif tier == "checkpoint":  # the user's count_words, given arguments it does not take
            assert line.split()[0] in ("error", "unknown"), line


def test_a_genuine_recording_without_its_system_entries_still_runs_no_command(
    tmp_path: Path, canary: Path
) -> None:
    """The old notes tools, which declare nothing: the guard refuses the command as it starts."""
    undeclared = tmp_path / "undeclared"
    undeclared.mkdir()
    run = record("scripted_agent.py", undeclared)
    plain = (EXAMPLES / "notes_tools.py").read_text().replace("@oat.tool(effects=", "@oat.tool  # (")
    plain = plain.replace('("writes",))', "").replace('("shell",))', "")
    (undeclared / "notes_tools.py").write_text(plain)
    stripped = _drop_sys_entries(run.checkpoint, tmp_path / "stripped.checkpoint.jsonl")
    ws = tmp_path / "ws"
    before = _outside_files(tmp_path, ws)
    report = replay_tools(
        load_session(stripped),
        execute=True,
        workspace=ws,
        tools_from=["notes_tools"],
        import_paths=[str(undeclared)],
    )
    calls = {c.call.name: c for c in report.calls}
    assert calls["python_version"].status == "blocked", calls["python_version"].detail
    assert "subprocess.Popen" in calls["python_version"].detail
    assert "--allow-shell" in calls["python_version"].detail
    assert calls["write_note"].status == "blocked" and "--allow-writes" in calls["write_note"].detail
    assert not (ws / "note.txt").exists()
    assert calls["count_words"].status == "ok"
    _assert_nothing_ran(canary, before, ws)


@pytest.mark.parametrize(
    "path", ["{outside}/escape.txt", "../escape.txt", "sub/../../escape.txt", "link/escape.txt"]
)
def test_a_write_outside_the_workspace_is_refused_even_when_writes_are_allowed(
    notes: Recording, tmp_path: Path, canary: Path, path: str
) -> None:
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    (ws / "link").symlink_to(canary.parent)  # a symlink in the workspace that points out of it
    target = path.format(outside=canary.parent)
    bad = _edit(
        notes.checkpoint, tmp_path / "write.checkpoint.jsonl", "write_note",
        arguments={"path": target, "text": "from the file"},
    )  # fmt: skip
    before = _outside_files(tmp_path, ws)
    report = replay_tools(
        load_session(bad),
        execute=True,
        workspace=ws,
        tools_from=["notes_tools"],
        allow_writes=True,
        import_paths=[str(notes.cwd)],
        only="write_note",
    )
    (call,) = report.calls
    assert call.status == "blocked" and "outside the workspace" in call.detail, call.detail
    assert not (canary.parent / "escape.txt").exists()
    _assert_nothing_ran(canary, before, ws)


def test_a_read_outside_the_workspace_is_refused(notes: Recording, tmp_path: Path, canary: Path) -> None:
    bad = _edit(
        notes.checkpoint, tmp_path / "read.checkpoint.jsonl", "read_note",
        arguments={"path": str(canary / "keep.txt")},
    )  # fmt: skip
    report = replay_tools(
        load_session(bad),
        execute=True,
        workspace=tmp_path / "ws",
        tools_from=["notes_tools"],
        import_paths=[str(notes.cwd)],
        only="read_note",
    )
    (call,) = report.calls
    assert call.status == "blocked" and "outside the workspace" in call.detail, call.detail
    assert call.new_result is None


def test_a_file_written_into_the_workspace_is_never_imported(notes: Recording, tmp_path: Path) -> None:
    """An allowed write puts ``notes_tools.py`` in the workspace; the next call still runs the
    user's module, not the one the file's arguments wrote."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes_tools.py").write_text("raise SystemExit('the workspace copy was imported')\n")
    report = replay_tools(
        load_session(notes.checkpoint),
        execute=True,
        workspace=ws,
        tools_from=["notes_tools"],
        import_paths=[str(notes.cwd)],
        only="count_words",
    )
    (call,) = report.calls
    assert call.status == "ok", call.detail


def test_tools_in_the_agents_own_script_rerun_without_running_the_agent(
    notes: Recording, tmp_path: Path
) -> None:
    """``--tools-from scripted_agent.py``: the script's tools are registered (here, those it
    imports); its ``__main__`` block (the agent run) does not run."""
    before = sorted((notes.cwd / "agent-sessions").iterdir())
    done = cli(
        "replay", str(notes.checkpoint), "--execute-tools", "--workspace", str(tmp_path / "ws"),
        "--tools-from", str(notes.cwd / "scripted_agent.py"), cwd=tmp_path,
    )  # fmt: skip
    assert "The note has" not in done.stdout + done.stderr
    line = _line_of(done.stdout, "count_words")
    assert line.split()[0] == "ok", done.stdout + done.stderr
    assert sorted((notes.cwd / "agent-sessions").iterdir()) == before


def test_a_tool_defined_in_main_reruns_when_the_user_names_the_script(tmp_path: Path) -> None:
    """A tool recorded as ``__main__:shout`` is selected among the named script's tools."""
    script = tmp_path / "main_tools_agent.py"
    script.write_text(
        "import otel_agent_trace as oat\n\n"
        "@oat.tool\ndef shout(text: str) -> str:\n    return text.upper() + '!'\n\n"
        "if __name__ == '__main__':\n"
        "    with oat.session('main-tools', tier='checkpoint'):\n"
        "        print(shout('hello'))\n"
    )
    shutil.copy(EXAMPLES / "notes_tools.py", tmp_path / "notes_tools.py")
    from tests.e2e.helpers import run_instrumented

    done = run_instrumented(script, tmp_path)
    assert done.returncode == 0, done.stderr
    (checkpoint,) = (tmp_path / "agent-sessions").glob("*.checkpoint.jsonl")
    dry = replay_tools(load_session(checkpoint))
    (call,) = dry.calls
    assert call.call.import_path == "__main__:shout"
    done = cli(
        "replay", str(checkpoint), "--execute-tools", "--workspace", str(tmp_path / "ws"),
        "--tools-from", str(script), cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 calls: 1 ok" in done.stdout


FRAMEWORK_TOOLS = '''
import asyncio

from agents import function_tool
from langchain_core.tools import tool as langchain_tool
from strands import tool as strands_tool

import otel_agent_trace as oat


@oat.tool
async def add(a: int, b: int) -> int:
    await asyncio.sleep(0)
    return a + b


@oat.tool(effects=("shell",))
def run_it(command: str) -> str:
    return command


@langchain_tool
def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


@strands_tool
def whisper(text: str) -> str:
    """Lower-case a text."""
    return text.lower()


@function_tool
def double(x: int) -> int:
    return 2 * x


@oat.tool
def fetch(url: str) -> str:
    import urllib.request

    try:
        return urllib.request.urlopen(url, timeout=5).read().decode()
    except Exception as exc:  # the tool swallows the refusal: it is still reported
        return f"failed: {exc}"


def helper_not_a_tool() -> None:
    raise AssertionError("a plain function of the module is not a tool")
'''


def test_the_registry_holds_each_frameworks_tools_and_only_tools(tmp_path: Path, monkeypatch) -> None:
    from otel_agent_trace.offline.replay import _registry

    (tmp_path / "fw_tools.py").write_text(FRAMEWORK_TOOLS)
    monkeypatch.syspath_prepend(str(tmp_path))
    tools = {t.name: t for t in _registry.load("fw_tools")}
    assert set(tools) == {"add", "run_it", "shout", "whisper", "double", "fetch"}
    assert tools["run_it"].effects == ("shell",) and tools["add"].effects == ()
    assert all(f"fw_tools:{n}" in t.import_paths for n, t in tools.items())
    assert tools["whisper"].function("HeLLo") == "hello"  # the plain function, not the tool object
    assert tools["double"].function(4) == 8
    assert _registry.select(list(tools.values()), "os:system", "system") is None
    assert _registry.select(list(tools.values()), "os:system", "shout") is tools["shout"]
    assert _registry.select(list(tools.values()), "fw_tools:helper_not_a_tool", "x") is None
    # a module attribute names exactly what it is, tool or not
    (named,) = _registry.load("fw_tools:helper_not_a_tool")
    assert named.name == "helper_not_a_tool"


def test_an_async_tool_reruns_under_the_guard(tmp_path: Path) -> None:
    """asyncio's own set-up (a socket pair, a selector) is not taken for the network."""
    (tmp_path / "fw_tools.py").write_text(FRAMEWORK_TOOLS)
    from otel_agent_trace.offline.replay.tools import Permissions, ToolCall, run_call

    call = ToolCall("e-1", "s-1", "add", "fw_tools:add", {"a": 2, "b": 3}, True, 5, True, None)
    ws = tmp_path / "ws"
    ws.mkdir()
    answer = run_call(call, ws, ["fw_tools"], Permissions(), import_paths=[str(tmp_path)])
    assert answer == {"ok": True, "result": 5, "refused": []}
    # declared to run commands: blocked before it runs unless allowed
    call = ToolCall("e-2", "s-2", "run_it", "fw_tools:run_it", {"command": "x"}, True, "x", True, None)
    answer = run_call(call, ws, ["fw_tools"], Permissions(), import_paths=[str(tmp_path)])
    assert answer["stage"] == "blocked" and "--allow-shell" in answer["error"]
    answer = run_call(call, ws, ["fw_tools"], Permissions(shell=True), import_paths=[str(tmp_path)])
    assert answer["ok"] and answer["result"] == "x"


def test_the_network_is_refused_even_when_the_tool_swallows_the_error(tmp_path: Path) -> None:
    (tmp_path / "fw_tools.py").write_text(FRAMEWORK_TOOLS)
    from otel_agent_trace.offline.replay.tools import Permissions, ToolCall, _report, run_call

    url = "http://127.0.0.1:9/secret"
    call = ToolCall("e-1", "s-1", "fetch", "fw_tools:fetch", {"url": url}, True, "x", True, None)
    ws = tmp_path / "ws"
    ws.mkdir()
    answer = run_call(call, ws, ["fw_tools"], Permissions(), import_paths=[str(tmp_path)])
    assert answer["ok"] and answer["refused"], answer
    assert "--allow-network" in answer["refused"][0]
    report = _report(call, answer, exact=True)
    assert report.status == "blocked" and "--allow-network" in report.detail
