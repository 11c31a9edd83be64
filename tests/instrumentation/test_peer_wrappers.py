"""Uninstrumenting removes our wrapper, and only ours, wherever it sits among other packages'
wrappers: the peer's wrapper stays and keeps working, ours no longer runs, and instrumenting
again never stacks a second wrapper of ours."""

from __future__ import annotations

import functools
import os
import subprocess
from typing import Any

import openai.resources.chat.completions as chat_module
import pytest

import otel_agent_trace as oat

from .conftest import Peer

USER = [{"role": "user", "content": "Hi there"}]
CHAT = ("openai.resources.chat.completions", "Completions.create")


# What each patched attribute is with no instrumentation at all (test modules are imported before
# any test instruments anything).
ORIGINALS = {
    (chat_module.Completions, "create"): chat_module.Completions.__dict__["create"],
    (subprocess.Popen, "__init__"): subprocess.Popen.__dict__["__init__"],
    (os, "mkdir"): os.mkdir,
}


def layers(owner: Any, name: str, peer: Peer) -> list[str]:
    """The wrappers around ``owner.name``, outermost first: ``"peer"``, ``"ours"`` or
    ``"closure"`` (the plain function wrapper of a test), down to the original."""
    original = ORIGINALS[(owner, name)]
    out = []
    node = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
    while node is not original:
        assert node is not None, "the original is no longer under the wrappers"
        wrapper = getattr(node, "_self_wrapper", None)
        if wrapper is not None:
            out.append("peer" if wrapper == peer.wrapper else "ours")
        else:
            out.append("closure" if getattr(node, "_test_closure", False) else "ours")
        node = getattr(node, "__wrapped__", None)
    return out


def our_chat_spans(memory_exporter: Any) -> list[Any]:
    return [
        s
        for s in memory_exporter.get_finished_spans()
        if s.name == "chat gpt-4o-mini" and s.instrumentation_scope.name == "otel_agent_trace"
    ]


def chat(client: Any) -> str:
    return client.chat.completions.create(model="gpt-4o-mini", messages=USER).choices[0].message.content


# --- a model SDK method -------------------------------------------------------------------------


def test_peer_over_ours_survives_our_uninstrument_and_ours_stops(
    openai_instrumentor, openai_client, memory_exporter
):
    openai_instrumentor.instrument()
    peer = Peer(*CHAT).on()  # another vendor instruments after us: its wrapper is outside ours
    try:
        assert layers(chat_module.Completions, "create", peer) == ["peer", "ours"]
        assert chat(openai_client) == "Hello! How can I help you today?"
        assert peer.calls == 1 and len(our_chat_spans(memory_exporter)) == 1

        openai_instrumentor.uninstrument()
        assert layers(chat_module.Completions, "create", peer) == ["peer"]
        assert chat(openai_client) == "Hello! How can I help you today?"
        assert peer.calls == 2 and len(our_chat_spans(memory_exporter)) == 1  # ours did not run

        openai_instrumentor.instrument()  # now outside the peer: one span per call, ours
        assert layers(chat_module.Completions, "create", peer) == ["ours", "peer"]
        chat(openai_client)
        assert len(our_chat_spans(memory_exporter)) == 2
        openai_instrumentor.uninstrument()
        assert layers(chat_module.Completions, "create", peer) == ["peer"]
        chat(openai_client)
        assert peer.calls == 3 and len(our_chat_spans(memory_exporter)) == 2
    finally:
        peer.off()
    assert layers(chat_module.Completions, "create", peer) == []


def test_peer_under_ours_is_what_uninstrument_leaves(openai_instrumentor, openai_client, memory_exporter):
    peer = Peer(*CHAT).on()
    try:
        openai_instrumentor.instrument()
        assert layers(chat_module.Completions, "create", peer) == ["ours", "peer"]
        chat(openai_client)
        assert len(our_chat_spans(memory_exporter)) == 1
        openai_instrumentor.uninstrument()
        assert layers(chat_module.Completions, "create", peer) == ["peer"]
        calls = peer.calls
        chat(openai_client)
        assert peer.calls == calls + 1 and len(our_chat_spans(memory_exporter)) == 1
    finally:
        peer.off()
    assert layers(chat_module.Completions, "create", peer) == []


