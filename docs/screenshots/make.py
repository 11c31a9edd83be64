"""Make the pictures of ``view --html`` and ``diff --html`` from the demo, and the facts they show.

Run from the repository: ``python docs/screenshots/make.py``. It records the demo agent
(``examples/demo_agent.py``, both tiers, in a scratch directory) and a variant of it
(``tests/cli/agents/demo_variant_agent.py``), writes their pages, and with headless Chromium
(Debian's ``chromium``) writes

- ``docs/images/view-html.png``: the demo's page, the conversation at its third snapshot;
- ``docs/images/view-html-search.png``: a search, and a tool call's span;
- ``docs/images/diff-html.png``: ``diff --html`` of the demo and its variant;
- ``docs/images/view-html.facts.json``: what the demo's page shows, in facts that stay the same
  from run to run (the agent's and tools' spans in order, model calls, snapshots, messages);

and puts the alt text made from those facts on the README's picture. ``tests/cli/
test_html_screenshot.py`` records the demo afresh and checks the facts and the alt text against
these files, so a demo that changes fails the test until the pictures are made again.

Spans of the ``sys`` layer (processes the libraries start, such as ``uname`` or ``ldconfig``)
depend on the machine and are left out of the facts.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
IMAGES = REPO / "docs" / "images"
FACTS = IMAGES / "view-html.facts.json"
README = REPO / "README.md"
PICTURE = "docs/images/view-html.png"


def _block(html: str, block_id: str) -> Any:
    match = re.search(
        rf'<script type="application/json" id="{re.escape(block_id)}">(.*?)</script>', html, re.S
    )
    if match is None:
        raise ValueError(f"the page has no {block_id} block")
    return json.loads(match.group(1))


def facts(page: Path) -> dict[str, Any]:
    """What the page of a demo session shows that does not change from run to run."""
    html = page.read_text(encoding="utf-8")
    spans = sorted(_block(html, "session-spans"), key=lambda s: s["start"])
    turns = _block(html, "session-turns")
    shown = [s for s in spans if s["layer"] in ("agent", "tool")]
    return {
        "spans": [s["name"] for s in shown],
        "model_calls": sum(1 for s in shown if s["attributes"].get("gen_ai.operation.name") == "chat"),
        "tool_calls": [
            s["attributes"]["gen_ai.tool.name"] for s in shown if "gen_ai.tool.name" in s["attributes"]
        ],
        "snapshots": sum(1 for t in turns if t["kind"] == "snapshot"),
        "messages": len(_block(html, "session-messages")),
    }


def alt_text(found: dict[str, Any]) -> str:
    """The README picture's alt text, from :func:`facts`."""
    return (
        f"The HTML view of the demo session: {found['model_calls']} model calls, "
        f"{len(found['tool_calls'])} tool calls ({', '.join(found['tool_calls'])}), "
        f"{found['snapshots']} snapshots, {found['messages']} messages; "
        "the conversation as it stood at snapshot #3"
    )


def readme_line(found: dict[str, Any]) -> str:
    return f"![{alt_text(found)}]({PICTURE})"


def record(work: Path, script: Path) -> Path:
    """Run ``script`` under ``opentelemetry-instrument`` in ``work`` (both tiers): its
    checkpoint-tier file."""
    shutil.copytree(REPO / "examples", work / "examples")
    if script.parent == REPO / "examples":  # the copy runs, so the paths it shows are the copy's
        script = work / "examples" / script.name
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "AGENT_TRACE_"))}
    env["AGENT_TRACE_TIER"] = "both"
    instrument = Path(sys.executable).parent / "opentelemetry-instrument"
    subprocess.run([str(instrument), sys.executable, str(script)], cwd=work, env=env, check=True, timeout=300)
    (path,) = (work / "agent-sessions").glob("session-*[0-9a-f].checkpoint.jsonl")
    return path


def _cli(*args: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "otel_agent_trace.cli.main", *args], capture_output=True, text=True
    )
    if done.returncode not in (0, 1):
        raise SystemExit(done.stderr)


def main() -> None:
    sys.path.insert(0, str(REPO))
    from tests.cli.chromium import Browser

    with tempfile.TemporaryDirectory() as scratch:
        tmp = Path(scratch)
        demo = record(tmp / "demo", REPO / "examples" / "demo_agent.py")
        variant = record(tmp / "variant", REPO / "tests" / "cli" / "agents" / "demo_variant_agent.py")
        page, diff_page = tmp / "demo.html", tmp / "diff.html"
        _cli("view", str(demo), "--html", str(page))
        _cli("diff", str(demo), str(variant), "--html", str(diff_page))
        found = facts(page)
        with Browser(page) as browser:
            browser.click('.tabs button[data-tab="conversation"]')
            browser.click('.conversation .snaps button[data-snapshot="3"]')
            browser.screenshot(IMAGES / "view-html.png")
            browser.type(".toolbar .search", "run_command")
            for _ in range(2):  # Enter: the next match (the model call, then the tool call)
                browser.send(
                    "Input.dispatchKeyEvent",
                    type="keyDown",
                    key="Enter",
                    code="Enter",
                    windowsVirtualKeyCode=13,
                )
            browser.click('.tabs button[data-tab="details"]')
            browser.screenshot(IMAGES / "view-html-search.png")
        with Browser(diff_page) as browser:
            browser.screenshot(IMAGES / "diff-html.png")
    FACTS.write_text(json.dumps(found, indent=2) + "\n", encoding="utf-8")
    text = README.read_text(encoding="utf-8")
    text, count = re.subn(rf"!\[[^\]]*\]\({re.escape(PICTURE)}\)", lambda _: readme_line(found), text)
    if count != 1:
        raise SystemExit(f"README.md: expected one picture {PICTURE}, found {count}")
    README.write_text(text, encoding="utf-8")
    print(alt_text(found))


if __name__ == "__main__":
    main()
