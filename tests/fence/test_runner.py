"""The runner on a user's own fenced graph (an order desk, not the invoice audit),
through ``cp.run`` / ``cp.resume`` and through ``assay resume --graph``, on SQLite
and on PostgreSQL: approved and denied, refused with another graph, listed while
paused, and a second decision refused naming the first."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from typer.testing import CliRunner

from assay import (
    AlreadyDecided,
    ControlPlane,
    InvalidDecision,
    ThreadInUse,
    UnknownThread,
    UsageError,
    WrongGraph,
)
from assay.apps import reference
from assay.cli import app
from assay.fence import FenceState, graph_identity
from assay.fence._threads import claim as claim_thread
from assay.verifier import LexicalNLI
from tests.fence import _orders

ORDERS = "tests.fence._orders:graph"
TASK = {"task": "Restock BT-105 to the stock on hand."}
cli = CliRunner()


@pytest.fixture
def cp(db_url: str, outbox: Path) -> Iterator[ControlPlane]:
    _orders.PLACED.clear()
    with ControlPlane.open(db_url, nli=LexicalNLI()) as plane:
        yield plane
    _orders.PLACED.clear()


def _paused(cp: ControlPlane, thread_id: str = "order-1") -> str:
    result = cp.run(_orders.graph(cp), TASK, thread_id=thread_id)
    assert result.status == "awaiting_grant", result.errors
    [pending] = result.pending_grants
    assert (pending.tool, pending.args) == ("place_order", {"sku": "BT-105", "units": 120})
    assert _orders.PLACED == []
    return result.thread_id


def _grant_entries(cp: ControlPlane, thread_id: str) -> int:
    run_id = cp.status(thread_id).run_id
    assert run_id is not None
    return len(cp.ledger.entries(run_id, kinds=["grant"]))


def test_approved_through_the_runner_the_order_is_placed_once(cp: ControlPlane) -> None:
    thread = _paused(cp)
    [listed] = cp.paused()
    assert (listed.thread_id, listed.graph_name, listed.graph_version) == (
        "order-1",
        "order-desk",
        "1",
    )
    assert listed.result is not None and listed.result.pending_grants[0].tool == "place_order"
    assert cp.status(thread).status == "awaiting_grant"

    done = cp.resume(_orders.graph(cp), thread, {"approve": True, "approver": "alice"})
    assert done.status == "answered"
    [action] = done.actions
    assert (action.tool, action.status, action.approver) == ("place_order", "executed", "alice")
    assert _orders.PLACED == [{"sku": "BT-105", "units": 120}]
    assert cp.paused() == []
    status = cp.status(thread)
    assert (status.status, status.run_id) == ("answered", done.run_id)
    assert status.result == done
    metadata = cp.ledger.run(done.run_id).metadata
    assert (metadata["graph"], metadata["graph_version"]) == ("order-desk", "1")


def test_denied_through_the_runner_nothing_is_ordered(cp: ControlPlane) -> None:
    thread = _paused(cp)
    decision = {"approve": False, "approver": "bob", "reason": "supplier on hold"}
    done = cp.resume(_orders.graph(cp), thread, decision)
    [action] = done.actions
    assert (action.status, action.approver, action.reason) == ("denied", "bob", "supplier on hold")
    assert _orders.PLACED == [] and cp.paused() == []
    assert cp.status(thread).status == done.status


def test_another_graph_is_refused_and_the_thread_still_resumes_with_its_own(
    cp: ControlPlane,
) -> None:
    thread = _paused(cp)
    decision = {"approve": True, "approver": "zed"}
    with pytest.raises(WrongGraph, match=r"'order-desk'.*'invoice-audit'"):
        cp.resume(reference.graph(cp), thread, decision)
    with pytest.raises(WrongGraph, match=r"version '1'.*version '2'"):
        cp.resume(_orders.graph_v2(cp), thread, decision)
    with pytest.raises(ThreadInUse, match="order-desk"):
        cp.run(reference.graph(cp), reference.case_input("compliant"), thread_id=thread)
    assert _grant_entries(cp, thread) == 0 and _orders.PLACED == []
    assert [t.thread_id for t in cp.paused()] == [thread]

    done = cp.resume(_orders.graph(cp), thread, decision)
    assert [(a.status, a.approver) for a in done.actions] == [("executed", "zed")]
    assert len(_orders.PLACED) == 1


def test_a_second_decision_is_refused_naming_the_first(cp: ControlPlane) -> None:
    thread = _paused(cp)
    graph = _orders.graph(cp)
    cp.resume(graph, thread, {"approve": True, "approver": "alice", "reason": "in stock"})
    grants = _grant_entries(cp, thread)
    for second in (
        {"approve": False, "approver": "bob"},
        {"approve": True, "approver": "alice", "reason": "in stock"},
    ):
        with pytest.raises(AlreadyDecided, match="approved by 'alice'") as refused:
            cp.resume(graph, thread, second)
        assert refused.value.decision["approver"] == "alice"
        assert refused.value.decision["approve"] is True
        assert refused.value.decision["intent_id"] == "order1"
    assert _grant_entries(cp, thread) == grants and len(_orders.PLACED) == 1
    assert cp.status(thread).status == "answered"


def test_refusals_come_before_anything_is_written(cp: ControlPlane) -> None:
    graph = _orders.graph(cp)
    with pytest.raises(UnknownThread):
        cp.resume(graph, "nobody", {"approve": True, "approver": "a"})
    with pytest.raises(UnknownThread):
        cp.status("nobody")
    for bad_input, message in (
        ({}, "non-empty"),
        ({"task": " "}, "non-empty"),
        ({"task": "x", "run_id": "run_1"}, "'run_id'"),
        ({"task": "x", "context": ["a"]}, "JSON object"),
    ):
        with pytest.raises(UsageError, match=message):
            cp.run(graph, bad_input, thread_id="never")
    with pytest.raises(UsageError, match="thread id"):
        cp.run(graph, TASK, thread_id="bad\nid")
    with pytest.raises(UsageError, match="not a fenced graph"):
        cp.run(_plain_graph(), TASK)
    with pytest.raises(UnknownThread):
        cp.status("never")
    assert cp.ledger.runs() == []

    thread = _paused(cp)
    with pytest.raises(ThreadInUse, match="already holds a run"):
        cp.run(graph, TASK, thread_id=thread)
    with pytest.raises(InvalidDecision, match="approver"):
        cp.resume(graph, thread, {"approve": True})
    with pytest.raises(InvalidDecision, match=r"no decision for pending intent.*'order1'"):
        cp.resume(graph, thread, {"decisions": {"order2": {"approve": True, "approver": "a"}}})
    assert _grant_entries(cp, thread) == 0
    assert [t.thread_id for t in cp.paused()] == [thread]


def test_a_finished_run_without_a_grant_is_not_waiting(cp: ControlPlane) -> None:
    graph = _orders.graph(cp)
    done = cp.run(graph, {"task": "Restock", "context": {"units": 0}})
    assert done.status == "abstained", done
    with pytest.raises(InvalidDecision, match="not waiting for a decision") as refused:
        cp.resume(graph, done.thread_id, {"approve": True, "approver": "a"})
    assert not isinstance(refused.value, AlreadyDecided)


def test_paused_lists_newest_first_and_filters_by_graph(cp: ControlPlane) -> None:
    first, second = _paused(cp, "order-a"), _paused(cp, "order-b")
    assert [t.thread_id for t in cp.paused()] == [second, first]
    assert cp.paused(graph_name="invoice-audit") == []
    assert [t.thread_id for t in cp.paused(graph_name="order-desk", limit=1)] == [second]


def test_a_used_thread_is_refused_to_another_graph_invoked_directly(cp: ControlPlane) -> None:
    thread = _paused(cp)
    cp.resume(_orders.graph(cp), thread, {"approve": False, "approver": "bob"})
    other = reference.graph(cp)
    with pytest.raises(ThreadInUse, match="already holds a run"):
        other.invoke(
            cast(FenceState, reference.prepare_input(reference.case_input("compliant"))),
            _config(thread),
        )
    assert cp.status(thread).graph_name == "order-desk"
    assert graph_identity(other).name == "invoice-audit"


def test_the_begin_node_refuses_a_thread_another_graph_claimed(cp: ControlPlane) -> None:
    # A thread the runner claimed for the order desk, before its first checkpoint.
    assert claim_thread(cp.engine, "claimed-1", graph_identity(_orders.graph(cp)))
    other = reference.graph(cp)
    with pytest.raises(WrongGraph, match="belongs to graph 'order-desk'"):
        other.invoke(
            cast(FenceState, reference.prepare_input(reference.case_input("compliant"))),
            _config("claimed-1"),
        )
    assert cp.status("claimed-1").graph_name == "order-desk"


def test_arun_and_aresume(cp: ControlPlane) -> None:
    graph = _orders.graph(cp)

    async def scenario() -> tuple[str, str, list[str | None]]:
        paused = await cp.arun(graph, TASK, thread_id="order-async")
        done = await cp.aresume(graph, paused.thread_id, {"approve": True, "approver": "carol"})
        return paused.status, done.status, [a.approver for a in done.actions]

    assert asyncio.run(scenario()) == ("awaiting_grant", "answered", ["carol"])
    assert len(_orders.PLACED) == 1
    with pytest.raises(AlreadyDecided, match="carol"):
        asyncio.run(cp.aresume(graph, "order-async", {"approve": True, "approver": "dan"}))


# --- the command line -------------------------------------------------------------------


def _resume(db_url: str, thread: str, *options: str) -> tuple[int, str]:
    out = cli.invoke(app, ["resume", thread, *options, "--db", db_url], env={"COLUMNS": "200"})
    assert "Traceback" not in out.output
    return out.exit_code, out.output


def test_assay_resume_with_the_users_graph(cp: ControlPlane, db_url: str) -> None:
    thread = _paused(cp)
    code, out = _resume(
        db_url, thread, "--graph", "assay.apps.reference:graph", "--approve", "--approver", "zed"
    )
    assert code == 2 and "belongs to graph 'order-desk'" in out
    assert _orders.PLACED == []

    listed = cli.invoke(app, ["paused", "--db", db_url], env={"COLUMNS": "200"})
    assert listed.exit_code == 0 and thread in listed.output and "place_order" in listed.output

    code, out = _resume(db_url, thread, "--graph", ORDERS, "--approve", "--approver", "zed")
    assert code == 0, out
    assert "action place_order executed by zed" in out
    assert _orders.PLACED == [{"sku": "BT-105", "units": 120}]

    code, out = _resume(db_url, thread, "--graph", ORDERS, "--deny", "--approver", "dave")
    assert code == 2 and "already decided: approved by 'zed'" in out
    status = cli.invoke(app, ["status", thread, "--db", db_url], env={"COLUMNS": "200"})
    assert status.exit_code == 0 and "answered" in status.output and "order-desk" in status.output


def test_assay_resume_denies(cp: ControlPlane, db_url: str) -> None:
    thread = _paused(cp)
    code, out = _resume(
        db_url, thread, "--graph", ORDERS, "--deny", "--approver", "bob", "--reason", "on hold"
    )
    assert code == 0, out
    assert "action place_order denied by bob: on hold" in out
    assert _orders.PLACED == [] and cp.paused() == []


# --- helpers ----------------------------------------------------------------------------


def _config(thread_id: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread_id}}


def _plain_graph() -> Any:
    """A compiled LangGraph graph that fence() never saw."""

    def noop(state: FenceState) -> dict[str, Any]:
        return {}

    builder = StateGraph(FenceState)
    builder.add_node("noop", noop)
    builder.add_edge(START, "noop")
    builder.add_edge("noop", END)
    return builder.compile()
