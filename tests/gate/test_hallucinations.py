"""The hallucination classes of the design that the gate catches on its own, each as
a rejected hand-over (or flagged reply) with a clean twin."""

from __future__ import annotations

from typing import Any

from assay import ControlPlane, GateDecision, validate_reply
from tests.gate._world import World, make_world


def _one_claim(
    world: World, text: str, ledger_ids: list[str], *, kind: str = "Assertion"
) -> dict[str, Any]:
    return {
        "run_id": world.run,
        "from_agent": "writer",
        "status": "ok",
        "claims": [
            {
                "id": "c1",
                "type": kind,
                "text": text,
                "confidence": 0.8,
                "propositions": [{"id": "p1", "text": text, "ledger_ids": ledger_ids}],
            }
        ],
    }


def _check(world: World, handover: dict[str, Any]) -> GateDecision:
    return world.plane.gate.check(world.run, handover)


def test_1_pure_confabulation(plane: ControlPlane) -> None:
    """An identifier from nowhere: a short SHA that no evidence holds."""
    world = make_world(plane)
    bad = _check(world, _one_claim(world, "The bug was fixed in commit 4e5f6a7.", [world.git]))
    assert bad.codes == {"unverified_identifier"}
    assert "'4e5f6a7'" in bad.errors[0].message
    good = _check(world, _one_claim(world, "The bug was fixed in commit 9fceb02.", [world.git]))
    assert good.accepted, good.errors


def test_1_confabulation_in_a_reply() -> None:
    tools = ["commit 9fceb02d0ae598e95dc970b74767f19372d61af8 Fix rounding"]
    bad = validate_reply("Fixed in commit 4e5f6a7.", tool_results=tools)
    assert [i.value for i in bad.unverified] == ["4e5f6a7"]
    good = validate_reply("Fixed in commit 9fceb02.", tool_results=tools)
    assert good.ok and [i.value for i in good.found] == ["9fceb02"]


def test_2_borrowed_identifier(plane: ControlPlane) -> None:
    """The user's own value, reported as if a tool had returned it."""
    world = make_world(plane)
    text = "The CRM returned customer CUST-7781 for invoice INV-4421."
    bad = _check(world, _one_claim(world, text, [world.user]))
    assert "provenance_mismatch" in bad.codes
    assert not any(e.code == "unverified_identifier" for e in bad.errors)
    good = _check(world, _one_claim(world, text, [world.crm]))
    assert good.accepted, good.errors


def test_2_borrowed_identifier_in_a_reply() -> None:
    conversation = [{"role": "user", "content": "Is order #5531 shipped?"}]
    bad = validate_reply("Order #5531 has shipped.", tool_results=[], conversation=conversation)
    assert [i.value for i in bad.user_origin] == ["#5531"] and not bad.unverified
    good = validate_reply(
        "Order #5531 has shipped.", tool_results=['{"order": "#5531"}'], conversation=conversation
    )
    assert good.ok


def test_3_misread_tool_result(plane: ControlPlane) -> None:
    """An error reported as success: the success's own identifiers are in no evidence."""
    world = make_world(plane)
    failure = plane.ledger.append(
        world.run,
        kind="tool_output",
        source="payments.charge@2.0.0",
        content='{"error": "payment failed: card declined"}',
    )
    bad = _check(
        world,
        _one_claim(
            world, "Payment for INV-4421 succeeded with confirmation PAY-88213.", [failure.id]
        ),
    )
    assert bad.codes == {"unverified_identifier"}
    good = _check(
        world, _one_claim(world, "payment failed: card declined", [failure.id], kind="Quote")
    )
    assert good.accepted, good.errors


def test_4_phantom_tool_call(plane: ControlPlane) -> None:
    """A result reported with no call behind it: nothing, or an invented id, is cited."""
    world = make_world(plane)
    text = "search_orders returned order #5531."
    uncited = _check(world, _one_claim(world, text, []))
    assert {"missing_ledger_ids", "unverified_identifier"} <= uncited.codes
    invented = _check(world, _one_claim(world, text, ["led_1234567890abcdef"]))
    assert "unknown_ledger_id" in invented.codes
    call = plane.ledger.append(
        world.run,
        kind="tool_output",
        source="search_orders@1.0.0",
        content='[{"order": "#5531", "status": "open"}]',
    )
    good = _check(world, _one_claim(world, text, [call.id]))
    assert good.accepted, good.errors


def test_4b_plan_call_drift(plane: ControlPlane) -> None:
    """The planned call goes out missing an argument the plan relied on."""
    world = make_world(plane)
    handover = world.handover()
    del handover["action_intents"][0]["args"]["amount_over_cap"]
    bad = _check(world, handover)
    assert bad.codes == {"invalid_action_args"}
    assert bad.errors[0].path == "$.action_intents[0].args.amount_over_cap"
    assert _check(world, world.handover()).accepted


def test_authority_laundering(plane: ControlPlane) -> None:
    """Agent B cites agent A's hand-over as if it were evidence."""
    world = make_world(plane)
    first = _check(world, _one_claim(world, "Invoice INV-4421 is for CUST-7781.", [world.crm]))
    assert first.accepted and first.handover_entry_id is not None
    laundered = _one_claim(world, "Invoice INV-4421 is for CUST-7781.", [first.handover_entry_id])
    laundered["from_agent"] = "summariser"
    bad = _check(world, laundered)
    assert "uncitable_entry" in bad.codes
    good = _one_claim(world, "Invoice INV-4421 is for CUST-7781.", [world.crm])
    good["from_agent"] = "summariser"
    assert _check(world, good).accepted
