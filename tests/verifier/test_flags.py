"""True/false fields of a JSON tool output: a claim that states the field with the
other value is the opposite; a one-clause claim that states just the field, with
its value, is entailed by it; both without the model."""

from __future__ import annotations

import json
from collections.abc import Mapping

import pytest

from assay import ControlPlane
from assay.grounding import view_of
from assay.verifier import LexicalNLI
from assay.verifier._flags import flag_conflict, flag_support, state_conflict
from tests.verifier.test_ledger_verifier import handover

BOOKING = {
    "booking_ref": "QX7-22K",
    "passenger": "Maren Solvik",
    "fare": {"class": "economy light", "refundable": False, "changeable": True},
    "bags": {"cabin": 1, "checked": 0},
}
ACCOUNT = {
    "account": "ACC-55102",
    "plan": "team",
    "is_active": True,
    "auto_renew": False,
    "seats": 12,
    "seats_used": 9,
}
EMPLOYEE = {
    "employee_id": "E-20417",
    "name": "Lucia Brandt",
    "probation_complete": False,
    "leave": {"annual_days": 25, "carry_over_allowed": False},
}
TICKET = {"key": "OPS-2281", "assignee": "mtorres", "blocked": False}
ORDER = {
    "order": "SO-4471",
    "lines": [
        {"sku": "BT-105", "paid": True},
        {"sku": "BT-220", "paid": False},
    ],
}


def _view(record: Mapping[str, object]) -> str:
    return view_of(json.dumps(record)).text


@pytest.mark.parametrize(
    ("record", "claim", "line"),
    [
        (BOOKING, "Maren Solvik's ticket is refundable.", "fare.refundable: false"),
        (BOOKING, "The booking cannot be changed.", "fare.changeable: true"),
        (BOOKING, "The QX7-22K fare can be refunded.", "fare.refundable: false"),
        (ACCOUNT, "The team plan on ACC-55102 is inactive.", "is_active: true"),
        (ACCOUNT, "ACC-55102 is not active.", "is_active: true"),
        (ACCOUNT, "The plan renews automatically.", "auto_renew: false"),
        # A permission is also stated by a modal.
        (
            EMPLOYEE,
            "Lucia Brandt may carry over unused leave days.",
            "leave.carry_over_allowed: false",
        ),
    ],
)
def test_a_field_stated_with_the_other_value_is_the_opposite(
    record: dict[str, object], claim: str, line: str
) -> None:
    view = _view(record)
    span = flag_conflict(view, claim)
    assert span is not None
    assert view[span[0] : span[1]] == line


@pytest.mark.parametrize(
    ("record", "claim"),
    [
        # The same value, in other words.
        (BOOKING, "The QX7-22K fare cannot be refunded."),
        (BOOKING, "The fare is non-refundable."),
        (ACCOUNT, "ACC-55102 will not renew automatically."),
        # A noun of the same stem does not state an "-able" field.
        (BOOKING, "A refund was issued for QX7-22K."),
        # A field written with two values: which line is meant is not for this check.
        (ORDER, "Order SO-4471 is paid."),
        (ORDER, "Order SO-4471 is not paid."),
        # A negation about another word.
        (ACCOUNT, "ACC-55102 is active and has no unpaid invoices."),
    ],
)
def test_the_same_value_or_an_unnamed_field_is_no_opposite(
    record: dict[str, object], claim: str
) -> None:
    assert flag_conflict(_view(record), claim) is None


@pytest.mark.parametrize(
    ("record", "claim", "line"),
    [
        (BOOKING, "The QX7-22K fare cannot be refunded.", "fare.refundable: false"),
        (BOOKING, "Maren Solvik's fare is not refundable.", "fare.refundable: false"),
        (BOOKING, "The fare can be changed.", "fare.changeable: true"),
        (ACCOUNT, "Account ACC-55102 will not renew automatically.", "auto_renew: false"),
        (ACCOUNT, "The team plan is active.", "is_active: true"),
        (
            EMPLOYEE,
            "Lucia Brandt has not yet completed her probation.",
            "probation_complete: false",
        ),
        (EMPLOYEE, "Lucia Brandt cannot carry over leave.", "leave.carry_over_allowed: false"),
    ],
)
def test_a_claim_that_states_just_the_field_is_entailed_by_it(
    record: dict[str, object], claim: str, line: str
) -> None:
    view = _view(record)
    span = flag_support(view, claim)
    assert span is not None
    assert view[span[0] : span[1]] == line


