"""A refund desk through the gate, on a real ledger: the refund's amount is
established by the order it refunds, in any form equal by value and in the order's
currency; a claim's ``$`` is the US dollar, so it states a USD order's total and
not a CAD order's."""

from __future__ import annotations

import json
from typing import Any

import pytest

from assay import ControlPlane
from assay.gate import GateDecision
from assay.tool_bus import ToolSpec

REFUND = ToolSpec(
    "issue_refund",
    "1.0.0",
    "Refund an order, in its currency.",
    {
        "type": "object",
        "properties": {
            "order_id": {"type": "string"},
            "amount": {"type": ["number", "string"], "x-assay-unit": "USD"},
        },
        "required": ["order_id", "amount"],
        "additionalProperties": False,
    },
    {"type": "object"},
    "irreversible",
)
USD_ORDER = {"order_id": "A-1093", "total": 129.0, "currency": "USD"}
CAD_ORDER = {"order_id": "A-1094", "total": 69.5, "currency": "CAD"}
SMALL_USD_ORDER = {"order_id": "A-1095", "total": 69.5, "currency": "USD"}


def _handover(run: str, order: str, claim: str, args: dict[str, Any] | None) -> dict[str, Any]:
    intents = (
        [
            {
                "id": "a1",
                "tool": "issue_refund",
                "requires_grant": True,
                "args": args,
                "depends_on": ["c1"],
            }
        ]
        if args is not None
        else []
    )
    return {
        "run_id": run,
        "from_agent": "refund-desk",
        "status": "ok",
        "claims": [
            {
                "id": "c1",
                "type": "Assertion",
                "confidence": 0.9,
                "text": claim,
                "propositions": [{"id": "p1", "text": claim, "ledger_ids": [order]}],
            }
        ],
        "open_questions": [],
        "action_intents": intents,
        "errors": [],
    }


def _check(
    plane: ControlPlane, record: dict[str, Any], claim: str, args: dict[str, Any] | None
) -> GateDecision:
    run = plane.ledger.start_run(metadata={"task": "refund"})
    order = plane.ledger.append(
        run, kind="tool_output", source="orders.get@1.0.0", content=json.dumps(record)
    )
    if REFUND.name not in {s.name for s in plane.registry.list()}:
        plane.registry.register(REFUND, lambda args: {"refund_id": "R-1"})
    return plane.gate.check(run, _handover(run, order.id, claim, args))


@pytest.mark.parametrize("amount", [129.0, 129, "129.00"])
def test_a_refund_of_the_orders_total_is_established(plane: ControlPlane, amount: Any) -> None:
    claim = "Order A-1093 was paid in full and is eligible for a refund."
    decision = _check(plane, USD_ORDER, claim, {"order_id": "A-1093", "amount": amount})
    assert decision.accepted, decision.errors


@pytest.mark.parametrize("amount", [130, "130.00"])
def test_a_refund_of_another_amount_is_refused(plane: ControlPlane, amount: Any) -> None:
    claim = "Order A-1093 was paid in full and is eligible for a refund."
    decision = _check(plane, USD_ORDER, claim, {"order_id": "A-1093", "amount": amount})
    assert not decision.accepted
    assert decision.codes == {"ungrounded_argument"}
    assert "130" in decision.errors[0].message


def test_a_usd_refund_of_a_cad_order_is_refused(plane: ControlPlane) -> None:
    claim = "Order A-1094 was paid in full and is eligible for a refund."
    decision = _check(plane, CAD_ORDER, claim, {"order_id": "A-1094", "amount": 69.5})
    assert decision.codes == {"ungrounded_argument"}
    assert "CAD" in decision.errors[0].message


def test_a_dollar_sign_states_a_usd_order_and_not_a_cad_one(plane: ControlPlane) -> None:
    usd = _check(plane, SMALL_USD_ORDER, "Order A-1095 totals $69.50.", None)
    assert usd.accepted, usd.errors
    cad = _check(plane, CAD_ORDER, "Order A-1094 totals $69.50.", None)
    assert cad.codes == {"unverified_value"}
    assert "$69.50" in cad.errors[0].message
    honest = _check(plane, CAD_ORDER, "Order A-1094 totals C$69.50.", None)
    assert honest.accepted, honest.errors
