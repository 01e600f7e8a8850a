"""What a fenced run comes to: the :class:`RunResult` built from the graph's final
state (its status, its answer composed from verified claims alone, the actions and
their outcomes, every round's reasons)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from assay.contract import Claim, Handover, Unsupported
from assay.fence._result import ActionRecord, PendingGrant, RoundReasons, RunResult, RunStatus
from assay.fence._state import (
    ActionItem,
    FenceState,
    PendingItem,
    RoundItem,
    verified_handover,
)

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
    unsupported = tuple(unsupported_of(state, handover))
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
        errors=tuple(errors_of(state)),
        rounds=state.get("round", 0),
        round_reasons=tuple(_round(item) for item in state.get("round_reasons", [])),
    )


def unsupported_of(state: FenceState, handover: Handover | None = None) -> list[Unsupported]:
    """The round's ``Unsupported`` propositions: the verifier's, or, for a hand-over
    the gate refused, its refused propositions with the gate's reasons."""
    found = [Unsupported.from_dict(cast(dict[str, Any], u)) for u in state.get("unsupported", [])]
    if handover is None and not found:
        found = refused_propositions(state)
    return found


def _round(item: RoundItem) -> RoundReasons:
    return RoundReasons(
        round=item["round"],
        errors=tuple(item["errors"]),
        unsupported=tuple(Unsupported.from_dict(u) for u in item["unsupported"]),
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


def errors_of(state: FenceState) -> list[dict[str, Any]]:
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
