"""A session loaded whole, for the verbs that need every entry at once (replay, fork, resume),
with the ``--max-entries`` bound that keeps a huge or hostile file from filling memory."""

from __future__ import annotations

import argparse

from otel_agent_trace.offline.loader import MAX_ENTRIES, LoadedSession, load_session


def add_max_entries(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--max-entries",
        type=int,
        default=MAX_ENTRIES,
        metavar="N",
        help=f"refuse a session of more than N entries, loaded whole at about 1-2 KB each (default "
        f"{MAX_ENTRIES:,}; 0: no limit). analyze, view and export stream a session of any size",
    )


def load(args: argparse.Namespace) -> LoadedSession:
    """``args.path`` loaded whole, within ``args.max_entries``."""
    return load_session(args.path, max_entries=args.max_entries or None)
