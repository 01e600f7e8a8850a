"""A ReAct agent's model calls the irreversible ``issue_refund`` itself, as LangGraph
agents do: that exact call waits for a grant, is checked like an action intent, and
comes back to the model with its outcome as the tool's result. Every test runs on a
real SQLite file and a real PostgreSQL database, with the refund desk of
``_refunds.py`` (a scripted chat model; the stand-in NLI model, which is not the
subject here)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from langchain_core.messages import BaseMessage, ToolMessage

from assay import ControlPlane
from assay.fence import FencedGraph, ReviewRequest, RunResult, fence
from assay.tool_bus import args_sha256
from assay.verifier import LexicalNLI
from tests.fence import _refunds
from tests.fence._refunds import ScriptedChatModel, refund_desk

TASK = {"task": "The customer returned order ORD-1042: refund it."}
REFUND = {"order": "ORD-1042", "amount": 40.0}


def _desk(desk_cp: ControlPlane, model: ScriptedChatModel, *, rounds: int = 1) -> FencedGraph:
    agent = _refunds.agent(desk_cp, model)
    return fence(agent, control_plane=desk_cp, name="refund-desk", max_evidence_rounds=rounds)


def _told(model: ScriptedChatModel, tool: str) -> list[dict[str, Any]]:
    """What the model was last told ``tool`` answered, one per call."""
    last: list[BaseMessage] = model.seen[-1]
    return [
        json.loads(str(m.content)) for m in last if isinstance(m, ToolMessage) and m.name == tool
    ]


def test_the_models_own_refund_call_waits_for_a_grant_for_exactly_that_call(
    desk_cp: ControlPlane,
) -> None:
    model = ScriptedChatModel(script=refund_desk())
    graph = _desk(desk_cp, model)

    paused = desk_cp.run(graph, TASK, thread_id="refund-1")

    assert paused.status == "awaiting_grant" and _refunds.REFUNDS == []
    [pending] = paused.pending_grants
    assert (pending.tool, pending.version, pending.args) == ("issue_refund", "1.0.0", REFUND)
    assert pending.args_sha256 == args_sha256(REFUND)
    assert pending.intent_id == "call:refund-1" and pending.depends_on == ("paid",)
    assert [c["id"] for c in pending.claims] == ["paid"]
    # The reviewer sees the call as it will run, and the thread is listed as waiting.
    [task] = [t for t in graph.get_state({"configurable": {"thread_id": "refund-1"}}).tasks]
    request = ReviewRequest.from_interrupt(task.interrupts[0])
    [call] = request.pending
    assert (call.tool, call.args, call.call_id) == (
        "issue_refund",
        REFUND,
        f"intent:{paused.run_id}/call:refund-1",
    )
    assert [t.thread_id for t in desk_cp.paused()] == ["refund-1"]
    # What is verified is already answered while the call waits.
    assert paused.answer is not None and "Order ORD-1042 was paid 40.0 EUR." in paused.answer


def test_an_approved_refund_runs_once_and_the_model_reads_its_outcome(
    desk_cp: ControlPlane,
) -> None:
    model = ScriptedChatModel(script=refund_desk())
    graph = _desk(desk_cp, model)
    desk_cp.run(graph, TASK, thread_id="refund-2")

    done = desk_cp.resume(graph, "refund-2", {"approve": True, "approver": "alice"})

    assert done.status == "answered" and _refunds.REFUNDS == [REFUND]
    [action] = done.actions
    assert (action.intent_id, action.status, action.approver) == (
        "call:refund-1",
        "executed",
        "alice",
    )
    [told] = _told(model, "issue_refund")
    assert told == {"ok": True, "output": {"refund": "RF-1"}, "ledger_id": action.ledger_id}
    # The model went on from its own call, and cited the refund's output.
    assert [c.text for c in done.claims] == [_refunds.PAID, "Refund RF-1 was issued."]
    assert desk_cp.status("refund-2").result == done


def test_a_denied_refund_ends_denied_and_the_model_is_told_who_denied_it(
    desk_cp: ControlPlane,
) -> None:
    model = ScriptedChatModel(script=refund_desk())
    graph = _desk(desk_cp, model)
    desk_cp.run(graph, TASK, thread_id="refund-3")

    done = desk_cp.resume(
        graph, "refund-3", {"approve": False, "approver": "bob", "reason": "outside 30 days"}
    )

    assert done.status == "denied" and _refunds.REFUNDS == []
    [action] = done.actions
    assert (action.status, action.approver, action.reason) == ("denied", "bob", "outside 30 days")
    [told] = _told(model, "issue_refund")
    assert told["ok"] is False and told["error"]["code"] == "denied"
    assert "bob" in told["error"]["message"] and "outside 30 days" in told["error"]["message"]
    assert done.answer is not None and "Refund" not in done.answer


def test_a_refund_that_ran_meanwhile_is_refused_as_a_duplicate(desk_cp: ControlPlane) -> None:
    first_model = ScriptedChatModel(script=refund_desk())
    second_model = ScriptedChatModel(script=refund_desk())
    first, second = _desk(desk_cp, first_model), _desk(desk_cp, second_model)
    desk_cp.run(first, TASK, thread_id="refund-4a")
    desk_cp.run(second, TASK, thread_id="refund-4b")  # both wait for the same refund

    desk_cp.resume(first, "refund-4a", {"approve": True, "approver": "alice"})
    again = desk_cp.resume(second, "refund-4b", {"approve": True, "approver": "alice"})

    assert _refunds.REFUNDS == [REFUND]
    assert again.status == "incomplete"
    [action] = again.actions
    assert action.status == "duplicate" and action.error is not None
    assert action.error["code"] == "duplicate_effect"
    [told] = _told(second_model, "issue_refund")
    assert told["ok"] is False and told["error"]["code"] == "duplicate_effect"


def test_a_refund_already_made_comes_back_to_the_model_at_once(desk_cp: ControlPlane) -> None:
    graph = _desk(desk_cp, ScriptedChatModel(script=refund_desk()))
    desk_cp.run(graph, TASK, thread_id="refund-5a")
    desk_cp.resume(graph, "refund-5a", {"approve": True, "approver": "alice"})
    model = ScriptedChatModel(script=refund_desk())

    later = desk_cp.run(_desk(desk_cp, model), TASK, thread_id="refund-5b")

    # The bus refuses the repeat before any grant is asked for: nobody is asked.
    assert later.pending_grants == () and later.actions == ()
    assert later.status == "answered" and _refunds.REFUNDS == [REFUND]
    [told] = _told(model, "issue_refund")
    assert told["error"]["code"] == "duplicate_effect"


def test_a_refund_whose_handler_fails_ends_incomplete(db_url: str) -> None:
    _refunds.REFUNDS.clear()
    with ControlPlane.open(db_url, nli=LexicalNLI()) as desk_cp:
        _refunds.install(desk_cp, failing=True)
        model = ScriptedChatModel(script=refund_desk())
        graph = _desk(desk_cp, model)
        desk_cp.run(graph, TASK, thread_id="refund-6")

        done = desk_cp.resume(graph, "refund-6", {"approve": True, "approver": "alice"})

    assert done.status == "incomplete"
    [action] = done.actions
    assert action.status == "failed" and action.error is not None
    assert action.error["code"] == "tool_failed"
    [told] = _told(model, "issue_refund")
    assert told["error"]["code"] == "tool_failed"


def test_a_refund_the_evidence_does_not_state_is_refused_and_never_lost(
    desk_cp: ControlPlane,
) -> None:
    model = ScriptedChatModel(script=refund_desk(amount=400.0))

    result = desk_cp.run(_desk(desk_cp, model, rounds=0), TASK, thread_id="refund-7")

    # The gate grounds the model's call like any intent: 400 is nowhere in the evidence.
    assert result.status == "abstained" and result.pending_grants == ()
    assert any(e["code"] == "ungrounded_argument" for e in result.errors)
    [action] = result.actions
    assert (action.intent_id, action.tool, action.status) == (
        "call:refund-1",
        "issue_refund",
        "not_run",
    )
    assert action.reason is not None and "refused" in action.reason
    assert _refunds.REFUNDS == []


def test_under_arun_and_aresume_the_held_call_is_decided_the_same_way(
    desk_cp: ControlPlane,
) -> None:
    model = ScriptedChatModel(script=refund_desk())
    graph = _desk(desk_cp, model)

    async def scenario() -> tuple[RunResult, RunResult]:
        paused = await desk_cp.arun(graph, TASK, thread_id="refund-8")
        done = await desk_cp.aresume(graph, "refund-8", {"approve": True, "approver": "carol"})
        return paused, done

    paused, done = asyncio.run(scenario())

    assert paused.status == "awaiting_grant" and done.status == "answered"
    assert [a.status for a in done.actions] == ["executed"] and _refunds.REFUNDS == [REFUND]
