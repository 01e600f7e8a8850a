"""A refund desk for ``--graph``: LangGraph's ReAct loop on a scripted chat model, a
read-only ``lookup_order`` returning JSON and an irreversible ``issue_refund``."""

from __future__ import annotations

from typing import Any

from assay import ControlPlane, ToolSpec
from assay.fence import fence, react_agent
from assay.testing import ScriptedChatModel, call, claim, hand_over, intent

ORDER = {"order": "D-4410", "placed": "2025-03-02", "total": 29.97, "currency": "USD"}
TOTAL = "The total of order D-4410 was {lookup_order[total]} {lookup_order[currency]}."
PLACED = "Order D-4410 has a total of {lookup_order[total]} {lookup_order[currency]}."


def _spec(name: str, side_effect: Any, required: list[str], **properties: Any) -> ToolSpec:
    return ToolSpec(
        name=name,
        version="1.0.0",
        side_effect=side_effect,
        description=f"The desk's {name}.",
        input_schema={
            "type": "object",
            "required": required,
            "additionalProperties": False,
            "properties": properties,
        },
        output_schema={"type": "object"},
    )


def graph(cp: ControlPlane) -> Any:
    """Look the order up, hand over its total and date, and ask to refund it."""
    cp.registry.register(
        _spec("lookup_order", "read_only", ["order"], order={"type": "string"}),
        lambda args: ORDER,
    )
    cp.registry.register(
        _spec(
            "issue_refund",
            "irreversible",
            ["order", "amount"],
            order={"type": "string"},
            amount={"type": "number"},
        ),
        lambda args: {"refund": "R-1", **args},
    )
    model = ScriptedChatModel(
        script=[
            call("lookup_order", order="D-4410"),
            hand_over(
                claim(TOTAL, cites="lookup_order", propositions=[TOTAL, PLACED]),
                action_intents=[
                    intent("issue_refund", lambda r: {"order": "D-4410", "amount": 29.97})
                ],
            ),
        ]
    )
    agent = react_agent(model, cp, tools=["lookup_order"])
    return fence(agent, control_plane=cp, name="refund-desk")
