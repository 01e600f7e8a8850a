"""The gate reads amounts, quantities and dates as values: an honest value written in
another form passes, a swapped number, a wrong unit, period, currency or date does
not, and a computed value passes only when the claim says it is computed and it is
exactly that computation over the cited evidence."""

from __future__ import annotations

import json
from typing import Any

import pytest

from assay import ControlPlane, GateDecision
from assay.grounding import Computation, Miscalculation, extract_identifiers, identifier_in_evidence
from assay.grounding._identifiers import computed_in, describe_computation, evidence

TIMESHEET = "Task 7: cable survey, 3.5 h at GBP 84/h, GBP 294.00."
BOOKING = json.dumps(
    {"booking": {"ref": "BK-5530", "nights": 3, "fee": {"amount": 12.5, "currency": "EUR"}}}
)


@pytest.mark.parametrize(
    ("claim", "evidence_text"),
    [
        ("The survey took 3.5 hours.", TIMESHEET),
        ("It was billed at £84 an hour.", TIMESHEET),
        ("Booking BK-5530 carries a €12.50 fee.", BOOKING),
        ("The ferry leaves on 14 August 2025.", json.dumps({"departs": "2025-08-14"})),
        ("It leaves at 5 p.m.", "DEP 17:00 local"),
        ("The backup took 2.5 s.", "backup finished in 2500 ms"),
        ("Bay 4 holds 1,870 crates.", "BAY  CRATES  TYPE\n4    1870    dry\n5    120     cold"),
        ("Shelf C holds 36 units of SKU PL-220.", "shelf C: PL-220 x 36"),
    ],
)
def test_a_value_in_another_written_form_is_found(claim: str, evidence_text: str) -> None:
    for ident in extract_identifiers(claim):
        assert identifier_in_evidence(ident, evidence_text), ident


@pytest.mark.parametrize(
    ("claim", "evidence_text"),
    [
        ("The survey took 5.3 hours.", TIMESHEET),  # a swapped number
        ("It was billed at £84 a minute.", TIMESHEET),  # per minute, not per hour
        ("It was billed at $84 an hour.", TIMESHEET),  # $ for £
        ("Booking BK-5530 carries a $12.50 fee.", BOOKING),  # no dollar stated
        ("The ferry leaves on 15 August 2025.", json.dumps({"departs": "2025-08-14"})),
        ("The ferry leaves on 08/07/2025.", json.dumps({"departs": "2025-07-08"})),
        ("Bay 4 holds 1,780 crates.", "BAY  CRATES  TYPE\n4    1870    dry\n5    120     cold"),
        ("Shelf C holds 63 units of SKU PL-220.", "shelf C: PL-220 x 36"),
        ("The array stores 4.5 MWh.", "capacity 4.5 kWh"),
        ("Rent is €950 a year.", json.dumps({"rent_monthly": 950, "currency": "EUR"})),
    ],
)
def test_a_wrong_value_is_not_found(claim: str, evidence_text: str) -> None:
    idents = extract_identifiers(claim)
    assert idents
    assert not all(identifier_in_evidence(i, evidence_text) for i in idents), idents


def test_identifiers_stay_exact() -> None:
    assert identifier_in_evidence("BK-5530", BOOKING)
    assert not identifier_in_evidence("BK-5503", BOOKING)


def _computed(claim: str, *texts: str) -> Computation | Miscalculation | None:
    prepared = [evidence(t) for t in texts]
    (ident,) = [i for i in extract_identifiers(claim) if i.kind in ("amount", "quantity")][-1:]
    return computed_in(ident, claim, prepared)


def test_a_computation_the_claim_states_is_accepted() -> None:
    stay = json.dumps({"nights": 3, "rate": {"amount": 80, "currency": "EUR", "period": "night"}})
    found = _computed("The three nights cost €240 in total.", stay)
    assert isinstance(found, Computation) and found.operation == "product"
    assert "240" in describe_computation(found)
    assert _computed("The three nights cost €240.", stay) is None  # no cue: not accepted


def test_a_wrong_computation_names_the_right_value() -> None:
    stock = "SITE  BIN  QTY\nLYS   B1   410\nLYS   B2   95\nGVA   A1   220"
    found = _computed("Counting both bins, site LYS holds 550 parts in total.", stock)
    assert isinstance(found, Miscalculation)
    assert found.expected.result == 505
    assert "505" in describe_computation(found)
    honest = _computed("Counting both bins, site LYS holds 505 parts in total.", stock)
    assert isinstance(honest, Computation)


def test_a_sum_without_a_cue_is_not_a_computation() -> None:
    stock = "SITE  BIN  QTY\nLYS   B1   410\nLYS   B2   95\nGVA   A1   220"
    assert _computed("Site LYS holds 505 parts.", stock) is None


def _handover(run: str, text: str, ledger_id: str) -> dict[str, Any]:
    return {
        "run_id": run,
        "from_agent": "writer",
        "status": "ok",
        "claims": [
            {
                "id": "c1",
                "type": "Assertion",
                "text": text,
                "confidence": 0.8,
                "propositions": [{"id": "p1", "text": text, "ledger_ids": [ledger_id]}],
            }
        ],
    }


def _gate(plane: ControlPlane, content: Any, text: str) -> GateDecision:
    content = content if isinstance(content, str) else json.dumps(content)
    run = plane.ledger.start_run()
    entry = plane.ledger.append(run, kind="tool_output", source="tool@1.0.0", content=content)
    return plane.gate.check(run, _handover(run, text, entry.id))


def test_the_gate_accepts_honest_rewrites_and_refuses_wrong_values(plane: ControlPlane) -> None:
    fee = {"booking": {"ref": "BK-5530", "fee": {"amount": 12.5, "currency": "EUR"}}}
    assert _gate(plane, fee, "Booking BK-5530 carries a €12.50 fee.").accepted
    assert _gate(plane, TIMESHEET, "The survey took 3.5 hours.").accepted
    assert _gate(plane, {"due": "2025-10-31"}, "It is due on 31 October 2025.").accepted
    refused = _gate(plane, TIMESHEET, "The survey took 3.5 days.")
    assert refused.codes == {"unverified_value"}
    assert _gate(plane, fee, "Booking BK-5530 carries a $12.50 fee.").codes == {"unverified_value"}
    counted = _gate(plane, "shelf C: PL-220 x 36", "Shelf C holds 63 units of PL-220.")
    assert counted.codes == {"unverified_value"}


def test_a_date_the_evidence_states_as_days_from_another_passes_the_gate() -> None:
    terms = "Invoice 2024-0917 issued 2024-11-18. Payment terms: 30 days from 2024-11-18."
    claim = "Invoice 2024-0917 is due on 18 December 2024."
    (date,) = [i for i in extract_identifiers(claim) if i.kind == "date"]
    assert identifier_in_evidence(date, terms)
    wrong = "Invoice 2024-0917 is due on 17 December 2024."
    (other,) = [i for i in extract_identifiers(wrong) if i.kind == "date"]
    assert not identifier_in_evidence(other, terms)
