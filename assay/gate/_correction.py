"""Self-correction for agent nodes that answer a person.

:func:`self_correcting` wraps a LangGraph node. When the node's final reply (an AI
message without tool calls) names identifiers that no tool returned, the wrapper
shows the model its own reply and a framework correction message, then calls the
node again — inside the same graph step, so the graph's tool-iteration budget is
not spent. The correction is sent with role ``user``: strict providers refuse a
conversation that ends on any other role. Neither message enters the graph's
state; only the final reply does, with a footnote when something stayed unverified.

The guard must never take a reply away: if validation itself fails, the failure is
logged and the reply goes out unchanged (fail open).
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from assay.errors import UsageError
from assay.gate._records import ReplyReport
from assay.gate._reply import CORRECTION, FLAGGED_REPLY, MARKER_KEY, annotate, reply_report

logger = logging.getLogger("assay.gate")

State = Mapping[str, Any]
ToolResultsFn = Callable[[State], Sequence[str]]
N = TypeVar("N", bound=Callable[..., Any])

CORRECTION_PREFIX = "[assay correction]"


def self_correcting(node: N, *, budget: int = 1, tool_results: ToolResultsFn | None = None) -> N:
    """Wrap ``node`` so a reply with unverified identifiers gets ``budget`` retries.

    ``node`` takes the graph state (a mapping with ``messages``) and returns an
    update whose ``messages`` hold the reply; sync and async nodes both work.
    ``tool_results`` adds tool texts that are not in the messages (for example the
    run's ledger); tool messages in the state always count.
    """
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 0:
        raise UsageError(f"budget must be a non-negative int, not {budget!r}")
    guard = _Guard(budget=budget, tool_results=tool_results)
    if inspect.iscoroutinefunction(node):
        async_node = cast(Callable[..., Awaitable[Any]], node)

        @functools.wraps(node)
        async def async_wrapper(state: State, *args: Any, **kwargs: Any) -> Any:
            update = await async_node(state, *args, **kwargs)
            for attempt in range(budget + 1):
                step = guard.review(state, update, attempt)
                if step.retry_state is None:
                    return step.update
                state = step.retry_state
                update = await async_node(state, *args, **kwargs)
            return update  # pragma: no cover - review() always ends the last attempt

        return cast(N, async_wrapper)

    @functools.wraps(node)
    def wrapper(state: State, *args: Any, **kwargs: Any) -> Any:
        update = node(state, *args, **kwargs)
        for attempt in range(budget + 1):
            step = guard.review(state, update, attempt)
            if step.retry_state is None:
                return step.update
            state = step.retry_state
            update = node(state, *args, **kwargs)
        return update  # pragma: no cover - review() always ends the last attempt

    return cast(N, wrapper)


@dataclass(frozen=True, kw_only=True)
class _Step:
    """Either the update to return, or the state to call the node again with."""

    update: Any
    retry_state: State | None = None


@dataclass(frozen=True, kw_only=True)
class _Guard:
    budget: int
    tool_results: ToolResultsFn | None

    def review(self, state: State, update: Any, attempt: int) -> _Step:
        reply = _final_reply(update)
        if reply is None:
            return _Step(update=update)
        try:
            report = self._report(state, reply)
        except Exception:  # the guard fails open: a broken check never eats a reply
            logger.exception("assay reply guard failed; the reply goes out unchecked")
            return _Step(update=update)
        if report.unverified and attempt < self.budget:
            return _Step(update=update, retry_state=_retry_state(state, reply, report))
        text = annotate(reply.text, report, after_self_correction=attempt > 0)
        if text == reply.text:
            return _Step(update=update)
        return _Step(update=_replace_reply(update, reply, _with_text(reply, text)))

    def _report(self, state: State, reply: AIMessage) -> ReplyReport:
        messages = _messages(state)
        extra = list(self.tool_results(state)) if self.tool_results is not None else []
        return reply_report(reply, tool_results=extra, conversation=messages)


def _messages(state: State) -> list[BaseMessage]:
    if not isinstance(state, Mapping):
        raise TypeError(f"self_correcting needs a mapping state, not {type(state).__name__}")
    messages = state.get("messages", [])
    if not isinstance(messages, list):
        raise TypeError("state['messages'] must be a list of messages")
    return cast(list[BaseMessage], messages)


def _final_reply(update: Any) -> AIMessage | None:
    """The reply to a person in ``update``: its last message, if that is an AI
    message that calls no tool."""
    if not isinstance(update, Mapping):
        return None
    messages = update.get("messages")
    last = messages[-1] if isinstance(messages, list) and messages else messages
    if isinstance(last, AIMessage) and not last.tool_calls:
        return last
    return None


def _retry_state(state: State, reply: AIMessage, report: ReplyReport) -> dict[str, Any]:
    flagged = reply.model_copy(
        update={"additional_kwargs": {**reply.additional_kwargs, MARKER_KEY: FLAGGED_REPLY}}
    )
    values = ", ".join(f"`{v}`" for v in dict.fromkeys(i.value for i in report.unverified))
    correction = HumanMessage(
        content=(
            f"{CORRECTION_PREFIX} This message comes from the assay framework, not from the "
            f"person. Your previous reply names {values}, which no tool result in this "
            "conversation contains. Do not state identifiers you have not seen in a tool "
            "result: call a tool to look them up, or answer again without them and say "
            "what you could not confirm."
        ),
        additional_kwargs={MARKER_KEY: CORRECTION},
    )
    return {**state, "messages": [*_messages(state), flagged, correction]}


def _with_text(reply: AIMessage, text: str) -> AIMessage:
    if isinstance(reply.content, str):
        return reply.model_copy(update={"content": text})
    footnote = text[len(reply.text.rstrip()) :]
    blocks = [*reply.content, {"type": "text", "text": footnote}]
    return reply.model_copy(update={"content": blocks})


def _replace_reply(update: Mapping[str, Any], old: AIMessage, new: AIMessage) -> dict[str, Any]:
    messages = update["messages"]
    if isinstance(messages, list):
        replaced = [new if m is old else m for m in cast(list[Any], messages)]
        return {**update, "messages": replaced}
    return {**update, "messages": new}
