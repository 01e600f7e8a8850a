"""LangGraph's own prebuilt ReAct agent (``create_react_agent``), built by a user with
assay's bus tools and fenced through ``ReactAgent``: when its model calls the
irreversible ``issue_refund`` itself, that exact call becomes the run's pending grant,
checked by the gate like an action intent, and the agent reads its outcome on
resume. The prebuilt loop does not stop at a held call, and a plain ``bus_tool``
answers ``grant_required``, which the model reads and carries on past: the call is
held all the same. Every test runs on a real SQLite file and a real PostgreSQL
database, with the shipped scripted chat model and the stand-in NLI model (which is
not the subject here)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool

from assay import ControlPlane
from assay.fence import FencedGraph, ReactAgent, bus_tools, fence, handover_response_schema
from assay.testing import ScriptedChatModel, call, claim, hand_over, intent
from assay.tool_bus import args_sha256, bus_tool
from tests.fence import _refunds

pytestmark = pytest.mark.filterwarnings(
    # The factory a LangGraph user already has is deprecated since LangGraph 1.0.
    "ignore::langgraph.warnings.LangGraphDeprecatedSinceV10"
)

TASK = {"task": "The customer returned order ORD-1042: refund it."}
REFUND = {"order": "ORD-1042", "amount": 40.0}
PAID = "Order ORD-1042 was paid {lookup_order[amount]} {lookup_order[currency]}."
Tools = Literal["held", "plain"]


def _tools(desk_cp: ControlPlane, kind: Tools) -> list[BaseTool]:
    """The desk's tools as a user builds them: ``bus_tools`` (an irreversible one held
    by the tool itself), or one ``bus_tool`` per registered spec."""
    names = ["lookup_order", "issue_refund"]
    if kind == "held":
        return list(bus_tools(desk_cp, names))
    view = desk_cp.registry.view()
    return [bus_tool(desk_cp.bus, view.get(name)) for name in names]


def _desk(desk_cp: ControlPlane, model: ScriptedChatModel, kind: Tools) -> FencedGraph:
    from langgraph.prebuilt import create_react_agent  # pyright: ignore[reportDeprecated]

    tools = _tools(desk_cp, kind)
    theirs = create_react_agent(  # pyright: ignore[reportDeprecated]
        model, tools, response_format=handover_response_schema()
    )
    agent = ReactAgent(theirs, name="their-desk", tools=tools)
    return fence(agent, control_plane=desk_cp, name="refund-desk", max_evidence_rounds=0)


def _script(*refund_calls: Mapping[str, Any]) -> list[Any]:
    """Look the order up, ask for the refund (one turn per item of ``refund_calls``),
    hand over what the lookup says, and once the refund came back, what it says."""
    turns = [call("lookup_order", order="ORD-1042")]
    turns += [call("issue_refund", dict(args)) for args in refund_calls]
    return [
        *turns,
        hand_over(claim(PAID, cites="lookup_order")),
        hand_over(claim(PAID, cites="lookup_order")),
    ]


def _told(model: ScriptedChatModel) -> list[dict[str, Any]]:
    """What the model was last told ``issue_refund`` answered, one per call."""
    return [
        json.loads(str(m.content))
        for m in model.messages[-1]
        if isinstance(m, ToolMessage) and m.name == "issue_refund"
    ]


@pytest.mark.parametrize("kind", ["held", "plain"])
def test_the_models_own_refund_waits_and_runs_once_when_approved(
    desk_cp: ControlPlane, kind: Tools
) -> None:
    model = ScriptedChatModel(script=_script(REFUND))
    graph = _desk(desk_cp, model, kind)

    paused = desk_cp.run(graph, TASK, thread_id=f"approve-{kind}")

    # Never answered without a pending grant: the run waits for exactly that call.
    assert paused.status == "awaiting_grant" and _refunds.REFUNDS == []
    [pending] = paused.pending_grants
    assert (pending.tool, pending.version, pending.args) == ("issue_refund", "1.0.0", REFUND)
    assert pending.args_sha256 == args_sha256(REFUND)
    assert pending.intent_id == "call:scripted-2" and pending.depends_on == ("c1",)

    done = desk_cp.resume(graph, f"approve-{kind}", {"approve": True, "approver": "alice"})

    assert done.status == "answered" and _refunds.REFUNDS == [REFUND]
    [action] = done.actions
    assert (action.intent_id, action.status, action.approver) == (
        "call:scripted-2",
        "executed",
        "alice",
    )
    # The agent went on with the call's outcome as the tool's result.
    assert _told(model) == [
        {"ok": True, "output": {"refund": "RF-1"}, "ledger_id": action.ledger_id}
    ]
    assert model.finished


@pytest.mark.parametrize("kind", ["held", "plain"])
def test_a_denied_refund_ends_denied_and_the_agent_is_told(
    desk_cp: ControlPlane, kind: Tools
) -> None:
    model = ScriptedChatModel(script=_script(REFUND))
    graph = _desk(desk_cp, model, kind)
    desk_cp.run(graph, TASK, thread_id=f"deny-{kind}")

    done = desk_cp.resume(
        graph, f"deny-{kind}", {"approve": False, "approver": "bob", "reason": "too late"}
    )

    assert done.status == "denied" and _refunds.REFUNDS == []
    [action] = done.actions
    assert (action.status, action.approver, action.reason) == ("denied", "bob", "too late")
    [told] = _told(model)
    assert told["ok"] is False and told["error"]["code"] == "denied"
    assert "bob" in told["error"]["message"]


def test_the_same_refund_asked_for_twice_is_one_pending_call(desk_cp: ControlPlane) -> None:
    # The prebuilt loop goes back to the model after a held call; this one asks again.
    model = ScriptedChatModel(script=_script(REFUND, REFUND))
    graph = _desk(desk_cp, model, "plain")

    paused = desk_cp.run(graph, TASK, thread_id="twice")

    [pending] = paused.pending_grants
    assert pending.intent_id == "call:scripted-2"
    done = desk_cp.resume(graph, "twice", {"approve": True, "approver": "alice"})

    assert _refunds.REFUNDS == [REFUND]
    [action] = done.actions
    # Both of the model's calls are answered with the one outcome.
    outcome = {"ok": True, "output": {"refund": "RF-1"}, "ledger_id": action.ledger_id}
    assert _told(model) == [outcome, outcome]


def test_an_intent_the_model_also_writes_for_its_call_is_not_a_second_one(
    desk_cp: ControlPlane,
) -> None:
    model = ScriptedChatModel(
        script=[
            call("lookup_order", order="ORD-1042"),
            call("issue_refund", REFUND),
            hand_over(
                claim(PAID, cites="lookup_order"),
                action_intents=[intent("issue_refund", REFUND, id="refund")],
            ),
        ]
    )

    paused = desk_cp.run(_desk(desk_cp, model, "plain"), TASK, thread_id="restated")

    [pending] = paused.pending_grants
    assert (pending.intent_id, pending.args) == ("call:scripted-2", REFUND)


def test_a_refund_the_evidence_does_not_state_is_reported_not_run(desk_cp: ControlPlane) -> None:
    model = ScriptedChatModel(script=_script({"order": "ORD-1042", "amount": 400.0}))

    result = desk_cp.run(_desk(desk_cp, model, "plain"), TASK, thread_id="ungrounded")

    # The gate grounds the model's call like any intent: 400 is nowhere in the evidence.
    assert result.status == "abstained" and result.pending_grants == ()
    assert any(e["code"] == "ungrounded_argument" for e in result.errors)
    [action] = result.actions
    assert (action.intent_id, action.status) == ("call:scripted-2", "not_run")
    assert _refunds.REFUNDS == []
