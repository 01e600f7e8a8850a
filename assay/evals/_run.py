"""Running one case: start the fenced graph on the case's input, answer its grant
requests as the case says, and observe what happened, from the run's result and its
ledger.

What a case run observes is plain data (:class:`CaseRun`), so that it crosses
process boundaries when cases run in parallel workers.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from assay.control_plane import ControlPlane
from assay.errors import AssayError
from assay.evals._suite import EvalCase, Suite
from assay.fence import FencedGraph, RunResult, RunStatus
from assay.ledger import LedgerEntry
from assay.tool_bus import Grant
from assay.verifier import Entailment, EntailmentCache, NLIModel, Verifier

__all__ = [
    "MAX_RESUMES",
    "REVIEWER",
    "CaseRun",
    "ObservedCall",
    "ObservedProposition",
    "RequestedGrant",
    "TimedModel",
    "run_case",
]

#: How many times one case's paused run is resumed at most.
MAX_RESUMES = 8
#: The approver named on the decisions a suite's ``review`` makes.
REVIEWER = "assay-eval"


@dataclass(frozen=True, kw_only=True)
class ObservedProposition:
    """A proposition of an answered claim, with the verifier's label."""

    claim_id: str
    claim_type: str
    text: str
    label: str | None
    #: The check that decided the verdict (a deterministic check's id, or ``model``).
    check: str | None = None


@dataclass(frozen=True, kw_only=True)
class ObservedCall:
    """A tool call that ran (its output is in the ledger), with the grant it used."""

    call_id: str
    tool: str
    version: str | None
    args: dict[str, Any]
    args_sha256: str | None
    ledger_id: str
    irreversible: bool
    grant_id: str | None
    grant_problem: str | None


@dataclass(frozen=True, kw_only=True)
class RequestedGrant:
    """An irreversible call a grant was asked for: shown to the reviewer, or issued
    by a policy rule."""

    key: str
    tool: str
    version: str | None
    args: dict[str, Any]
    via: str


@dataclass(frozen=True, kw_only=True)
class CaseRun:
    """What running one case came to. ``status`` is ``None`` when the case could not
    run at all (``error`` says why)."""

    case_id: str
    run_id: str | None
    thread_id: str | None
    status: RunStatus | None
    propositions: tuple[ObservedProposition, ...] = ()
    #: The propositions the run left unsupported (its last round's, with their label).
    refused: tuple[ObservedProposition, ...] = ()
    calls: tuple[ObservedCall, ...] = ()
    #: Calls the bus refused as repeating an effect another call performed.
    duplicates: tuple[ObservedCall, ...] = ()
    grants_requested: tuple[RequestedGrant, ...] = ()
    rounds: int = 0
    latency_s: float = 0.0
    model_s: float | None = None
    error: str | None = None


class TimedModel:
    """An NLI model that counts the seconds spent in it (loaded on first use)."""

    def __init__(self, model: NLIModel | None = None) -> None:
        self._model = model
        self.seconds = 0.0

    @property
    def inner(self) -> NLIModel:
        if self._model is None:
            self._model = Verifier.default()
        return self._model

    @property
    def threshold(self) -> float:
        return self.inner.threshold

    def check_many(
        self, pairs: Iterable[tuple[str, str]], *, cache: EntailmentCache | None = None
    ) -> list[Entailment]:
        model = self.inner
        start = time.perf_counter()
        try:
            return model.check_many(pairs, cache=cache)
        finally:
            self.seconds += time.perf_counter() - start


def run_case(
    cp: ControlPlane,
    graph: FencedGraph,
    suite: Suite,
    case: EvalCase,
    *,
    timer: TimedModel | None = None,
) -> CaseRun:
    """Run ``case`` on ``graph`` and observe it. A refusal of the case's input (the
    graph's ``prepare``, a bad decision) is recorded as the case's ``error``."""
    thread_id = f"eval-{case.id[:40]}-{secrets.token_hex(6)}"
    model_before = timer.seconds if timer is not None else 0.0
    start = time.perf_counter()
    pauses: list[RunResult] = []
    try:
        result = cp.run(graph, suite.run_input(case), thread_id=thread_id)
        while result.status == "awaiting_grant":
            pauses.append(result)
            if case.review == "none" or len(pauses) > MAX_RESUMES:
                break
            result = cp.resume(graph, thread_id, _decision(case))
    except AssayError as exc:
        return CaseRun(
            case_id=case.id,
            run_id=None,
            thread_id=thread_id,
            status=None,
            latency_s=time.perf_counter() - start,
            error=f"{type(exc).__name__}: {exc}",
        )
    latency = time.perf_counter() - start
    entries = cp.ledger.entries(result.run_id)
    return CaseRun(
        case_id=case.id,
        run_id=result.run_id,
        thread_id=thread_id,
        status=result.status,
        propositions=_propositions(result),
        refused=_refused(result),
        calls=_calls(cp, suite, result.run_id, entries),
        duplicates=_duplicates(cp, suite, entries),
        grants_requested=_requested(pauses, entries),
        rounds=result.rounds,
        latency_s=latency,
        model_s=(timer.seconds - model_before) if timer is not None else None,
    )


