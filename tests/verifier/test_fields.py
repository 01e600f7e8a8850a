"""Roles in a JSON record: a claim that writes one field's name with another field's
value after it ("merged by dvarga" where ``merged_by`` is ``lcho`` and ``author`` is
``dvarga``) binds the name to the wrong role, found without the model; and roles of
the parties an agreement introduces ("Brightwater Credit Union (lender)")."""

from __future__ import annotations

import json

import pytest

from assay import ControlPlane
from assay.grounding import view_of
from assay.verifier import LexicalNLI
from assay.verifier._fields import wrong_field, wrong_party
from tests.verifier.test_ledger_verifier import handover

PULL = {
    "number": 4412,
    "state": "merged",
    "merged_by": "lcho",
    "author": "dvarga",
    "labels": ["backend", "needs-docs"],
}
TRANSFER = {
    "id": "TRF-20931",
    "payer": "Halden Foods plc",
    "payee": "Orchard Print Ltd",
    "approver": "Dana Ruiz",
    "requested_by": "Tom Ek",
    "amount_eur": 373.2,
}
VIEW_PULL, VIEW_TRANSFER = view_of(json.dumps(PULL)).text, view_of(json.dumps(TRANSFER)).text


@pytest.mark.parametrize(
    ("view", "claim", "own", "given"),
    [
        (VIEW_PULL, "PR 4412 was merged by dvarga.", "lcho", "dvarga"),
        (VIEW_PULL, "PR 4412 was authored by lcho.", "dvarga", "lcho"),
        (VIEW_TRANSFER, "Transfer TRF-20931 was approved by Tom Ek.", "Dana Ruiz", "Tom Ek"),
        (VIEW_TRANSFER, "TRF-20931 was requested by Dana Ruiz.", "Tom Ek", "Dana Ruiz"),
        # The field's name as the claim's verb: its subject fills the role.
        (VIEW_TRANSFER, "Tom Ek approved transfer TRF-20931.", "Dana Ruiz", "Tom Ek"),
    ],
)
def test_another_fields_value_in_a_fields_role_is_found(
    view: str, claim: str, own: str, given: str
) -> None:
    found = wrong_field(view, claim)
    assert found is not None
    span, found_own, found_given = found
    assert (found_own, found_given) == (own, given)
    assert view[span[0] : span[1]].endswith(own)


@pytest.mark.parametrize(
    ("view", "claim"),
    [
        # The field's own value.
        (VIEW_PULL, "PR 4412 was merged by lcho."),
        (VIEW_TRANSFER, "Transfer TRF-20931 was approved by Dana Ruiz, at Tom Ek's request."),
        # Both fields, each with its own value.
        (VIEW_PULL, "PR 4412 was written by dvarga and merged by lcho."),
        # The other value stands before the field's name, not in its role.
        (VIEW_PULL, "dvarga's PR 4412 was merged."),
        (VIEW_TRANSFER, "Dana Ruiz approved transfer TRF-20931."),
        # The record's own identifier after the verb is no name in a role.
        (VIEW_TRANSFER, "The approver signed off TRF-20931 for EUR 373.20."),
        # An item of a list: any item is the list's value.
        (VIEW_PULL, "PR 4412 is labelled needs-docs."),
        # A state, not a name.
        (VIEW_PULL, "PR 4412 was merged."),
    ],
)
def test_a_value_in_its_own_role_or_out_of_any_role_decides_nothing(view: str, claim: str) -> None:
    assert wrong_field(view, claim) is None


def test_the_verifier_refuses_a_name_in_the_wrong_role_and_names_the_field(db_url: str) -> None:
    with ControlPlane.open(db_url, nli=LexicalNLI()) as cp:
        run = cp.ledger.start_run()
        entry = cp.ledger.append(
            run, kind="tool_output", source="tool:pulls", content=json.dumps(PULL)
        )
        verified = cp.verifier.verify(
            run, handover(run, ("PR 4412 was merged by dvarga.", [entry.id]))
        )
        (verdict,) = verified.verdicts
        assert verdict.verdict.label == "neutral"
        assert "merged_by: lcho" in verdict.reason and "dvarga" in verdict.reason
        span = verdict.verdict.span
        assert span is not None
        assert entry.text[span[0] : span[1]] == "lcho"


LOAN = (
    "Loan agreement LA-3319 between Brightwater Credit Union (lender) and "
    "Kestrel Joinery Ltd (borrower). Principal GBP 80,000."
)
LEASE = (
    'This lease is made between Harbour Estates LLP (the "Landlord") and '
    'Hollis Retail Ltd (the "Tenant").'
)


@pytest.mark.parametrize(
    ("text", "claim", "own", "given"),
    [
        (LOAN, "Brightwater Credit Union is the borrower under LA-3319.", "lender", "borrower"),
        (LOAN, "The lender, Kestrel Joinery, advanced GBP 80,000.", "borrower", "lender"),
        (LEASE, "Hollis Retail is the landlord.", "tenant", "landlord"),
        # A legal form in lower case is still part of the party's name.
        (
            'An agreement between Norbury Analytics Ltd (the "Provider") and '
            'Castellan Foods plc (the "Client").',
            "Castellan Foods is the provider under the agreement.",
            "client",
            "provider",
        ),
    ],
)
def test_a_party_given_another_partys_role_is_found(
    text: str, claim: str, own: str, given: str
) -> None:
    found = wrong_party(text, claim)
    assert found is not None
    _, found_own, found_given = found
    assert (found_own, found_given) == (own, given)


@pytest.mark.parametrize(
    ("text", "claim"),
    [
        (LOAN, "Kestrel Joinery is the borrower."),
        # Both parties named, each near its own role or both.
        (LOAN, "Kestrel Joinery borrowed GBP 80,000 from Brightwater Credit Union, the lender."),
        (LEASE, "Hollis Retail, the tenant, pays rent to Harbour Estates."),
        # A role without a party's name.
        (LEASE, "The landlord may enter the premises."),
        # One party introduced: no other role to confuse it with.
        ("Supplier: Orchard Print Ltd (vendor).", "Orchard Print is the buyer."),
    ],
)
def test_a_party_in_its_own_role_decides_nothing(text: str, claim: str) -> None:
    assert wrong_party(text, claim) is None


def test_the_verifier_refuses_a_party_in_the_wrong_role(db_url: str) -> None:
    with ControlPlane.open(db_url, nli=LexicalNLI()) as cp:
        run = cp.ledger.start_run()
        entry = cp.ledger.append(run, kind="retrieval", source="loan.md", content=LOAN)
        verified = cp.verifier.verify(
            run, handover(run, ("Brightwater Credit Union is the borrower.", [entry.id]))
        )
        (verdict,) = verified.verdicts
        assert verdict.verdict.label == "neutral"
        assert "Brightwater Credit Union (lender)" in verdict.reason
        assert "not borrower" in verdict.reason
