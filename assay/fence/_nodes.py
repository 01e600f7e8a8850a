"""The control plane's graph nodes. Each factory binds a node to a control plane.

The nodes never trust the agent: the gate node checks the hand-over with plain code,
the verify node fills ``entailment`` from ledger evidence, the abstain node turns
what failed into feedback for the next round, the policy and grant nodes obtain a
grant for every irreversible call (pausing with ``interrupt()`` for a person), and
the act node runs calls only through the bus, with a call id derived from the run
and the intent so that a replayed step never repeats a side effect.
"""

# Nodes read the keys the fence's "begin" node sets (run_id, ...) directly.
# pyright: reportTypedDictNotRequiredAccess=false
from __future__ import annotations

from typing import Any, Protocol, cast

from langgraph.types import interrupt

from assay.contract import ActionIntent, Handover, Unsupported
from assay.errors import AlreadyDecided, AssayError, GrantExists, InvalidDecision, ToolNotFound
from assay.fence._components import FenceComponents
from assay.fence._decisions import DecisionStore, StoredDecision
from assay.fence._policy_reasons import policy_reasons
from assay.fence._result import ActionStatus
from assay.fence._review import (
    IntentDecision,
    PendingCall,
    Refusal,
    ReviewRequest,
    parse_decision,
    pending_call,
)
from assay.fence._review_trail import (
    pause_key,
    record_refused_decision,
    record_rival,
    refused_resumes,
)
from assay.fence._settled import call_and_wait, unsettled_action
from assay.fence._state import (
    ActionItem,
    DeniedItem,
    Feedback,
    FenceState,
    GateErrorFeedback,
    GateErrorItem,
    GrantedItem,
    PendingItem,
    UnsupportedFeedback,
    UnsupportedItem,
    accepted_handover,
    verified_handover,
)
from assay.gate import GateFinding, intent_call_id
from assay.ledger import LedgerEntry, canonical_json
from assay.tool_bus import GrantRequest


class Node(Protocol):
    """A graph node: reads the state, returns the keys it updates."""

    def __call__(self, state: FenceState) -> FenceState: ...


def gate_node(control_plane: FenceComponents, *, require_no_open_questions: bool = False) -> Node:
    """Check the agent's hand-over; an accepted one goes on, errors become feedback."""

    def gate(state: FenceState) -> FenceState:
        handover = state.get("handover")
        if state.get("failure") or handover is None:
            return {"accepted": None, "accepted_handover": None, "gate_errors": []}
        decision = control_plane.gate.check(
            state["run_id"], handover, require_no_open_questions=require_no_open_questions
        )
        if decision.accepted and decision.handover is not None:
            return {
                "accepted": decision.handover.model_dump(mode="json"),
                "accepted_handover": decision.handover,
                "gate_errors": [],
            }
        return {
            "accepted": None,
            "accepted_handover": None,
            "gate_errors": [_gate_error(e) for e in decision.errors],
        }

    return gate


def verify_node(control_plane: FenceComponents) -> Node:
    """Fill every asserted proposition's ``entailment``; the only writer of it."""

    def verify(state: FenceState) -> FenceState:
        accepted = accepted_handover(state)
        if accepted is None:
            return {"verified": None, "verified_handover": None, "unsupported": []}
        verified = control_plane.verifier.verify(state["run_id"], accepted)
        return {
            "verified": verified.handover.model_dump(mode="json"),
            "verified_handover": verified.handover,
            "unsupported": [_unsupported_item(u) for u in verified.unsupported],
        }

    return verify


def abstain_node(control_plane: FenceComponents) -> Node:
    """Turn gate errors and Unsupported propositions into the next round's feedback.

    Nothing is reworded here: the agent is told what is missing and must come back
    with evidence (the gate rejects a reworded Unsupported proposition).
    """

    def abstain(state: FenceState) -> FenceState:
        feedback: list[Feedback] = [
            GateErrorFeedback(kind="gate_error", **e) for e in state.get("gate_errors", [])
        ]
        feedback += [
            UnsupportedFeedback(kind="unsupported", **u) for u in state.get("unsupported", [])
        ]
        return {"feedback": feedback, "round": state.get("round", 0) + 1}

    del control_plane  # the feedback is derived from state alone
    return abstain


