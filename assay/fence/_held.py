"""An irreversible call a ReAct agent's model makes itself: held for a grant, decided
like an action intent, and its outcome handed back to the model as the tool's result.

LangGraph pauses such a call with ``interrupt()`` inside the tool; the OpenAI Agents
SDK marks the tool as needing approval. Either way the model's own call is what a
person approves, and the model goes on with what came of it. The fence does the same
with its own nodes, so the call is checked like any action intent::

    model calls issue_refund ─► HeldTool: the bus checks the call (arguments, effect
        done before?) and answers grant_required ─► held: the model is told so, and
        writes its hand-over (the claims the call rests on)
    hand-over + the held call as an action intent (depends on the hand-over's claims)
        ─► gate (arguments grounded) ─► verify ─► policy ─► grant (a person) ─► act
    act ─► the agent again, its conversation continued with the call's outcome
        (ran, denied, refused as a duplicate, failed) as the tool's result

Any other answer of the bus (invalid arguments, a duplicate effect, an unknown tool)
goes back to the model at once, as for any tool. A held call is never lost: it is
an intent of the hand-over, so it is pending, decided, run, or (when the hand-over
is refused) reported ``not_run`` with the reason.

A graph the user built (LangGraph's ``create_react_agent``) may carry a plain
:class:`~assay.tool_bus.BusTool` for an irreversible tool (``bus_tool(cp.bus, spec)``):
its answer is the bus's ``grant_required`` error, which the model reads and may well
carry on past. That answer is held all the same: the call it names (the model's
arguments, the tool and version of the error's request) joins the hand-over as its
intent, and its outcome replaces the answer when the agent goes on. A model that
asks for the same call twice (a loop that does not stop at a held call may) holds
one call: both tool calls wait for, and are answered with, one intent's outcome.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal, cast

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ToolMessage,
    messages_from_dict,
    messages_to_dict,
)
from langchain_core.runnables import RunnableConfig

from assay._limits import check_text
from assay.fence._state import ActionItem, FenceState
from assay.ledger import canonical_json
from assay.tool_bus import BusTool

__all__ = [
    "OUTCOME",
    "HeldCall",
    "HeldTool",
    "continuation",
    "held_calls",
    "is_held",
    "outcome_text",
    "resumed_messages",
    "same_call",
]

_HELD = "assay_held"
#: The artifact key of a held call's outcome, handed back in the call's place.
OUTCOME = "assay_outcome"
_MAX_PLAIN_ID = 100


class HeldTool(BusTool):
    """An irreversible registered tool for a ReAct agent: a call the bus would run
    but for a grant is held (its ``ToolMessage`` carries the call as an artifact),
    and the fence decides it as an action intent."""

    response_format: Literal["content", "content_and_artifact"] = "content_and_artifact"

    # LangChain's content_and_artifact: the tool's message carries the held call.
    def _run(  # pyright: ignore[reportIncompatibleMethodOverride]
        self,
        assay_payload: tuple[Any, str | None],
        config: RunnableConfig,
        assay_runtime: Any = None,
    ) -> tuple[str, dict[str, Any] | None]:
        answer = super()._run(assay_payload, config, assay_runtime)
        return _held_or_answer(self, answer, assay_payload)

    async def _arun(  # pyright: ignore[reportIncompatibleMethodOverride]
        self,
        assay_payload: tuple[Any, str | None],
        config: RunnableConfig,
        assay_runtime: Any = None,
    ) -> tuple[str, dict[str, Any] | None]:
        answer = await super()._arun(assay_payload, config, assay_runtime)
        return _held_or_answer(self, answer, assay_payload)


def _held_or_answer(
    tool: HeldTool, answer: str, payload: tuple[Any, str | None]
) -> tuple[str, dict[str, Any] | None]:
    args, tool_call_id = payload
    body: Any = json.loads(answer)
    error: Any = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict) or error.get("code") != "grant_required" or not tool_call_id:
        return answer, None
    message = (
        f"{tool.name}@{tool.version} is irreversible: this exact call is held until a "
        "person (or a policy rule) approves it. Hand over now: the claims this call "
        "rests on, each citing the ledger id of a result that states its arguments. The "
        "call is added to your hand-over as an action intent that depends on those "
        "claims, and its outcome comes back to you as this tool's result."
    )
    held = {
        "ok": False,
        "output": None,
        "ledger_id": None,
        "error": {"code": "held", "message": message},
    }
    call = {"tool": tool.name, "version": tool.version, "args": args, "tool_call_id": tool_call_id}
    return canonical_json(held).decode(), {_HELD: call}


class HeldCall:
    """A model's call that was held: the tool call it came from and its intent id."""

    __slots__ = ("args", "intent_id", "tool", "tool_call_id", "version")

    def __init__(self, raw: Mapping[str, Any]) -> None:
        self.tool = str(raw["tool"])
        self.version = str(raw["version"])
        self.args: dict[str, Any] = dict(cast(Mapping[str, Any], raw["args"]))
        self.tool_call_id = str(raw["tool_call_id"])
        self.intent_id = held_intent_id(self.tool_call_id)


def held_intent_id(tool_call_id: str) -> str:
    """The action intent id of a held call: ``call:`` and the model's tool-call id
    (its sha256 when that id is long or not printable)."""
    if check_text(tool_call_id, field="tool_call_id", max_chars=_MAX_PLAIN_ID) is None:
        return f"call:{tool_call_id}"
    digest = hashlib.sha256(tool_call_id.encode("utf-8", "surrogatepass")).hexdigest()
    return f"call:sha256:{digest[:32]}"


