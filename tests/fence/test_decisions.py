"""A reviewer's decision reaches a user's own fenced graph through ``Command(resume=...)``:
anything that is not a decision is refused before a decision or a grant is written
and the run stays paused; the executed call names the grant it ran under; an agent's tool-call id
cannot take the call id of an intent."""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from assay import ControlPlane, ToolSpec
from assay.fence import FenceState, fence
from assay.fence._decisions import DecisionStore
from assay.fence._review import ReviewRequest
from assay.verifier import LexicalNLI

STOCK = "Warehouse W-12 holds 120 units of SKU BT-105."
READ = ToolSpec(
    name="stock",
    version="1.0.0",
    side_effect="read_only",
    description="Stock on hand.",
    input_schema={"type": "object", "additionalProperties": False},
    output_schema={"type": "string"},
)
ORDER = ToolSpec(
    name="place_order",
    version="1.0.0",
    side_effect="irreversible",
    description="Order units of a SKU from the supplier.",
    input_schema={
        "type": "object",
        "additionalProperties": False,
        "required": ["sku", "units"],
        "properties": {
            "sku": {"type": "string"},
            "units": {"type": "integer", "minimum": 1, "x-assay-unit": "units"},
        },
    },
    output_schema={"type": "object"},
)


#: The orders placed through each control plane's order tool (what "the action ran"
#: means here), by control plane.
ORDERS: weakref.WeakKeyDictionary[ControlPlane, list[dict[str, Any]]] = weakref.WeakKeyDictionary()


def register_order_tools(
    plane: ControlPlane, orders: list[dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    """Register the stock and order tools on ``plane``; ``orders`` (a new list by
    default, returned, and kept as ``ORDERS[plane]``) collects every order placed."""
    orders = [] if orders is None else orders
    ORDERS[plane] = orders
    plane.registry.register(READ, lambda _args: STOCK)
    plane.registry.register(ORDER, lambda args: orders.append(args) or {"order": len(orders)})
    return orders


@pytest.fixture
def cp(db_url: str) -> Iterator[ControlPlane]:
    with ControlPlane.open(db_url, nli=LexicalNLI()) as plane:
        register_order_tools(plane)
        yield plane


def order_agent(cp: ControlPlane, units: int = 120, intents: tuple[str, ...] = ("order1",)):
    """An agent that reads the stock and asks to order ``units`` once per intent id."""

    def agent(state: FenceState) -> dict[str, Any]:
        out = cp.bus.call(state["run_id"], "stock", {})  # type: ignore[typeddict-item]
        return {
            "handover": {
                "run_id": state["run_id"],  # type: ignore[typeddict-item]
                "from_agent": "buyer",
                "status": "ok",
                "claims": [
                    {
                        "id": "c1",
                        "type": "Assertion",
                        "text": STOCK,
                        "confidence": 0.9,
                        "propositions": [
                            {"id": "c1.p", "text": STOCK, "ledger_ids": [out.ledger_id]}
                        ],
                    }
                ],
                "action_intents": [
                    {
                        "id": intent,
                        "tool": "place_order",
                        "version": "1.0.0",
                        "requires_grant": True,
                        "args": {"sku": "BT-105", "units": units},
                        "depends_on": ["c1"],
                    }
                    for intent in intents
                ],
            }
        }

    return agent


def _paused(cp: ControlPlane, units: int = 120) -> tuple[Any, RunnableConfig]:
    graph = fence(
        order_agent(cp, units), control_plane=cp, name="orders", checkpointer=InMemorySaver()
    )
    config: RunnableConfig = {"configurable": {"thread_id": "order-thread"}}
    state = graph.invoke({"task": "Restock BT-105"}, config)
    assert state["result"].status == "awaiting_grant", state["result"].errors
    return graph, config


@pytest.mark.parametrize(
    "value",
    [
        "yes",
        {"approve": "yes", "approver": "alice"},
        {"approve": 1, "approver": "alice"},
        {"approve": True, "approver": ["alice"]},
        {"approve": True, "approver": 7},
        {"approve": True, "approver": "al\x00ice"},
        {"approve": True, "approver": "al\x1b[2Jice"},
        {"approve": True, "approver": "al\ud800ice"},
        {"approve": True, "approver": " "},
        {"decisions": {}},
        {"decisions": {"order1": {"approve": True, "approver": "a"}, "other": {}}},
        {"approve": True, "approver": "alice", "reason": "x" * 5000},
    ],
)
def test_anything_but_a_decision_is_refused_and_the_run_stays_paused(
    cp: ControlPlane, value: object
) -> None:
    graph, config = _paused(cp)
    refused = graph.invoke(Command(resume=value), config)
    [paused] = refused["__interrupt__"]
    request = ReviewRequest.from_interrupt(paused.value)
    assert request.refused is not None and request.refused.code == "invalid_decision"
    assert [p.intent_id for p in request.pending] == ["order1"]
    run_id = graph.get_state(config).values["run_id"]
    assert cp.ledger.entries(run_id, kinds=["grant"]) == []
    assert DecisionStore(cp.engine).for_run(run_id) == {}
    errors = cp.ledger.entries(run_id, kinds=["error"])
    assert [e.metadata["code"] for e in errors] == ["invalid_decision"]
    assert ORDERS[cp] == []
    assert graph.get_state(config).next  # still paused: a valid decision can follow
    state = graph.invoke(Command(resume={"approve": True, "approver": "alice"}), config)
    [action] = state["result"].actions
    assert (action.status, action.approver) == ("executed", "alice")
    assert ORDERS[cp] == [{"sku": "BT-105", "units": 120}]


def test_a_resume_of_none_writes_nothing_and_the_run_stays_paused(cp: ControlPlane) -> None:
    """LangGraph itself fails on ``Command(resume=None)`` before any node runs (its
    pregel loop, not assay); what matters here is that nothing happened."""
    graph, config = _paused(cp)
    with pytest.raises(UnboundLocalError):
        graph.invoke(Command(resume=None), config)
    run_id = graph.get_state(config).values["run_id"]
    assert cp.ledger.entries(run_id, kinds=["grant"]) == [] and graph.get_state(config).next


def test_an_invented_quantity_is_refused_before_anyone_is_asked(cp: ControlPlane) -> None:
    graph = fence(
        order_agent(cp, units=1200), control_plane=cp, name="orders", checkpointer=InMemorySaver()
    )
    state = graph.invoke({"task": "Restock"}, {"configurable": {"thread_id": "t2"}})
    result = state["result"]
    assert result.status == "abstained" and result.actions == ()
    assert "ungrounded_argument" in {e["code"] for e in result.errors}


def test_a_tool_call_id_cannot_take_an_intents_call_id(cp: ControlPlane) -> None:
    """A model picks the act node's call id for a read-only call; the grant still
    executes the order, because intents' call ids live in their own namespace."""
    graph, config = _paused(cp)
    run_id = graph.get_state(config).values["run_id"]
    tools = {t.name: t for t in cp.bus.as_langchain_tools(run_id)}
    tools["stock"].invoke(
        {"args": {}, "id": f"{run_id}/order1", "name": "stock", "type": "tool_call"}
    )
    tools["stock"].invoke(
        {"args": {}, "id": f"intent:{run_id}/order1", "name": "stock", "type": "tool_call"}
    )
    state = graph.invoke(Command(resume={"approve": True, "approver": "alice"}), config)
    [action] = state["result"].actions
    assert action.status == "executed", action
