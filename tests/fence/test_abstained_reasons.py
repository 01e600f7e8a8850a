"""An abstained run always says what is not established and why, also when the
last hand-over never reached the verifier because the gate refused it."""

from __future__ import annotations

from typing import Any

from assay import ControlPlane, ToolSpec
from assay.fence import fence


def _stock_agent(cp: ControlPlane, claim: str) -> Any:
    def agent(state: dict[str, Any]) -> dict[str, Any]:
        out = cp.bus.call(state["run_id"], "stock_level", {"sku": "BT-105"})
        return {
            "handover": {
                "run_id": state["run_id"],
                "from_agent": "stock-agent",
                "status": "ok",
                "claims": [
                    {
                        "id": "c1",
                        "type": "Assertion",
                        "text": claim,
                        "confidence": 0.9,
                        "propositions": [
                            {"id": "c1.p1", "text": claim, "ledger_ids": [out.ledger_id]}
                        ],
                    }
                ],
            }
        }

    return agent


def _register(cp: ControlPlane) -> None:
    cp.registry.register(
        ToolSpec(
            name="stock_level",
            version="1.0.0",
            side_effect="read_only",
            description="Units of a SKU per warehouse.",
            input_schema={
                "type": "object",
                "required": ["sku"],
                "properties": {"sku": {"type": "string"}},
            },
            output_schema={"type": "object"},
        ),
        lambda args: {"sku": args["sku"], "warehouse": "W-12", "units": 120},
    )


def test_a_refused_claim_is_reported_with_the_gates_reason(audit: ControlPlane) -> None:
    _register(audit)
    claim = "Warehouse W-12 holds 120 units of SKU BT-107."
    graph = fence(_stock_agent(audit, claim), control_plane=audit, name="stock-desk")
    result = audit.run(graph, {"task": "How many BT-105 are in stock?"})
    assert result.status == "abstained"
    (missing,) = result.unsupported
    assert missing.proposition == claim
    assert missing.claim_id == "c1" and missing.proposition_id == "c1.p1"
    assert "unverified_identifier" in missing.missing_evidence
    assert "BT-107" in missing.missing_evidence
    assert result.answer is not None
    assert "Not established:" in result.answer and claim in result.answer
