"""Fenced graphs under ``ainvoke`` / ``astream``, on the control plane's own durable
checkpointer (SQLite and PostgreSQL): ``async def`` agents, async nodes in a
subgraph agent, pauses for a grant and their resumes, exceptions kept with their
traceback, and one control plane serving several event loops."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt

from assay import ControlPlane
from assay.fence import FenceState, fence
from assay.verifier import LexicalNLI
from tests.fence.test_decisions import ORDER as ORDER_TOOL
from tests.fence.test_decisions import READ as STOCK_TOOL
from tests.fence.test_decisions import STOCK

TASK = "Restock BT-105"
APPROVE = {"approve": True, "approver": "alice"}
ORDER = {"id": "order1", "tool": "place_order", "version": "1.0.0", "requires_grant": True}


class Plane:
    """A control plane, and every order its irreversible tool has placed."""

    def __init__(self, cp: ControlPlane) -> None:
        self.cp = cp
        self.orders: list[dict[str, Any]] = []

    async def place_order(self, args: dict[str, Any]) -> dict[str, Any]:
        self.orders.append(dict(args))
        return {"order": len(self.orders)}


@pytest.fixture
def plane(db_url: str) -> Iterator[Plane]:
    with ControlPlane.open(db_url, nli=LexicalNLI()) as cp:
        tools = Plane(cp)
        cp.registry.register(STOCK_TOOL, lambda _args: STOCK)
        cp.registry.register(ORDER_TOOL, tools.place_order)
        yield tools


def handover(run_id: str, ledger_id: str, *, order: bool = False) -> dict[str, Any]:
    intents = [{**ORDER, "args": {"sku": "BT-105", "units": 120}, "depends_on": ["c1"]}]
    return {
        "handover": {
            "run_id": run_id,
            "from_agent": "buyer",
            "status": "ok",
            "claims": [
                {
                    "id": "c1",
                    "type": "Assertion",
                    "text": STOCK,
                    "confidence": 0.9,
                    "propositions": [{"id": "c1.p", "text": STOCK, "ledger_ids": [ledger_id]}],
                }
            ],
            "action_intents": intents if order else [],
        }
    }


def async_agent(cp: ControlPlane, *, order: bool = False) -> Any:
    """An ``async def`` agent that reads the stock through the bus's async call."""

    async def agent(state: FenceState) -> dict[str, Any]:
        out = await cp.bus.acall(state["run_id"], "stock", {})  # type: ignore[typeddict-item]
        return handover(state["run_id"], out.ledger_id or "", order=order)  # type: ignore[typeddict-item]

    return agent


def sync_agent(cp: ControlPlane, *, order: bool = False) -> Any:
    def agent(state: FenceState) -> dict[str, Any]:
        out = cp.bus.call(state["run_id"], "stock", {})  # type: ignore[typeddict-item]
        return handover(state["run_id"], out.ledger_id or "", order=order)  # type: ignore[typeddict-item]

    return agent


def thread(name: str) -> RunnableConfig:
    return {"configurable": {"thread_id": name}}


def agent_errors(cp: ControlPlane, run_id: str) -> list[dict[str, Any]]:
    return [json.loads(e.text) for e in cp.ledger.entries(run_id, kinds=["error"])]


def test_ainvoke_answers_with_an_async_agent_calling_the_bus(plane: Plane) -> None:
    graph = fence(async_agent(plane.cp), control_plane=plane.cp, name="async-answer")
    state = asyncio.run(graph.ainvoke({"task": TASK}, thread("a1")))
    result = state["result"]
    assert result.status == "answered", result.errors
    [claim] = result.claims
    assert claim.propositions[0].entailment.label == "entailment"
    # Written by the async saver, read back by the sync one: the same tables.
    assert graph.get_state(thread("a1")).values["result"] == result


