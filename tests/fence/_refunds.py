"""A refund desk of a user's own: LangGraph's ReAct loop (``react_agent``) with a
read-only ``lookup_order`` that answers JSON and an irreversible ``issue_refund`` whose
effect is named by the order (its idempotency key), driven by a scripted chat model.

The model does what tool-calling models do: it looks the order up, then calls
``issue_refund`` itself. When the fence hands it the call's outcome (as the tool's
result), it says what became of the refund; at each hand-over it states the order's
amount, citing the lookup's ledger id. ``REFUNDS`` keeps the refunds the handler made
in this process, so a test sees the side effect itself.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, ToolCall, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field

from assay import ToolSpec
from assay.fence import FenceComponents, ReactAgent, react_agent

ORDER = {"order": "ORD-1042", "amount": 40.0, "currency": "EUR", "status": "paid"}
PAID = "Order ORD-1042 was paid 40.0 EUR."
REFUNDS: list[dict[str, Any]] = []

LOOKUP_ORDER = ToolSpec(
    name="lookup_order",
    version="1.0.0",
    side_effect="read_only",
    description="An order: its amount, currency and status.",
    input_schema={
        "type": "object",
        "required": ["order"],
        "additionalProperties": False,
        "properties": {"order": {"type": "string", "pattern": "^ORD-[0-9]+$"}},
    },
    output_schema={
        "type": "object",
        "required": ["order", "amount", "currency", "status"],
        "properties": {
            "order": {"type": "string"},
            "amount": {"type": "number"},
            "currency": {"type": "string"},
            "status": {"type": "string"},
        },
    },
)
ISSUE_REFUND = ToolSpec(
    name="issue_refund",
    version="1.0.0",
    side_effect="irreversible",
    description="Refund an order to the card it was paid with.",
    input_schema={
        "type": "object",
        "required": ["order", "amount"],
        "additionalProperties": False,
        "properties": {
            "order": {"type": "string", "pattern": "^ORD-[0-9]+$"},
            "amount": {"type": "number", "exclusiveMinimum": 0},
        },
    },
    output_schema={
        "type": "object",
        "required": ["refund"],
        "properties": {"refund": {"type": "string"}},
    },
    idempotency_key=("/order",),
)


def _lookup(args: dict[str, Any]) -> dict[str, Any]:
    if args["order"] != ORDER["order"]:
        raise LookupError(f"no order {args['order']}")
    return dict(ORDER)


def _refund(args: dict[str, Any]) -> dict[str, Any]:
    REFUNDS.append(dict(args))
    return {"refund": f"RF-{len(REFUNDS)}"}


def install(components: FenceComponents, *, failing: bool = False) -> None:
    """Register the desk's tools on ``components`` (the refund's handler raises when
    ``failing``)."""

    def broken(_args: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("the payment provider is down")

    components.registry.register(LOOKUP_ORDER, _lookup)
    components.registry.register(ISSUE_REFUND, broken if failing else _refund)


# --- the scripted model ------------------------------------------------------------------

#: The messages the model is sent and the tools bound to it -> its reply.
Script = Callable[[list[BaseMessage], tuple[str, ...]], AIMessage]


class ScriptedChatModel(BaseChatModel):
    """A tool-calling chat model that follows ``script`` instead of sampling.

    ``bind_tools`` returns a copy that knows what was bound (the agent's tools, or the
    hand-over schema ``with_structured_output`` binds). ``seen`` keeps every message
    list the model was sent, shared by the copies.
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


def results(messages: Sequence[BaseMessage], tool: str) -> list[dict[str, Any]]:
    """What ``tool`` answered, in the order the model was sent it."""
    return [
        json.loads(str(m.content))
        for m in messages
        if isinstance(m, ToolMessage) and m.name == tool
    ]


def call(name: str, args: dict[str, Any], call_id: str) -> ToolCall:
    return ToolCall(name=name, args=args, id=call_id, type="tool_call")


def claim(claim_id: str, text: str, ledger_id: str) -> dict[str, Any]:
    return {
        "id": claim_id,
        "type": "Assertion",
        "text": text,
        "confidence": 0.9,
        "propositions": [{"id": f"{claim_id}.p", "text": text, "ledger_ids": [ledger_id]}],
    }


def refund_desk(amount: float = 40.0, *, stated: str = PAID) -> Script:
    """Look the order up, refund ``amount`` by calling ``issue_refund`` itself, then
    hand over ``stated`` citing the lookup (and, once refunded, what the refund said)."""

    def reply(messages: list[BaseMessage], bound: tuple[str, ...]) -> AIMessage:
        looked = results(messages, "lookup_order")
        refunded = results(messages, "issue_refund")
        if "handover" in bound:
            claims = [claim("paid", stated, looked[-1]["ledger_id"])] if looked else []
            done = [r for r in refunded if r.get("ok") and r.get("ledger_id")]
            if done:
                text = f"Refund {done[-1]['output']['refund']} was issued."
                claims.append(claim("refunded", text, done[-1]["ledger_id"]))
            draft = {"claims": claims, "open_questions": [], "action_intents": []}
            return AIMessage(content="", tool_calls=[call("handover", draft, "handover-1")])
        if not looked:
            return AIMessage(
                content="", tool_calls=[call("lookup_order", {"order": "ORD-1042"}, "look-1")]
            )
        if not refunded:
            args = {"order": "ORD-1042", "amount": amount}
            return AIMessage(content="", tool_calls=[call("issue_refund", args, "refund-1")])
        return AIMessage(content=f"The refund came back: {json.dumps(refunded[-1])}")

    return reply


def agent(components: FenceComponents, model: ScriptedChatModel) -> ReactAgent:
    """The desk's agent: both tools, as a LangGraph developer would list them."""
    return react_agent(model, components, tools=["lookup_order", "issue_refund"], name="refunds")
