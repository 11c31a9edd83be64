"""Restoring a recorded AutoGen team run into a team (``RoundRobinGroupChat``,
``SelectorGroupChat``, … any ``BaseGroupChat`` of ``AssistantAgent`` s), through the team's public
state API: ``save_state()`` gives the new team's state (``autogen_agentchat.state``'s ``TeamState``
as a dict), the recording is written into it, ``load_state()`` puts it back. Nothing is pickled.

What the recording gives, read from the entries of the team runs (our ``invoke_workflow`` spans
of the last team run started at or before the chosen entry, and that team's runs before it):

* the team's message thread (the group chat manager's ``message_thread``): each run's task as the
  user's ``TextMessage``, then each agent turn's final message (the ``agent_output`` of AutoGen's
  ``invoke_agent {name}`` span under the run) as a ``TextMessage`` of that agent;
* each participant's model context (``AssistantAgentState.llm_context``): the conversation of the
  last model call made in that agent's turns with the results of the tools it called after it (a
  handoff's), as AutoGen ``LLMMessage`` s (its system message is the agent's own);
* each participant's ``message_buffer``: the thread's messages of the others since its last turn,
  as AutoGen keeps them for the agent's next turn;
* the manager's next speaker where its state has one (a round robin's ``next_speaker_index``, a
  selector's ``previous_speaker``, a swarm's ``current_speaker``: the last agent that spoke) and
  its ``current_turn``.

A team is resumed at the end of a recorded run: the run the chosen snapshot or entry is in, taken
whole, and the team's runs before it (a run that never ended is left out). A participant whose
name ran no recorded turn gets the thread in its buffer only (as an agent that has not spoken yet).
Tested with ``RoundRobinGroupChat``, ``SelectorGroupChat`` and ``Swarm`` (a handoff is restored as
the text of the agent that handed over, its target the next speaker only when it answered last);
a ``GraphFlow``'s and a ``MagenticOneGroupChat``'s own state (the graph's progress, the
orchestrator's facts and plan) are not restored."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib import import_module
from typing import TYPE_CHECKING, Any, cast

from otel_agent_trace import semconv
from otel_agent_trace import session_format as fmt

from ..formats.records import Event
from ..replay.timeline import resolve_id
from .errors import ResumeError
from .history import resumable_context
from .sdk_objects import to_autogen

if TYPE_CHECKING:
    from .session import Session

_AGENT_PREFIX = f"{semconv.OP_INVOKE_AGENT} "


@dataclass
class TeamRecord:
    """What the recording holds of a team's runs, up to an entry."""

    workflow: str  # the team's name (gen_ai.workflow.name)
    thread: list[tuple[str, str]]  # (source, text): the tasks ("user") and the agents' messages
    contexts: dict[str, list[dict[str, Any]]] = field(default_factory=dict[str, list[dict[str, Any]]])
    entry_id: str = ""  # the end of the last run taken

    def neutral(self) -> list[dict[str, Any]]:
        """The thread as neutral messages (the agents' with their names)."""
        return [
            {"role": "user", "content": text}
            if source == "user"
            else {"role": "assistant", "name": source, "content": text}
            for source, text in self.thread
        ]


def _attributes(event: Event) -> dict[str, Any]:
    attributes = event.data.get("attributes")
    return cast("dict[str, Any]", attributes) if isinstance(attributes, dict) else {}


def _content(event: Event) -> dict[str, Any]:
    content = event.data.get("content")
    return cast("dict[str, Any]", content) if isinstance(content, dict) else {}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def _texts(task: Any) -> list[str]:
    if task is None:
        return []
    if isinstance(task, list):
        return [_text(t) for t in cast("list[Any]", task)]
    return [_text(task)]