def test_astream_yields_every_step_and_the_answer(plane: Plane) -> None:
    graph = fence(async_agent(plane.cp), control_plane=plane.cp, name="async-stream")

    async def updates() -> list[dict[str, Any]]:
        stream = graph.astream({"task": TASK}, thread("s1"), stream_mode="updates")
        return [chunk async for chunk in stream]

    chunks = asyncio.run(updates())
    # No action intent: verify goes straight to finish.
    assert [next(iter(c)) for c in chunks] == ["begin", "agent", "gate", "verify", "finish"]
    assert chunks[-1]["finish"]["result"].status == "answered"


def test_an_async_agent_pauses_for_a_grant_and_resumes_under_ainvoke(plane: Plane) -> None:
    graph = fence(async_agent(plane.cp, order=True), control_plane=plane.cp, name="async-grant")
    config = thread("g1")

    async def pause_then_approve() -> tuple[Any, Any]:
        paused = await graph.ainvoke({"task": TASK}, config)
        assert plane.orders == []  # nothing runs before the reviewer decides
        return paused, await graph.ainvoke(Command(resume=APPROVE), config)

    paused, done = asyncio.run(pause_then_approve())
    assert paused["result"].status == "awaiting_grant"
    [pending] = paused["result"].pending_grants
    assert (pending.tool, pending.args) == ("place_order", {"sku": "BT-105", "units": 120})
    assert done["result"].status == "answered"
    [action] = done["result"].actions
    assert (action.status, action.approver) == ("executed", "alice")
    assert plane.orders == [{"sku": "BT-105", "units": 120}]


def test_one_control_plane_serves_successive_event_loops(plane: Plane) -> None:
    graph = fence(async_agent(plane.cp, order=True), control_plane=plane.cp, name="two-loops")
    config = thread("l1")
    paused = asyncio.run(graph.ainvoke({"task": TASK}, config))
    assert paused["result"].status == "awaiting_grant"
    done = asyncio.run(graph.ainvoke(Command(resume=APPROVE), config))
    assert [a.status for a in done["result"].actions] == ["executed"]
    assert plane.orders == [{"sku": "BT-105", "units": 120}]


