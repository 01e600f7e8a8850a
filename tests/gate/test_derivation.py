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
