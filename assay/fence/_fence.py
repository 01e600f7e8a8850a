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
import re
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, cast

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from assay.contract import Claim, Handover, Unsupported
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
from assay.fence._result import ActionRecord, PendingGrant, RunResult, RunStatus
from assay.fence._state import ActionItem, FenceState, PendingItem, verified_handover
from assay.fence._threads import GraphIdentity
from assay.fence._tracing import traced_node
from assay.tool_bus import Policy, load_policy

_log = logging.getLogger("assay.fence")

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver

Writer = Callable[[Sequence[Claim], Sequence[Unsupported], Handover | None], str]
#: Checks a run's input before anything is written, and returns what the graph runs on.
Prepare = Callable[[Mapping[str, Any]], Mapping[str, Any]]
FencedGraph = CompiledStateGraph[FenceState, None, FenceState, FenceState]


@dataclass(frozen=True, kw_only=True)
class _Fenced:
    identity: GraphIdentity
    prepare: Prepare | None


# What fence() knows of each graph it compiled; a graph that is gone leaves no entry.
_FENCED: weakref.WeakKeyDictionary[object, _Fenced] = weakref.WeakKeyDictionary()


def compose_answer(
    claims: Sequence[Claim], unsupported: Sequence[Unsupported], handover: Handover | None
) -> str:
    """The default writer: verified claims with their evidence, the author's
    Conjectures labelled as such, then what is not established.

    It only asserts verified claim texts, so the answer states nothing the ledger
    does not support; an answer with no verified claim opens with "I don't know".
    """
    lines: list[str] = []
    for claim in claims:
        cited = sorted(
            {
                p.entailment.ledger_id
                for p in claim.propositions
                if p.entailment and p.entailment.ledger_id
            }
        )
        lines.append(f"- {claim.text} [{', '.join(cited)}]" if cited else f"- {claim.text}")
    open_questions = (
        [q.text for q in handover.open_questions if q.status == "open"] if handover else []
    )
    conjectures = [c.text for c in handover.claims if c.type == "Conjecture"] if handover else []
    lines += [f"- Conjecture (not verified): {text}" for text in conjectures]
    if unsupported or open_questions:
        lines.append("Not established:")
        lines += [f"- {u.proposition} — {u.missing_evidence}" for u in unsupported]
        lines += [f"- {q}" for q in open_questions]
    if not claims:
        lines.insert(0, "I don't know: no claim could be verified against the evidence.")
    return "\n".join(lines)


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
    builder.add_node("abstain", traced_node("abstain", abstain_node(control_plane)))
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


def build_result(state: FenceState, *, writer: Writer = compose_answer) -> RunResult:
    """The :class:`RunResult` a state stands for (also used while paused for a grant)."""
    handover = verified_handover(state)
    claims = tuple(
        c
        for c in (handover.claims if handover else [])
        if c.type != "Conjecture"
        and c.propositions
        and all(p.entailment and p.entailment.label == "entailment" for p in c.propositions)
    )
    unsupported = tuple(
        Unsupported.from_dict(cast(dict[str, Any], u)) for u in state.get("unsupported", [])
    )
    if handover is None and not unsupported:
        unsupported = tuple(refused_propositions(state))
    pending = tuple(_pending(p) for p in state.get("pending", []))
    actions = (*(_action(a) for a in state.get("actions", [])), *_never_run(state, pending))
    status = _status(state, handover, claims, pending, actions)
    answer = None if status == "failed" else writer(claims, unsupported, handover)
    return RunResult(
        run_id=state.get("run_id", ""),
        thread_id=state.get("thread_id", ""),
        status=status,
        answer=answer,
        claims=claims,
        unsupported=unsupported,
        pending_grants=pending,
        actions=actions,
        errors=tuple(_errors(state)),
        rounds=state.get("round", 0),
    )


def _never_run(state: FenceState, pending: tuple[PendingGrant, ...]) -> list[ActionRecord]:
    """The calls the agent made itself and awaits (its continuation's ``awaits``) that
    were neither run nor decided nor pending: the hand-over they came in was refused,
    or its claims not all entailed. A call the agent made never drops out of the
    result unseen."""
    raw = state.get("handover")
    intents: Any = raw.get("action_intents") if isinstance(raw, Mapping) else None
    awaited: Any = (state.get("continuation") or {}).get("awaits")
    if not isinstance(intents, list) or not isinstance(awaited, list):
        return []
    seen = {a["intent_id"] for a in state.get("actions", [])} | {p.intent_id for p in pending}
    wanted = {str(i) for i in cast(list[Any], awaited)}
    why = (
        "the gate refused the hand-over that proposed it (see errors)"
        if state.get("accepted") is None
        else "the claims it rests on were not all entailed (see unsupported)"
    )
    found: list[ActionRecord] = []
    for item in cast(list[Any], intents):
        if not isinstance(item, Mapping) or not isinstance(item.get("id"), str):
            continue
        intent = cast(Mapping[str, Any], item)
        if intent["id"] in seen or intent["id"] not in wanted:
            continue
        args: Any = intent.get("args")
        version: Any = intent.get("version")
        found.append(
            ActionRecord(
                intent_id=intent["id"],
                tool=str(intent.get("tool", "")),
                version=version if isinstance(version, str) else None,
                args=dict(cast(Mapping[str, Any], args)) if isinstance(args, Mapping) else {},
                status="not_run",
                reason=why,
            )
        )
    return found


