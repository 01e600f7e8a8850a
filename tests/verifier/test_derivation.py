"""Derivations in the verifier, with the shipped model: a derivation that holds is
recorded in the verdict's computations and grounds its value, one that does not is a
contradiction naming the right value, and right arithmetic over the wrong fields
passes nothing by itself."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from assay import ControlPlane, Verifier
from assay.contract import Proposition
from assay.verifier.checks import PropositionContext, RunEvidence

INCIDENT = json.dumps(
    {
        "incident": "INC-2291",
        "outage": {"started_at": "2025-04-13T06:12:00Z", "ended_at": "2025-04-13T06:49:00Z"},
        "maintenance": {"started_at": "2025-04-13T01:00:00Z", "ended_at": "2025-04-13T03:30:00Z"},
        "lines": [{"status": "closed"}, {"status": "open"}, {"status": "closed"}],
    },
    indent=2,
)
OUTAGE = ["/outage/started_at", "/outage/ended_at"]


@pytest.fixture
def cp(db_url: str, verifier: Verifier) -> Iterator[ControlPlane]:
    with ControlPlane.open(db_url, nli=verifier) as plane:
        yield plane


def _proposition(entry: str, text: str, pointers: list[str], derivation: Any) -> dict[str, Any]:
    proposition: dict[str, Any] = {
        "id": "c1.p",
        "text": text,
        "cites": [{"ledger_id": entry, "pointer": p} for p in pointers],
    }
    if derivation is not None:
        proposition["derivation"] = {"expr": derivation[0], "result": derivation[1]}
    return proposition


def _verify(
    cp: ControlPlane, text: str, pointers: list[str], derivation: tuple[str, str] | None
) -> tuple[Any, dict[str, Any], str]:
    run = cp.ledger.start_run()
    entry = cp.ledger.append(run, kind="tool_output", source="tool:incidents", content=INCIDENT)
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
                "propositions": [_proposition(entry.id, text, pointers, derivation)],
            }
        ],
    }
    verified = cp.verifier.verify(run, handover)
    body = json.loads(cp.ledger.get(verified.verdicts[0].ledger_id).text)
    return verified.verdicts[0].verdict, body, entry.id


def test_a_wrong_derivation_is_a_contradiction_naming_the_right_value(cp: ControlPlane) -> None:
    verdict, body, entry = _verify(
        cp, "The INC-2291 outage lasted 47 minutes.", OUTAGE, ("elapsed($0, $1)", "47 minutes")
    )
    assert (verdict.label, verdict.check) == ("contradiction", "derivation")
    assert verdict.ledger_id == entry
    assert (
        "the time between 2025-04-13 06:12 UTC and 2025-04-13 06:49 UTC is 37 minutes"
        in (body["reason"])
    )
    assert body["reason"].endswith("not 47 minutes")
    [record] = body["computations"]
    assert (record["cue"], record["result"], record["stated"]) == (
        "derivation",
        "37 minutes",
        "47 minutes",
    )
    assert [o["text"] for o in record["operands"]] == [
        "/outage/started_at: 2025-04-13T06:12:00Z",
        "/outage/ended_at: 2025-04-13T06:49:00Z",
    ]
    stored = cp.ledger.get(entry).text
    start, end = record["operands"][0]["span"]
    assert stored[start:end] == '"2025-04-13T06:12:00Z"'


def test_a_right_derivation_is_recorded_and_left_to_the_model(cp: ControlPlane) -> None:
    verdict, body, _ = _verify(
        cp, "The INC-2291 outage lasted 37 minutes.", OUTAGE, ("elapsed($0, $1)", "37 minutes")
    )
    assert verdict.check not in ("derivation", "unstated_values", "miscalculation")
    assert verdict.label != "contradiction"
    assert body["computations"][0]["cue"] == "derivation"
    assert body["computations"][0]["result"] == "37 minutes"


def test_right_arithmetic_over_the_wrong_fields_passes_nothing_by_itself(
    cp: ControlPlane,
) -> None:
    """The maintenance window lasted 2.5 hours; the claim says the outage did. The
    derivation holds, so it is recorded, and it entails nothing: what the proposition
    says of the value is left to the later checks and the model, which refuse it as
    they do without the derivation."""
    text = "The INC-2291 outage lasted 2.5 hours."
    window = ["/maintenance/started_at", "/maintenance/ended_at"]
    verdict, body, _ = _verify(cp, text, window, ("elapsed($0, $1)", "2.5 hours"))
    without, _, _ = _verify(cp, text, window, None)
    assert verdict.check not in ("derivation", "accounted")
    assert verdict.label != "entailment" and without.label != "entailment"
    assert body["computations"][0]["result"] == "2.5 hours"


def _context(cp: ControlPlane, text: str, derivation: tuple[str, str] | None) -> PropositionContext:
    run = cp.ledger.start_run()
    entry = cp.ledger.append(run, kind="tool_output", source="tool:incidents", content=INCIDENT)
    proposition = Proposition.model_validate(_proposition(entry.id, text, ["/lines"], derivation))
    return PropositionContext.build(run, proposition, RunEvidence(cp.ledger.evidence(run)))


def test_a_verified_derivation_grounds_a_value_no_other_reading_finds(cp: ControlPlane) -> None:
    text = "66.67% of the INC-2291 lines are closed."
    assert "66.67%" in _context(cp, text, None).grounded.gaps
    derived = _context(cp, text, ('percent(count($0, status == "closed"), count($0))', "66.67%"))
    assert derived.grounded.gaps == []
    assert derived.computations[0]["statement"].startswith(
        'percent(count($0, status == "closed"), count($0)) is 66.67%'
    )
    assert "is 66.67% ($0 = an array of 3 items)." in derived.final_readings[0].text


def test_a_wrong_derivation_grounds_nothing(cp: ControlPlane) -> None:
    text = "75% of the INC-2291 lines are closed."
    context = _context(cp, text, ('percent(count($0, status == "closed"), count($0))', "75%"))
    assert "75%" in context.grounded.gaps
    assert context.computations == ()
