"""A ReAct agent fenced through the adapter, driven by a scripted tool-calling model.

The scripted model reads what a real one reads (the tool results it was sent, with
their ledger ids, and the feedback of a refused round) and follows a fixed policy,
so each test is deterministic. The verifier is the stand-in NLI model: the model is
not the subject here.
"""

from __future__ import annotations

import asyncio
import json
import runpy
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolCall, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from pydantic import Field

from assay import ControlPlane, ToolSpec
from assay.errors import ToolNotFound, UsageError
from assay.fence import (
    HANDOVER_PROMPT,
    FencedGraph,
    ReactAgent,
    RunResult,
    bus_tools,
    fence,
    handover_response_schema,
    react_agent,
)
from assay.verifier import LexicalNLI

ROOT = Path(__file__).resolve().parents[2]
STATUS = "Order ORD-1042 shipped on 2025-03-05 with tracking number TRK-47110815."
HONEST = "Order ORD-1042 shipped on 2025-03-05."
INVENTED = "Order ORD-1042 shipped with tracking number TRK-99991234."
TASK = "Has order ORD-1042 shipped?"
ORDER_STATUS = ToolSpec(
    name="order_status",
    version="1.0.0",
    side_effect="read_only",
    description="The shipping status of an order.",
    input_schema={
        "type": "object",
        "required": ["order"],
        "additionalProperties": False,
        "properties": {"order": {"type": "string", "pattern": "^ORD-[0-9]+$"}},
    },
    output_schema={"type": "string"},
)

#: A policy: the messages the model is sent and the tools bound to it -> its reply.
Script = Callable[[list[BaseMessage], tuple[str, ...]], AIMessage]


class ScriptedChatModel(BaseChatModel):
    """A tool-calling chat model that follows ``script`` instead of sampling.

    ``bind_tools`` returns a copy that knows what was bound (the agent's tools, or
    the hand-over schema that ``with_structured_output`` binds), so the script can
    tell a tool-calling turn from the structured response. ``seen`` keeps every
    message list the model was sent, shared by the copies.
    """

    script: Script
    bound: tuple[str, ...] = ()
    seen: list[list[BaseMessage]] = Field(default_factory=list[list[BaseMessage]])

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        return self.model_copy(update={"bound": tuple(_name(t) for t in tools)})

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.seen.append(list(messages))
        reply = self.script(list(messages), self.bound)
        return ChatResult(generations=[ChatGeneration(message=reply)])


def _name(tool: object) -> str:
    if isinstance(tool, BaseTool):
        return tool.name
    return str(convert_to_openai_tool(tool)["function"]["name"])  # type: ignore[arg-type]


def _results(messages: Sequence[BaseMessage]) -> list[dict[str, Any]]:
    """The tool results the model was sent (the bus's ``ToolResult`` JSON)."""
    return [json.loads(str(m.content)) for m in messages if isinstance(m, ToolMessage)]


def _refused(messages: Sequence[BaseMessage]) -> bool:
    return any(
        isinstance(m, HumanMessage) and "refused your previous hand-over" in str(m.content)
        for m in messages
    )


def researcher(claim: Callable[[list[BaseMessage]], str]) -> Script:
    """Look the order up once, then hand over ``claim(messages)`` citing the ledger id
    of the result the bus sent back."""

    def reply(messages: list[BaseMessage], bound: tuple[str, ...]) -> AIMessage:
        results = _results(messages)
        if "handover" in bound:
            draft = _draft(claim(messages), results[-1]["ledger_id"])
            return AIMessage(content="", tool_calls=[_call("handover", draft, "handover-1")])
        if not results:
            return AIMessage(content="", tool_calls=[_call("order_status", {"order": "ORD-1042"})])
        return AIMessage(content="The order's status is in the tool result.")

    return reply


def _call(name: str, args: dict[str, Any], call_id: str = "call-1") -> ToolCall:
    return ToolCall(name=name, args=args, id=call_id, type="tool_call")


def _draft(text: str, ledger_id: str) -> dict[str, Any]:
    return {
        "claims": [
            {
                "id": "shipped",
                "type": "Assertion",
                "text": text,
                "confidence": 0.9,
                "propositions": [{"id": "shipped.p", "text": text, "ledger_ids": [ledger_id]}],
            }
        ],
        "open_questions": [],
        "action_intents": [],
    }


@pytest.fixture
def cp(db_url: str) -> Iterator[ControlPlane]:
    with ControlPlane.open(db_url, nli=LexicalNLI()) as plane:
        plane.registry.register(ORDER_STATUS, lambda _args: STATUS)
        yield plane


