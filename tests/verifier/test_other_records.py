"""An entry refutes a proposition only where it is about the same record: a metric's
timestamp is no other time for a deploy a claim dates from the deploy log, and an
entry that writes a clause's own date or amount does not contradict that clause."""

from __future__ import annotations

import json

from assay import ControlPlane
from assay.verifier import Verifier
from tests.verifier.test_ledger_verifier import handover

METRICS = json.dumps(
    {
        "queue": "orders-ingest",
        "series": [
            {"t": "2025-05-06T10:30:00Z", "backlog": 29000},
            {"t": "2025-05-06T10:40:00Z", "backlog": 31750},
        ],
    }
)
DEPLOYS = (
    "2025-05-06 10:21 UTC deploy api-gateway v2.8.1 by ayesha.k\n"
    "2025-05-06 10:58 UTC deploy orders-ingest v1.4.0 by tomas.r"
)


def test_a_timestamp_of_another_record_does_not_refute(db_url: str, verifier: Verifier) -> None:
    with ControlPlane.open(db_url, nli=verifier) as cp:
        run = cp.ledger.start_run()
        metrics = cp.ledger.append(run, kind="tool_output", source="metrics", content=METRICS)
        deploys = cp.ledger.append(run, kind="tool_output", source="deploys", content=DEPLOYS)
        claim = "ayesha.k deployed api-gateway v2.8.1 at 10:21 UTC."
        (verdict,) = cp.verifier.verify(
            run, handover(run, (claim, [metrics.id, deploys.id]))
        ).verdicts
        assert verdict.verdict.label == "entailment", verdict.reason
