"""self_correcting around a LangGraph agent node, driven by a scripted chat model that
records exactly which messages, with which roles, it was sent."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

import pytest
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    convert_to_openai_messages,
)
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langgraph.errors import GraphRecursionError
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from pydantic import Field

from assay import UsageError, self_correcting

LOOKUP = '{"invoice": "INV-4421", "status": "paid", "confirmation": "PAY-12345"}'


class ScriptedChat(BaseChatModel):
    """Answers from a fixed script and keeps every message list it was sent."""

    script: list[AIMessage]
    received: list[list[BaseMessage]] = Field(default_factory=list[list[BaseMessage]])

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.received.append(list(messages))
        reply = self.script[len(self.received) - 1]
        return ChatResult(generations=[ChatGeneration(message=reply)])

    def roles(self, call: int) -> list[str]:
        return [m["role"] for m in convert_to_openai_messages(self.received[call])]


@tool
def lookup_invoice(invoice: str) -> str:
    """Look an invoice up in the billing system."""
    return LOOKUP if invoice == "INV-4421" else '{"error": "not found"}'


def _call() -> AIMessage:
    return AIMessage(
        content="",
        tool_calls=[{"name": "lookup_invoice", "args": {"invoice": "INV-4421"}, "id": "call_1"}],
    )


def _graph(
    model: ScriptedChat, *, budget: int = 1, asynchronous: bool = False, **options: Any
) -> CompiledStateGraph[Any, Any, Any, Any]:
    def agent(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [model.invoke(state["messages"])]}

    async def async_agent(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    node = async_agent if asynchronous else agent
    builder = StateGraph(MessagesState)
    builder.add_node("agent", self_correcting(node, budget=budget, **options))
    builder.add_node("tools", ToolNode([lookup_invoice]))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition, {"tools": "tools", END: END})
    builder.add_edge("tools", "agent")
    return builder.compile()


def _ask(
    graph: CompiledStateGraph[Any, Any, Any, Any], *, recursion_limit: int = 25
) -> list[BaseMessage]:
    result = graph.invoke(
        {"messages": [HumanMessage("Is invoice INV-4421 paid?")]},
        config={"recursion_limit": recursion_limit},
    )
    return result["messages"]


def test_a_corrected_reply_goes_out_clean() -> None:
    model = ScriptedChat(
        script=[
            _call(),
            AIMessage("INV-4421 is paid, confirmation PAY-99999."),
            AIMessage("INV-4421 is paid, confirmation PAY-12345."),
        ]
    )
    messages = _ask(_graph(model))
    assert [m.type for m in messages] == ["human", "ai", "tool", "ai"]
    assert messages[-1].content == "INV-4421 is paid, confirmation PAY-12345."
    assert model.roles(0) == ["user"]
    assert model.roles(1) == ["user", "assistant", "tool"]
    # The retry ends on a user message: the flagged reply, then the framework's note.
    assert model.roles(2) == ["user", "assistant", "tool", "assistant", "user"]
    correction = model.received[2][-1]
    assert isinstance(correction, HumanMessage)
    assert correction.text.startswith("[assay correction]") and "`PAY-99999`" in correction.text
    assert model.received[2][-2].text == "INV-4421 is paid, confirmation PAY-99999."


def test_a_reply_that_fails_again_is_escalated() -> None:
    model = ScriptedChat(
        script=[
            _call(),
            AIMessage("INV-4421 is paid, confirmation PAY-99999."),
            AIMessage("Paid. The confirmation is PAY-99999."),
        ]
    )
    final = _ask(_graph(model))[-1]
    assert final.text.startswith("Paid. The confirmation is PAY-99999.")
    assert "[Unverified after self-correction: `PAY-99999`" in final.text
    assert len(model.received) == 3


def _tightest_limit() -> int:
    """The smallest recursion limit under which agent -> tools -> agent completes."""
    for limit in range(1, 10):
        model = ScriptedChat(script=[_call(), AIMessage("Paid under PAY-12345.")])
        try:
            _ask(_graph(model), recursion_limit=limit)
        except GraphRecursionError:
            continue
        return limit
    raise AssertionError("no limit under 10 was enough")


def test_the_correction_spends_no_graph_step() -> None:
    """The retry happens inside the agent's own step: the tightest limit still holds."""
    limit = _tightest_limit()
    model = ScriptedChat(
        script=[
            _call(),
            AIMessage("Paid under PAY-99999."),
            AIMessage("Paid under PAY-12345."),
        ]
    )
    messages = _ask(_graph(model), recursion_limit=limit)
    assert messages[-1].content == "Paid under PAY-12345."
    assert len(model.received) == 3


def test_earlier_corrections_do_not_vouch_for_an_identifier() -> None:
    model = ScriptedChat(
        script=[
            _call(),
            AIMessage("Paid under PAY-99999."),
            AIMessage("Still PAY-99999."),
            AIMessage("Paid under PAY-12345."),
        ]
    )
    messages = _ask(_graph(model, budget=2))
    assert messages[-1].content == "Paid under PAY-12345."
    assert model.roles(3) == ["user", "assistant", "tool", "assistant", "user", "assistant", "user"]
    # The second correction still names the value the first flagged reply introduced.
    assert "`PAY-99999`" in model.received[3][-1].text


def test_budget_zero_only_annotates() -> None:
    model = ScriptedChat(script=[_call(), AIMessage("Paid under PAY-99999.")])
    final = _ask(_graph(model, budget=0))[-1]
    assert "[Unverified: `PAY-99999`" in final.text
    assert len(model.received) == 2


def test_echoes_get_a_footnote_but_no_retry() -> None:
    model = ScriptedChat(script=[AIMessage("Invoice INV-4421 is one I cannot look up.")])
    final = _ask(_graph(model))[-1]
    assert "[From your own message: `INV-4421`" in final.text
    assert len(model.received) == 1


def test_tool_results_from_elsewhere_count() -> None:
    model = ScriptedChat(script=[AIMessage("Paid under PAY-12345.")])
    final = _ask(_graph(model, tool_results=lambda state: [LOOKUP]))[-1]
    assert final.content == "Paid under PAY-12345."
    assert len(model.received) == 1


def test_a_crashing_validator_fails_open(caplog: pytest.LogCaptureFixture) -> None:
    def broken(state: Any) -> Sequence[str]:
        raise RuntimeError("ledger unreachable")

    model = ScriptedChat(script=[AIMessage("Paid under PAY-99999.")])
    with caplog.at_level(logging.ERROR, logger="assay.gate"):
        final = _ask(_graph(model, tool_results=broken))[-1]
    assert final.content == "Paid under PAY-99999."
    assert len(model.received) == 1
    assert "reply guard failed" in caplog.text and "ledger unreachable" in caplog.text


def test_async_nodes_are_corrected_too() -> None:
    model = ScriptedChat(
        script=[
            _call(),
            AIMessage("Paid under PAY-99999."),
            AIMessage("Paid under PAY-12345."),
        ]
    )
    graph = _graph(model, asynchronous=True)
    result = asyncio.run(graph.ainvoke({"messages": [HumanMessage("Is INV-4421 paid?")]}))
    assert result["messages"][-1].content == "Paid under PAY-12345."
    assert model.roles(2)[-2:] == ["assistant", "user"]


def test_a_bad_budget_is_a_usage_error() -> None:
    with pytest.raises(UsageError):
        self_correcting(lambda state: state, budget=-1)
