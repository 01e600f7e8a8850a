"""``ScriptedChatModel``: a LangChain chat model that follows a script, for testing a
fenced agent offline.

LangChain's fake chat models cannot stand in for a tool-calling model inside
:func:`~assay.fence.react_agent`: their ``bind_tools`` raises, and a replayed
conversation cannot cite ledger ids, which are only known once the tools have run.
This model binds tools, makes the tool calls its script lists, reads back the
``ToolResult`` JSON each call returns (output and ledger id), and writes its
hand-over from those results, citing their ledger ids.

How a round goes in a ReAct loop: while the next step is a :func:`call`, each turn
of the model asks for those tool calls; when it is a :func:`hand_over`, the model
says it is done, and the structured-output turn (``with_structured_output``, which
binds the hand-over schema) writes it. A refused round starts the agent again: the
script goes on where it stopped, so a script for two rounds is the steps of the
first followed by those of the second.

The model keeps no place of its own: it reads where it stands from the conversation
it is sent (the tool calls it made in it, whether it said it was done, and after a
refused round the hand-over that was refused; :mod:`assay.testing._place`). So one
model serves any number of runs, each from the start of its script, and a run
paused for a grant and resumed in another process (``assay resume``, the HTTP
service) goes on where it paused. What it remembers (the results it was sent, the
hand-overs it wrote) only helps: the copies LangChain makes (``bind_tools``) share it.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from typing import Any, cast

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, ToolCall, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from pydantic import ConfigDict, Field, PrivateAttr, SkipValidation

from assay.testing._place import CALL_ID, DONE, STEP, claims_key, place
from assay.testing._script import Call, HandOver, ScriptError, Seen, Step, draft

__all__ = ["ScriptedChatModel"]

#: The title of the hand-over schema a fenced ReAct agent binds for its last step.
_HANDOVER_TOOL = "handover"


class _Cursor:
    """What the model has seen and done, shared by every copy: the furthest step
    played, the tool calls made, the results sent and the hand-overs written."""

    def __init__(self, steps: tuple[Step, ...]) -> None:
        self.steps = steps
        self.position = 0
        self.calls = 0
        self.results: list[Seen] = []
        self.written: dict[str, int] = {}
        self.lock = threading.Lock()


class ScriptedChatModel(BaseChatModel):
    """A tool-calling chat model that follows ``script`` instead of sampling.

    ``ScriptedChatModel(script=[call("lookup_order", order="D-4410"),
    hand_over(claim("The total of order D-4410 was ${lookup_order[total]}.",
    cites="lookup_order"))])`` looks the order up, then hands over the claim written
    from the tool's output and citing its ledger id. ``seen`` holds every tool result
    the model was sent, in order (:class:`Seen`); ``messages`` every message list.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    script: SkipValidation[Sequence[Step]]
    bound: tuple[str, ...] = ()
    messages: list[list[BaseMessage]] = Field(default_factory=list[list[BaseMessage]])
    # Shared by the copies bind_tools makes (a copy shares its private attributes).
    _cursor: _Cursor = PrivateAttr()

    def model_post_init(self, context: Any, /) -> None:
        steps = tuple(self.script)
        wrong = [s for s in steps if not isinstance(s, Call | HandOver)]
        if wrong:
            raise TypeError(f"a script is call(...) and hand_over(...) steps, not {wrong[0]!r}")
        self._cursor = _Cursor(steps)

    @property
    def _llm_type(self) -> str:
        return "assay-scripted"

    @property
    def seen(self) -> list[Seen]:
        """Every tool result the model was sent, in order."""
        return list(self._cursor.results)

    @property
    def finished(self) -> bool:
        """Whether every step of the script has been played."""
        return self._cursor.position >= len(self._cursor.steps)

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """A copy that knows which tools are bound (the agent's, or the hand-over
        schema for the structured-output turn), sharing this model's cursor."""
        return self.model_copy(update={"bound": tuple(_tool_name(t) for t in tools)})

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.messages.append(list(messages))
        with self._cursor.lock:
            reply = self._reply(messages)
        return ChatResult(generations=[ChatGeneration(message=reply)])

    def _reply(self, messages: list[BaseMessage]) -> AIMessage:
        cursor = self._cursor
        round_results = _results_in(messages)
        _remember(cursor, round_results)
        where = place(messages, cursor.steps, cursor.written)
        cursor.calls = max(cursor.calls, where.last_call)
        writing = _HANDOVER_TOOL in self.bound
        index = where.step(writing=writing)
        if index >= len(cursor.steps):
            raise ScriptError(
                f"the script ran out after {len(cursor.steps)} steps; the agent asked again "
                f"(tools bound: {', '.join(self.bound) or 'none'})"
            )
        step = cursor.steps[index]
        if writing:
            if not isinstance(step, HandOver):
                raise ScriptError(
                    f"step {index + 1} is a tool call, but the agent asks for its "
                    "hand-over (did a tool call end the round early?)"
                )
            # The conversation's own results are the latest of their tools.
            written = draft(step, round_results, [*cursor.results, *round_results])
            cursor.written[claims_key(written)] = index
            cursor.position = max(cursor.position, index + 1)
            return AIMessage(content="", tool_calls=[_tool_call(_HANDOVER_TOOL, written, cursor)])
        mark = {STEP: index}
        if isinstance(step, HandOver):
            return AIMessage(content=DONE, response_metadata=mark)
        cursor.position = max(cursor.position, index + 1)
        return AIMessage(
            content="",
            tool_calls=[_tool_call(name, dict(args), cursor) for name, args in step.calls],
            response_metadata=mark,
        )


def _tool_call(name: str, args: dict[str, Any], cursor: _Cursor) -> ToolCall:
    cursor.calls += 1
    return ToolCall(name=name, args=args, id=f"{CALL_ID}{cursor.calls}", type="tool_call")


def _results_in(messages: Sequence[BaseMessage]) -> list[Seen]:
    """The tool results in ``messages``: the bus's ``ToolResult`` JSON, its output read
    as JSON where it is JSON text (a tool that returns a JSON document as a string)."""
    found: list[Seen] = []
    for message in messages:
        if not isinstance(message, ToolMessage):
            continue
        try:
            body: Any = json.loads(str(message.content))
        except ValueError:
            body = None
        if not isinstance(body, dict) or "ledger_id" not in body:
            found.append(
                Seen(tool=message.name or "", output=message.content, ledger_id=None, ok=False)
            )
            continue
        found.append(
            Seen(
                tool=message.name or "",
                output=_json_or_text(body.get("output")),
                ledger_id=body.get("ledger_id"),
                ok=bool(body.get("ok")),
            )
        )
    return found


def _json_or_text(output: Any) -> Any:
    if isinstance(output, str):
        try:
            return json.loads(output)
        except ValueError:
            return output
    return output


def _remember(cursor: _Cursor, results: list[Seen]) -> None:
    known = {(s.tool, s.ledger_id) for s in cursor.results}
    cursor.results += [s for s in results if (s.tool, s.ledger_id) not in known]


def _tool_name(tool: object) -> str:
    if isinstance(tool, BaseTool):
        return tool.name
    if isinstance(tool, dict):
        schema = cast(dict[str, Any], tool)
        function: Any = schema.get("function") or {}
        return str(schema.get("title") or schema.get("name") or function.get("name"))
    return str(getattr(tool, "__name__", tool))
