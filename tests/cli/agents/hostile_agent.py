"""An agent whose recorded values are hostile to a terminal and to a web page: a tool name, a file
path, an attribute value and a message role carrying OSC 0 (window title), CSI 2J (clear screen)
and OSC 52 (clipboard write), and a span name that is markup with a script in it. It also starts a
child Python process from a tool (a child-process file) and has a tool that fails.

Run under ``opentelemetry-instrument`` in a scratch directory (it writes files there).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from opentelemetry import trace

import otel_agent_trace as oat

OSC_TITLE = "\x1b]0;pwned-title\x07"
CSI_CLEAR = "\x1b[2J"
OSC_CLIPBOARD = "\x1b]52;c;cm0gLXJmIH4=\x07"
C1_CSI = "\x9b31m"
MARKUP = (
    "</script><script>document.body.setAttribute('data-pwned','1')</script>"
    "<img src=x onerror=\"document.body.setAttribute('data-pwned','2')\">"
)


def main() -> None:
    with oat.agent("hostile"):
        with oat.tool(
            f"read{OSC_TITLE}", call_id=f"call{CSI_CLEAR}1", arguments={"path": OSC_CLIPBOARD}
        ) as call:
            name = Path(f"notes{CSI_CLEAR}{C1_CSI}.txt")
            name.write_text("hello")
            with open(name, encoding="utf-8") as handle:
                call.set_result(handle.read())
            trace.get_current_span().set_attribute("hostile.value", f"a{OSC_CLIPBOARD}b")
        oat.record_message(f"user{OSC_TITLE}", "hi")
        with oat.tool(MARKUP):
            subprocess.run([sys.executable, "-c", "print('child')"], check=True, capture_output=True)
        try:
            with oat.tool("fails"):
                raise RuntimeError(f"broken{CSI_CLEAR}")
        except RuntimeError:
            pass


if __name__ == "__main__":
    main()
