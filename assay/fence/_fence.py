"""``fence()``: wrap any agent in the control plane.

    begin → agent → gate ─accepted→ verify ─all entailed→ policy → grant → act → finish
                      │                  └─otherwise→ abstain ─rounds left→ agent
                      └─rejected→ abstain                   └─no rounds left→ finish

The agent acts only through ``control_plane.bus`` and cites the ledger ids its calls
return; whatever it hands over is checked by the gate and the verifier before
anything is answered or done.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from assay.gate import Claim, Handover
from assay.graph._nodes import (
    Node,
    abstain_node,
    act_node,
    gate_node,
    grant_node,
    policy_node,
    verify_node,
)
from assay.graph._result import ActionRecord, PendingGrant, RunResult, RunStatus
from assay.graph._state import FenceState
from assay.ledger import canonical_json
from assay.tool_bus import describe_exception
from assay.verifier._unsupported import Unsupported

_log = logging.getLogger("assay.fence")

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver

    from assay.control_plane import ControlPlane

Agent = Callable[[FenceState], dict[str, Any]] | Any
Writer = Callable[[Sequence[Claim], Sequence[Unsupported], Handover | None], str]


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
    control_plane: ControlPlane,
    max_evidence_rounds: int = 2,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    writer: Writer = compose_answer,
    require_no_open_questions: bool = False,
) -> CompiledStateGraph[FenceState, None, FenceState, FenceState]:
    """Compile ``agent`` inside the control plane's nodes.

    ``agent(state) -> {"handover": Handover | dict}`` may be a callable or any
    runnable (a compiled LangGraph graph included). ``checkpointer`` defaults to the
    control plane's durable one (SQLite or PostgreSQL), which grants need: an
    irreversible call pauses the graph until ``Command(resume=...)``.
    """
    builder = StateGraph(FenceState)
    builder.add_node("begin", _begin(control_plane))
    builder.add_node("agent", _agent(agent, control_plane))
    builder.add_node(
        "gate", gate_node(control_plane, require_no_open_questions=require_no_open_questions)
    )
    builder.add_node("verify", verify_node(control_plane))
    builder.add_node("abstain", abstain_node(control_plane))
    builder.add_node("policy", _announcing_pending(policy_node(control_plane)))
    builder.add_node("grant", grant_node(control_plane))
    builder.add_node("act", act_node(control_plane))
    builder.add_node("finish", _finish(writer))
    builder.add_edge(START, "begin")
    builder.add_edge("begin", "agent")
    builder.add_edge("agent", "gate")
    builder.add_conditional_edges("gate", _after_gate, ["verify", "abstain", "finish"])
    builder.add_conditional_edges("verify", _after_verify, ["policy", "abstain"])
    builder.add_conditional_edges("abstain", _rounds_left(max_evidence_rounds), ["agent", "finish"])
    builder.add_edge("policy", "grant")
    builder.add_edge("grant", "act")
    builder.add_edge("act", "finish")
    builder.add_edge("finish", END)
    saver = checkpointer if checkpointer is not None else control_plane.checkpointer
    return builder.compile(checkpointer=saver)


class _ConfiguredNode(Protocol):
    def __call__(self, state: FenceState, config: RunnableConfig) -> dict[str, Any]: ...


def _begin(control_plane: ControlPlane) -> _ConfiguredNode:
    def begin(state: FenceState, config: RunnableConfig) -> dict[str, Any]:
        thread_id = str(config.get("configurable", {}).get("thread_id", ""))
        run_id = state.get("run_id")
        previous = state.get("result")
        if not run_id or (previous is not None and previous.run_id == run_id):
            # A thread invoked again with a new task starts a new run.
            run_id = control_plane.ledger.start_run(metadata={"thread_id": thread_id})
        control_plane.ledger.append(
            run_id, kind="human_fact", source="user:task", content=state.get("task", "")
        )
        return {
            "run_id": run_id,
            "thread_id": thread_id,
            "round": 0,
            "feedback": [],
            "failure": None,
            "granted": {},
            "denied": {},
            "pending": [],
            "actions": [],
        }

    return begin


def _agent(agent: Agent, control_plane: ControlPlane) -> Node:
    """Run the agent; an exception becomes a ``failed`` run, not a crashed graph. Its
    type, message and formatted traceback (bounded) are kept in the run's ledger as an
    ``error`` entry (code ``agent_failed``) and logged, so the cause is never lost."""

    def run_agent(state: FenceState) -> dict[str, Any]:
        try:
            invoke = getattr(agent, "invoke", None)
            out = invoke(state) if callable(invoke) else agent(state)
        except Exception as exc:
            info = describe_exception(exc)
            _log.error("the agent raised %s\n%s", info.summary, info.traceback)
            control_plane.ledger.append(
                state["run_id"],  # pyright: ignore[reportTypedDictNotRequiredAccess]
                kind="error",
                source="agent",
                content=canonical_json({"code": "agent_failed", **info.as_json()}).decode(),
                metadata={"code": "agent_failed", "type": info.type},
            )
            return {"handover": None, "failure": f"the agent raised {info.summary}"}
        if not isinstance(out, dict) or "handover" not in out:
            return {
                "handover": None,
                "failure": "the agent must return a dict with a 'handover' key",
            }
        return {"handover": out["handover"], "failure": None}

    def fresh_round(state: FenceState) -> dict[str, Any]:
        # Each round is judged on its own hand-over: nothing carries over silently.
        return {
            "accepted": None,
            "verified": None,
            "unsupported": [],
            "gate_errors": [],
            **run_agent(state),
        }

    return fresh_round


def _announcing_pending(policy: Node) -> Node:
    """Record an ``awaiting_grant`` result before the grant node pauses, so a paused
    graph's state already holds the :class:`RunResult` that describes it."""

    def policy_then_result(state: FenceState) -> dict[str, Any]:
        update = policy(state)
        if update.get("pending"):
            merged: FenceState = {**state, **update}  # type: ignore[typeddict-item]
            update["result"] = build_result(merged)
        return update

    return policy_then_result


