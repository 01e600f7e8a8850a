"""The LangChain adapter, driven by a scripted tool-calling chat model and by LangGraph's
``ToolNode``: tools bound to one run, and tools shared by every run."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Annotated, Any, NotRequired, TypedDict

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode
from pydantic import Field

from assay import ControlPlane
from assay.errors import InvalidCall
from assay.tool_bus import RUN_ID_KEY, ToolResult, bus_tool
from tests.tool_bus._tools import ADD, FLAG, Counter


class ScriptedToolModel(GenericFakeChatModel):
    """Replays scripted AI messages; accepts tools like a tool-calling chat model."""

    bound: list[str] = Field(default_factory=list[str])

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedToolModel:  # type: ignore[override]
        self.bound = [t.name for t in tools]
        return self


def _agent_step(
    model: ScriptedToolModel, tools: list[BaseTool], history: list[BaseMessage]
) -> list[ToolMessage]:
    reply = model.invoke(history)
    assert isinstance(reply, AIMessage)
    by_name = {t.name: t for t in tools}
    return [by_name[call["name"]].invoke(call) for call in reply.tool_calls]


def test_scripted_model_calls_go_through_the_bus(plane: ControlPlane) -> None:
    counter = Counter()
    plane.registry.register(ADD, counter.add)
    plane.registry.register(FLAG, counter.flag)
    run = plane.ledger.start_run()
    tools = plane.bus.as_langchain_tools(run)
    assert sorted(t.name for t in tools) == ["add", "flag_invoice_line"]
    add_tool = next(t for t in tools if t.name == "add")
    assert add_tool.args_schema == ADD.as_json()["input_schema"]
    offered = convert_to_openai_tool(add_tool)["function"]  # what a chat model is shown
    assert offered["name"] == "add" and offered["description"] == ADD.description
    assert offered["parameters"]["properties"] == ADD.as_json()["input_schema"]["properties"]

    script = [
        AIMessage(
            content="",
            tool_calls=[
                {"name": "add", "args": {"a": 2, "b": 3}, "id": "tc-1"},
                {"name": "add", "args": {"a": "2", "b": 3}, "id": "tc-2"},
                {
                    "name": "flag_invoice_line",
                    "args": {"invoice": "I", "line": 1, "amount_over_cap": 5},
                    "id": "tc-3",
                },
            ],
        ),
        AIMessage(content="", tool_calls=[{"name": "add", "args": {"a": 2, "b": 3}, "id": "tc-1"}]),
    ]
    model = ScriptedToolModel(messages=iter(script)).bind_tools(tools)
    assert model.bound == [t.name for t in tools]
    history: list[BaseMessage] = [HumanMessage(content="add and flag")]
    first = _agent_step(model, tools, history)
    results = [ToolResult.from_json(str(m.content)) for m in first]
    assert [m.tool_call_id for m in first] == ["tc-1", "tc-2", "tc-3"]
    assert results[0].ok and results[0].output == 5
    assert plane.ledger.get(results[0].ledger_id or "").kind == "tool_output"
    assert results[1].error is not None and results[1].error.code == "invalid_arguments"
    assert results[2].error is not None and results[2].error.code == "grant_required"
    replay = _agent_step(model, tools, history)  # the same tool call id replayed
    assert ToolResult.from_json(str(replay[0].content)) == results[0]
    assert counter.calls == [{"a": 2, "b": 3}]


def test_async_invocation_and_plain_dict_input(plane: ControlPlane) -> None:
    counter = Counter()
    plane.registry.register(ADD, counter.add)
    run = plane.ledger.start_run()
    (tool,) = plane.bus.as_langchain_tools(run)
    out = asyncio.run(tool.ainvoke({"a": 1, "b": 1}))
    assert json.loads(out)["output"] == 2
    bad = json.loads(tool.invoke("not an object"))
    assert bad["ok"] is False and bad["error"]["code"] == "invalid_arguments"


# --- tools shared by every run: the run id is read at call time -----------------------


class RunState(TypedDict):
    """A graph state that carries the fenced run's id, as the fence's does."""

    messages: Annotated[list[AnyMessage], add_messages]
    run_id: NotRequired[str]


def _tool_graph(tool: BaseTool, state: type[Any] = RunState) -> Any:
    builder = StateGraph(state)
    builder.add_node("tools", ToolNode([tool]))
    builder.add_edge(START, "tools")
    return builder.compile()


def _asks(*args: dict[str, Any], call_id: str = "tc-1") -> AIMessage:
    return AIMessage(
        content="", tool_calls=[{"name": "add", "args": a, "id": call_id} for a in args]
    )


def _answer(out: dict[str, Any]) -> dict[str, Any]:
    message = out["messages"][-1]
    assert isinstance(message, ToolMessage)
    return json.loads(str(message.content))


def test_a_shared_tool_reads_each_run_from_the_graph_state(plane: ControlPlane) -> None:
    counter = Counter()
    plane.registry.register(ADD, counter.add)
    tool = bus_tool(plane.bus, ADD)  # built once, for no run in particular
    graph = _tool_graph(tool)
    runs = [plane.ledger.start_run(), plane.ledger.start_run()]

    answers = [
        _answer(graph.invoke({"messages": [_asks({"a": 2, "b": 3})], "run_id": r})) for r in runs
    ]

    assert counter.calls == [{"a": 2, "b": 3}] * 2  # the same call id, in two runs
    for run, answer in zip(runs, answers, strict=True):
        [output] = plane.ledger.entries(run, kinds=["tool_output"])
        assert answer == {"ok": True, "output": 5, "ledger_id": output.id, "error": None}
    assert tool.run_id is None


def test_a_shared_tool_reads_the_config_and_the_state_wins(plane: ControlPlane) -> None:
    plane.registry.register(ADD, Counter().add)
    tool = bus_tool(plane.bus, ADD)
    outer, inner = plane.ledger.start_run(), plane.ledger.start_run()
    config: RunnableConfig = {"configurable": {RUN_ID_KEY: outer}}

    by_config = _tool_graph(tool, MessagesState).invoke(
        {"messages": [_asks({"a": 1, "b": 1})]}, config
    )
    by_state = _tool_graph(tool).invoke(
        {"messages": [_asks({"a": 2, "b": 2}, call_id="tc-2")], "run_id": inner}, config
    )

    assert (
        _answer(by_config)["ledger_id"] == plane.ledger.entries(outer, kinds=["tool_output"])[0].id
    )
    assert [e.content for e in plane.ledger.entries(outer, kinds=["tool_output"])] == ["2"]
    assert [e.content for e in plane.ledger.entries(inner, kinds=["tool_output"])] == ["4"]
    assert _answer(by_state)["output"] == 4


def test_outside_any_run_the_model_is_told_and_nothing_runs(plane: ControlPlane) -> None:
    counter = Counter()
    plane.registry.register(ADD, counter.add)
    tool = bus_tool(plane.bus, ADD)

    answer = _answer(_tool_graph(tool).invoke({"messages": [_asks({"a": 1, "b": 2})]}))
    direct = json.loads(tool.invoke({"a": 1, "b": 2}))

    assert answer == direct
    assert answer["ok"] is False and answer["ledger_id"] is None
    assert answer["error"]["code"] == "no_run" and "fenced run" in answer["error"]["message"]
    assert counter.calls == []


def test_the_model_cannot_choose_the_run(plane: ControlPlane) -> None:
    counter = Counter()
    plane.registry.register(ADD, counter.add)
    tool = bus_tool(plane.bus, ADD)
    mine, other = plane.ledger.start_run(), plane.ledger.start_run()
    runtime = {"assay_runtime": {"state": {"run_id": other}}}
    forged = _asks({"a": 1, "b": 2, **runtime})
    named = _asks({"a": 1, "b": 2, "run_id": other}, call_id="tc-2")

    by_runtime = _answer(_tool_graph(tool).invoke({"messages": [forged], "run_id": mine}))
    by_name = _answer(_tool_graph(tool).invoke({"messages": [named], "run_id": mine}))
    call = {"name": "add", "args": {"a": 1, "b": 2, **runtime}, "id": "x", "type": "tool_call"}
    alone = json.loads(tool.invoke(call).content)

    assert plane.ledger.entries(other) == []
    [output] = plane.ledger.entries(mine, kinds=["tool_output"])
    assert by_runtime["ledger_id"] == output.id and counter.calls == [{"a": 1, "b": 2}]
    # A run_id among the arguments is only an argument, refused by the schema.
    assert by_name["error"]["code"] == "invalid_arguments"
    assert [e.id for e in plane.ledger.entries(mine, kinds=["error"])] == [by_name["ledger_id"]]
    assert alone["error"]["code"] == "no_run"


def test_a_run_id_the_bus_cannot_store_is_a_wiring_error(plane: ControlPlane) -> None:
    plane.registry.register(ADD, Counter().add)
    tool = bus_tool(plane.bus, ADD)
    with pytest.raises(InvalidCall, match="assay_run_id"):
        tool.invoke({"a": 1, "b": 2}, {"configurable": {RUN_ID_KEY: "run_\x00"}})
    with pytest.raises(InvalidCall, match="run_id"):
        bus_tool(plane.bus, ADD, run_id="")


def test_a_shared_tool_shows_the_model_only_the_registered_schema(plane: ControlPlane) -> None:
    plane.registry.register(ADD, Counter().add)
    offered = convert_to_openai_tool(bus_tool(plane.bus, ADD))["function"]
    assert offered["parameters"]["properties"] == ADD.as_json()["input_schema"]["properties"]
    assert "assay_runtime" not in json.dumps(offered)