def _ask(graph: FencedGraph, thread_id: str) -> RunResult:
    state = graph.invoke({"task": TASK}, {"configurable": {"thread_id": thread_id}})
    return state["result"]


def test_an_honest_agent_is_answered_with_its_claim_verified(cp: ControlPlane) -> None:
    model = ScriptedChatModel(script=researcher(lambda _: HONEST))
    graph = fence(react_agent(model, cp, tools=["order_status"]), control_plane=cp, name="orders")

    result = _ask(graph, "honest")

    assert result.status == "answered" and result.rounds == 0
    [output] = cp.ledger.entries(result.run_id, kinds=["tool_output"])
    assert output.content == STATUS
    [claim] = result.claims
    [prop] = claim.propositions
    assert prop.ledger_ids == [output.id]
    assert prop.entailment is not None and prop.entailment.label == "entailment"
    assert result.answer == f"- {HONEST} [{output.id}]"
    first_turn = model.seen[0]
    assert first_turn[0].content == HANDOVER_PROMPT and first_turn[1].content == TASK
    handover = cp.ledger.entries(result.run_id, kinds=["handover"])
    assert [json.loads(str(e.content))["from_agent"] for e in handover] == ["react_agent"]


def test_an_invented_identifier_is_refused_and_never_answered(cp: ControlPlane) -> None:
    model = ScriptedChatModel(script=researcher(lambda _: INVENTED))
    agent = react_agent(model, cp, tools=["order_status"])
    graph = fence(agent, control_plane=cp, name="orders", max_evidence_rounds=1)

    result = _ask(graph, "invented")

    assert result.status == "abstained" and result.rounds == 2
    assert result.claims == ()
    assert result.answer is not None and result.answer.startswith("I don't know")
    # The invented number is never asserted: it appears only where the answer says
    # what is not established, with the reason.
    asserted, _, not_established = result.answer.partition("Not established:")
    assert "TRK-99991234" not in asserted
    assert "TRK-99991234" in not_established and "unverified_identifier" in not_established
    assert [u.proposition_id for u in result.unsupported] == ["shipped.p"]
    refusals = [e for e in result.errors if e["code"] == "unverified_identifier"]
    assert refusals and "TRK-99991234" in refusals[0]["message"]
    told = [m for turn in model.seen for m in turn if _refused([m])]
    assert told and "unverified_identifier" in str(told[0].content)


def test_a_refused_agent_finds_the_evidence_in_the_next_round(cp: ControlPlane) -> None:
    model = ScriptedChatModel(
        script=researcher(lambda messages: HONEST if _refused(messages) else INVENTED)
    )
    graph = fence(react_agent(model, cp, tools=["order_status"]), control_plane=cp, name="orders")

    result = _ask(graph, "learns")

    assert result.status == "answered" and result.rounds == 1
    assert [c.text for c in result.claims] == [HONEST]


def test_the_tools_are_built_once_and_each_run_records_its_own_calls(
    cp: ControlPlane,
) -> None:
    model = ScriptedChatModel(script=researcher(lambda _: HONEST))
    agent = react_agent(model, cp, tools=["order_status"])
    graph = fence(agent, control_plane=cp, name="orders")
    [tool] = agent.tools
    node = agent.graph.nodes["tools"].bound  # type: ignore[attr-defined]
    assert isinstance(node, ToolNode) and node.tools_by_name["order_status"] is tool

    first, second = _ask(graph, "one"), _ask(graph, "two")

    assert node.tools_by_name["order_status"] is tool and agent.tools == (tool,)
    assert first.status == second.status == "answered" and first.run_id != second.run_id
    for result in (first, second):
        calls = cp.ledger.entries(result.run_id, kinds=["tool_call"])
        [output] = cp.ledger.entries(result.run_id, kinds=["tool_output"])
        assert [c.source for c in calls] == ["tool:order_status@1.0.0"]
        assert result.claims[0].propositions[0].ledger_ids == [output.id]


