"""``--help`` of every verb: a description, and a help text for every option and argument."""

from __future__ import annotations

import argparse

from otel_agent_trace.cli.main import COMMANDS, build_parser


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    (sub,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def test_every_verb_has_a_description_and_every_option_a_help() -> None:
    verbs = _subcommands()
    assert set(verbs) == set(COMMANDS)
    missing = []
    for name, parser in verbs.items():
        if not (parser.description or "").strip():
            missing.append(f"{name}: no description")
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            if not (action.help or "").strip() or action.help == argparse.SUPPRESS:
                missing.append(f"{name} {'/'.join(action.option_strings) or action.dest}: no help")
    assert not missing, "\n".join(missing)
