"""Names a model supplies become files inside the sessions directory, and nowhere else.

A name is one plain file name (letters, digits, ``.``, ``_``, ``-``; no separators, no ``..``, not
hidden); its resolved path must lie in the resolved sessions directory (so a symlinked directory
cannot lead out); and the file is created with ``O_EXCL | O_NOFOLLOW`` (never over an existing
file, never through a symlink planted at that name).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


class UnsafePath(ValueError):
    """A model-supplied name that would leave the sessions directory (or is not a plain name)."""


def safe_file(directory: Path, name: str, suffix: str = ".zip") -> Path:
    """The path of a new file ``name`` (``suffix`` added when missing) inside ``directory``."""
    if not isinstance(name, str) or not _NAME.fullmatch(name) or ".." in name:
        raise UnsafePath(f"{name!r}: expected a plain file name (letters, digits, '.', '_', '-')")
    if suffix and not name.endswith(suffix):
        name += suffix
    base = directory.resolve()
    target = (base / name).resolve()
    if target.parent != base:
        raise UnsafePath(f"{name!r}: resolves outside the sessions directory")
    return target


def create_exclusive(path: Path, mode: int = 0o644) -> int:
    """Open a new file for writing: fails if it exists or is a symlink."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    return os.open(path, flags, mode)
