"""Propositions that point at their evidence (``cites``): what the verifier reads of a
cited entry, what the citations settle by themselves, and the real model's verdict
on what they name."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from assay import ControlPlane, Verifier
from assay.contract import Proposition
from assay.verifier.checks import PropositionContext, RunEvidence

ORDER = json.dumps(
    {
        "order": {
            "id": "A-1093",
            "total": 84.5,
            "currency": "USD",
            "delivered_on": "2025-03-14",
            "status": "delivered",
        },
        "customer": {"name": "Rita Okafor", "since": "2019-06-01"},
        "returns": [{"id": "R-77", "opened": "2025-03-20", "status": "open"}],
    },
    indent=2,
)
NOTICE = (
    "Maintenance notice for tenants. It is not true that the late fee is waived for March.\n"
    "The late fee is EUR 15 per day."
)


@pytest.fixture
def cp(db_url: str, verifier: Verifier) -> Iterator[ControlPlane]:
    with ControlPlane.open(db_url, nli=verifier) as plane:
        yield plane


def _verify(cp: ControlPlane, content: str, text: str, cites: list[dict[str, str]]) -> Any:
    run = cp.ledger.start_run()
    entry = cp.ledger.append(run, kind="tool_output", source="tool:lookup", content=content)
    written = [{**c, "ledger_id": entry.id} for c in cites]
    handover = {
        "run_id": run,
        "from_agent": "desk",
        "status": "ok",
        "claims": [
            {
                "id": "c1",
                "type": "Assertion",
                "text": text,
                "confidence": 0.9,
                "propositions": [{"id": "c1.p", "text": text, "cites": written}],
            }
        ],
    }
    verified = cp.verifier.verify(run, handover)
    body = json.loads(cp.ledger.get(verified.verdicts[0].ledger_id).text)
    return verified.verdicts[0], body, entry


def test_a_pointer_is_read_as_its_field_with_its_record(cp: ControlPlane) -> None:
    run = cp.ledger.start_run()
    entry = cp.ledger.append(run, kind="tool_output", source="tool:lookup", content=ORDER)
    proposition = Proposition.model_validate(
        {
            "id": "p",
            "text": "Order A-1093 was delivered on 14 March 2025.",
            "cites": [{"ledger_id": entry.id, "pointer": "/order/delivered_on"}],
        }
    )
    context = PropositionContext.build(run, proposition, RunEvidence(cp.ledger.evidence(run)))
    [reading] = context.final_readings
    assert reading.text.splitlines() == [
        "order.id: A-1093",
        "order.total: 84.5",
        "order.currency: USD",
        "order.delivered_on: 2025-03-14",
        "order.status: delivered",
    ]  # the customer and the returns are not what it cites
    start = reading.text.index("2025-03-14")
    assert ORDER[slice(*reading.to_stored(start, start + 10))] == "2025-03-14"


def test_a_true_claim_citing_its_field_is_entailed_at_the_cited_bytes(cp: ControlPlane) -> None:
    verdict, body, _ = _verify(
        cp,
        ORDER,
        "Order A-1093 was delivered on 14 March 2025.",
        [{"pointer": "/order/delivered_on"}],
    )
    assert verdict.verdict.label == "entailment", verdict.reason
    assert ORDER[slice(*verdict.verdict.span)] == '"2025-03-14"'
    assert body["cites"][0]["text"] == "/order/delivered_on: 2025-03-14"
    assert ORDER[slice(*body["cites"][0]["span"])] == '"2025-03-14"'


def test_a_false_claim_citing_the_evidence_it_is_about_is_refused(cp: ControlPlane) -> None:
    verdict, _, _ = _verify(
        cp, ORDER, "Order A-1093 was delivered on 4 March 2025.", [{"pointer": "/order"}]
    )
    assert verdict.verdict.label != "entailment"


def test_a_value_outside_what_it_cites_is_missing_evidence(cp: ControlPlane) -> None:
    verdict, _, entry = _verify(
        cp,
        ORDER,
        "Return R-77 for order A-1093 was opened on 20 March 2025.",
        [{"pointer": "/order/id"}],
    )
    assert (verdict.verdict.label, verdict.verdict.check) == ("missing_evidence", "cited_spans")
    assert "not in what it cites" in verdict.reason and entry.id in verdict.reason


def test_a_whole_sentence_quote_is_entailed_and_a_cut_one_is_read_with_its_line(
    cp: ControlPlane,
) -> None:
    whole, _, _ = _verify(
        cp,
        NOTICE,
        "The late fee is EUR 15 per day.",
        [{"quote": "The late fee is EUR 15 per day."}],
    )
    assert (whole.verdict.label, whole.verdict.check) == ("entailment", "cited_spans")
    assert NOTICE[slice(*whole.verdict.span)] == "The late fee is EUR 15 per day."
    cut, _, _ = _verify(
        cp,
        NOTICE,
        "the late fee is waived for March.",
        [{"quote": "the late fee is waived for March"}],
    )
    assert cut.verdict.label != "entailment", cut.reason


def test_a_citation_that_names_nothing_is_missing_evidence(cp: ControlPlane) -> None:
    verdict, body, _ = _verify(
        cp, ORDER, "Order A-1093 was delivered on 14 March 2025.", [{"pointer": "/order/shipped"}]
    )
    assert (verdict.verdict.label, verdict.verdict.check) == ("missing_evidence", "cited_spans")
    assert body["cites"] == [
        {
            "ledger_id": body["ledger_ids"][0],
            "pointer": "/order/shipped",
            "span": None,
            "text": None,
        }
    ]