def _after_gate(state: FenceState) -> Literal["verify", "abstain", "finish"]:
    if state.get("failure"):
        return "finish"
    return "verify" if state.get("accepted") is not None else "abstain"


def _after_verify(state: FenceState) -> Literal["policy", "abstain"]:
    return "abstain" if state.get("unsupported") else "policy"


def _rounds_left(limit: int) -> Callable[[FenceState], Literal["agent", "finish"]]:
    def route(state: FenceState) -> Literal["agent", "finish"]:
        return "agent" if state.get("round", 0) <= limit else "finish"

    return route


def _finish(writer: Writer) -> Node:
    def finish(state: FenceState) -> dict[str, Any]:
        return {"result": build_result(state, writer=writer)}

    return finish


def build_result(state: FenceState, *, writer: Writer = compose_answer) -> RunResult:
    """The :class:`RunResult` a state stands for (also used while paused for a grant)."""
    verified = state.get("verified")
    handover = Handover.model_validate(verified) if verified is not None else None
    claims = tuple(
        c
        for c in (handover.claims if handover else [])
        if c.type != "Conjecture"
        and c.propositions
        and all(p.entailment and p.entailment.label == "entailment" for p in c.propositions)
    )
    unsupported = tuple(Unsupported.from_dict(u) for u in state.get("unsupported", []))
    pending = tuple(_pending(p) for p in state.get("pending", []))
    status = _status(state, handover, claims, pending)
    answer = (
        None if status in ("failed", "awaiting_grant") else writer(claims, unsupported, handover)
    )
    return RunResult(
        run_id=state.get("run_id", ""),
        thread_id=state.get("thread_id", ""),
        status=status,
        answer=answer,
        claims=claims,
        unsupported=unsupported,
        pending_grants=pending,
        actions=tuple(_action(a) for a in state.get("actions", [])),
        errors=tuple(_errors(state)),
        rounds=state.get("round", 0),
    )


def _errors(state: FenceState) -> list[dict[str, Any]]:
    errors = list(state.get("gate_errors", []))
    failure = state.get("failure")
    if failure:
        errors.append({"code": "agent_failed", "path": "$", "message": failure})
    return errors


def _status(
    state: FenceState,
    handover: Handover | None,
    claims: tuple[Claim, ...],
    pending: tuple[PendingGrant, ...],
) -> RunStatus:
    if state.get("failure") or (handover is not None and handover.status == "failed"):
        return "failed"
    if pending:
        return "awaiting_grant"
    open_questions = handover is not None and any(
        q.status == "open" for q in handover.open_questions
    )
    if handover is None or state.get("unsupported") or not claims or open_questions:
        return "abstained"
    return "answered"


def _pending(raw: dict[str, Any]) -> PendingGrant:
    return PendingGrant(
        intent_id=raw["intent_id"],
        tool=raw["tool"],
        version=raw["version"],
        args=dict(raw["args"]),
        args_sha256=raw["args_sha256"],
        depends_on=tuple(raw["depends_on"]),
        claims=tuple(raw.get("claims", ())),
    )


def _action(raw: dict[str, Any]) -> ActionRecord:
    fields = ("grant_id", "approver", "ledger_id", "output", "error", "reason")
    return ActionRecord(
        intent_id=raw["intent_id"],
        tool=raw["tool"],
        version=raw.get("version"),
        args=dict(raw.get("args", {})),
        status=raw["status"],
        **{k: raw.get(k) for k in fields},
    )
