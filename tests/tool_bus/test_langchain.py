"""The LangChain adapter, driven by a scripted tool-calling chat model."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field

from assay import ControlPlane
from assay.tool_bus import ToolResult
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
