"""``fence()``: wrap any agent in the control plane.

    begin → agent → gate ─accepted→ verify ─all entailed, actions→ policy → grant → act ─→ finish
                      │                  ├─all entailed, no action→ finish                 │
                      │                  └─otherwise→ abstain ─rounds left→ agent          │
                      └─rejected→ abstain                   └─no rounds left→ finish       │
            agent ◄── the agent asked for its actions' outcomes (a continuation) ──────────┘

The agent acts only through ``control_plane.bus`` and cites the ledger ids its calls
return; whatever it hands over is checked by the gate and the verifier before
anything is answered or done.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from assay.errors import UsageError
from assay.fence import _threads as threads
from assay.fence._agent import Agent, agent_node
from assay.fence._components import FenceComponents, policy_scoped
from assay.fence._nodes import (
    Node,
    abstain_node,
    act_node,
    gate_node,
    grant_node,
    policy_node,
    verify_node,
)
from assay.fence._one_run import OneRunGraph
from assay.fence._outcome import Writer, build_result, compose_answer, errors_of, unsupported_of
from assay.fence._state import (
    FenceState,
    RoundItem,
)
from assay.fence._threads import GraphIdentity
from assay.fence._tracing import traced_node
from assay.tool_bus import Policy, load_policy

_log = logging.getLogger("assay.fence")

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver

#: Checks a run's input before anything is written, and returns what the graph runs on.
Prepare = Callable[[Mapping[str, Any]], Mapping[str, Any]]
FencedGraph = CompiledStateGraph[FenceState, None, FenceState, FenceState]


@dataclass(frozen=True, kw_only=True)
class _Fenced:
    identity: GraphIdentity
    prepare: Prepare | None


# What fence() knows of each graph it compiled; a graph that is gone leaves no entry.
_FENCED: weakref.WeakKeyDictionary[object, _Fenced] = weakref.WeakKeyDictionary()


def fence(
    agent: Agent,
    *,
    control_plane: FenceComponents,
    name: str,
    version: str = "1",
    max_evidence_rounds: int = 2,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    writer: Writer = compose_answer,
    require_no_open_questions: bool = False,
    policy: str | Path | Mapping[str, Any] | Policy | None = None,
    prepare: Prepare | None = None,
) -> FencedGraph:
    """Compile ``agent`` inside the control plane's nodes, as the graph ``name``
    (printable, at most 200 characters) at ``version`` (at most 64).

    ``agent(state) -> {"handover": Handover | dict}`` may be a callable or any
    runnable (a compiled LangGraph graph included). ``checkpointer`` defaults to the
    control plane's durable one (SQLite or PostgreSQL), which grants need: an
    irreversible call pauses the graph until ``Command(resume=...)``.

    A thread started by this graph belongs to ``name`` and ``version``: the begin
    node records them in the state, the run's ledger metadata and ``fence_threads``,
    and refuses a thread another graph started (:class:`~assay.errors.WrongGraph`).
    ``policy`` (a YAML/JSON file, a mapping or a :class:`~assay.tool_bus.Policy`)
    holds the auto-approval rules for this graph's irreversible calls, used instead
    of the control plane's own ``grants.policy``, which stays as it is. ``prepare``
    is what the runner (``cp.run``) calls on a caller's input before anything is
    written: it raises :class:`~assay.errors.UsageError` to refuse the input, or
    returns the ``{"task": ..., "context": ...}`` the graph runs on.
    """
    identity = threads.check_identity(name, version)
    if prepare is not None and not callable(prepare):
        raise UsageError("prepare must be a callable taking the run's input")
    acting = control_plane if policy is None else policy_scoped(control_plane, load_policy(policy))
    builder = StateGraph(FenceState)
    builder.add_node("begin", traced_node("begin", _begin(control_plane, identity)))
    builder.add_node("agent", traced_node("agent", agent_node(agent, control_plane)))
    builder.add_node(
        "gate",
        traced_node(
            "gate", gate_node(control_plane, require_no_open_questions=require_no_open_questions)
        ),
    )
    builder.add_node("verify", traced_node("verify", verify_node(control_plane)))
    abstain = _recording_round(abstain_node(control_plane))
    builder.add_node("abstain", traced_node("abstain", abstain))
    builder.add_node(
        "policy", traced_node("policy", _announcing_pending(acting, policy_node(acting)))
    )
    builder.add_node("grant", traced_node("grant", grant_node(acting)))
    builder.add_node("act", traced_node("act", act_node(acting)))
    builder.add_node("finish", traced_node("finish", _finish(control_plane, writer)))
    builder.add_edge(START, "begin")
    builder.add_edge("begin", "agent")
    builder.add_edge("agent", "gate")
    builder.add_conditional_edges("gate", _after_gate, ["verify", "abstain", "finish"])
    builder.add_conditional_edges("verify", _after_verify, ["policy", "abstain", "finish"])
    builder.add_conditional_edges("abstain", _rounds_left(max_evidence_rounds), ["agent", "finish"])
    builder.add_edge("policy", "grant")
    builder.add_edge("grant", "act")
    builder.add_conditional_edges("act", _after_act, ["agent", "finish"])
    builder.add_edge("finish", END)
    saver = checkpointer if checkpointer is not None else control_plane.checkpointer
    graph = builder.compile(checkpointer=saver, name=identity.name)
    graph.__class__ = OneRunGraph  # LangGraph's graph, refusing a second run on a thread
    _FENCED[graph] = _Fenced(identity=identity, prepare=prepare)
    return graph


def graph_identity(graph: object) -> GraphIdentity:
    """The name and version ``graph`` was fenced with; :class:`UsageError` for anything
    ``fence()`` did not return."""
    return _fenced(graph).identity


def prepared_input(graph: object, value: Mapping[str, Any]) -> Mapping[str, Any]:
    """``value`` as the graph's ``prepare`` returns it (unchanged without one)."""
    prepare = _fenced(graph).prepare
    return value if prepare is None else prepare(value)