def test_cycles_with_a_peer_in_between_never_stack_our_wrappers(
    openai_instrumentor, openai_client, memory_exporter
):
    openai_instrumentor.instrument()
    peer = Peer(*CHAT).on()
    try:
        for cycle in range(3):
            openai_instrumentor.uninstrument()
            assert layers(chat_module.Completions, "create", peer) == ["peer"], cycle
            openai_instrumentor.instrument()
            assert layers(chat_module.Completions, "create", peer) == ["ours", "peer"], cycle
            chat(openai_client)
            assert len(our_chat_spans(memory_exporter)) == cycle + 1
    finally:
        openai_instrumentor.uninstrument()
        peer.off()
    assert layers(chat_module.Completions, "create", peer) == []


def test_under_a_wrapper_that_cannot_be_spliced_ours_passes_through_and_is_reused(
    openai_instrumentor, openai_client, memory_exporter
):
    openai_instrumentor.instrument()
    ours = chat_module.Completions.__dict__["create"]
    peer_calls = []

    @functools.wraps(ours)
    def closure(*args: Any, **kwargs: Any) -> Any:  # a peer that is a plain function, not wrapt
        peer_calls.append(1)
        return ours(*args, **kwargs)

    closure._test_closure = True  # type: ignore[attr-defined]
    chat_module.Completions.create = closure
    peer = Peer(*CHAT)
    try:
        openai_instrumentor.uninstrument()  # cannot reach inside a closure: ours is switched off
        assert layers(chat_module.Completions, "create", peer) == ["closure", "ours"]
        chat(openai_client)
        assert len(peer_calls) == 1 and our_chat_spans(memory_exporter) == []
        openai_instrumentor.instrument()  # the same wrapper of ours, switched on again
        assert layers(chat_module.Completions, "create", peer) == ["closure", "ours"]
        chat(openai_client)
        assert len(peer_calls) == 2 and len(our_chat_spans(memory_exporter)) == 1
    finally:
        chat_module.Completions.create = ours
        openai_instrumentor.uninstrument()
    assert layers(chat_module.Completions, "create", peer) == []


# --- stdlib hooks ---------------------------------------------------------------------------------


def process_spans(memory_exporter: Any) -> list[Any]:
    return [s for s in memory_exporter.get_finished_spans() if s.name == "process true"]


@pytest.mark.parametrize("peer_first", [False, True], ids=["peer-over-ours", "ours-over-peer"])
def test_subprocess_popen_peer_survives_our_uninstrument(
    processes_instrumentor, recording, memory_exporter, peer_first
):
    peer = Peer(subprocess, "Popen.__init__")
    if peer_first:
        peer.on()
    processes_instrumentor.instrument()
    if not peer_first:
        peer.on()
    try:
        with oat.tool("shell"):
            assert subprocess.run(["true"]).returncode == 0
        assert peer.calls == 1 and len(process_spans(memory_exporter)) == 1
        processes_instrumentor.uninstrument()
        assert layers(subprocess.Popen, "__init__", peer) == ["peer"]
        with oat.tool("shell"):
            assert subprocess.run(["true"]).returncode == 0
        assert peer.calls == 2 and len(process_spans(memory_exporter)) == 1
        processes_instrumentor.instrument()  # again: ours runs once more, one wrapper of ours
        assert layers(subprocess.Popen, "__init__", peer).count("ours") == 1
        with oat.tool("shell"):
            subprocess.run(["true"])
        assert peer.calls == 3 and len(process_spans(memory_exporter)) == 2
        processes_instrumentor.uninstrument()
    finally:
        peer.off()
    assert layers(subprocess.Popen, "__init__", peer) == []


def test_a_peer_over_our_replaced_builtin_stays_and_ours_is_spliced_out(
    files_instrumentor, recording, tmp_path
):
    files_instrumentor.instrument()  # os.mkdir is replaced by a plain function of ours (hot path)
    peer = Peer(os, "mkdir").on()
    try:
        with oat.tool("files"):
            os.mkdir(tmp_path / "one")
        files_instrumentor.uninstrument()
        assert layers(os, "mkdir", peer) == ["peer"]
        with oat.tool("files"):
            os.mkdir(tmp_path / "two")
        assert peer.calls == 2
    finally:
        peer.off()
    assert layers(os, "mkdir", peer) == []
    path = recording.files[0]
    recording.stop()
    text = path.read_text()
    assert str(tmp_path / "one") in text and str(tmp_path / "two") not in text
