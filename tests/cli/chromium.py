"""Headless Chromium (Debian's ``chromium``) for looking at a page the way a browser shows it."""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path


def chromium() -> str:
    """The browser's path, installing Debian's ``chromium`` when it is missing and we may."""
    found = shutil.which("chromium")
    if found is None and os.geteuid() == 0 and shutil.which("apt-get"):
        subprocess.run(["apt-get", "update", "-qq"], check=True, capture_output=True, timeout=600)
        subprocess.run(
            ["apt-get", "install", "-y", "-qq", "chromium"], check=True, capture_output=True, timeout=1200
        )
        found = shutil.which("chromium")
    assert found, "headless Chromium is needed: apt-get install -y chromium"
    return found


def _run(page: Path, *action: str) -> subprocess.CompletedProcess[str]:
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run(
            [
                chromium(),
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                f"--user-data-dir={profile}",
                "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
                "--virtual-time-budget=10000",
                *action,
                page.resolve().as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=180,
        )


def dump_dom(page: Path) -> str:
    """The page's DOM after its scripts ran."""
    done = _run(page, "--dump-dom")
    assert done.returncode == 0, done.stderr
    return done.stdout


def screenshot(page: Path, out: Path, size: str = "1400,720") -> None:
    done = _run(page, f"--window-size={size}", f"--screenshot={out.resolve()}")
    assert done.returncode == 0 and out.exists(), done.stderr


class Browser:
    """A page open in headless Chromium, driven as a user does: clicks at an element's place on
    the screen, typed text, read back through the DevTools protocol (over a pipe: no port, no
    extra package). Use as a context manager."""

    def __init__(self, page: Path, width: int = 1400, height: int = 900, fragment: str = "") -> None:
        self.page, self.width, self.height, self.fragment = page, width, height, fragment
        self._next = 0
        self._buffer = b""

    def __enter__(self) -> Browser:
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def pipes() -> None:  # the protocol's fds: 3 read by the browser, 4 written by it
            os.dup2(to_browser_r, 3)
            os.dup2(from_browser_w, 4)

        self._profile = tempfile.TemporaryDirectory()
        self._process = subprocess.Popen(
            [
                chromium(),
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                f"--user-data-dir={self._profile.name}",
                "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
                "--remote-debugging-pipe",
                f"--window-size={self.width},{self.height}",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=pipes,
            pass_fds=(3, 4),
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        target = self._send("Target.createTarget", url="about:blank")["targetId"]
        self._session = self._send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        self.send(
            "Emulation.setDeviceMetricsOverride",
            width=self.width,
            height=self.height,
            deviceScaleFactor=1,
            mobile=False,
        )
        self.send("Page.navigate", url=self.page.resolve().as_uri() + self.fragment)
        self.wait_for("document.readyState === 'complete' && document.body !== null")
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self._send("Browser.close")
        except (OSError, AssertionError, TimeoutError):
            pass
        try:
            self._process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        os.close(self._to_browser)
        os.close(self._from_browser)
        self._profile.cleanup()

    # --- the protocol ------------------------------------------------------------------------

    def _send(self, method: str, session: str | None = None, **params: object) -> dict:
        self._next += 1
        message: dict[str, object] = {"id": self._next, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + 120
        while True:
            while b"\0" not in self._buffer:
                left = deadline - time.monotonic()
                ready, _, _ = select.select([self._from_browser], [], [], max(left, 0))
                if not ready:
                    raise TimeoutError(f"no answer to {method}")
                chunk = os.read(self._from_browser, 1 << 20)
                assert chunk, f"the browser closed its pipe during {method}"
                self._buffer += chunk
            raw, self._buffer = self._buffer.split(b"\0", 1)
            answer = json.loads(raw)
            if answer.get("id") == self._next:
                assert "error" not in answer, (method, answer["error"])
                return answer.get("result", {})

    def send(self, method: str, **params: object) -> dict:
        """A protocol command to the page."""
        return self._send(method, self._session, **params)

    # --- what a user does --------------------------------------------------------------------

    def js(self, expression: str) -> object:
        """The value of a JavaScript expression in the page (a script error fails the test)."""
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        assert "exceptionDetails" not in result, result["exceptionDetails"]
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while not self.js(f"!!({expression})"):
            assert time.monotonic() < deadline, f"never true: {expression}"
            time.sleep(0.05)

    def _centre(self, selector: str) -> tuple[float, float]:
        box = self.js(
            f"(function () {{ var n = document.querySelector({json.dumps(selector)});"
            " if (!n) return null; n.scrollIntoView({block: 'center', inline: 'nearest'});"
            " var r = n.getBoundingClientRect();"
            " return [r.left + r.width / 2, r.top + r.height / 2, r.width]; })()"
        )
        assert box, f"nothing on the page matches {selector}"
        assert isinstance(box, list) and box[2] > 0, f"{selector} is not shown"
        return box[0], box[1]

    def on_top(self, selector: str) -> bool:
        """Whether the element is what is drawn at its centre (nothing covers it)."""
        x, y = self._centre(selector)
        return bool(
            self.js(
                f"(function () {{ var n = document.querySelector({json.dumps(selector)});"
                f" var top = document.elementFromPoint({x}, {y}); return !!top && n.contains(top); }})()"
            )
        )

    def click(self, selector: str) -> None:
        """A left click where the element is on the screen (it must be what is drawn there)."""
        assert self.on_top(selector), f"{selector} is covered by another element"
        x, y = self._centre(selector)
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)

    def click_at(self, selector: str, across: float) -> None:
        """A left click ``across`` (0–1) the element's width, half way down."""
        box = self.js(
            f"(function () {{ var r = document.querySelector({json.dumps(selector)}).getBoundingClientRect();"
            " return [r.left, r.width, r.top + r.height / 2]; })()"
        )
        assert isinstance(box, list)
        x, y = box[0] + box[1] * across, box[2]
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)

    def drag(self, selector: str, start: float, end: float) -> None:
        """Press at ``start`` (0–1 of the element's width) and release at ``end``."""
        box = self.js(
            f"(function () {{ var r = document.querySelector({json.dumps(selector)}).getBoundingClientRect();"
            " return [r.left, r.width, r.top + r.height / 2]; })()"
        )
        assert isinstance(box, list)
        left, width, y = box
        self.send(
            "Input.dispatchMouseEvent",
            type="mousePressed",
            x=left + width * start,
            y=y,
            button="left",
            clickCount=1,
        )
        self.send(
            "Input.dispatchMouseEvent",
            type="mouseMoved",
            x=left + width * (start + end) / 2,
            y=y,
            button="left",
        )
        self.send(
            "Input.dispatchMouseEvent",
            type="mouseReleased",
            x=left + width * end,
            y=y,
            button="left",
            clickCount=1,
        )

    def type(self, selector: str, text: str) -> None:
        """Click into a field and type ``text``."""
        self.click(selector)
        self.send("Input.insertText", text=text)

    def key(self, key: str, code: int) -> None:
        """A key pressed and released (``"ArrowDown"``, 40)."""
        for kind in ("keyDown", "keyUp"):
            self.send("Input.dispatchKeyEvent", type=kind, key=key, code=key, windowsVirtualKeyCode=code)

    def screenshot(self, out: Path) -> None:
        data = self.send("Page.captureScreenshot", format="png")["data"]
        out.write_bytes(base64.b64decode(data))
