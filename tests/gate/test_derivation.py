"""Derivations at the gate, on each storage engine: each way one cannot be evaluated
is refused as ``bad_derivation`` at the derivation's path, naming why; one that
evaluates passes, whether or not its value is its stated result (that is the
verifier's)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from assay import ControlPlane
from assay.gate import GATE_ERROR_CODES, GateDecision

INCIDENT = json.dumps(
    {
        "incident": "INC-2291",
        "outage": {
            "started_at": "2025-04-13T06:12:00Z",
            "ended_at": "2025-04-13T06:49:00Z",
            "sites": 3,
            "paged": True,
        },
        "lines": [{"status": "closed"}, {"status": "open"}, {"status": "closed"}],
    }
)
POINTERS = ["/outage/started_at", "/outage/ended_at", "/outage/sites", "/lines", "/outage/paged"]


def _decide(plane: ControlPlane, text: str, derivation: dict[str, str]) -> GateDecision:
    run = plane.ledger.start_run()
    entry = plane.ledger.append(run, kind="tool_output", source="incidents", content=INCIDENT)
    proposition: dict[str, Any] = {
        "id": "p1",
        "text": text,
        "cites": [{"ledger_id": entry.id, "pointer": p} for p in POINTERS],
        "derivation": derivation,
    }
    handover = {
        "run_id": run,
        "from_agent": "oncall",
        "status": "ok",
        "claims": [
            {
                "id": "c1",
                "type": "Assertion",
                "text": text,
                "confidence": 0.9,
                "propositions": [proposition],
            }
        ],
    }
    return plane.gate.check(run, handover)


@pytest.mark.parametrize(
    ("expr", "why"),
    [
        ("elapsed($0, $1", "does not parse"),
        ("elapsed($0, $9)", "$9 names no citation (the proposition has 5)"),
        ("count($2)", "count() takes a cited array"),
        ("elapsed($2, $1)", "elapsed() takes two dates"),
        ("$4 + 1", "true/false field"),
        ("__import__('os').system('true')", "is not a function of the language"),
        ("open('/etc/passwd')", "'open' is not a function of the language"),
        ("$0.year", "attribute access"),
    ],
)
def test_a_derivation_that_cannot_be_evaluated_is_refused_at_its_path(
    plane: ControlPlane, expr: str, why: str
) -> None:
    decision = _decide(
        plane, "The INC-2291 outage lasted 37 minutes.", {"expr": expr, "result": "37 minutes"}
    )
    assert not decision.accepted
    assert [e.code for e in decision.errors] == ["bad_derivation"]
    [error] = decision.errors
    assert error.path == "$.claims[0].propositions[0].derivation"
    assert why in error.message


def test_a_result_the_proposition_does_not_state_is_refused(plane: ControlPlane) -> None:
    decision = _decide(
        plane,
        "The INC-2291 outage lasted 47 minutes.",
        {"expr": "elapsed($0, $1)", "result": "37 minutes"},
    )
    [error] = [e for e in decision.errors if e.code == "bad_derivation"]
    assert error.path == "$.claims[0].propositions[0].derivation"
    assert "not a value the proposition states" in error.message


@pytest.mark.parametrize(
    ("text", "derivation"),
    [
        ("The INC-2291 outage lasted 37 minutes.", ("elapsed($0, $1)", "37 minutes")),
        ("The INC-2291 outage lasted 0.6167 h.", ("elapsed($0, $1)", "0.6167 h")),
        ("Two of the INC-2291 lines are closed.", ('count($3, status == "closed")', "two")),
    ],
)
def test_a_derivation_that_evaluates_passes_whatever_its_value(
    plane: ControlPlane, text: str, derivation: tuple[str, str]
) -> None:
    decision = _decide(plane, text, {"expr": derivation[0], "result": derivation[1]})
    assert decision.accepted, decision.errors


def test_a_wrong_result_is_not_a_bad_derivation(plane: ControlPlane) -> None:
    """A miscalculation is the verifier's to answer, with the right value (the gate's
    identifier check refuses the value itself where its arithmetic reads it)."""
    decision = _decide(
        plane,
        "The INC-2291 outage lasted 47 minutes.",
        {"expr": "elapsed($0, $1)", "result": "47 minutes"},
    )
    assert "bad_derivation" not in decision.codes


def test_bad_derivation_is_a_built_in_code() -> None:
    assert "bad_derivation" in GATE_ERROR_CODES


def test_a_derivation_over_a_fabricated_citation_is_refused_once(plane: ControlPlane) -> None:
    run = plane.ledger.start_run()
    entry = plane.ledger.append(run, kind="tool_output", source="incidents", content=INCIDENT)
    text = "The INC-2291 outage lasted 37 minutes."
    handover = {
        "run_id": run,
        "from_agent": "oncall",
        "status": "ok",
        "claims": [
            {
                "id": "c1",
                "type": "Assertion",
                "text": text,
                "confidence": 0.9,
                "propositions": [
                    {
                        "id": "p1",
                        "text": text,
                        "cites": [
                            {"ledger_id": entry.id, "pointer": "/outage/started_at"},
                            {"ledger_id": entry.id, "pointer": "/outage/resolved_at"},
                        ],
                        "derivation": {"expr": "elapsed($0, $1)", "result": "37 minutes"},
                    }
                ],
            }
        ],
    }
    assert plane.gate.check(run, handover).codes == {"fabricated_citation"}


SHIPMENT = json.dumps(
    {
        "shipment": "SHP-4471",
        "ship_date": "2025-07-02",
        "transit": "9 days",
        "parcels": [
            {"status": "delivered", "kg": 4.2},
            {"status": "held", "kg": 11.0},
            {"status": "delivered", "kg": 2.5},
        ],
    }
)
SHIPMENT_POINTERS = ["/ship_date", "/transit", "/parcels"]


def _shipment_decision(plane: ControlPlane, text: str, expr: str, result: str) -> GateDecision:
    run = plane.ledger.start_run()
    entry = plane.ledger.append(run, kind="tool_output", source="shipments", content=SHIPMENT)
    proposition: dict[str, Any] = {
        "id": "p1",
        "text": text,
        "cites": [{"ledger_id": entry.id, "pointer": p} for p in SHIPMENT_POINTERS],
        "derivation": {"expr": expr, "result": result},
    }
    claim = {"id": "c1", "type": "Assertion", "text": text, "confidence": 0.9}
    handover = {
        "run_id": run,
        "from_agent": "logistics",
        "status": "ok",
        "claims": [{**claim, "propositions": [proposition]}],
    }
    return plane.gate.check(run, handover)


@pytest.mark.parametrize(
    ("text", "expr", "result"),
    [
        # A share of a count under a condition: no arithmetic of the gate reads it.
        (
            "67% of the SHP-4471 parcels were delivered.",
            'percent(count($2, status == "delivered"), count($2))',
            "67%",
        ),
        # A date plus a duration the record writes as text: days() converts it.
        ("Shipment SHP-4471 is due on 11 July 2025.", "$0 + days($1)", "11 July 2025"),
        ("Shipment SHP-4471 is due on 2025-07-11.", "$0 + $1", "2025-07-11"),
    ],
)
def test_a_value_an_evaluating_derivation_states_is_not_refused_as_unwritten(
    plane: ControlPlane, text: str, expr: str, result: str
) -> None:
    decision = _shipment_decision(plane, text, expr, result)
    assert decision.accepted, decision.errors


@pytest.mark.parametrize(
    ("text", "expr", "result"),
    [
        # The derivation evaluates to another value: the stated one is still unwritten.
        (
            "75% of the SHP-4471 parcels were delivered.",
            'percent(count($2, status == "delivered"), count($2))',
            "75%",
        ),
        ("Shipment SHP-4471 is due on 12 July 2025.", "$0 + days($1)", "12 July 2025"),
    ],
)
def test_a_value_a_wrong_derivation_states_is_still_refused(
    plane: ControlPlane, text: str, expr: str, result: str
) -> None:
    decision = _shipment_decision(plane, text, expr, result)
    assert "unverified_value" in decision.codes, decision.errors


def test_only_the_derived_value_is_accepted(plane: ControlPlane) -> None:
    """Another value of the proposition must still be written in the evidence."""
    decision = _shipment_decision(
        plane,
        "67% of the SHP-4471 parcels, 18.5 kg, were delivered.",
        'percent(count($2, status == "delivered"), count($2))',
        "67%",
    )
    assert "unverified_value" in decision.codes
    assert all("67%" not in e.message for e in decision.errors)