def test_a_model_that_never_stops_calling_tools_still_hands_over(cp: ControlPlane) -> None:
    def restless(messages: list[BaseMessage], bound: tuple[str, ...]) -> AIMessage:
        results = _results(messages)
        if "handover" in bound:
            draft = _draft(HONEST, results[-1]["ledger_id"])
            return AIMessage(content="", tool_calls=[_call("handover", draft, "handover-1")])
        again = _call("order_status", {"order": "ORD-1042"}, f"call-{len(results)}")
        return AIMessage(content="", tool_calls=[again])

    model = ScriptedChatModel(script=restless)
    graph = fence(react_agent(model, cp, tools=["order_status"]), control_plane=cp, name="orders")
    config: RunnableConfig = {"configurable": {"thread_id": "restless"}, "recursion_limit": 12}

    result: RunResult = graph.invoke({"task": TASK}, config)["result"]

    assert result.status == "answered"
    calls = cp.ledger.entries(result.run_id, kinds=["tool_call"])
    assert 1 < len(calls) < 12
    # Its last tool call was replaced by a reply saying why, and the hand-over followed.
    stopped = model.seen[-1][-1]
    assert isinstance(stopped, AIMessage) and not stopped.tool_calls
    assert "ran out of steps" in str(stopped.content)


def test_under_ainvoke_the_model_and_the_tools_run_async(cp: ControlPlane) -> None:
    model = ScriptedChatModel(script=researcher(lambda _: HONEST))
    graph = fence(react_agent(model, cp, tools=["order_status"]), control_plane=cp, name="orders")

    state = asyncio.run(graph.ainvoke({"task": TASK}, {"configurable": {"thread_id": "async"}}))

    result: RunResult = state["result"]
    assert result.status == "answered"
    [output] = cp.ledger.entries(result.run_id, kinds=["tool_output"])
    assert result.claims[0].propositions[0].ledger_ids == [output.id]


# The agent a user already has may well come from the deprecated factory.
@pytest.mark.filterwarnings("ignore::langgraph.warnings.LangGraphDeprecatedSinceV10")
def test_a_users_own_create_react_agent_is_fenced_the_same_way(cp: ControlPlane) -> None:
    from langgraph.prebuilt import create_react_agent  # pyright: ignore[reportDeprecated]

    tools = bus_tools(cp, {"order_status": "1.0.0"})
    model = ScriptedChatModel(script=researcher(lambda _: HONEST))
    theirs = create_react_agent(  # pyright: ignore[reportDeprecated]
        model, list(tools), response_format=handover_response_schema()
    )
    agent = ReactAgent(theirs, name="their-agent", tools=tools)
    graph = fence(agent, control_plane=cp, name="orders")

    result = _ask(graph, "theirs")

    assert result.status == "answered"
    [output] = cp.ledger.entries(result.run_id, kinds=["tool_output"])
    assert result.claims[0].propositions[0].ledger_ids == [output.id]


def test_the_response_schema_leaves_out_what_the_author_never_writes() -> None:
    schema = handover_response_schema()
    text = json.dumps(schema)
    assert "entailment" not in text and "$ref" not in text
    assert "run_id" not in schema["properties"] and "from_agent" not in schema["properties"]
    proposition = schema["properties"]["claims"]["items"]["properties"]["propositions"]
    assert set(proposition["items"]["properties"]) == {
        "id",
        "text",
        "pred",
        "args",
        "ledger_ids",
        "cites",
    }


def test_a_graph_without_a_structured_response_hands_over_failed(cp: ControlPlane) -> None:
    def chat(state: MessagesState) -> dict[str, Any]:
        return {"messages": [AIMessage(content="Order ORD-1042 has shipped.")]}

    builder = StateGraph(MessagesState)
    builder.add_node("chat", chat)
    builder.add_edge(START, "chat")
    graph = fence(ReactAgent(builder.compile(), name="chatty"), control_plane=cp, name="orders")

    result = _ask(graph, "no-schema")

    assert result.status == "failed" and result.answer is None and result.claims == ()
    [handover] = cp.ledger.entries(result.run_id, kinds=["handover"])
    body = json.loads(str(handover.content))
    assert (body["status"], body["from_agent"]) == ("failed", "chatty")
    assert body["errors"] == ["the agent's graph gave no structured hand-over (got nothing)"]


def test_bad_settings_are_refused_when_the_agent_is_built(cp: ControlPlane) -> None:
    model = ScriptedChatModel(script=researcher(lambda _: HONEST))
    with pytest.raises(ToolNotFound, match="did you mean order_status"):
        react_agent(model, cp, tools=["order_statu"])
    with pytest.raises(ToolNotFound, match=r"9\.9\.9"):
        react_agent(model, cp, tools={"order_status": "9.9.9"})
    with pytest.raises(UsageError, match="tools must name registered tools"):
        react_agent(model, cp, tools=42)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="name"):
        react_agent(model, cp, tools="order_status", name="\x00")


def test_the_example_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    runpy.run_path(str(ROOT / "examples" / "fence_a_react_agent.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert out.startswith("answered | - Order ORD-1042 shipped on 2025-03-05. [led_")
