"""``view --html``: the page rendered in headless Chromium holds every span and runs no script
from the file."""

from __future__ import annotations

import re

import pytest

import otel_agent_trace as oat

from .chromium import dump_dom
from .helpers import cli


def _body(dom: str) -> str:
    """The rendered ``<body>`` tag: where the page records what its script did."""
    match = re.search(r"<body[^>]*>", dom)
    assert match, dom[:500]
    return match.group(0)


def _page(session, tmp_path, name="page.html"):
    out = tmp_path / name
    done = cli("view", str(session), "--html", str(out))
    assert done.returncode == 0, done.stderr
    return out


@pytest.mark.chromium
def test_the_page_holds_every_span_and_raises_no_script_error(demo_zip, tmp_path):
    page = _page(demo_zip, tmp_path)
    html = page.read_text()
    outside_data = re.sub(r'<script type="application/json".*?</script>', "", html, flags=re.S)
    assert "http://" not in outside_data and "https://" not in outside_data  # nothing fetched
    assert " src=" not in outside_data and " href=" not in outside_data
    dom = dump_dom(page)
    spans = oat.load_session(demo_zip).spans
    assert "data-script-error" not in _body(dom)
    assert f'data-rendered-spans="{len(spans)}"' in _body(dom)
    for span in spans:
        assert f'data-span-id="{span.span_id}"' in dom
    assert dom.count("chat demo-scripted-model") >= 4
    assert "execute_tool run_command" in dom and "process python" in dom
    # the first span's details are open: its attributes are on the page
    assert "gen_ai.agent.name" in dom


@pytest.mark.chromium
def test_markup_in_a_span_name_stays_text(hostile_jsonl, tmp_path):
    page = _page(hostile_jsonl, tmp_path)
    assert "<script>document.body" not in page.read_text()
    dom = dump_dom(page)
    spans = oat.load_session(hostile_jsonl).spans
    assert f'data-rendered-spans="{len(spans)}"' in _body(dom)
    assert "data-pwned" not in _body(dom)  # neither the script nor the onerror ran
    assert "data-script-error" not in _body(dom)
    assert "execute_tool &lt;/script&gt;&lt;script&gt;document.body.setAttribute" in dom


def test_bad_input_writes_no_page(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    done = cli("view", str(empty), "--html", str(tmp_path / "out.html"))
    assert done.returncode == 2 and not (tmp_path / "out.html").exists()
