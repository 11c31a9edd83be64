"""The session ZIP as a container: its name, its temporary file (known before it exists, removed
if the process is about to be killed), how each member is compressed, and the parts of
:mod:`zipfile` used beyond its documented API, each named here (tests/format/test_zip_container.py).

Deflate at level 6 runs at ~40 MB/s here, level 1 at ~150 MB/s; copying a stored member runs at
the speed of the disk. A session (its files together) up to ``STORE_ABOVE`` bytes has its
members deflated at level 1 (a small session's ZIP stays small, in well under a second); a bigger
one has them all stored (and any member over ``STORE_ABOVE``), so a session of several GB is
written within a killed pod's grace period (docs/benchmarks/zip.md): its ZIP is about the size of
its files, and snapshots.json, a tenth of it or more, is not deflated by the one thread left at
exit. A stored member is never taken for a bomb by the reader (its size is its compressed size).
"""

from __future__ import annotations

import os
import secrets
import time
import zipfile
from pathlib import Path
from typing import IO

from otel_agent_trace import session_format as fmt

STORE_ABOVE = 32 << 20
FAST_LEVEL = 1

_unfinished: set[Path] = set()  # temporary files being written (see discard_unfinished)


def zip_name(session_id: str, tier: str) -> str:
    """The file name of a tier's session ZIP."""
    return session_id + (fmt.CHECKPOINT_SUFFIX if tier == "checkpoint" else "") + fmt.ZIP_SUFFIX


def temporary(directory: Path, name: str) -> Path:
    """A new temporary file's path for the ZIP ``name``, known to :func:`discard_unfinished`
    before it exists (no moment when it exists and is not known)."""
    tmp = directory / f".{name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    _unfinished.add(tmp)
    return tmp


def finished(tmp: Path) -> None:
    """``tmp`` is no longer being written (linked to its ZIP's name, removed, or left to its
    owner: a parent process's, in a forked child)."""
    _unfinished.discard(tmp)


def unfinished() -> frozenset[Path]:
    """The temporary files being written now."""
    return frozenset(_unfinished)


def discard_unfinished() -> None:
    """Remove the temporary files of exports under way (the process is about to be killed by
    ``lifecycle``'s watchdog: only SIGKILL mid-write can leave one behind)."""
    for tmp in list(_unfinished):
        try:
            os.unlink(tmp)
        except OSError:
            pass


def member(name: str, stamp: time.struct_time, size: int) -> zipfile.ZipInfo:
    """A member of ``size`` bytes (or of a session of ``size``, whichever is bigger)."""
    when = (stamp.tm_year, stamp.tm_mon, stamp.tm_mday, stamp.tm_hour, stamp.tm_min, stamp.tm_sec)
    info = zipfile.ZipInfo(name, date_time=when)
    if size > STORE_ABOVE:
        info.compress_type = zipfile.ZIP_STORED
    else:
        info.compress_type = zipfile.ZIP_DEFLATED
        # ZipInfo has no public setter for it: 3.13 spells it compress_level, earlier _compresslevel
        setattr(info, "compress_level" if hasattr(info, "compress_level") else "_compresslevel", FAST_LEVEL)
    info.external_attr = 0o644 << 16
    return info


def stored(info: zipfile.ZipInfo) -> zipfile.ZipInfo:
    """``info`` as a stored member whose sizes and CRC-32 are not known yet (0 until written)."""
    info.compress_type = zipfile.ZIP_STORED
    info.CRC = info.file_size = info.compress_size = 0
    return info


def zip64_local_header(info: zipfile.ZipInfo) -> bytes:
    """A member's local header with ZIP64 sizes (the same length whatever the sizes: written
    first as a placeholder, then again with the sizes and CRC-32). ``ZipInfo.FileHeader`` is
    undocumented."""
    return info.FileHeader(zip64=True)


def zip_after(raw: IO[bytes], written: zipfile.ZipInfo) -> zipfile.ZipFile:
    """A ``ZipFile`` that writes its next members, then its central directory, from ``raw``'s
    position, with ``written`` (a member already in ``raw`` before that position, at its
    ``header_offset``) in its directory. ``ZipFile.filelist`` and ``NameToInfo`` are
    undocumented."""
    zf = zipfile.ZipFile(raw, "w")
    zf.filelist.append(written)
    zf.NameToInfo[written.filename] = written
    return zf
