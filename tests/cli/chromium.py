"""Headless Chromium (Debian's ``chromium``) for looking at a page the way a browser shows it."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
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
