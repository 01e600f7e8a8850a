"""The invoice audit with the real shipped NLI model (the control plane's default):
the model, not a stand-in, must verify every claim of the over-cap case."""

from __future__ import annotations

from pathlib import Path

from assay import ControlPlane
from assay.apps import reference
from tests.fence.conftest import case


def test_over_cap_with_the_shipped_model(sqlite_url: str, outbox: Path) -> None:
    with ControlPlane.open(sqlite_url) as cp:
        graph = reference.graph(cp)
        paused = cp.run(graph, case("over_cap"))
        assert paused.status == "awaiting_grant", [u.missing_evidence for u in paused.unsupported]
        model_id = cp.verifier.model.model_id  # type: ignore[attr-defined]
        labels = {
            p.entailment.model
            for c in cp.run(graph, case("compliant")).claims
            for p in c.propositions
            if p.entailment
        }
        assert model_id in labels
        done = cp.resume(graph, paused.thread_id, {"approve": True, "approver": "alice"})
    assert done.status == "answered"
    assert [a.status for a in done.actions] == ["executed"]
    assert len(outbox.read_text().splitlines()) == 1
