"""A refund desk, written as a LangGraph developer would write it, and fenced.

The tools are ``@tool`` functions: ``lookup_order`` answers an order as JSON (read
only) and ``issue_refund`` refunds it through the payment provider (irreversible, one
refund per order, the call's idempotency key handed to the provider). The agent is
LangGraph's own prebuilt ReAct agent (``create_react_agent``) with assay's bus tools
and the hand-over as its structured response. Its model looks the order up and calls
``issue_refund`` itself; that call becomes the run's pending grant, checked by the
gate like any action intent, and the run pauses. A person approves or denies; the
agent goes on with the call's outcome as the tool's result and hands over again.

The chat model is ``assay.testing.ScriptedChatModel``, so the desk runs offline:
replace it with any chat model that supports ``bind_tools`` and
``with_structured_output``. The scripted model reads its place from the conversation,
so a run paused here may be decided and resumed by another process.

From Python: ``python examples/refund_desk.py [approve|deny]`` (the shipped NLI model
checks the claims; ``tests/test_examples.py`` runs it with the stand-in model).

From the command line, ``graph`` is the factory ``--graph`` names (run from the
repository root, which puts ``examples`` on the path)::

    assay run --graph examples.refund_desk:graph --input '{"task": "Refund D-4410."}'
    assay resume THREAD --graph examples.refund_desk:graph --approve --approver ana

Over HTTP: ``assay serve --graph refunds=examples.refund_desk:graph``, then
``POST /v1/graphs/refunds/runs`` and ``POST /v1/runs/THREAD/decisions``.
"""

from __future__ import annotations

import sys
import warnings
from typing import Annotated, Any

from langchain_core.tools import InjectedToolArg, tool

from assay import ControlPlane, NLIModel, RunResult
from assay.fence import FencedGraph, ReactAgent, bus_tools, fence, handover_response_schema
from assay.testing import ScriptedChatModel, call, claim, hand_over
from assay.tool_bus import ToolContext

ORDERS = {
    "D-4410": {
        "order": "D-4410",
        "placed": "2025-03-02",
        "total": 29.97,
        "currency": "USD",
        "status": "returned",
    }
}
#: The refunds the payment provider made in this process: (order, amount, key).
REFUNDS: list[tuple[str, float, str]] = []
TOTAL = "The total of order D-4410 was {lookup_order[total]} {lookup_order[currency]}."


@tool
def lookup_order(order: str) -> dict[str, Any]:
    """Look an order up by its id: its total, currency and status."""
    return ORDERS[order]


@tool
def issue_refund(
    order: str, amount: float, context: Annotated[ToolContext, InjectedToolArg]
) -> dict[str, Any]:
    """Refund an order to the card it was paid with."""
    REFUNDS.append((order, amount, context.idempotency_key))
    return {"refund": f"R-{len(REFUNDS)}", "order": order, "amount": amount}


def install(cp: ControlPlane) -> None:
    """Register the desk's tools (``issue_refund`` irreversible, keyed by the order),
    once per control plane."""
    if cp.registry.binding("issue_refund", "1.0.0") is not None:
        return
    cp.registry.register_tool(lookup_order, side_effect="read_only")
    cp.registry.register_tool(
        issue_refund,
        side_effect="irreversible",
        units={"amount": "USD"},
        idempotency_key=["/order"],
    )


def model() -> ScriptedChatModel:
    """What the model does: look the order up, refund it itself, hand over what the
    lookup says; once the refund is decided, hand over again, with the refund when it
    ran (an optional claim: left out when the refund was denied)."""
    refunded = claim(
        "Refund {issue_refund[refund]} was issued.", cites="issue_refund", optional=True
    )
    return ScriptedChatModel(
        script=[
            call("lookup_order", order="D-4410"),
            call("issue_refund", order="D-4410", amount=29.97),
            hand_over(claim(TOTAL, cites="lookup_order")),
            hand_over(claim(TOTAL, cites="lookup_order"), refunded),
        ]
    )


def desk(cp: ControlPlane, chat_model: ScriptedChatModel) -> FencedGraph:
    """LangGraph's prebuilt ReAct agent with the desk's bus tools, fenced."""
    from langgraph.prebuilt import create_react_agent  # pyright: ignore[reportDeprecated]

    tools = bus_tools(cp, ["lookup_order", "issue_refund"])
    with warnings.catch_warnings():
        # Deprecated since LangGraph 1.0 for langchain.agents.create_agent, which is
        # fenced the same way; assay.fence.react_agent builds the same loop.
        warnings.simplefilter("ignore", DeprecationWarning)
        agent = create_react_agent(  # pyright: ignore[reportDeprecated]
            chat_model, list(tools), response_format=handover_response_schema()
        )
    return fence(ReactAgent(agent, name="refund-desk", tools=tools), control_plane=cp, name="desk")


def graph(cp: ControlPlane) -> FencedGraph:
    """The factory ``assay run --graph examples.refund_desk:graph`` and ``assay serve
    --graph refunds=examples.refund_desk:graph`` name: the tools installed, the desk
    built on the scripted model."""
    install(cp)
    return desk(cp, model())


def main(
    url: str = "sqlite:///./refund_desk.db", *, approve: bool = True, nli: NLIModel | None = None
) -> tuple[RunResult, RunResult]:
    """Refund order D-4410: the run pauses for the model's own refund call, a person
    decides, and the run ends ``answered`` (approved) or ``denied``."""
    with ControlPlane.open(url, nli=nli) as cp:
        fenced = graph(cp)
        paused = cp.run(fenced, {"task": "The customer returned order D-4410: refund it."})
        [pending] = paused.pending_grants
        print(paused.status, pending.tool, pending.args, "|", paused.answer)
        decision: dict[str, Any] = {"approve": approve, "approver": "ana"}
        if not approve:
            decision["reason"] = "the return has not arrived"
        done = cp.resume(fenced, paused.thread_id, decision)
        print(done.status, [(a.tool, a.status) for a in done.actions], "|", done.answer)
        return paused, done


if __name__ == "__main__":
    main(approve=sys.argv[1:] != ["deny"])
