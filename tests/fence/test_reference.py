"""The invoice audit, an application on the public API, end to end through the
generic runner, on SQLite and on PostgreSQL."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from assay import AlreadyDecided, ControlPlane, UsageError
from assay.apps import reference
from assay.apps.reference import INJECTIONS
from assay.fence import FencedGraph, fence
from tests.fence.conftest import case

EXPECTED_CLAIMS = {
    "compliant": {"invoice"}
    | {f"line{n}.{k}" for n in (7, 8, 9) for k in ("billed", "hours", "cap", "overage")},
    "small_overage": {"invoice"}
    | {f"line{n}.{k}" for n in (31, 32) for k in ("billed", "hours", "cap", "overage")},
    "over_cap": {"invoice"}
    | {f"line{n}.{k}" for n in (12, 13, 14) for k in ("billed", "hours", "cap", "overage")},
}


def _claim_ids(result_claims: tuple[object, ...]) -> set[str]:
    return {c.id for c in result_claims}  # type: ignore[attr-defined]


def test_compliant_invoice_is_answered_with_every_claim(
    audit: ControlPlane, invoice: FencedGraph, outbox: Path
) -> None:
    result = audit.run(invoice, case("compliant"))
    assert result.status == "answered"
    assert _claim_ids(result.claims) == EXPECTED_CLAIMS["compliant"]
    assert all(
        p.entailment and p.entailment.label == "entailment"
        for c in result.claims
        for p in c.propositions
    )
    assert result.actions == () and not outbox.exists()
    assert "No line is shown to be billed above" in (result.answer or "")


def test_small_overage_is_flagged_by_policy_without_pausing(
    audit: ControlPlane, invoice: FencedGraph, outbox: Path
) -> None:
    result = audit.run(invoice, case("small_overage"))
    assert result.status == "answered"
    assert _claim_ids(result.claims) == EXPECTED_CLAIMS["small_overage"]
    [action] = result.actions
    assert (action.status, action.approver) == ("executed", "policy:small-overages")
    assert action.args["amount_over_cap"] == 80.0
    assert [r["line"] for r in map(json.loads, outbox.read_text().splitlines())] == [32]


def test_over_cap_pauses_for_a_human_grant_then_flags_once(
    audit: ControlPlane, invoice: FencedGraph, outbox: Path
) -> None:
    paused = audit.run(invoice, case("over_cap"))
    # The answer says what is verified while the call waits.
    assert paused.status == "awaiting_grant" and paused.answer is not None
    assert paused.answer.startswith("- Invoice INV-4421")
    [pending] = paused.pending_grants
    assert pending.tool == "flag_invoice_line"
    assert pending.args == {
        "invoice": "INV-4421",
        "line": 14,
        "amount_over_cap": 875.0,
        "currency": "EUR",
        "reason": "senior associate billed at EUR 450/h against a cap of EUR 380/h",
    }
    rests_on = {c["id"]: c for c in pending.claims}
    assert set(rests_on) == {"invoice", "line14.billed", "line14.cap", "line14.overage"}
    cap = rests_on["line14.cap"]["propositions"][0]
    assert cap["verdict"]["label"] == "entailment"
    assert "capped at EUR 380 per hour" in cap["evidence"]["text"]
    assert not outbox.exists()

    done = audit.resume(invoice, paused.thread_id, {"approve": True, "approver": "alice"})
    assert done.status == "answered"
    assert _claim_ids(done.claims) == EXPECTED_CLAIMS["over_cap"]
    [action] = done.actions
    assert (action.status, action.approver) == ("executed", "alice")
    with pytest.raises(AlreadyDecided, match="approved by 'alice'"):
        audit.resume(invoice, paused.thread_id, {"approve": True, "approver": "alice"})
    assert audit.status(paused.thread_id).result == done
    assert len(outbox.read_text().splitlines()) == 1
    grants = audit.ledger.entries(done.run_id, kinds=["grant"])
    assert len(grants) == 1 and '"approver":"alice"' in grants[0].text


def test_a_denied_grant_cancels_the_action_and_records_why(
    audit: ControlPlane, invoice: FencedGraph, outbox: Path
) -> None:
    paused = audit.run(invoice, case("over_cap"))
    done = audit.resume(
        invoice,
        paused.thread_id,
        {"approve": False, "approver": "bob", "reason": "client consented"},
    )
    [action] = done.actions
    assert (action.status, action.approver, action.reason) == ("denied", "bob", "client consented")
    assert not outbox.exists()
    [denial] = audit.ledger.entries(done.run_id, kinds=["grant"])
    assert '"decision":"denied"' in denial.text and "client consented" in denial.text


def test_a_rate_the_letter_does_not_cover_ends_in_abstention(
    audit: ControlPlane, invoice: FencedGraph, outbox: Path
) -> None:
    result = audit.run(invoice, case("uncovered_rate"))
    assert result.status == "abstained"
    assert "line22.cap" not in _claim_ids(result.claims)
    assert "Line 22's rate of EUR 190/h" in (result.answer or "")
    assert "Not established" in (result.answer or "")
    assert result.actions == () and not outbox.exists()


CAUGHT_BY = {
    "confabulation": "unverified_identifier",
    "borrowed_identifier": "provenance_mismatch",
    "misread_error": "uncitable_entry",
    "phantom_call": "unknown_ledger_id",
    "plan_call_drift": "invalid_action_args",
    "narrative": "reworded_unsupported",
    "mirror_drift": "reworded_unsupported",
    "authority_laundering": "uncitable_entry",
    "invented_argument": "ungrounded_argument",
}


@pytest.mark.parametrize("inject", INJECTIONS)
def test_every_injected_hallucination_is_stopped(
    audit: ControlPlane, invoice: FencedGraph, outbox: Path, inject: str
) -> None:
    result = audit.run(invoice, case("over_cap", inject=inject, seed=7))
    assert result.status == "abstained"
    assert result.actions == () and not outbox.exists()
    assert not any(c.id.startswith("inj.") for c in result.claims)
    codes = {e["code"] for e in result.errors}
    assert CAUGHT_BY[inject] in codes
    if inject in ("narrative", "mirror_drift"):
        recorded = audit.verifier.unsupported(result.run_id)
        assert any(u.claim_id.startswith("inj.") for u in recorded)
        expected = "missing_evidence" if inject == "narrative" else "contradiction"
        assert {u.label for u in recorded if u.claim_id.startswith("inj.")} == {expected}


def test_application_mistakes_are_usage_errors(
    audit: ControlPlane,
    invoice: FencedGraph,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("ASSAY_MODEL", raising=False)
    compliant = case("compliant")
    with pytest.raises(UsageError, match="inject"):
        audit.run(invoice, {**compliant, "inject": "gaslighting"})
    with pytest.raises(UsageError, match="no such folder"):
        audit.run(invoice, {**compliant, "documents": str(tmp_path / "missing")})
    with pytest.raises(UsageError, match="needs documents"):
        audit.run(invoice, {"task": compliant["task"]})
    with pytest.raises(UsageError, match="'agent'"):
        audit.run(invoice, {**compliant, "agent": "llm"})
    with pytest.raises(UsageError, match="agents"):
        reference.app_for(audit).graph(audit, agents="gpt")
    with pytest.raises(UsageError, match="ASSAY_MODEL"):
        reference.llm_graph(audit)
    monkeypatch.setenv("ASSAY_MODEL", "scripted:model")
    with pytest.raises(UsageError, match="rule-based"):
        reference.prepare_input({**compliant, "inject": "narrative"}, agents="llm")
    with pytest.raises(UsageError, match="non-empty"):
        audit.run(invoice, {**compliant, "task": "  "})
    assert audit.ledger.runs() == [] and audit.paused() == []
    with pytest.raises(UsageError, match="no run on thread"):
        audit.resume(invoice, "thr_missing", {"approve": True, "approver": "a"})
    with pytest.raises(UsageError, match="approver"):
        audit.resume(invoice, "thr_missing", {"approve": True})
    first = audit.run(invoice, compliant, thread_id="thr_fixed")
    with pytest.raises(UsageError, match="already holds a run"):
        audit.run(invoice, compliant, thread_id="thr_fixed")
    assert first.status == "answered"


def test_the_audit_leaves_the_control_planes_policy_alone(
    audit: ControlPlane, invoice: FencedGraph, outbox: Path
) -> None:
    """Its auto-approval rules come with its graph: the shared grants hold none, and
    another graph of the same agents and tools, fenced without them, asks a person."""
    agents = reference.app_for(audit).agent(audit)
    plain = fence(
        agents, control_plane=audit, name="audit-without-policy", prepare=reference.prepare_input
    )
    # (The plain graph first: once a line is flagged, a flag of it in any run is
    # refused as a duplicate before any grant is sought.)
    paused = audit.run(plain, case("small_overage"))
    assert paused.status == "awaiting_grant" and paused.actions == ()
    assert not outbox.exists()
    flagged = audit.run(invoice, case("small_overage"))
    assert flagged.actions[0].approver == "policy:small-overages"
    assert audit.grants.policy.rules == []
    assert len(outbox.read_text().splitlines()) == 1


def test_documents_as_a_mapping_and_async_twins(
    audit: ControlPlane, invoice: FencedGraph, outbox: Path
) -> None:
    folder = reference.cases()["over_cap"]
    documents = {p.name: p.read_text() for p in folder.glob("*.md")}
    task = case("over_cap")["task"]

    async def scenario() -> tuple[str, str]:
        paused = await audit.arun(invoice, {"task": task, "documents": documents})
        done = await audit.aresume(
            invoice, paused.thread_id, {"approve": True, "approver": "carol"}
        )
        return paused.status, done.status

    assert asyncio.run(scenario()) == ("awaiting_grant", "answered")
    assert len(outbox.read_text().splitlines()) == 1
