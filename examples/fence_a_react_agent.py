"""Fence a LangGraph ReAct agent: its tools come from the registry, its hand-over from
its structured response.

The chat model here is scripted, so the example runs offline: it calls the one tool,
then hands over a claim citing the ledger id the tool result carried. Replace it with
any chat model that supports ``bind_tools`` and ``with_structured_output``.
"""

import json
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import BaseTool

from assay import ControlPlane, ToolSpec
from assay.fence import fence, react_agent

STATUS = "Order ORD-1042 shipped on 2025-03-05 with tracking number TRK-47110815."


class ScriptedModel(BaseChatModel):
    """Calls ``order_status`` once, then writes the hand-over from what it returned."""

    writing: bool = False

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        # with_structured_output binds the hand-over schema, titled "handover".
        names = [t.name if isinstance(t, BaseTool) else t.get("title") for t in tools]
        return self.model_copy(update={"writing": "handover" in names})

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        results = [json.loads(str(m.content)) for m in messages if isinstance(m, ToolMessage)]
        if self.writing:
            claim = "Order ORD-1042 shipped on 2025-03-05."
            proposition = {"id": "p1", "text": claim, "ledger_ids": [results[-1]["ledger_id"]]}
            draft = {
                "claims": [
                    {
                        "id": "c1",
                        "type": "Assertion",
                        "text": claim,
                        "confidence": 0.9,
                        "propositions": [proposition],
                    }
                ],
                "open_questions": [],
                "action_intents": [],
            }
            call = {"name": "handover", "args": draft, "id": "h1"}
        elif not results:
            call = {"name": "order_status", "args": {"order": "ORD-1042"}, "id": "c1"}
        else:
            return _reply(AIMessage(content="I have the order's status."))
        return _reply(AIMessage(content="", tool_calls=[call]))


def _reply(message: AIMessage) -> ChatResult:
    return ChatResult(generations=[ChatGeneration(message=message)])


cp = ControlPlane.open("sqlite:///./example.db")
cp.registry.register(
    ToolSpec(
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
    ),
    lambda args: STATUS,
)

# The tools are built here, once; every run's calls are recorded under its own run id.
agent = react_agent(ScriptedModel(), cp, tools=["order_status"])
graph = fence(agent, control_plane=cp, name="orders")
state = graph.invoke(
    {"task": "Has order ORD-1042 shipped?"}, {"configurable": {"thread_id": "o-1"}}
)
result = state["result"]
print(result.status, "|", result.answer)
cp.close()
