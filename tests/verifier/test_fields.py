"""Roles in a JSON record: a claim that writes one field's name with another field's
value after it ("merged by dvarga" where ``merged_by`` is ``lcho`` and ``author`` is
``dvarga``) binds the name to the wrong role, found without the model."""

from __future__ import annotations

import json

import pytest

from assay import ControlPlane
from assay.grounding import view_of
from assay.verifier import LexicalNLI
from assay.verifier._fields import wrong_field
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
