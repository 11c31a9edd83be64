"""``view --html OUT`` never overwrites OUT, as ``report -o``, ``fork`` and ``export`` never do."""

from __future__ import annotations

from pathlib import Path

from .helpers import cli


def test_an_existing_out_is_refused_and_left_as_it_was(demo_jsonl: Path, tmp_path: Path) -> None:
    out = tmp_path / "page.html"
    out.write_text("mine")
    done = cli("view", str(demo_jsonl), "--html", str(out))
    assert done.returncode == 2
    assert done.stdout == "" and len(done.stderr.splitlines()) == 1 and "exists" in done.stderr
    assert out.read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["page.html"]


def test_a_new_out_is_written_and_bad_input_leaves_none(demo_jsonl: Path, tmp_path: Path) -> None:
    out = tmp_path / "page.html"
    done = cli("view", str(demo_jsonl), "--html", str(out))
    assert done.returncode == 0, done.stderr
    assert "<html" in out.read_text()
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"not": "a session"}\n')
    failed = cli("view", str(bad), "--html", str(tmp_path / "none.html"))
    assert failed.returncode == 2
    assert not (tmp_path / "none.html").exists()
