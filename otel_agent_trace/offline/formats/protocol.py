"""What a format module offers (:class:`Format`), and what it may read of a loaded session
(:class:`Session`): the loader asks the format it found, never which format it holds.

A format is a module (``native``, ``devduck``, ``dm``) or any object with these names;
:func:`otel_agent_trace.offline.formats.register` adds one.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Protocol

from otel_agent_trace.session_format.reader import ReadIssue, Source

from .records import Event, Heading, SpanRecord


class Normalizer(Protocol):
    """One file's reader: each raw line as our entry (raising :class:`BadEntry`)."""

    def normalize(self, raw: dict[str, Any]) -> dict[str, Any]: ...


class Session(Protocol):
    """What a format reads of a loaded session (``LoadedSession``)."""

    @property
    def path(self) -> Path: ...
    @property
    def events(self) -> list[Event]: ...
    @property
    def root(self) -> Event: ...
    @property
    def session_id(self) -> str: ...
    @property
    def tier(self) -> str: ...
    @property
    def archive_metadata(self) -> dict[str, Any] | None: ...
    @property
    def end_event(self) -> Event | None: ...
    @property
    def snapshots(self) -> list[dict[str, Any]]: ...
    def entry(self, entry_id: str) -> Event: ...


class Format(Protocol):
    """A session format: how its files are told and read, and what a loaded session of it says."""

    @property
    def NAME(self) -> str: ...
    @property
    def END_TYPES(self) -> frozenset[str]:
        """Entries that say the recording was stopped."""
        ...

    @property
    def SNAPSHOT_TYPES(self) -> frozenset[str]: ...

    @property
    def SNAPSHOT_NAME(self) -> str:
        """What the format calls a snapshot (DM: ``checkpoint``), as messages to people say it."""
        ...

    @property
    def SNAPSHOTS_HOLD_CONVERSATION(self) -> bool:
        """Whether a snapshot holds the conversation whole, and resume takes it as it is
        (DevDuck's, DM's); else the conversation is rebuilt from the entries at any of them."""
        ...

    @property
    def FORKS_IN_OWN_LINES(self) -> bool:
        """Whether a branch is written in the format's own lines (:meth:`fork_lines`, DM's), rather
        than as our entries."""
        ...

    @property
    def RECORD_RESUMABLE(self) -> str:
        """How to record a file of this format that resume can take up (said when it cannot)."""
        ...

    def matches(self, raw: dict[str, Any]) -> bool:
        """Whether a file whose first line is ``raw`` is of this format."""
        ...

    def normalizer(self, source: Source | None) -> Normalizer:
        """A reader for one file (``source``: where it was opened, ``None`` for a child file)."""
        ...

    def child_files(self, path: Path, root: dict[str, Any], issues: list[ReadIssue]) -> list[Path]:
        """The files read after ``path`` (whose first entry is ``root``) as the same session."""
        ...

    def session_id(self, root: dict[str, Any], archive: dict[str, Any] | None) -> str | None:
        """The session's id, as its first entry or its archive's metadata says (else ``None``)."""
        ...

    def tier(self, session: Session) -> str: ...

    def metadata(self, session: Session) -> dict[str, Any]:
        """The session's metadata when no archive holds a ``metadata.json``."""
        ...

    def duration(self, session: Session) -> float | None: ...

    def evicted(self, session: Session) -> int:
        """How many entries were lost before the file was written (told, not an issue)."""
        ...

    def evicted_note(self, session: Session) -> str: ...

    def spans(self, events: list[Event]) -> list[SpanRecord]: ...

    def snapshots(self, events: list[Event]) -> list[dict[str, Any]]:
        """DevDuck-shaped snapshots, when no archive holds a ``snapshots.json``."""
        ...

    def conversation(self, session: Session, until: str | None) -> list[dict[str, Any]]:
        """The conversation as of the end (or entry ``until``)."""
        ...

    def unresumable(self, session: Session) -> str | None:
        """Why the session holds no conversation to resume (``None``: it may hold one)."""
        ...

    def fork_name(self, session: Session, point: str) -> str:
        """The file name of a branch of the session at entry ``point``."""
        ...

    def fork_lines(self, session: Session, point: str) -> Iterator[bytes]:
        """A branch at entry ``point`` in the format's own lines, its own fork entry last, read
        again from the file (asked only when :attr:`FORKS_IN_OWN_LINES`)."""
        ...

    def heading(self, first: dict[str, Any], file_base: str) -> Heading | None:
        """What ``list`` shows of a file whose first line is ``first`` (its name, less the
        suffixes, ``file_base``); ``None`` when that line begins no session of this format."""
        ...

    def listed_end(self, entry: dict[str, Any]) -> tuple[float | None, str] | None:
        """``(duration in seconds, status)`` when ``entry`` (a line holding the heading's end
        marker) ends the session, else ``None``."""
        ...

    def matches_archive(self, metadata: dict[str, Any]) -> bool:
        """Whether a session ZIP whose ``metadata.json`` says ``metadata`` is of this format."""
        ...

    def as_ours(self, entries: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        """The entries (as :meth:`normalizer` made them) as our span, message and session
        entries, streamed: what ``analyze``, ``diff`` and the HTML view read."""
        ...