_CLAIM_PATH = re.compile(r"\$\.claims\[(\d+)\](?:\.propositions\[(\d+)\])?")


def refused_propositions(state: FenceState) -> list[Unsupported]:
    """The propositions the gate refused in the last round, each as an ``Unsupported``
    with the gate's reasons: a run that ends on a refused hand-over still says what is
    not established and why, not only that nothing could be verified."""
    raw = state.get("handover")
    claims: Any = raw.get("claims") if isinstance(raw, Mapping) else None
    if not isinstance(claims, list):
        return []
    reasons: dict[tuple[int, int], list[str]] = {}
    for error in state.get("gate_errors", []):
        found = _CLAIM_PATH.match(str(error.get("path", "")))
        if found is None or int(found[1]) >= len(claims):  # pyright: ignore[reportUnknownArgumentType]
            continue
        claim: Any = claims[int(found[1])]
        props: Any = claim.get("propositions") if isinstance(claim, Mapping) else None
        if not isinstance(props, list):
            continue
        count = len(props)  # pyright: ignore[reportUnknownArgumentType]
        indices = [int(found[2])] if found[2] is not None else list(range(count))
        for j in indices:
            if j < count:
                reasons.setdefault((int(found[1]), j), []).append(
                    f"{error.get('code')}: {error.get('message')}"
                )
    refused: list[Unsupported] = []
    for (i, j), why in reasons.items():
        claim, prop = claims[i], claims[i]["propositions"][j]
        if not isinstance(prop, Mapping) or not isinstance(prop.get("text"), str):
            continue
        ids: Any = prop.get("ledger_ids")
        refused.append(
            Unsupported(
                proposition=str(prop["text"]),
                missing_evidence="; ".join(dict.fromkeys(why)),
                claim_id=str(claim.get("id", "")),
                proposition_id=str(prop.get("id", "")),
                label="missing_evidence",
                ledger_ids=tuple(str(x) for x in ids) if isinstance(ids, list) else (),
            )
        )
    return refused


def _errors(state: FenceState) -> list[dict[str, Any]]:
    errors: list[dict[str, Any]] = [
        {"code": e["code"], "path": e["path"], "message": e["message"]}
        for e in state.get("gate_errors", [])
    ]
    failure = state.get("failure")
    if failure:
        errors.append({"code": "agent_failed", "path": "$", "message": failure})
    return errors


def _status(
    state: FenceState,
    handover: Handover | None,
    claims: tuple[Claim, ...],
    pending: tuple[PendingGrant, ...],
    actions: tuple[ActionRecord, ...],
) -> RunStatus:
    """The run's status: the table in ``docs/fence.md``, in its order."""
    if state.get("failure") or (handover is not None and handover.status == "failed"):
        return "failed"
    if pending:
        return "awaiting_grant"
    open_questions = handover is not None and any(
        q.status == "open" for q in handover.open_questions
    )
    if handover is None or state.get("unsupported") or not claims or open_questions:
        return "abstained"
    if any(a.status not in ("executed", "denied") for a in actions):
        return "incomplete"
    if any(a.status == "denied" for a in actions):
        return "denied"
    return "answered"


def _pending(raw: PendingItem) -> PendingGrant:
    return PendingGrant(
        intent_id=raw["intent_id"],
        tool=raw["tool"],
        version=raw["version"],
        args=dict(raw["args"]),
        args_sha256=raw["args_sha256"],
        depends_on=tuple(raw["depends_on"]),
        claims=tuple(raw["claims"]),
        policy=tuple(raw.get("policy", [])),
    )


def _action(raw: ActionItem) -> ActionRecord:
    return ActionRecord(
        intent_id=raw["intent_id"],
        tool=raw["tool"],
        version=raw["version"],
        args=dict(raw["args"]),
        status=raw["status"],
        grant_id=raw.get("grant_id"),
        approver=raw.get("approver"),
        ledger_id=raw.get("ledger_id"),
        output=raw.get("output"),
        error=raw.get("error"),
        reason=raw.get("reason"),
    )