def policy_node(control_plane: FenceComponents) -> Node:
    """Grant what policy rules approve; list the irreversible calls left for a person,
    each as the :class:`PendingCall` a reviewer is shown."""

    def policy(state: FenceState) -> FenceState:
        run_id = state["run_id"]
        handover = verified_handover(state)
        if handover is None:
            return {"granted": dict(state.get("granted", {})), "pending": []}
        granted = dict(state.get("granted", {}))
        waiting: list[tuple[ActionIntent, GrantRequest]] = []
        for intent, request in _irreversible(control_plane, run_id, handover):
            if intent.id in granted or intent.id in state.get("denied", {}):
                continue
            if _repeats_an_effect(control_plane, request):
                # No grant can make it run but a person's that supersedes the earlier
                # call: the bus refuses it as duplicate_effect, naming that call.
                continue
            grant = control_plane.grants.evaluate_policy(run_id, request)
            if grant is not None:
                granted[intent.id] = {
                    "grant_id": grant.id,
                    "approver": grant.approver,
                    "via": grant.via,
                }
            else:
                waiting.append((intent, request))
        pending = _describe(control_plane, run_id, handover, waiting)
        return {
            "granted": granted,
            "pending": [cast(PendingItem, p.model_dump(mode="json")) for p in pending],
            "verified_handover": handover,
        }

    return policy


def _repeats_an_effect(control_plane: FenceComponents, request: GrantRequest) -> bool:
    """Whether the call would repeat an effect another call already performed (its
    tool declares an idempotency key and a call with the same key has started)."""
    held = control_plane.bus.prior_effect(request.tool, request.args, version=request.version)
    return held is not None


def grant_node(control_plane: FenceComponents) -> Node:
    """Pause with ``interrupt()`` until a reviewer approves or denies the pending calls.

    The interrupt's value is a :class:`~assay.fence.ReviewRequest` as plain JSON. Resume
    with ``Command(resume=...)`` holding a :class:`~assay.fence.ReviewDecision`:
    ``{"approve": bool, "approver": name, "reason": ...}`` for all pending calls, or
    ``{"decisions": {intent_id: {...}}}`` for each one. Any other value grants and
    denies nothing: the node pauses again with the same request plus ``refused`` (why
    the value is not a decision), records the refusal in the ledger (kind ``error``,
    code ``invalid_decision``), and waits for a decision. (LangGraph keeps every
    resume value of a node, so raising instead would leave the run stuck on the bad
    one.)

    Each decision is stored (``fence_decisions``) before its grant or denial is
    issued, and only the first decision on a call is ever stored. When another
    reviewer or process decided first, this node raises
    :class:`~assay.errors.AlreadyDecided` naming the decision that stands, and grants
    or denies nothing itself. A replay of the node (the same decision applied again)
    finds its own stored decision and goes on.
    """
    store = DecisionStore(control_plane.engine)

    def grant(state: FenceState) -> FenceState:
        if not state.get("pending"):
            return {}
        run_id = state["run_id"]
        request = ReviewRequest(
            run_id=run_id,
            thread_id=state.get("thread_id") or None,
            pending=_pending_calls(state),
        )
        decisions = _await_decision(control_plane, request, state.get("round", 0))
        decided = [(call, decisions[call.intent_id]) for call in request.pending]
        try:
            stored = store.record_all(run_id, decided)
        except AlreadyDecided as exc:
            record_rival(control_plane, run_id, exc, decisions)
            raise
        granted = dict(state.get("granted", {}))
        denied = dict(state.get("denied", {}))
        for call, decision in zip(request.pending, stored, strict=True):
            if decision.approve:
                granted[call.intent_id] = _issue(control_plane, run_id, call, decision)
            else:
                denied[call.intent_id] = _deny(control_plane, run_id, call, decision)
        return {"granted": granted, "denied": denied, "pending": []}

    return grant


