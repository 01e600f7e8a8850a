"""A wrong amount, date or quantity is ``unverified_value``, an identifier from nowhere
``unverified_identifier``; each problem is reported once, on the proposition it
belongs to, and a run's refused propositions carry their own reasons only. On a real
SQLite file and a real PostgreSQL server."""

from __future__ import annotations

import json
from typing import Any

from assay import ControlPlane, GateDecision
from assay.fence import FenceState, build_result

ORDER = {"order": "D-4410", "placed": "2025-03-02", "total": 29.97, "currency": "USD"}
DATE = "Order D-4410 was placed on 2025-03-05."
AMOUNT = "The total of order D-4410 was $31.00."


def _check(plane: ControlPlane, claims: list[dict[str, Any]]) -> tuple[str, GateDecision, Any]:
    run = plane.ledger.start_run()
    entry = plane.ledger.append(
        run, kind="tool_output", source="lookup_order@1.0.0", content=json.dumps(ORDER)
    )
    for claim in claims:
        for prop in claim["propositions"]:
            prop["ledger_ids"] = [entry.id]
    handover = {"run_id": run, "from_agent": "desk", "status": "ok", "claims": claims}
    return run, plane.gate.check(run, handover), handover


def _claim(text: str, *props: str) -> dict[str, Any]:
    propositions = [{"id": f"p{i}", "text": t} for i, t in enumerate(props or (text,), 1)]
    return {
        "id": "c1",
        "type": "Assertion",
        "text": text,
        "confidence": 0.9,
        "propositions": propositions,
    }


def test_dates_and_amounts_are_values_and_ids_are_identifiers(plane: ControlPlane) -> None:
    _, decision, _ = _check(plane, [_claim("Order D-4410 went to ticket OPS-7781.")])
    _, values, _ = _check(plane, [_claim(AMOUNT)])

    assert decision.codes == {"unverified_identifier"}
    assert [(e.code, e.message) for e in values.errors] == [
        ("unverified_value", "amount '$31.00' does not occur in the cited evidence")
    ]


def test_a_claim_whose_text_is_its_proposition_is_reported_once(plane: ControlPlane) -> None:
    _, decision, _ = _check(plane, [_claim(AMOUNT)])

    assert [e.path for e in decision.errors] == ["$.claims[0].propositions[0].text"]


def test_each_problem_is_on_its_own_proposition(plane: ControlPlane) -> None:
    both = f"{DATE[:-1]}, and its total was $31.00."
    run, decision, handover = _check(plane, [_claim(both, DATE, AMOUNT)])

    assert sorted((e.path, e.message) for e in decision.errors) == [
        (
            "$.claims[0].propositions[0].text",
            "date '2025-03-05' does not occur in the cited evidence",
        ),
        (
            "$.claims[0].propositions[1].text",
            "amount '$31.00' does not occur in the cited evidence",
        ),
    ]
    errors = [{"code": e.code, "path": e.path, "message": e.message} for e in decision.errors]
    state: FenceState = {"run_id": run, "handover": handover, "gate_errors": errors}  # type: ignore[typeddict-item]
    refused = {u.proposition: u.missing_evidence for u in build_result(state).unsupported}
    assert refused == {
        DATE: "unverified_value: date '2025-03-05' does not occur in the cited evidence",
        AMOUNT: "unverified_value: amount '$31.00' does not occur in the cited evidence",
    }


def test_a_value_only_the_claims_text_states_is_reported_there(plane: ControlPlane) -> None:
    _, decision, _ = _check(plane, [_claim(AMOUNT, "Order D-4410 exists.")])

    assert [(e.code, e.path) for e in decision.errors] == [("unverified_value", "$.claims[0].text")]