def _decision(case: EvalCase) -> dict[str, Any]:
    approve = case.review == "approve"
    return {"approve": approve, "approver": REVIEWER, "reason": f"suite review: {case.review}"}


def _propositions(result: RunResult) -> tuple[ObservedProposition, ...]:
    return tuple(
        ObservedProposition(
            claim_id=claim.id,
            claim_type=claim.type,
            text=prop.text,
            label=prop.entailment.label if prop.entailment is not None else None,
            check=prop.entailment.check if prop.entailment is not None else None,
        )
        for claim in result.claims
        for prop in claim.propositions
    )


def _refused(result: RunResult) -> tuple[ObservedProposition, ...]:
    return tuple(
        ObservedProposition(
            claim_id=item.claim_id, claim_type="Assertion", text=item.proposition, label=item.label
        )
        for item in result.unsupported
    )


def _duplicates(
    cp: ControlPlane, suite: Suite, entries: list[LedgerEntry]
) -> tuple[ObservedCall, ...]:
    """The run's calls the bus refused as ``duplicate_effect``, each with its call."""
    by_id = {e.id: e for e in entries}
    out: list[ObservedCall] = []
    for entry in entries:
        if entry.kind != "error" or entry.metadata.get("code") != "duplicate_effect":
            continue
        call_entry = by_id.get(str(entry.metadata.get("call_ledger_id", "")))
        if call_entry is None:
            continue
        body = _json(call_entry.text)
        tool, version = str(body.get("tool", "")), body.get("version")
        out.append(
            ObservedCall(
                call_id=str(entry.metadata.get("call_id", "")),
                tool=tool,
                version=version if isinstance(version, str) else None,
                args=_args(body),
                args_sha256=None,
                ledger_id=entry.id,
                irreversible=_irreversible(cp, suite, tool, version),
                grant_id=None,
                grant_problem=None,
            )
        )
    return tuple(out)


def _calls(
    cp: ControlPlane, suite: Suite, run_id: str, entries: list[LedgerEntry]
) -> tuple[ObservedCall, ...]:
    """Every call whose handler produced an output, from the run's ledger (calls an
    agent made on its own included), with the grant it started under."""
    by_id = {e.id: e for e in entries}
    out: list[ObservedCall] = []
    for entry in entries:
        if entry.kind != "tool_output":
            continue
        call_entry = by_id.get(str(entry.metadata.get("call_ledger_id", "")))
        if call_entry is None:
            continue
        body = _json(call_entry.text)
        tool, version = str(body.get("tool", "")), body.get("version")
        args = _args(body)
        call_id = str(call_entry.metadata.get("call_id", ""))
        sha = call_entry.metadata.get("args_sha256")
        grant = cp.grants.used_for(run_id, call_id)
        out.append(
            ObservedCall(
                call_id=call_id,
                tool=tool,
                version=version if isinstance(version, str) else None,
                args=args,
                args_sha256=sha if isinstance(sha, str) else None,
                ledger_id=entry.id,
                irreversible=_irreversible(cp, suite, tool, version),
                grant_id=grant.id if grant is not None else None,
                grant_problem=_grant_problem(grant, run_id, call_id, tool, version, sha),
            )
        )
    return tuple(out)


def _irreversible(cp: ControlPlane, suite: Suite, tool: str, version: object) -> bool:
    if tool in suite.irreversible_tools:
        return True
    try:
        spec = cp.registry.get(tool, version if isinstance(version, str) else None)
    except AssayError:
        return False
    return spec.side_effect == "irreversible"


def _grant_problem(
    grant: Grant | None, run_id: str, call_id: str, tool: str, version: object, sha: object
) -> str | None:
    if grant is None:
        return "no grant"
    wrong = [
        name
        for name, have, want in (
            ("run", grant.run_id, run_id),
            ("call", grant.call_id, call_id),
            ("tool", grant.tool, tool),
            ("version", grant.version, version),
            ("arguments", grant.args_sha256, sha),
        )
        if have != want
    ]
    return f"grant {grant.id} is for another {', '.join(wrong)}" if wrong else None


def _requested(pauses: list[RunResult], entries: list[LedgerEntry]) -> tuple[RequestedGrant, ...]:
    found: dict[str, RequestedGrant] = {}
    for pause in pauses:
        for pending in pause.pending_grants:
            key = f"intent:{pending.intent_id}"
            found.setdefault(
                key,
                RequestedGrant(
                    key=key,
                    tool=pending.tool,
                    version=pending.version,
                    args=dict(pending.args),
                    via="reviewer",
                ),
            )
    for entry in entries:
        if entry.kind != "grant" or not entry.source.startswith("grant:policy:"):
            continue
        body = _json(entry.text)
        key = f"call:{body.get('call_id')}"
        version = body.get("version")
        found.setdefault(
            key,
            RequestedGrant(
                key=key,
                tool=str(body.get("tool", "")),
                version=version if isinstance(version, str) else None,
                args=_args(body),
                via=entry.source.removeprefix("grant:"),
            ),
        )
    return tuple(found.values())


def _json(text: str) -> Mapping[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _args(body: Mapping[str, Any]) -> dict[str, Any]:
    args = body.get("args")
    return dict(cast(dict[str, Any], args)) if isinstance(args, dict) else {}