def act_node(control_plane: FenceComponents) -> Node:
    """Run the verified hand-over's action intents through the bus. Their outcomes
    join those of earlier hand-overs of the run (an agent handed its outcomes back
    may hand over again); an agent that returned a ``continuation`` is handed these
    outcomes back (``returned``)."""

    def act(state: FenceState) -> FenceState:
        handover = verified_handover(state)
        if handover is None:
            return {"returned": []}
        done = [_act_one(control_plane, state, intent) for intent in handover.action_intents]
        ids = {a["intent_id"] for a in done}
        earlier = [a for a in state.get("actions", []) if a["intent_id"] not in ids]
        # An agent that asked for its actions' outcomes is handed them back.
        returned = [a["intent_id"] for a in done] if state.get("continuation") else []
        return {"actions": [*earlier, *done], "verified_handover": handover, "returned": returned}

    return act


# --- helpers ------------------------------------------------------------------------


def _gate_error(finding: GateFinding) -> GateErrorItem:
    return {"code": finding.code, "path": finding.path, "message": finding.message}


def _unsupported_item(item: Unsupported) -> UnsupportedItem:
    return cast(UnsupportedItem, {**item.to_dict(), "ledger_id": item.ledger_id})


def _irreversible(
    control_plane: FenceComponents, run_id: str, handover: Handover
) -> list[tuple[ActionIntent, GrantRequest]]:
    out: list[tuple[ActionIntent, GrantRequest]] = []
    for intent in handover.action_intents:
        try:
            spec = control_plane.registry.get(intent.tool, intent.version)
        except ToolNotFound:
            continue  # the gate refuses unknown tools; nothing to grant
        if spec.side_effect == "irreversible":
            out.append(
                (
                    intent,
                    GrantRequest.for_call(
                        run_id,
                        spec.name,
                        spec.version,
                        intent.args,
                        intent.depends_on,
                        call_id=intent_call_id(run_id, intent.id),
                    ),
                )
            )
    return out


def _describe(
    control_plane: FenceComponents,
    run_id: str,
    handover: Handover,
    waiting: list[tuple[ActionIntent, GrantRequest]],
) -> list[PendingCall]:
    """What a reviewer sees of each waiting call: the exact call, every claim it
    rests on, with verdicts and the ledger spans that support them, and why no
    policy rule approved it."""
    if not waiting:
        return []
    cited = {
        p.entailment.ledger_id
        for c in handover.claims
        for p in c.propositions
        if p.entailment and p.entailment.ledger_id
    }
    entries: dict[str, LedgerEntry] = control_plane.ledger.get_many(cited)
    return [
        pending_call(
            i,
            r,
            handover.claims,
            entries,
            policy=policy_reasons(control_plane.grants, run_id, r),
        )
        for i, r in waiting
    ]


def _pending_calls(state: FenceState) -> list[PendingCall]:
    """The state's pending calls, typed."""
    return [PendingCall.model_validate(item) for item in state.get("pending", [])]


def _await_decision(
    control_plane: FenceComponents, request: ReviewRequest, round_: int
) -> dict[str, IntentDecision]:
    """Interrupt with ``request`` until the resume value is a decision on every
    pending call; each refused value is recorded and answered with a new pause."""
    run_id = request.run_id
    ids = [call.intent_id for call in request.pending]
    pause = pause_key(request.pending, round_)
    refused = refused_resumes(control_plane, run_id, pause)
    index, value = 0, interrupt(request.to_interrupt())
    while True:
        try:
            if index in refused:
                # Refused when it arrived. A replay may see it changed by the
                # checkpoint's serialiser (a lone surrogate becomes "?"), so the
                # ledger's word stands, not a second reading.
                raise InvalidDecision(refused[index])
            return parse_decision(value, ids)
        except InvalidDecision as exc:
            if index not in refused:
                record_refused_decision(control_plane, run_id, pause, index, str(exc))
            refusal = Refusal(code="invalid_decision", message=str(exc))
            again = request.model_copy(update={"refused": refusal})
            index, value = index + 1, interrupt(again.to_interrupt())


