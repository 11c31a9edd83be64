"""``view --html`` as a viewer for agent sessions, used in headless Chromium as a person would:
the conversation as chat bubbles (a model call's, a snapshot's, as it stood at any span), tool
calls linked to their spans, search and filters, zoom from the minimap, events and tokens on the
rows, the trace id; and ``diff --html``: two runs, their tool calls aligned as ``diff`` aligns them.

Every expectation is read from the session with the loader (``oat.load_session``) or from
``diff --json``, never written down by hand."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import otel_agent_trace as oat

from .chromium import Browser
from .helpers import cli

pytestmark = pytest.mark.chromium


def _one(directory: Path, pattern: str) -> Path:
    (path,) = [p for p in directory.glob(pattern) if ".p" not in p.name.rsplit("-", 1)[-1].split(".", 1)[-1]]
    return path


def _page(tmp_path: Path, *args: str, name: str = "page.html") -> Path:
    out = tmp_path / name
    done = cli(*args, str(out)) if args[0] == "diff" else cli("view", args[0], "--html", str(out))
    assert done.returncode in (0, 1), done.stderr
    assert out.exists(), done.stderr
    return out


def _all(browser: Browser, selector: str, what: str) -> list:
    """``what`` (a JavaScript expression of ``n``) for each element ``selector`` matches."""
    found = browser.js(
        f"Array.from(document.querySelectorAll({json.dumps(selector)}))"
        f".map(function (n) {{ return {what}; }})"
    )
    assert isinstance(found, list)
    return found


def _texts(browser: Browser, selector: str) -> list[str]:
    return _all(browser, selector, "n.textContent")


def _laid_out(message: dict) -> str | None:
    """A message's text as a bubble shows it: a tool's JSON answer laid out (a string decoded)."""
    text = message.get("content") or None
    if message.get("role") == "tool" and text:
        try:
            value = json.loads(text)
        except ValueError:
            return text
        return value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False)
    return text


def _no_script_error(browser: Browser) -> None:
    assert browser.js("document.body.getAttribute('data-script-error')") is None


@pytest.fixture(scope="module")
def checkpoint(demo_both_dir: Path) -> Path:
    return _one(demo_both_dir, "session-*.checkpoint.jsonl")


@pytest.fixture(scope="module")
def shareable_zip(demo_both_dir: Path) -> Path:
    (path,) = [p for p in demo_both_dir.glob("session-*.zip") if ".checkpoint." not in p.name]
    return path


def test_a_model_call_as_chat_bubbles_its_tool_call_linked_to_the_span(checkpoint, tmp_path):
    session = oat.load_session(checkpoint)
    chats = [s for s in session.spans if s.name.startswith("chat ")]
    tools = {
        s.attributes["gen_ai.tool.call.id"]: s for s in session.spans if s.name.startswith("execute_tool")
    }
    second = sorted(chats, key=lambda s: s.start_ns)[1]
    ids = second.content["input_message_ids"] + second.content["output_message_ids"]
    messages = [session.entry(i).data for i in ids]
    with Browser(_page(tmp_path, str(checkpoint))) as browser:
        _no_script_error(browser)
        browser.click(f'.row[data-span-id="{second.span_id}"] .name')
        browser.click('.tabs button[data-tab="conversation"]')
        assert browser.js("document.querySelector('.conversation').hidden") is False
        shown = browser.js(
            "Array.from(document.querySelectorAll('.conversation .msg')).map(function (m) {"
            " var t = m.querySelector('.text'); return [m.getAttribute('data-message-id'), m.className,"
            " t ? t.textContent : null]; })"
        )
        assert [row[0] for row in shown] == ids
        for (mid, cls, text), message in zip(shown, messages, strict=True):
            assert f"role-{message['role']}" in cls
            assert text == _laid_out(message), mid
        assert "output" in shown[-1][1] and "output" not in shown[-2][1]  # its answer, marked
        # the tool call the model asked for, with a link to the tool's span
        (call,) = messages[-1]["tool_calls"]
        tool_span = tools[call["id"]]
        calls = _texts(browser, f'.conversation .msg[data-message-id="{ids[-1]}"] .call')
        assert calls and calls[0].startswith(f"→ {call['function']['name']}(")
        (result,) = _texts(browser, f'.conversation .msg[data-message-id="{ids[-1]}"] .call-result')
        wanted = tool_span.content["tool_result"]  # what the tool gave back, from its span
        assert result[2:].rstrip("…") in (
            wanted if isinstance(wanted, str) else json.dumps(wanted, separators=(",", ":"))
        )
        browser.click(f'.conversation .msg[data-message-id="{ids[-1]}"] .call [data-goto-span]')
        assert browser.js("document.querySelector('.run').getAttribute('data-selected')") == tool_span.span_id
        # the tool's span shows its arguments and result
        browser.click('.tabs button[data-tab="details"]')
        arguments = browser.js("document.querySelector('.details .tool-arguments').textContent")
        assert json.loads(arguments) == tool_span.content["tool_arguments"]


def test_the_conversation_at_each_snapshot(checkpoint, tmp_path):
    session = oat.load_session(checkpoint)
    assert len(session.snapshots) == 4
    with Browser(_page(tmp_path, str(checkpoint))) as browser:
        marks = browser.js("document.querySelectorAll('.ticks .snap-mark').length")
        assert marks == len(session.snapshots)
        clicked = 0
        for snapshot in session.snapshots:
            number = snapshot["snapshot_id"]
            mark = f'.ticks .snap-mark[data-snapshot="{number}"]'
            if browser.on_top(mark):  # snapshots close in time overlap on the axis
                browser.click(mark)
                clicked += 1
            else:
                browser.click(f'.conversation .snaps button[data-snapshot="{number}"]')
            assert browser.js("document.querySelector('.conversation').getAttribute('data-snapshot')") == str(
                number
            )
            assert browser.js("document.querySelector('.conversation').hidden") is False
            texts = browser.js(
                "Array.from(document.querySelectorAll('.conversation .msg')).map(function (m) {"
                " var t = m.querySelector('.text'); return t ? t.textContent : null; })"
            )
            assert texts == [_laid_out(m) for m in snapshot["agent_messages"]], number
            assert snapshot["description"] in browser.js("document.querySelector('.conv-title').textContent")
            assert browser.js("document.querySelector('.cursor').hidden") is False  # its time, down the chart
            assert browser.js("document.querySelectorAll('.row.snap-owner').length") == 1  # and its span
        assert clicked >= 1  # the last one at least is drawn on top
        browser.click(".row .name")
        assert browser.js("document.querySelector('.cursor').hidden") is True
        # and from the buttons above the bubbles
        browser.click('.conversation .snaps button[data-snapshot="1"]')
        assert len(_texts(browser, ".conversation .msg")) == session.get_snapshot(1)["agent_messages_count"]


def test_the_conversation_as_it_stood_at_a_tool_call(checkpoint, tmp_path):
    """At a tool span: the conversation of the model call before it (which asked for it)."""
    session = oat.load_session(checkpoint)
    tool = next(s for s in session.spans if s.name == "execute_tool run_command")
    asked = max(
        (s for s in session.spans if s.name.startswith("chat ") and s.end_ns <= tool.start_ns),
        key=lambda s: s.end_ns,
    )
    ids = asked.content["input_message_ids"] + asked.content["output_message_ids"]
    with Browser(_page(tmp_path, str(checkpoint))) as browser:
        browser.click(f'.row[data-span-id="{tool.span_id}"] .name')
        browser.click('.tabs button[data-tab="conversation"]')
        shown = browser.js(
            "Array.from(document.querySelectorAll('.conversation .msg')).map(function (m) {"
            " return m.getAttribute('data-message-id'); })"
        )
        assert shown == ids
        assert "as it stood" in browser.js("document.querySelector('.conv-title').textContent")


def test_a_shareable_file_shows_lengths_and_hashes_never_text(shareable_zip, checkpoint, tmp_path):
    full = oat.load_session(checkpoint)
    texts = [  # what the user and the model said (a tool's result is a span's, in either tier)
        e.data["content"]
        for e in full.events
        if e.type == "message" and e.data.get("content") and e.data.get("role") != "tool"
    ]
    assert len(texts) == 3  # the system prompt, the task, the answer
    page = _page(tmp_path, str(shareable_zip))
    source = page.read_text()
    for text in texts:  # not one of them is on the page of a shareable file
        assert json.dumps(text)[1:-1] not in source and text not in source
    shared = oat.load_session(shareable_zip)
    system = next(e.data for e in shared.events if e.type == "message" and e.data.get("role") == "system")
    with Browser(page) as browser:
        browser.click(f'.row[data-span-id="{shared.spans[0].span_id}"] .name')
        browser.click('.tabs button[data-tab="conversation"]')
        browser.click('.conversation .snaps button[data-snapshot="1"]')
        (digest,) = _texts(browser, f'.conversation .msg[data-message-id="{system["id"]}"] .digest')
        assert f"{system['content_chars']} characters, sha256 {system['content_sha256'][:12]}" in digest
        # what the tool gave back is in its span, in this tier too: shown under the call
        tool = next(s for s in shared.spans if s.name == "execute_tool list_files")
        (result,) = _texts(browser, ".conversation .call-result")
        assert result == "⇐ " + json.dumps(tool.content["tool_result"], separators=(",", ":"))


def test_search_filters_events_tokens_and_the_trace_id(checkpoint, tmp_path):
    session = oat.load_session(checkpoint)
    spans = session.spans
    with Browser(_page(tmp_path, str(checkpoint))) as browser:
        _no_script_error(browser)
        assert (
            browser.js("document.querySelector('.trace').getAttribute('data-trace-id')") == spans[0].trace_id
        )
        # tokens and asked tools on the model calls' rows
        for span in spans:
            if span.name.startswith("chat "):
                a = span.attributes
                extra = browser.js(
                    f"document.querySelector('.row[data-span-id=\"{span.span_id}\"] .extra').textContent"
                )
                assert extra.startswith(
                    f"{a['gen_ai.usage.input_tokens']}→{a['gen_ai.usage.output_tokens']} tok"
                )
                if a.get("agent_trace.tool_calls.names"):
                    assert f"asks {','.join(a['agent_trace.tool_calls.names'])}" in extra
            # the span's events, ticks on its bar
            ticks = browser.js(
                f"document.querySelectorAll('.row[data-span-id=\"{span.span_id}\"] .evtick').length"
            )
            assert ticks == min(len(span.events), 20), span.name
        # search: the spans whose name or attributes hold the text, and their parents
        browser.type(".toolbar .search", "read_file")
        hits = [s for s in spans if "read_file" in s.name or "read_file" in json.dumps(s.attributes)]
        assert browser.js("document.querySelector('.run').getAttribute('data-matches')") == str(len(hits))
        shown = set(_visible_rows(browser))
        assert {s.span_id for s in hits} <= shown
        assert all(s.span_id not in shown for s in spans if s.name.startswith("process "))
        # Enter goes to the next match
        browser.send(
            "Input.dispatchKeyEvent", type="keyDown", key="Enter", code="Enter", windowsVirtualKeyCode=13
        )
        assert browser.js("document.querySelector('.run').getAttribute('data-selected')") in {
            s.span_id for s in hits
        }
        browser.click(".toolbar .search")
        browser.js("document.querySelector('.search').select()")
        browser.send(
            "Input.dispatchKeyEvent",
            type="keyDown",
            key="Backspace",
            code="Backspace",
            windowsVirtualKeyCode=8,
        )
        assert len(_visible_rows(browser)) == len(spans)
        # what was said: the model call whose messages hold the text ("/" goes to the search box)
        browser.key("/", 191)
        browser.send("Input.insertText", text="does python run")
        first_call = min((s for s in spans if s.name.startswith("chat ")), key=lambda s: s.start_ns)
        assert first_call.span_id in _hits(browser)
        browser.js("document.querySelector('.search').select()")
        browser.key("Backspace", 8)
        # the layer filter, then the tool filter
        _choose(browser, ".layer-filter", "sys")
        assert set(_hits(browser)) == {s.span_id for s in spans if s.layer == "sys"}
        _choose(browser, ".layer-filter", "")
        _choose(browser, ".tool-filter", "run_command")
        assert set(_hits(browser)) == {
            s.span_id for s in spans if s.attributes.get("gen_ai.tool.name") == "run_command"
        }


def _visible_rows(browser: Browser) -> list[str]:
    shown = _all(browser, ".row", "n.offsetParent !== null && n.getAttribute('data-span-id')")
    return [s for s in shown if s]


def _hits(browser: Browser) -> list[str]:
    return _all(browser, ".row.hit", "n.getAttribute('data-span-id')")


def _choose(browser: Browser, selector: str, value: str) -> None:
    """Pick an option of a drop-down with the keyboard, as a person without a mouse does."""
    options = _all(browser, f"{selector} option", "n.value")
    assert value in options
    browser.js(f"document.querySelector({json.dumps(selector)}).focus()")
    current = browser.js(f"document.querySelector({json.dumps(selector)}).selectedIndex")
    assert isinstance(current, int)
    target = options.index(value)
    key = ("ArrowDown", 40) if target > current else ("ArrowUp", 38)
    for _ in range(abs(target - current)):
        for kind in ("keyDown", "keyUp"):
            browser.send(
                "Input.dispatchKeyEvent", type=kind, key=key[0], code=key[0], windowsVirtualKeyCode=key[1]
            )
    assert browser.js(f"document.querySelector({json.dumps(selector)}).value") == value


def test_errors_only_and_zoom_from_the_minimap(variant_dir, tmp_path):
    path = _one(variant_dir, "session-*[0-9a-f].jsonl")
    session = oat.load_session(path)
    failed = {s.span_id for s in session.spans if s.status == "ERROR"}
    assert len(failed) == 2  # the tool that raised and the agent's run
    with Browser(_page(tmp_path, str(path))) as browser:
        _no_script_error(browser)
        browser.click(".toolbar .errors-only")
        assert set(_hits(browser)) == failed
        browser.click(".toolbar .errors-only")
        assert browser.js("document.querySelector('.run').getAttribute('data-matches')") == ""
        # drag across the middle half of the overview: the chart shows that time range
        before = browser.js("document.querySelector('.run').getAttribute('data-zoom')")
        browser.drag(".minimap .mm-track", 0.25, 0.75)
        after = browser.js("document.querySelector('.run').getAttribute('data-zoom')")
        assert isinstance(before, str) and isinstance(after, str)
        total = int(float(before.split("-")[1]))
        low, high = (float(v) for v in after.split("-"))
        assert 0.2 * total < low < 0.3 * total and 0.7 * total < high < 0.8 * total
        assert browser.js("document.querySelector('.axis .fact').textContent").startswith("zoomed")
        browser.click(".toolbar .zoom-reset")
        assert browser.js("document.querySelector('.run').getAttribute('data-zoom')") == before


def test_diff_html_two_runs_aligned_as_diff_aligns_them(demo_both_dir, variant_dir, tmp_path):
    base = _one(demo_both_dir, "session-*.checkpoint.jsonl")
    candidate = _one(variant_dir, "session-*.checkpoint.jsonl")
    found = cli("diff", str(base), str(candidate), "--json")
    assert found.returncode == 1, found.stderr
    result = json.loads(found.stdout)
    page = tmp_path / "diff.html"
    with_page = cli("diff", str(base), str(candidate), "--json", "--html", str(page))
    assert with_page.returncode == 1, with_page.stderr
    assert json.loads(with_page.stdout) == {**result, "html": str(page)}  # the same finding, and the page
    b_session = oat.load_session(candidate)
    with Browser(page) as browser:
        _no_script_error(browser)
        assert browser.js("document.body.getAttribute('data-view')") == "compare"
        ops = browser.js(
            "Array.from(document.querySelectorAll('#compare .aligned tr[data-op]')).map(function (r) {"
            " return [r.getAttribute('data-op'), r.querySelector('.a').textContent.split(' ')[0],"
            " r.querySelector('.b').textContent.split(' ')[0]]; })"
        )
        assert isinstance(ops, list)
        seq = result["action_sequence"]
        assert len([o for o in ops if o[1]]) == seq["base_length"]
        assert len([o for o in ops if o[2]]) == seq["candidate_length"]
        assert len([o for o in ops if o[0] == "equal"]) == seq["common"]
        changed = [o for o in ops if o[0] != "equal"]
        for change in seq["changes"]:  # each change diff reports, in the aligned rows
            rows = [o for o in changed if o[0] == change["op"]]
            assert [o[1] for o in rows if o[1]][: len(change["base"])] == change["base"][
                : len(rows)
            ] or not change["base"]
            assert set(change["candidate"]) <= {o[2] for o in rows}
        for name, metric in result["metrics"].items():
            cells = _texts(browser, f'#compare tr[data-metric="{name}"] td')
            assert cells[1:3] == [str(metric["base"]), str(metric["candidate"])]
        # the first change is open beside the table: each run's call, arguments and result
        first = next(i for i, o in enumerate(ops) if o[0] != "equal") + 1
        assert browser.js("document.getElementById('pair').getAttribute('data-row')") == str(first)
        # a row of run B's calls: the two calls side by side, then B's span in B's timeline
        a_session = oat.load_session(base)
        entries = "[n.querySelector('.a'), n.querySelector('.b')]"
        entries = f"{entries}.map(function (td) {{ return td.getAttribute('data-entry'); }})"
        rows = _all(browser, "#compare .aligned tr[data-op]", entries)
        number, (a_entry, cell) = next(
            (i, r) for i, r in enumerate(rows, 1) if r[0] and r[1] and ops[i - 1][0] != "equal"
        )
        span = next(s for s in b_session.spans if s.entry_id == cell)
        a_span = next(s for s in a_session.spans if s.entry_id == a_entry)
        browser.click(f'#compare td.b[data-entry="{cell}"]')
        assert browser.js("document.getElementById('pair').getAttribute('data-row')") == str(number)
        sides = _all(browser, "#pair .pair-col .tool-arguments", "n.textContent")
        assert [json.loads(t) for t in sides] == [
            a_span.content["tool_arguments"],
            span.content["tool_arguments"],
        ]
        browser.click('#pair [data-open="b"]')
        assert browser.js("document.body.getAttribute('data-view')") == "b"
        assert (
            browser.js("document.querySelector('[data-run=other]').getAttribute('data-selected')")
            == span.span_id
        )
        # each run's own page is there
        browser.click('.apptabs button[data-view="a"]')
        rendered = browser.js(
            "document.querySelector('[data-run=session]').getAttribute('data-rendered-spans')"
        )
        assert rendered == str(len(oat.load_session(base).spans))


def test_diff_html_never_overwrites(demo_both_dir, tmp_path):
    base = _one(demo_both_dir, "session-*.checkpoint.jsonl")
    out = tmp_path / "diff.html"
    out.write_text("mine")
    done = cli("diff", str(base), str(base), "--html", str(out))
    assert done.returncode == 2 and "exists" in done.stderr and out.read_text() == "mine"


def _hostile_conversation(path: Path) -> str:
    """A session whose messages, tool calls and snapshot carry markup and script."""
    t0 = 1_790_000_000_000_000_000
    entries = [
        {"type": "session.start", "session_id": SID, "tier": "checkpoint", "metadata": {}},
        {"type": "span.start", "name": "chat m", "span_id": "c" * 16, "trace_id": "d" * 32,
         "attributes": {"gen_ai.operation.name": "chat"}},
        {"type": "message", "role": "user", "content": MARKUP, "content_chars": len(MARKUP)},
        {"type": "message", "role": f"assistant{MARKUP}", "content": None,
         "tool_calls": [{"id": MARKUP, "type": "function", "function": {"name": MARKUP, "arguments": "{}"}}]},
        {"type": "snapshot", "snapshot_id": 1, "description": MARKUP,
         "message_ids": ["abcd0001-0002", "abcd0001-0003"], "messages_count": 2},
        {"type": "span.end", "name": "chat m", "span_id": "c" * 16, "trace_id": "d" * 32, "duration_ns": 5,
         "status": {"code": "UNSET"}, "attributes": {"gen_ai.operation.name": "chat"},
         "content": {"input_message_ids": ["abcd0001-0002"], "output_message_ids": ["abcd0001-0003"]}},
    ]  # fmt: skip
    with open(path, "w", encoding="utf-8") as out:
        for number, entry in enumerate(entries):
            parent = "" if number == 0 else "abcd0001-0000" if number == 1 else "abcd0001-0001"
            line = {
                "id": f"abcd0001-{number:04d}",
                "parent_id": parent,
                "layer": "agent",
                "ts": t0 + number,
                **entry,
            }
            out.write(json.dumps(line) + "\n")
    return MARKUP


SID = "session-20260101-000000-abcd0001"
MARKUP = (
    "</script><script>document.body.setAttribute('data-pwned','1')</script>"
    "<img src=x onerror=\"document.body.setAttribute('data-pwned','2')\"><!--"
)


def test_markup_in_messages_stays_text(tmp_path):
    path = tmp_path / "session-20260101-000000-abcd0001.checkpoint.jsonl"
    _hostile_conversation(path)
    page = _page(tmp_path, str(path))
    assert "<script>document.body" not in page.read_text()
    with Browser(page) as browser:
        _no_script_error(browser)
        browser.click('.ticks .snap-mark[data-snapshot="1"]')
        assert _texts(browser, ".conversation .msg .text") == [MARKUP]
        assert MARKUP in browser.js("document.querySelector('.conv-title').textContent")
        calls = _texts(browser, ".conversation .msg .call")
        assert calls == [f"→ {MARKUP}({{}}) "]
        browser.click(".row .name")
        browser.click('.tabs button[data-tab="conversation"]')
        assert len(_texts(browser, ".conversation .msg")) == 2
        assert browser.js("document.body.hasAttribute('data-pwned')") is False
        assert browser.js("document.querySelectorAll('#app script, #app img').length") == 0


def test_view_html_of_two_sessions_is_the_comparison(demo_both_dir, variant_dir, tmp_path):
    base = _one(demo_both_dir, "session-*[0-9a-f].jsonl")
    candidate = _one(variant_dir, "session-*[0-9a-f].jsonl")
    out = tmp_path / "two.html"
    done = cli("view", str(base), str(candidate), "--html", str(out), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"session": str(base), "html": str(out), "other": str(candidate)}
    refused = cli("view", str(base), str(candidate))
    assert refused.returncode == 2 and "--html" in refused.stderr and refused.stdout == ""
    with Browser(out) as browser:
        _no_script_error(browser)
        assert browser.js("document.body.getAttribute('data-view')") == "compare"
        rows = _all(browser, "#compare .aligned tr[data-op]", "n.getAttribute('data-op')")
        assert rows and "equal" in rows and set(rows) - {"equal"}
        browser.click('.apptabs button[data-view="b"]')
        rendered = browser.js(
            "document.querySelector('[data-run=other]').getAttribute('data-rendered-spans')"
        )
        assert rendered == str(len(oat.load_session(candidate).spans))


def test_devduck_and_dm_messages_up_to_a_span(tmp_path):
    """Files whose model calls list no messages (DevDuck, DM-Code-Agent): the conversation at a
    span is the messages written until it ended."""
    from tests.offline import samples

    for path in (samples.write_devduck_zip(tmp_path / "duck.zip"), samples.write_dm(tmp_path / "dm.jsonl")):
        session = oat.load_session(path)
        messages = [e for e in session.events if e.type == "message"]
        assert messages
        with Browser(_page(tmp_path, str(path), name=f"{path.name}.html")) as browser:
            _no_script_error(browser)
            for span in session.spans:
                browser.click(f'.row[data-span-id="{span.span_id}"] .name')
                browser.click('.tabs button[data-tab="conversation"]')
                wanted = [m.id for m in messages if m.data["ts"] <= (span.end_ns or span.start_ns)]
                assert _all(browser, ".conversation .msg", "n.getAttribute('data-message-id')") == wanted
            said = {
                m.data.get("content", m.data.get("content_preview")) for m in messages
            }  # DevDuck: a preview
            texts = _texts(browser, ".conversation .msg .text")
            assert texts and set(texts) <= said


def test_the_address_names_what_is_shown_and_the_keyboard_moves(checkpoint, tmp_path):
    """``#span=ID`` and ``#snapshot=N`` open the page there (the page writes them as you click,
    so an address can be shared); up and down keys move to the span above or below."""
    session = oat.load_session(checkpoint)
    tool = next(s for s in session.spans if s.name == "execute_tool read_file")
    page = _page(tmp_path, str(checkpoint))
    with Browser(page, fragment=f"#span={tool.span_id}") as browser:
        assert browser.js("document.querySelector('.run').getAttribute('data-selected')") == tool.span_id
        rows = _all(browser, ".row", "n.getAttribute('data-span-id')")
        browser.key("ArrowDown", 40)
        assert (
            browser.js("document.querySelector('.run').getAttribute('data-selected')")
            == rows[rows.index(tool.span_id) + 1]
        )
        browser.key("ArrowUp", 38)
        browser.key("ArrowUp", 38)
        assert (
            browser.js("document.querySelector('.run').getAttribute('data-selected')")
            == rows[rows.index(tool.span_id) - 1]
        )
        assert browser.js("location.hash") == f"#span={rows[rows.index(tool.span_id) - 1]}"
        browser.click('.tabs button[data-tab="conversation"]')
        browser.click('.conversation .snaps button[data-snapshot="2"]')
        assert browser.js("location.hash") == "#snapshot=2"
    with Browser(page, fragment="#snapshot=2") as browser:
        assert browser.js("document.querySelector('.conversation').getAttribute('data-snapshot')") == "2"
        assert len(_texts(browser, ".conversation .msg")) == session.get_snapshot(2)["agent_messages_count"]


def test_a_long_message_is_folded_and_unfolds(tmp_path):
    from .test_html_bounded import SID as BIG_SID
    from .test_html_bounded import _write_chatty_session

    path = tmp_path / f"{BIG_SID}.checkpoint.jsonl"
    _write_chatty_session(path, 1, 1, 3_000)
    with Browser(_page(tmp_path, str(path))) as browser:
        browser.click(".row .name")
        browser.click('.tabs button[data-tab="conversation"]')
        (text, _) = _texts(browser, ".conversation .msg .text")
        assert text == "m" * 1500 + "…"
        browser.click(".conversation .unfold")
        assert _texts(browser, ".conversation .msg .text")[0] == "m" * 3000


def test_ids_named_like_object_properties_are_ids(tmp_path):
    """Span ids ``__proto__`` and ``constructor``, a tool-call id ``__proto__``, a layer named
    ``constructor``: each is a key like any other (no prototype reached, nothing left out)."""
    t0 = 1_790_000_000_000_000_000
    tool_attrs = {"gen_ai.tool.call.id": "__proto__", "gen_ai.tool.name": "toString"}
    tool = {
        "name": "execute_tool t",
        "span_id": "constructor",
        "parent_span_id": "__proto__",
        "layer": "tool",
    }
    entries = [
        {"type": "session.start", "session_id": "session-20260101-000000-abcd0002", "tier": "checkpoint",
         "metadata": {}},
        {"type": "span.start", "name": "invoke_agent x", "span_id": "__proto__", "layer": "constructor",
         "attributes": {}},
        {"type": "span.start", **tool, "attributes": tool_attrs},
        {"type": "message", "role": "assistant", "content": None,
         "tool_calls": [{"id": "__proto__", "function": {"name": "t", "arguments": "{}"}}]},
        {"type": "span.end", **tool, "duration_ns": 5, "status": {"code": "ERROR"}, "attributes": tool_attrs},
        {"type": "span.end", "name": "invoke_agent x", "span_id": "__proto__", "layer": "constructor",
         "duration_ns": 10, "status": {"code": "UNSET"}, "attributes": {}},
    ]  # fmt: skip
    path = tmp_path / "session-20260101-000000-abcd0002.checkpoint.jsonl"
    with open(path, "w", encoding="utf-8") as out:
        for number, entry in enumerate(entries):
            line = {"id": f"abcd0002-{number:04d}", "parent_id": "" if number == 0 else "abcd0002-0000"}
            out.write(json.dumps({**line, "layer": "agent", "ts": t0 + number, **entry}) + "\n")
    with Browser(_page(tmp_path, str(path))) as browser:
        _no_script_error(browser)
        assert _all(browser, ".row", "n.getAttribute('data-span-id')") == ["__proto__", "constructor"]
        assert (
            browser.js("document.querySelector('.row[data-span-id=\"__proto__\"] .bar').className")
            == "bar layer-other"
        )
        browser.click('.row[data-span-id="__proto__"] .name')
        browser.click('.tabs button[data-tab="conversation"]')
        browser.click(".conversation .call [data-goto-span]")  # the call's link: to the tool's span
        assert browser.js("document.querySelector('.run').getAttribute('data-selected')") == "constructor"
        browser.click(".toolbar .errors-only")
        assert _all(browser, ".row.hit", "n.getAttribute('data-span-id')") == ["constructor"]


def test_a_session_of_messages_only_opens_on_its_conversation(tmp_path):
    t0 = 1_790_000_000_000_000_000
    entries = [
        {"type": "session.start", "session_id": "session-20260101-000000-abcd0003", "tier": "checkpoint",
         "metadata": {}},
        {"type": "message", "role": "user", "content": "hello there"},
        {"type": "message", "role": "assistant", "content": "hi"},
        {"type": "session.end", "duration_ns": 5, "unfinished_spans": 0},
    ]  # fmt: skip
    path = tmp_path / "session-20260101-000000-abcd0003.checkpoint.jsonl"
    with open(path, "w", encoding="utf-8") as out:
        for number, entry in enumerate(entries):
            line = {"id": f"abcd0003-{number:04d}", "parent_id": "" if number == 0 else "abcd0003-0000"}
            out.write(json.dumps({**line, "layer": "agent", "ts": t0 + number, **entry}) + "\n")
    with Browser(_page(tmp_path, str(path))) as browser:
        _no_script_error(browser)
        assert browser.js("document.querySelector('.conversation').hidden") is False
        assert _texts(browser, ".conversation .msg .text") == ["hello there", "hi"]


def test_diff_html_of_a_hostile_run_fetches_nothing_and_runs_nothing(hostile_jsonl, demo_jsonl, tmp_path):
    """Markup in tool names, ids and values of either run stays text on the comparison page, and
    the page fetches nothing."""
    page = tmp_path / "diff.html"
    done = cli("diff", str(hostile_jsonl), str(demo_jsonl), "--html", str(page))
    assert done.returncode == 1, done.stderr
    html = page.read_text()
    assert "<script>document.body" not in html
    outside_data = re.sub(r'<script type="application/json".*?</script>', "", html, flags=re.S)
    assert "http://" not in outside_data and "https://" not in outside_data
    assert " src=" not in outside_data and " href=" not in outside_data
    assert "Content-Security-Policy" in outside_data
    with Browser(page) as browser:
        _no_script_error(browser)
        cells = _texts(browser, "#compare .aligned td.step.a")
        assert any("</script><script>" in cell for cell in cells)  # the hostile tool's name, as text
        for row in range(len(_all(browser, "#compare .aligned tr[data-op]", "1"))):
            browser.click(f"#compare .aligned tr[data-op]:nth-of-type({row + 2}) td.op")
        for view in ("a", "b", "compare"):
            browser.click(f'.apptabs button[data-view="{view}"]')
        assert browser.js("document.body.hasAttribute('data-pwned')") is False
        assert browser.js("document.querySelectorAll('#app script, #app img').length") == 0


def test_the_conversation_at_any_time_from_the_time_axis(checkpoint, tmp_path):
    """A click on the time axis: the conversation as it stood then (nothing before the first
    model call; everything after the last)."""
    session = oat.load_session(checkpoint)
    chats = sorted((s for s in session.spans if s.name.startswith("chat ")), key=lambda s: s.end_ns)
    last = chats[-1].content["input_message_ids"] + chats[-1].content["output_message_ids"]
    with Browser(_page(tmp_path, str(checkpoint))) as browser:
        browser.click_at(".axis .ticks", 0.955)
        assert browser.js("document.querySelector('.conversation').hidden") is False
        assert "as it stood at" in browser.js("document.querySelector('.conv-title').textContent")
        assert _all(browser, ".conversation .msg", "n.getAttribute('data-message-id')") == last
        assert browser.js("document.querySelector('.cursor').hidden") is False
        browser.click_at(".axis .ticks", 0.002)
        assert _all(browser, ".conversation .msg", "1") == []


def test_bad_lines_skipped_when_asked_and_said_on_the_page(demo_jsonl, tmp_path):
    """view --html refuses a bad line (exit 2, no page) unless --lenient; diff --html skips it as
    diff does unless --strict. The page says how many lines it skipped."""
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(demo_jsonl.read_bytes() + b"not json\n")
    refused = cli("view", str(bad), "--html", str(tmp_path / "no.html"))
    assert refused.returncode == 2 and "bad.jsonl:" in refused.stderr and not (tmp_path / "no.html").exists()
    page = tmp_path / "lenient.html"
    done = cli("view", str(bad), "--html", str(page), "--lenient")
    assert done.returncode == 0, done.stderr
    strict = cli("diff", str(demo_jsonl), str(bad), "--html", str(tmp_path / "strict.html"), "--strict")
    assert strict.returncode == 2 and not (tmp_path / "strict.html").exists()
    compared = tmp_path / "diff.html"
    done = cli("diff", str(demo_jsonl), str(bad), "--html", str(compared))
    assert done.returncode in (0, 1) and compared.exists(), done.stderr
    with Browser(page) as browser:
        _no_script_error(browser)
        assert "1 bad lines of the file skipped" in browser.js(
            "document.getElementById('left-out').textContent"
        )
        assert browser.js("document.body.getAttribute('data-rendered-spans')") == str(
            len(oat.load_session(demo_jsonl).spans)
        )
    with Browser(compared) as browser:
        _no_script_error(browser)
        assert "1 bad lines of the file skipped" in browser.js(
            "document.getElementById('other-left-out').textContent"
        )