def team_record(session: Session, at: str | None = None) -> TeamRecord:
    """The thread and each agent's last conversation of the runs of a team: the last team whose
    run started at or before entry ``at`` (default: the end of the file), its runs up to that one,
    each taken whole (a run that never ended is left out)."""
    events = session.events
    stop = resolve_id([e.id for e in events], at) if at else None
    by_id = {e.id: e for e in events}
    position = {e.id: i for i, e in enumerate(events)}
    starts: dict[str, Event] = {}  # span id -> its span.start entry
    ended: list[tuple[Event, Event]] = []  # (start, end) of the workflow runs that ended
    started_by_stop: set[str] = set()  # the span.start entries at or before the entry
    reached = stop is None
    for event in events:
        span_id = event.data.get("span_id")
        if event.type == fmt.SPAN_START and isinstance(span_id, str):
            starts[span_id] = event
            if not reached:
                started_by_stop.add(event.id)
        elif event.type == fmt.SPAN_END and isinstance(span_id, str) and span_id in starts:
            start = starts[span_id]
            if _attributes(start).get(semconv.GEN_AI_OPERATION_NAME) == semconv.OP_INVOKE_WORKFLOW:
                ended.append((start, event))
        if event.id == stop:
            reached = True
    if stop is not None:
        ended = [(start, end) for start, end in ended if start.id in started_by_stop]
    if not ended:
        raise ResumeError(
            f"{session.path}: no team run (invoke_workflow span) that ended, started by {stop or 'the end'}"
        )

    def workflow_name(start: Event) -> str:
        return str(_attributes(start).get("gen_ai.workflow.name") or start.data.get("name") or "")

    name = workflow_name(ended[-1][0])
    runs = [(start, end_event) for start, end_event in ended if workflow_name(start) == name]
    run_ids = {start.id for start, _ in runs}

    def ancestor(event: Event, want: set[str] | None = None) -> Event | None:
        """The nearest agent-turn span start above ``event`` (or, with ``want``, the one of those
        entries above it)."""
        above = by_id.get(event.parent_id)
        while above is not None:
            if want is not None and above.id in want:
                return above
            if want is None and str(above.data.get("name") or "").startswith(_AGENT_PREFIX):
                return above
            above = by_id.get(above.parent_id)
        return None

    def agent_name(start: Event) -> str:
        named = _attributes(start).get(semconv.GEN_AI_AGENT_NAME)
        return str(named) if named else str(start.data.get("name")).removeprefix(_AGENT_PREFIX)

    record = TeamRecord(workflow=name, thread=[], entry_id=runs[-1][1].id)
    # each agent's conversation: at the end of its last turn (its last model call's, with the
    # results of the tools it called after it: a handoff's), or, where another model call was
    # recorded in between (turns run side by side), at its last call
    last: dict[str, tuple[str, str | None]] = {}  # agent -> (its last snapshot, its last turn's end)
    snapshots: list[str] = []  # every snapshot of the runs, in file order
    for start, end_event in runs:
        record.thread.extend(("user", text) for text in _texts(_content(end_event).get("agent_input")))
        for event in events[position[start.id] : position[end_event.id]]:
            if event.type == fmt.SPAN_END and str(event.data.get("name") or "").startswith(_AGENT_PREFIX):
                turn = starts.get(str(event.data.get("span_id")))
                if turn is None or ancestor(turn, run_ids) is None:
                    continue
                agent = agent_name(turn)
                output = _content(event).get("agent_output")
                if output is not None:
                    record.thread.append((agent, _text(output)))
                if agent in last:
                    last[agent] = (last[agent][0], event.id)
            elif event.type == fmt.SNAPSHOT:
                snapshots.append(event.id)
                turn = ancestor(event)
                if turn is not None and ancestor(turn, run_ids) is not None:
                    last[agent_name(turn)] = (event.id, None)
    for agent, (snapshot_id, turn_end) in last.items():
        point = snapshot_id
        if turn_end is not None and not any(
            position[snapshot_id] < position[other] < position[turn_end] for other in snapshots
        ):
            point = turn_end
        messages = resumable_context(session, point).messages
        record.contexts[agent] = [m for m in messages if m.get("role") != "system"]
    return record


def _message(source: str, text: str) -> dict[str, Any]:
    text_message = import_module("autogen_agentchat.messages").TextMessage
    return cast("dict[str, Any]", text_message(source=source, content=text).dump())


def _dumps(messages: list[Any]) -> list[dict[str, Any]]:
    return [cast("dict[str, Any]", m.model_dump()) for m in messages]


def team_state(state: dict[str, Any], record: TeamRecord) -> dict[str, Any]:
    """A team's saved state (``save_state()``'s dict) with the recording written in."""
    agent_states = cast("dict[str, Any]", state.get("agent_states") or {})
    members = [
        n
        for n, s in agent_states.items()
        if isinstance(s, dict) and cast("dict[str, Any]", s).get("type") == "ChatAgentContainerState"
    ]
    if not set(members) & ({s for s, _ in record.thread} | set(record.contexts)):
        ran = sorted({s for s, _ in record.thread if s != "user"})
        raise ResumeError(
            f"none of the team's agents ({', '.join(members)}) ran a turn of {record.workflow}"
            f" ({', '.join(ran) or 'no turn recorded'})"
        )
    thread = [_message(source, text) for source, text in record.thread]
    speakers = [i for i, (source, _) in enumerate(record.thread) if source in members]
    last = record.thread[speakers[-1]][0] if speakers else None
    out = dict(agent_states)
    for name, value in agent_states.items():
        if not isinstance(value, dict):
            continue
        agent = dict(cast("dict[str, Any]", value))
        if name in members:
            own = [i for i, (source, _) in enumerate(record.thread) if source == name]
            since = own[-1] + 1 if own else 0
            agent["message_buffer"] = [
                thread[i] for i in range(since, len(thread)) if record.thread[i][0] != name
            ]
            inner = cast("dict[str, Any]", agent.get("agent_state") or {})
            if inner.get("type") == "AssistantAgentState" and name in record.contexts:
                llm_context = dict(cast("dict[str, Any]", inner.get("llm_context") or {}))
                llm_context["messages"] = _dumps(to_autogen(record.contexts[name], name))
                agent["agent_state"] = {**inner, "llm_context": llm_context}
        elif "message_thread" in agent:  # the group chat manager
            agent["message_thread"] = thread
            agent["current_turn"] = len(speakers)
            if "next_speaker_index" in agent and last is not None:
                agent["next_speaker_index"] = (members.index(last) + 1) % len(members)
            if "previous_speaker" in agent:
                agent["previous_speaker"] = last
            if "current_speaker" in agent and last is not None:
                agent["current_speaker"] = last
        out[name] = agent
    return {**state, "agent_states": out}


async def into_team(team: Any, record: TeamRecord) -> dict[str, Any]:
    """Write ``record`` into ``team`` through its state API; the state loaded."""
    state = team_state(cast("dict[str, Any]", await team.save_state()), record)
    await team.load_state(state)
    return state