@pytest.mark.parametrize(
    ("record", "claim"),
    [
        # A word the record never writes: a reason, a date, another party.
        (BOOKING, "The fare cannot be refunded because it was booked late."),
        (BOOKING, "The fare cannot be refunded under the airline's new policy."),
        # Numbers bind to fields, which the record's words alone do not show.
        (ACCOUNT, "The team plan is active, with 12 of its 9 seats in use."),
        # Two statements: the other is the model's to read.
        (ACCOUNT, "The plan is active. It renews on 1 March 2025."),
        # The other value.
        (ACCOUNT, "The team plan is not active."),
    ],
)
def test_a_claim_that_says_more_than_the_field_is_left_to_the_model(
    record: dict[str, object], claim: str
) -> None:
    assert flag_support(_view(record), claim) is None


def test_a_field_is_read_before_a_line_that_only_names_the_record(db_url: str) -> None:
    """ "OPS-2281 is not blocked" shares its words with ``key: OPS-2281`` alone; that
    line is no statement for its "not" to deny."""
    with ControlPlane.open(db_url, nli=LexicalNLI()) as cp:
        run = cp.ledger.start_run()
        entry = cp.ledger.append(
            run, kind="tool_output", source="tool:tickets", content=json.dumps(TICKET)
        )
        verified = cp.verifier.verify(run, handover(run, ("OPS-2281 is not blocked.", [entry.id])))
        (verdict,) = verified.verdicts
        assert verdict.verdict.label == "entailment"
        assert "blocked: false" in verdict.reason


def test_the_verifier_reads_a_field_without_the_model(db_url: str) -> None:
    with ControlPlane.open(db_url, nli=LexicalNLI()) as cp:
        run = cp.ledger.start_run()
        entry = cp.ledger.append(
            run, kind="tool_output", source="tool:booking", content=json.dumps(BOOKING)
        )
        verified = cp.verifier.verify(
            run,
            handover(
                run,
                ("The QX7-22K fare cannot be refunded.", [entry.id]),
                ("Maren Solvik's ticket is refundable.", [entry.id]),
            ),
        )
        supported, refuted = verified.verdicts
        assert supported.verdict.label == "entailment"
        assert "fare.refundable: false" in supported.reason
        assert refuted.verdict.label == "contradiction"
        assert "says the opposite" in refuted.reason
        for verdict in (supported, refuted):
            span = verdict.verdict.span
            assert span is not None
            # The stored bytes of the field's value; the reason names the field.
            assert entry.text[span[0] : span[1]] == "false"
            assert entry.text[: span[0]].endswith('"refundable": ')


CLAIM_FILE = {
    "claim_id": "WC-88412",
    "adjuster": "Rita Okoro",
    "status": "approved",
    "payments": [{"id": "PAY-1", "status": "failed"}],
}


@pytest.mark.parametrize(
    ("claim", "line"),
    [
        ("Claim WC-88412 was rejected.", "status: approved"),
        ("The claim was denied by Rita Okoro.", "status: approved"),
        ("Payment PAY-1 succeeded.", "payments[0].status: failed"),
    ],
)
def test_an_outcome_field_stated_as_its_opposite_is_the_opposite(claim: str, line: str) -> None:
    view = _view(CLAIM_FILE)
    span = state_conflict(view, claim)
    assert span is not None
    assert view[span[0] : span[1]] == line


@pytest.mark.parametrize(
    "claim",
    [
        "Claim WC-88412 was approved.",
        # Both outcomes, each about its own record.
        "Claim WC-88412 was approved but payment PAY-1 failed.",
        # Not about the record.
        "The weather forecast was rejected.",
    ],
)
def test_an_outcome_as_recorded_or_about_something_else_decides_nothing(claim: str) -> None:
    assert state_conflict(_view(CLAIM_FILE), claim) is None


def test_the_opposite_is_pointed_at_in_the_record_the_claim_names() -> None:
    records = [{"id": f"R-{n}", "paid": True} for n in range(40)]
    view = _view({"invoices": records})
    span = flag_conflict(view, "Invoice R-17 is not paid.")
    assert span is not None
    assert view[span[0] : span[1]] == "invoices[17].paid: true"