def held_calls(messages: Sequence[BaseMessage]) -> list[HeldCall]:
    """The calls held in ``messages``: the ``ToolMessage``s a :class:`HeldTool` wrote,
    and a plain bus tool's ``grant_required`` answers. A call asked for again with the
    same tool, version and arguments takes the first one's intent id."""
    asked = _asked(messages)
    found: list[HeldCall] = []
    for message in messages:
        if not isinstance(message, ToolMessage):
            continue
        raw = _held_raw(message, asked)
        if raw is None:
            continue
        call = HeldCall(raw)
        first = next((c for c in found if _same_held(c, call)), None)
        if first is not None:
            call.intent_id = first.intent_id
        found.append(call)
    return found


def is_held(message: BaseMessage) -> bool:
    """Whether ``message`` is a held call's answer (a :class:`HeldTool`'s, or a bus
    tool's ``grant_required``)."""
    return isinstance(message, ToolMessage) and _held_raw(message, {}) is not None


def _asked(messages: Sequence[BaseMessage]) -> dict[str, Mapping[str, Any]]:
    """The model's tool calls in ``messages``, by id: the arguments it asked with."""
    asked: dict[str, Mapping[str, Any]] = {}
    for message in messages:
        if isinstance(message, AIMessage):
            for tool_call in message.tool_calls:
                if tool_call.get("id"):
                    asked[str(tool_call["id"])] = tool_call["args"]
    return asked


def _held_raw(message: ToolMessage, asked: Mapping[str, Mapping[str, Any]]) -> Any:
    """The held call ``message`` answers (tool, version, args, tool call id), or
    ``None``: from a :class:`HeldTool`'s artifact, or from the request a bus tool's
    ``grant_required`` error carries (with the model's own arguments where known)."""
    artifact: Any = message.artifact
    if isinstance(artifact, dict) and isinstance(artifact.get(_HELD), dict):
        return artifact[_HELD]
    request = _grant_request(message.content)
    if request is None or not message.tool_call_id:
        return None
    args = asked.get(message.tool_call_id, request["args"])
    return {
        "tool": request["tool"],
        "version": request["version"],
        "args": args,
        "tool_call_id": message.tool_call_id,
    }


def _grant_request(content: Any) -> dict[str, Any] | None:
    """The request of a ``ToolResult`` whose error is ``grant_required``, else ``None``."""
    if not isinstance(content, str) or '"grant_required"' not in content:
        return None
    try:
        body: Any = json.loads(content)
    except ValueError:
        return None
    error: Any = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict) or error.get("code") != "grant_required":
        return None
    request: Any = error.get("request")
    if not isinstance(request, dict):
        return None
    if not all(isinstance(request.get(k), str) for k in ("tool", "version")):
        return None
    if not isinstance(request.get("args"), dict):
        return None
    return cast(dict[str, Any], request)


def _same_held(a: HeldCall, b: HeldCall) -> bool:
    return a.version == b.version and same_call(
        {"tool": a.tool, "args": a.args}, {"tool": b.tool, "args": b.args}
    )


def continuation(messages: Sequence[BaseMessage], held: Sequence[HeldCall]) -> dict[str, Any]:
    """What the agent asks the fence to hand back after its held calls are decided:
    the conversation (plain JSON) and which intent each held tool call became."""
    return {
        "messages": messages_to_dict(list(messages)),
        "held": {call.tool_call_id: call.intent_id for call in held},
        "awaits": list(dict.fromkeys(call.intent_id for call in held)),
    }


def resumed_messages(state: FenceState) -> list[BaseMessage] | None:
    """The conversation to continue, each held call's message replaced by its outcome
    (its artifact ``{"assay_outcome": {"intent_id", "status"}}`` says so: the
    conversation had ended there, with the hand-over the call joined); ``None`` unless
    the fence is handing outcomes back (``returned``)."""
    kept = state.get("continuation")
    if not state.get("returned") or not kept:
        return None
    held: dict[str, str] = dict(kept.get("held", {}))
    outcomes = {a["intent_id"]: a for a in state.get("actions", [])}
    messages: list[BaseMessage] = []
    for message in messages_from_dict(kept.get("messages", [])):
        if isinstance(message, ToolMessage) and message.tool_call_id in held:
            outcome = outcomes.get(held[message.tool_call_id])
            message = ToolMessage(
                content=outcome_text(outcome),
                tool_call_id=message.tool_call_id,
                name=message.name,
                artifact={OUTCOME: _outcome_mark(held[message.tool_call_id], outcome)},
            )
        messages.append(message)
    return messages


def _outcome_mark(intent_id: str, action: ActionItem | None) -> dict[str, str]:
    return {"intent_id": intent_id, "status": "not_decided" if action is None else action["status"]}


def outcome_text(action: ActionItem | None) -> str:
    """A held call's outcome as the model reads it: the ``ToolResult`` shape, with the
    ledger id of the output to cite when it ran, else why it did not."""
    if action is None:
        error = {"code": "not_decided", "message": "the call was not decided"}
        return canonical_json(
            {"ok": False, "output": None, "ledger_id": None, "error": error}
        ).decode()
    status = action["status"]
    if status == "executed":
        body = {"ok": True, "output": action.get("output"), "ledger_id": action.get("ledger_id")}
        return canonical_json(body).decode()
    error = action.get("error")
    if status == "denied" or error is None:
        who = f" by {action.get('approver')}" if action.get("approver") else ""
        error = {"code": status, "message": f"{status}{who}: {action.get('reason') or ''}".strip()}
    body = {"ok": False, "output": None, "ledger_id": action.get("ledger_id"), "error": error}
    return canonical_json(body).decode()


def same_call(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Whether two calls are the same tool with the same arguments (canonical JSON)."""
    try:
        return a.get("tool") == b.get("tool") and canonical_json(a.get("args") or {}) == (
            canonical_json(b.get("args") or {})
        )
    except (TypeError, ValueError):
        return False