def _request(run_id: str, call: PendingCall) -> GrantRequest:
    return GrantRequest.for_call(
        run_id, call.tool, call.version, call.args, call.depends_on, call_id=call.call_id
    )


def _issue(
    control_plane: FenceComponents, run_id: str, call: PendingCall, decision: StoredDecision
) -> GrantedItem:
    """A grant for the reviewer's approval; when the call already has one (the same
    decision applied by another process first), that one stands and is reported."""
    try:
        grant = control_plane.grants.issue(
            run_id, _request(run_id, call), approver=decision.approver
        )
    except GrantExists as exc:
        grant = exc.grant
    except AssayError as exc:
        return {"grant_id": None, "approver": decision.approver, "refused": str(exc)}
    return {"grant_id": grant.id, "approver": grant.approver, "via": grant.via}


def _deny(
    control_plane: FenceComponents, run_id: str, call: PendingCall, decision: StoredDecision
) -> DeniedItem:
    """The denial's ledger record. Its content is the stored decision's, so applying
    the same decision again finds the entry already written."""
    record: dict[str, str] = {
        "decision": "denied",
        "intent_id": call.intent_id,
        "call_id": call.call_id,
        "tool": call.tool,
        "version": call.version,
        "args_sha256": call.args_sha256,
        "approver": decision.approver,
        "reason": decision.reason or "denied by the reviewer",
        "decided_at": decision.as_dict()["decided_at"],
    }
    entry = control_plane.ledger.append(
        run_id,
        kind="grant",
        source=f"reviewer:{decision.approver}",
        content=canonical_json(record).decode(),
        metadata={"decision": "denied"},
    )
    return cast(DeniedItem, {**record, "ledger_id": entry.id})


def _act_one(control_plane: FenceComponents, state: FenceState, intent: ActionIntent) -> ActionItem:
    run_id = state["run_id"]
    denied = state.get("denied", {}).get(intent.id)
    if denied is not None:
        return _action(intent, "denied", approver=denied["approver"], reason=denied["reason"])
    granted = state.get("granted", {}).get(intent.id)
    if granted is not None and granted.get("refused"):
        return _action(intent, "not_run", reason=granted.get("refused"))
    call_id = intent_call_id(run_id, intent.id)
    result = call_and_wait(control_plane, run_id, intent, granted or {}, call_id)
    # Name the grant the call actually ran under: when two processes resumed the
    # same run, the one that lost the race holds another decision than the one used.
    used = control_plane.grants.used_for(run_id, call_id)
    grant: dict[str, str | None] = (
        {"grant_id": used.id, "approver": used.approver}
        if used is not None
        else {
            "grant_id": granted["grant_id"] if granted else None,
            "approver": granted["approver"] if granted else None,
        }
    )
    unsettled = unsettled_action(control_plane.bus, run_id, call_id, result)
    if unsettled is not None:  # cut short by a crash: unknown, or settled since
        return _action(
            intent,
            unsettled["status"],
            ledger_id=unsettled["ledger_id"],
            error=unsettled["error"],
            reason=unsettled["reason"],
            **grant,
        )
    if result.ok:
        return _action(
            intent, "executed", ledger_id=result.ledger_id, output=result.output, **grant
        )
    error = result.error.as_json() if result.error is not None else None
    status: ActionStatus = (
        "duplicate" if error is not None and error.get("code") == "duplicate_effect" else "failed"
    )
    return _action(intent, status, ledger_id=result.ledger_id, error=error, **grant)


def _action(intent: ActionIntent, status: ActionStatus, **fields: Any) -> ActionItem:
    """What became of ``intent``: its call, ``status`` and the ``fields`` that say why."""
    return cast(
        ActionItem,
        {
            "intent_id": intent.id,
            "tool": intent.tool,
            "version": intent.version,
            "args": dict(intent.args),
            "status": status,
            **fields,
        },
    )
