"""Fence an agent you wrote: it may act only through the bus and cite what it returned."""

from typing import Any

from assay import ControlPlane, ToolSpec
from assay.fence import fence

cp = ControlPlane.open("sqlite:///./example.db")
cp.registry.register(
    ToolSpec(
        name="fx_rate",
        version="1.0.0",
        side_effect="read_only",
        description="The ECB reference rate for a currency pair.",
        input_schema={
            "type": "object",
            "required": ["pair"],
            "additionalProperties": False,
            "properties": {"pair": {"type": "string", "pattern": "^[A-Z]{6}$"}},
        },
        output_schema={"type": "string"},
    ),
    lambda args: f"The ECB reference rate for {args['pair']} on 2025-03-31 was 1.0815.",
)


def my_agent(state: dict[str, Any]) -> dict[str, Any]:
    """Any callable or LangGraph node: call tools through the bus, cite their ledger ids."""
    result = cp.bus.call(state["run_id"], "fx_rate", {"pair": "EURUSD"})
    claim = "The ECB reference rate for EURUSD on 2025-03-31 was 1.0815."
    return {
        "handover": {
            "run_id": state["run_id"],
            "from_agent": "fx-agent",
            "status": "ok",
            "claims": [
                {
                    "id": "c1",
                    "type": "Assertion",
                    "text": claim,
                    "confidence": 0.9,
                    "propositions": [
                        {"id": "c1.p1", "text": claim, "ledger_ids": [result.ledger_id]}
                    ],
                }
            ],
        }
    }


graph = fence(my_agent, control_plane=cp, name="fx-rates")
result = cp.run(graph, {"task": "What was EURUSD on 31 March 2025?"})
print(result.status, "|", result.answer)
for claim in result.claims:
    print(claim.id, [p.entailment.label for p in claim.propositions if p.entailment])
cp.close()