def _fenced(graph: object) -> _Fenced:
    try:
        return _FENCED[graph]
    except (KeyError, TypeError):
        raise UsageError(
            f"{type(graph).__name__} is not a fenced graph: pass the graph fence() returned"
        ) from None


class _ConfiguredNode(Protocol):
    def __call__(self, state: FenceState, config: RunnableConfig) -> FenceState: ...


def _begin(components: FenceComponents, identity: GraphIdentity) -> _ConfiguredNode:
    """Start the run (or take the one the input names), bind the thread to this graph
    and record the task, in one ledger transaction; a thread another graph holds is
    refused, and the transaction then writes nothing."""

    def begin(state: FenceState, config: RunnableConfig) -> FenceState:
        raw_thread = config.get("configurable", {}).get("thread_id")
        thread_id = "" if raw_thread is None else threads.check_thread_id(str(raw_thread))
        run_id = state.get("run_id")
        previous = state.get("result")
        if not run_id or (previous is not None and previous.run_id == run_id):
            # A thread invoked again with a new task starts a new run.
            opening = components.ledger.start_run_batch(
                metadata={
                    "thread_id": thread_id,
                    "graph": identity.name,
                    "graph_version": identity.version,
                }
            )
        else:
            opening = components.ledger.batch(run_id)
        with opening as batch:
            if thread_id:
                threads.start(batch.connection, thread_id, identity, batch.run_id)
            batch.append(kind="human_fact", source="user:task", content=state.get("task", ""))
        return {
            "run_id": batch.run_id,
            "thread_id": thread_id,
            "graph": {"name": identity.name, "version": identity.version},
            "round": 0,
            "feedback": [],
            "round_reasons": [],
            "failure": None,
            "granted": {},
            "denied": {},
            "pending": [],
            "actions": [],
            "continuation": None,
            "returned": [],
        }

    return begin


def _announcing_pending(components: FenceComponents, policy: Node) -> Node:
    """Record an ``awaiting_grant`` result before the grant node pauses, so a paused
    graph's state already holds the :class:`RunResult` that describes it, and the
    thread is listed as waiting for a grant."""

    def policy_then_result(state: FenceState) -> FenceState:
        update = policy(state)
        if update.get("pending"):
            merged: FenceState = {**state, **update}
            update["result"] = build_result(merged)
            if state.get("thread_id"):
                threads.set_status(components.engine, state.get("thread_id", ""), "awaiting_grant")
        return update

    return policy_then_result


def _recording_round(abstain: Node) -> Node:
    """Keep the round's reasons before the abstain node turns them into feedback, so
    the result shows every round's, not only the last one's."""

    def abstain_and_record(state: FenceState) -> FenceState:
        update = abstain(state)
        unsupported = [u.to_dict() for u in unsupported_of(state)]
        item = RoundItem(
            round=state.get("round", 0), errors=errors_of(state), unsupported=unsupported
        )
        update["round_reasons"] = [*state.get("round_reasons", []), item]
        return update

    return abstain_and_record


def _after_gate(state: FenceState) -> Literal["verify", "abstain", "finish"]:
    if state.get("failure"):
        return "finish"
    return "verify" if state.get("accepted") is not None else "abstain"


def _after_verify(state: FenceState) -> Literal["policy", "abstain", "finish"]:
    """A hand-over with nothing to act on has nothing to grant or run: it goes
    straight to ``finish`` (the begin node already set ``granted``, ``pending`` and
    ``actions`` empty), sparing the graph three steps that would change nothing."""
    if state.get("unsupported"):
        return "abstain"
    verified = state.get("verified")
    return "policy" if verified is not None and verified.get("action_intents") else "finish"


def _after_act(state: FenceState) -> Literal["agent", "finish"]:
    """Back to the agent when it asked for its actions' outcomes (``returned``)."""
    return "agent" if state.get("returned") else "finish"


def _rounds_left(limit: int) -> Callable[[FenceState], Literal["agent", "finish"]]:
    def route(state: FenceState) -> Literal["agent", "finish"]:
        return "agent" if state.get("round", 0) <= limit else "finish"

    return route


def _finish(components: FenceComponents, writer: Writer) -> Node:
    def finish(state: FenceState) -> FenceState:
        result = build_result(state, writer=writer)
        if state.get("thread_id"):
            threads.set_status(components.engine, state.get("thread_id", ""), result.status)
        return {"result": result}

    return finish
