"""The README's picture of ``view --html`` is of the demo as it runs today: the facts the picture
shows (``docs/images/view-html.facts.json``, and the README's alt text made from them) are those
of a fresh recording of the demo, read from its page as ``docs/screenshots/make.py`` reads them.
When the demo changes, this fails until ``python docs/screenshots/make.py`` is run again."""

from __future__ import annotations

import importlib.util
import json
import struct
from pathlib import Path

from .conftest import REPO
from .helpers import cli


def _make():  # the script is no package: loaded from its file
    spec = importlib.util.spec_from_file_location(
        "make_screenshots", REPO / "docs" / "screenshots" / "make.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", path
    return struct.unpack(">II", head[16:24])


def test_the_readme_picture_shows_the_demo_as_it_runs_now(demo_both_dir, tmp_path):
    make = _make()
    (session,) = demo_both_dir.glob("session-*[0-9a-f].checkpoint.jsonl")
    page = tmp_path / "demo.html"
    done = cli("view", str(session), "--html", str(page))
    assert done.returncode == 0, done.stderr
    fresh = make.facts(page)
    assert fresh["model_calls"] >= 1 and fresh["tool_calls"] and fresh["snapshots"] >= 3
    assert json.loads(make.FACTS.read_text()) == fresh, (
        "the demo changed: run python docs/screenshots/make.py"
    )
    assert make.readme_line(fresh) in make.README.read_text(), (
        "the README's picture: run docs/screenshots/make.py"
    )
    for name in ("view-html.png", "view-html-search.png", "diff-html.png"):
        assert _png_size(make.IMAGES / name) == (1400, 900), name


def test_the_shareable_file_gives_the_same_facts(demo_both_dir, tmp_path):
    """The README's commands record the shareable tier only: its page shows the same."""
    make = _make()
    (session,) = demo_both_dir.glob("session-*[0-9a-f].zip")
    page = tmp_path / "demo.html"
    done = cli("view", str(session), "--html", str(page))
    assert done.returncode == 0, done.stderr
    assert make.facts(page) == json.loads(make.FACTS.read_text())