def test_one_control_plane_serves_event_loops_in_several_threads(plane: Plane) -> None:
    graph = fence(async_agent(plane.cp), control_plane=plane.cp, name="threads")
    statuses: list[str] = []

    def answer(name: str) -> None:
        async def two_runs() -> list[Any]:
            runs = (graph.ainvoke({"task": TASK}, thread(f"{name}-{i}")) for i in range(2))
            return await asyncio.gather(*runs)

        statuses.extend(state["result"].status for state in asyncio.run(two_runs()))

    workers = [threading.Thread(target=answer, args=(f"w{n}",)) for n in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert statuses == ["answered"] * 6


def test_a_run_paused_under_invoke_resumes_under_ainvoke(plane: Plane) -> None:
    graph = fence(sync_agent(plane.cp, order=True), control_plane=plane.cp, name="mixed")
    config = thread("m1")
    assert graph.invoke({"task": TASK}, config)["result"].status == "awaiting_grant"
    done = asyncio.run(graph.ainvoke(Command(resume=APPROVE), config))
    assert [a.status for a in done["result"].actions] == ["executed"]
    assert len(plane.orders) == 1


def subgraph_agent(cp: ControlPlane, *, fail: bool = False) -> Any:
    """A compiled LangGraph graph as the agent, its one node ``async def``."""

    async def gather(state: FenceState) -> dict[str, Any]:
        out = await cp.bus.acall(state["run_id"], "stock", {})  # type: ignore[typeddict-item]
        if fail:
            raise LookupError("the supplier catalogue has no BT-105")
        return handover(state["run_id"], out.ledger_id or "")  # type: ignore[typeddict-item]

    builder = StateGraph(FenceState)
    builder.add_node("gather", gather)
    builder.add_edge(START, "gather")
    builder.add_edge("gather", END)
    return builder.compile()


def test_an_async_node_in_a_subgraph_agent_answers(plane: Plane) -> None:
    graph = fence(subgraph_agent(plane.cp), control_plane=plane.cp, name="subgraph")
    state = asyncio.run(graph.ainvoke({"task": TASK}, thread("sg1")))
    assert state["result"].status == "answered", state["result"].errors


def test_an_async_subgraph_nodes_exception_is_kept_with_its_traceback(
    plane: Plane, caplog: pytest.LogCaptureFixture
) -> None:
    graph = fence(subgraph_agent(plane.cp, fail=True), control_plane=plane.cp, name="subgraph")
    state = asyncio.run(graph.ainvoke({"task": TASK}, thread("sg2")))
    result = state["result"]
    assert result.status == "failed"
    assert result.errors[-1]["message"] == (
        "the agent raised LookupError: the supplier catalogue has no BT-105"
    )
    [body] = agent_errors(plane.cp, result.run_id)
    assert (body["code"], body["type"]) == ("agent_failed", "LookupError")
    assert 'raise LookupError("the supplier catalogue has no BT-105")' in body["traceback"]
    assert "LookupError: the supplier catalogue has no BT-105" in caplog.text


def test_an_async_agents_exception_ends_the_run_failed_with_its_traceback(
    plane: Plane, caplog: pytest.LogCaptureFixture
) -> None:
    async def dividing(state: FenceState) -> dict[str, Any]:
        await asyncio.sleep(0)
        return {"handover": 1 / 0}

    graph = fence(dividing, control_plane=plane.cp, name="dividing")
    state = asyncio.run(graph.ainvoke({"task": TASK}, thread("z1")))
    assert state["result"].status == "failed"
    [body] = agent_errors(plane.cp, state["run_id"])
    assert (body["code"], body["type"], body["message"]) == (
        "agent_failed",
        "ZeroDivisionError",
        "division by zero",
    )
    assert 'return {"handover": 1 / 0}' in body["traceback"]
    assert "ZeroDivisionError" in caplog.text


def test_an_interrupt_inside_an_async_agent_pauses_the_run_not_fails_it(plane: Plane) -> None:
    asked: list[Any] = []

    async def asking(state: FenceState) -> dict[str, Any]:
        sku = interrupt("Which SKU?")
        asked.append(sku)
        out = await plane.cp.bus.acall(state["run_id"], "stock", {})  # type: ignore[typeddict-item]
        return handover(state["run_id"], out.ledger_id or "")  # type: ignore[typeddict-item]

    graph = fence(asking, control_plane=plane.cp, name="asking")
    config = thread("q1")

    async def ask_then_answer() -> tuple[Any, Any]:
        paused = await graph.ainvoke({"task": TASK}, config)
        return paused, await graph.ainvoke(Command(resume="BT-105"), config)

    paused, done = asyncio.run(ask_then_answer())
    assert [i.value for i in paused["__interrupt__"]] == ["Which SKU?"]
    assert "result" not in paused and asked == ["BT-105"]
    assert done["result"].status == "answered", done["result"].errors


async def _async_body(state: FenceState) -> dict[str, Any]:
    return {"handover": None}


@pytest.mark.parametrize(
    "agent",
    [_async_body, lambda state: _async_body(state)],  # pyright: ignore[reportUnknownLambdaType]
    ids=["async-def", "returns-a-coroutine"],
)
def test_an_async_agent_under_invoke_fails_with_a_clear_message(plane: Plane, agent: Any) -> None:
    graph = fence(agent, control_plane=plane.cp, name="async-under-invoke")
    # No coroutine is left un-awaited: the suite turns that warning into an error.
    result = graph.invoke({"task": TASK}, thread("i1"))["result"]
    assert result.status == "failed"
    [error] = result.errors
    assert error["code"] == "agent_failed"
    assert "run the fenced graph with ainvoke or astream" in error["message"]
