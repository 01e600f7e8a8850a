"""Plans reported as done: a claim that an event happened on a date its evidence
gives only as expected (due, ETA, scheduled, a deadline "by") is not supported by
it, found without the model; a claim that keeps the plan a plan, or evidence that
reports the event, decides nothing."""

from __future__ import annotations

import json

import pytest

from assay import ControlPlane
from assay.grounding import view_of
from assay.verifier import LexicalNLI
from assay.verifier._expected import expected_as_done
from tests.verifier.test_ledger_verifier import handover

POSTMORTEM = (
    "Action items: replace the disk array on db-01 (owner: Priya Nair, due 2025-01-31); "
    "add a failover drill to the runbook (owner: Tom Ek)."
)
SHIPMENT = "Shipment SH-88120 left Rotterdam on 2025-02-02. ETA Felixstowe 2025-02-04."
#: As the verifier reads a JSON output: its view's ``path: value`` lines.
TRACKING = view_of(
    json.dumps({"parcel": "PX-7781", "status": "in_transit", "expected_delivery": "2025-03-14"})
).text
ROLLOUT = "The 2.4 rollout is scheduled for 12 May 2025; the 2.3 rollout finished on 28 April."
CONTRACT = "The supplier shall deliver the signed acceptance form by 30 June 2025."


@pytest.mark.parametrize(
    ("evidence", "claim", "label"),
    [
        (POSTMORTEM, "The disk array on db-01 was replaced on 31 January 2025.", "due 2025"),
        (SHIPMENT, "SH-88120 arrived in Felixstowe on 4 February 2025.", "ETA Felixstowe"),
        (TRACKING, "Parcel PX-7781 was delivered on 14 March 2025.", "expected"),
        (ROLLOUT, "The 2.4 rollout was completed on 12 May 2025.", "scheduled for"),
        (CONTRACT, "The supplier delivered the signed acceptance form on 30 June 2025.", "by"),
        (
            "Loan LA-3319: first repayment due 15 April 2025.",
            "The borrower made the first repayment on 15 April 2025.",
            "due",
        ),
    ],
)
def test_a_plan_reported_as_done_is_not_supported(evidence: str, claim: str, label: str) -> None:
    span = expected_as_done(evidence, claim)
    assert span is not None
    assert evidence[span[0] : span[1]].startswith(label)


@pytest.mark.parametrize(
    ("evidence", "claim"),
    [
        # The claim keeps the plan a plan.
        (POSTMORTEM, "Priya Nair is to replace the disk array on db-01 by 31 January 2025."),
        (SHIPMENT, "SH-88120 is expected in Felixstowe on 4 February 2025."),
        (TRACKING, "Parcel PX-7781 should be delivered on 14 March 2025."),
        (CONTRACT, "The signed acceptance form is due from the supplier by 30 June 2025."),
        # The evidence reports the event itself.
        (SHIPMENT, "SH-88120 left Rotterdam on 2 February 2025."),
        (ROLLOUT, "The 2.3 rollout finished on 28 April."),
        # A date without a label of plan before it, though the line has one elsewhere.
        (
            "Invoice 4471 issued 2025-01-02, due 2025-02-01.",
            "Invoice 4471 was issued on 2 January 2025.",
        ),
        # No event reported as done.
        (SHIPMENT, "The ETA of SH-88120 at Felixstowe is 4 February 2025."),
    ],
)
def test_a_plan_kept_a_plan_or_an_event_reported_decides_nothing(evidence: str, claim: str) -> None:
    assert expected_as_done(evidence, claim) is None


def test_the_verifier_refuses_a_plan_reported_as_done_and_says_why(db_url: str) -> None:
    with ControlPlane.open(db_url, nli=LexicalNLI()) as cp:
        run = cp.ledger.start_run()
        entry = cp.ledger.append(run, kind="tool_output", source="tool:ship", content=SHIPMENT)
        verified = cp.verifier.verify(
            run, handover(run, ("SH-88120 arrived in Felixstowe on 4 February 2025.", [entry.id]))
        )
        (verdict,) = verified.verdicts
        assert verdict.verdict.label == "neutral"
        assert verdict.verdict.ledger_id == entry.id
        assert "only as expected, not as done" in verdict.reason
        span = verdict.verdict.span
        assert span is not None
        assert entry.text[span[0] : span[1]] == "ETA Felixstowe 2025-02-04"
