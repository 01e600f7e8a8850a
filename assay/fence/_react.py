"""Fence a LangGraph ReAct agent: tools from the registry, the hand-over from its
structured response.

    fence state ─► messages (task, context, last round's refusals) ─► ReAct graph
        agent ⇄ tools (ToolNode; every call through the bus, run id read at call time)
        └─► respond (structured output: the hand-over draft) ─► {"handover": ...}

:func:`react_agent` builds the whole thing from a chat model and the names of
registered tools. :class:`ReactAgent` wraps a ReAct graph the user already has
(LangGraph's ``create_react_agent``, or any graph with a ``ToolNode`` that ends with
a ``structured_response``) built with :func:`bus_tools` and
``response_format=handover_response_schema()``.

The tools are built once, from a read-only view of the registry, and shared by every
run: each call reads its run id from the graph's state (``run_id``) or from
``configurable["assay_run_id"]``, and the adapter sets both. The model writes only
what an author may write (claims, open questions, action intents); the adapter adds
``run_id`` and ``from_agent``, and ``entailment`` stays the verifier's.

``langgraph.prebuilt.create_react_agent`` is deprecated since LangGraph 1.0 in favour
of ``langchain.agents.create_agent``, which lives in a package assay does not depend
on, so :func:`react_agent` composes the same loop from LangGraph's ``StateGraph`` and
``ToolNode``; a graph from the deprecated factory is fenced the same way, by
:class:`ReactAgent`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Any, NotRequired, TypedDict, cast

from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from langchain_core.runnables.config import merge_configs
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.managed import RemainingSteps
from pydantic import BaseModel

from assay._limits import MAX_AGENT_CHARS, check_text
from assay.contract import handover_author_properties
from assay.errors import InvalidCall, UsageError
from assay.fence._held import (
    HeldCall,
    HeldTool,
    continuation,
    held_calls,
    is_held,
    resumed_messages,
    same_call,
)
from assay.fence._state import FenceState
from assay.tool_bus import RUN_ID_KEY, ToolSpec, bus_tool

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.tools import BaseTool
    from langgraph.graph.state import CompiledStateGraph

    from assay.fence._components import FenceComponents

__all__ = [
    "HANDOVER_PROMPT",
    "ReactAgent",
    "ToolSelection",
    "bus_tools",
    "handover_response_schema",
    "react_agent",
]

#: Which registered tools an agent gets: a name (its latest version), names, or
#: names mapped to a version (``None``: the latest).
ToolSelection = str | Sequence[str] | Mapping[str, str | None]

#: The system prompt :func:`react_agent` uses unless given another: the rules the gate
#: and the verifier will hold the hand-over to.
HANDOVER_PROMPT = """\
You answer the user's task with evidence, and only with evidence.
Act only through your tools. Every tool result is JSON with a `ledger_id`: the id of \
the recorded result, the only thing you may cite.
When you have what you need, hand over typed claims:
- an Assertion states one fact; every number and identifier in it is copied verbatim \
from a tool result, and each of its propositions cites in `ledger_ids` the ledger id \
of a result that says it;
- one fact per proposition: "delivered on 14 March" and "its total was $84.50" are \
two propositions, each citing its result;
- a proposition may also point at where its result says it, in `cites`: \
`{"ledger_id": ..., "pointer": "/order/total"}` (a JSON Pointer to the field) or \
`{"ledger_id": ..., "quote": ...}` (words copied exactly from the result);
- a claim you cannot support is a Conjecture, or an open question: never an Assertion;
- never invent, alter or guess a ledger id, and never write `entailment` (the \
verifier writes it);
- an irreversible action is proposed as an action intent with `requires_grant` true, \
never called directly.
If your previous hand-over was refused, look for the missing evidence or drop the \
claim; a reworded claim without new evidence is refused again."""

_TITLE = "handover"
#: What the model writes; the adapter sets ``run_id`` and ``from_agent``.
_AUTHOR_KEYS = ("status", "claims", "open_questions", "action_intents", "errors")
_REQUIRED = ("claims", "open_questions", "action_intents")
#: Steps a tool call needs before the hand-over: the tools, the model again, respond.
_STEPS_AFTER_A_TOOL_CALL = 3


def handover_response_schema() -> dict[str, Any]:
    """The ``response_format`` of a fenced ReAct agent: the hand-over's JSON Schema
    without what the author never writes (``run_id`` and ``from_agent``, which the
    adapter sets, and each proposition's ``entailment``, which the verifier writes).

    ``$ref``s are inlined because some providers refuse them in tool parameters; the
    title, ``handover``, is the name of the structured-output tool a model is shown.
    """
    return {
        "title": _TITLE,
        "description": "Your findings: typed claims that cite the ledger ids tool results "
        "returned, open questions, and the action intents the claims support.",
        "type": "object",
        "additionalProperties": False,
        "required": list(_REQUIRED),
        "properties": handover_author_properties(_AUTHOR_KEYS),
    }


def bus_tools(components: FenceComponents, tools: ToolSelection) -> tuple[BaseTool, ...]:
    """LangChain tools for the registered tools ``tools`` names, built once and shared
    by every run: each call goes through the bus (validation, ledger, grants) for the
    run of the graph that makes it.

    Raises :class:`~assay.errors.ToolNotFound` for a name or version the registry
    does not hold (with close matches as suggestions), and
    :class:`~assay.errors.UsageError` for a selection of another shape.
    """
    view = components.registry.view()
    if isinstance(tools, str):
        wanted: dict[str, str | None] = {tools: None}
    elif isinstance(tools, Mapping):
        wanted = dict(tools)
    elif isinstance(tools, Sequence):
        wanted = dict.fromkeys(tools)
    else:
        raise UsageError(
            "tools must name registered tools: a name, a list of names, or a mapping of "
            f"names to versions, not {type(tools).__name__}"
        )
    specs = [view.get(name, version) for name, version in wanted.items()]
    return tuple(_tool(components, spec) for spec in specs)


def _tool(components: FenceComponents, spec: ToolSpec) -> BaseTool:
    """A read-only or reversible tool runs through the bus when the model calls it; an
    irreversible one is a :class:`HeldTool`, whose call waits for a grant."""
    tool = bus_tool(components.bus, spec)
    if spec.side_effect != "irreversible":
        return tool
    return HeldTool(
        name=tool.name,
        description=tool.description,
        args_schema=tool.args_schema,
        bus=tool.bus,
        version=tool.version,
    )


class ReactAgent(Runnable[FenceState, dict[str, Any]]):
    """A ReAct graph as a fenced agent: fence state in, ``{"handover": ...}`` out.

    ``graph`` takes ``{"messages": [...]}`` and returns a state with a
    ``structured_response`` in the shape of :func:`handover_response_schema` (a dict or
    a pydantic model). ``name`` is the hand-over's ``from_agent`` (printable, at most
    ``MAX_AGENT_CHARS``; :class:`~assay.errors.UsageError` otherwise). ``tools`` are
    the tools it was built with, kept so that callers can see they are the same
    objects in every run.
    """

    def __init__(
        self, graph: Runnable[Any, Any], *, name: str, tools: Sequence[BaseTool] = ()
    ) -> None:
        _check_name(name)
        self.graph = graph
        self.name = name
        self.from_agent = name
        self.tools = tuple(tools)

    def invoke(
        self, input: FenceState, config: RunnableConfig | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        run_id = _run_id(input)
        out = self.graph.invoke(_graph_input(input, run_id), _with_run(config, run_id))
        return _agent_output(out, input, run_id, self.from_agent)

    async def ainvoke(
        self, input: FenceState, config: RunnableConfig | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        run_id = _run_id(input)
        out = await self.graph.ainvoke(_graph_input(input, run_id), _with_run(config, run_id))
        return _agent_output(out, input, run_id, self.from_agent)


def _check_name(name: str) -> None:
    problem = check_text(name, field="name", max_chars=MAX_AGENT_CHARS)
    if problem is not None:
        raise UsageError(problem)


def _run_id(state: FenceState) -> str:
    run_id = state.get("run_id")
    if not isinstance(run_id, str) or not run_id:
        raise InvalidCall("the state has no run_id: a ReactAgent runs inside fence()")
    return run_id


def _graph_input(state: FenceState, run_id: str) -> dict[str, Any]:
    """The conversation continued with its held calls' outcomes, when the fence hands
    them back; else a new one (the task, and a refused round's feedback)."""
    messages = resumed_messages(state)
    return {"messages": messages or _agent_messages(state), "run_id": run_id}


def _agent_output(out: Any, state: FenceState, run_id: str, name: str) -> dict[str, Any]:
    """The hand-over, with the model's held calls as its action intents, and the
    conversation to continue once they are decided."""
    handover = _handover(out, run_id, name)
    messages: Any = out.get("messages") if isinstance(out, Mapping) else None
    held = held_calls(messages) if isinstance(messages, list) else []
    if handover.get("status") == "ok":
        handover["action_intents"] = _intents(handover, held, state)
    if not held:
        return {"handover": handover}
    return {"handover": handover, "continuation": continuation(messages, held)}


def _intents(draft: Mapping[str, Any], held: Sequence[HeldCall], state: FenceState) -> list[Any]:
    """The draft's intents and one per held call, which depends on the draft's claims
    (an intent of the draft stating the same call gives way to it, keeping its
    ``depends_on``). An intent restating a call already decided and handed back is the
    same call, not a second one, and is dropped."""
    raw: Any = draft.get("action_intents")
    intents: list[Any] = list(raw) if isinstance(raw, list) else []
    returned = set(state.get("returned") or [])
    decided = [a for a in state.get("actions", []) if a["intent_id"] in returned]
    intents = [i for i in intents if not _restates(i, decided)]
    raw_claims: Any = draft.get("claims")
    claims = [
        c["id"]
        for c in (raw_claims if isinstance(raw_claims, list) else [])
        if isinstance(c, Mapping) and c.get("type") != "Conjecture" and isinstance(c.get("id"), str)
    ]
    added: set[str] = set()
    for call in held:
        if call.intent_id in added:
            continue  # the same call asked for again: one intent answers both
        added.add(call.intent_id)
        depends_on = list(claims)
        for intent in [
            i for i in intents if _restates(i, [{"tool": call.tool, "args": call.args}])
        ]:
            depends_on = list(intent.get("depends_on") or depends_on)
            intents.remove(intent)
        intents.append(
            {
                "id": call.intent_id,
                "tool": call.tool,
                "version": call.version,
                "args": call.args,
                "requires_grant": True,
                "depends_on": depends_on,
            }
        )
    return intents


def _restates(intent: Any, calls: Sequence[Mapping[str, Any]]) -> bool:
    return isinstance(intent, Mapping) and any(
        same_call(cast(Mapping[str, Any], intent), c) for c in calls
    )


def _with_run(config: RunnableConfig | None, run_id: str) -> RunnableConfig:
    """``config`` with the run id where shared bus tools look for it."""
    return merge_configs(config, {"configurable": {RUN_ID_KEY: run_id}})


def _agent_messages(state: FenceState) -> list[BaseMessage]:
    """What the agent is told: the task (and the caller's context), then, after a
    refused round, what was refused and the hand-over it was refused in."""
    task = state.get("task", "")
    context = state.get("context")
    if context:
        task += "\n\nContext:\n" + _dumps(context)
    messages: list[BaseMessage] = [HumanMessage(content=task)]
    feedback = state.get("feedback") or []
    if feedback:
        previous = state.get("handover")
        messages.append(HumanMessage(content=_feedback_text(feedback, previous)))
    return messages


def _feedback_text(feedback: Sequence[Mapping[str, Any]], previous: Any) -> str:
    draft: Any = previous
    if isinstance(previous, Mapping):
        draft = {k: v for k, v in previous.items() if k not in ("run_id", "from_agent")}
    return (
        "The control plane refused your previous hand-over. Each item is a `gate_error` "
        "(a rule your hand-over broke: `code`, `path`, `message`) or `unsupported` (the "
        "cited evidence does not entail the proposition: `proposition`, "
        "`missing_evidence`). For each, find the evidence with your tools and cite the "
        "ledger id of a result that says it, or drop the claim and add an open question. "
        "Ledger ids your tools return in this round are valid evidence.\n\n"
        f"What was refused:\n{_dumps([dict(item) for item in feedback])}\n\n"
        f"Your previous hand-over:\n{_dumps(draft)}"
    )


def _dumps(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True, default=str)


def _handover(out: Any, run_id: str, name: str) -> dict[str, Any]:
    """The graph's structured response as a hand-over from ``name`` in ``run_id``.

    A graph that gave no usable structured response (a model that did not call the
    structured-output tool, say) hands over ``failed`` with the reason, which is what
    an author who could not finish does.
    """
    response = out.get("structured_response") if isinstance(out, Mapping) else None
    if isinstance(response, BaseModel):
        response = response.model_dump(mode="json", exclude_none=True)
    if not isinstance(response, Mapping):
        got = "nothing" if response is None else type(response).__name__
        reason = f"the agent's graph gave no structured hand-over (got {got})"
        return {"run_id": run_id, "from_agent": name, "status": "failed", "errors": [reason]}
    return {"status": "ok", **response, "run_id": run_id, "from_agent": name}


# --- the ReAct graph -------------------------------------------------------------------


class _ReactState(TypedDict):
    """The ReAct graph's state: the conversation, the fenced run it works for (where
    the shared tools read it), and the hand-over draft it ends with."""

    messages: Annotated[list[AnyMessage], add_messages]
    run_id: NotRequired[str]
    structured_response: NotRequired[dict[str, Any]]
    remaining_steps: NotRequired[RemainingSteps]


def react_agent(
    model: BaseChatModel,
    components: FenceComponents,
    *,
    tools: ToolSelection,
    prompt: str | None = None,
    name: str = "react_agent",
) -> ReactAgent:
    """A ReAct agent on ``model`` with the registered ``tools``, ready for
    ``fence(agent, control_plane=components, name=...)``.

    The tools are built once (:func:`bus_tools`); the model calls them until it
    answers without a tool call, then writes the hand-over as structured output
    (``response_format`` = :func:`handover_response_schema`). ``prompt`` replaces
    :data:`HANDOVER_PROMPT` as the system prompt. ``model`` must support
    ``bind_tools`` and ``with_structured_output``.
    """
    _check_name(name)
    built = bus_tools(components, tools)
    graph = _react_graph(model, built, prompt if prompt is not None else HANDOVER_PROMPT, name)
    return ReactAgent(graph, name=name, tools=built)


def _react_graph(
    model: BaseChatModel, tools: tuple[BaseTool, ...], prompt: str, name: str
) -> CompiledStateGraph[_ReactState, None, _ReactState, _ReactState]:
    from langgraph.prebuilt import ToolNode

    thinker = model.bind_tools(list(tools)) if tools else model
    writer = model.with_structured_output(handover_response_schema())
    system = SystemMessage(content=prompt)

    def think(state: _ReactState, config: RunnableConfig) -> dict[str, Any]:
        reply = thinker.invoke([system, *state["messages"]], config)
        return {"messages": [_within_steps(state, reply)]}

    async def athink(state: _ReactState, config: RunnableConfig) -> dict[str, Any]:
        reply = await thinker.ainvoke([system, *state["messages"]], config)
        return {"messages": [_within_steps(state, reply)]}

    def respond(state: _ReactState, config: RunnableConfig) -> dict[str, Any]:
        return {"structured_response": writer.invoke([system, *state["messages"]], config)}

    async def arespond(state: _ReactState, config: RunnableConfig) -> dict[str, Any]:
        draft = await writer.ainvoke([system, *state["messages"]], config)
        return {"structured_response": draft}

    builder = StateGraph(_ReactState)
    builder.add_node("agent", RunnableLambda(think, afunc=athink, name="agent"))
    builder.add_node("respond", RunnableLambda(respond, afunc=arespond, name="respond"))
    builder.add_edge(START, "agent")
    if tools:
        builder.add_node("tools", ToolNode(list(tools)))
        builder.add_conditional_edges("agent", _after_model, ["tools", "respond"])
        builder.add_conditional_edges("tools", _after_tools, ["agent", "respond"])
    else:
        builder.add_edge("agent", "respond")
    builder.add_edge("respond", END)
    return builder.compile(name=name)


def _within_steps(state: _ReactState, reply: BaseMessage) -> BaseMessage:
    """The model's reply, unless it calls tools with no steps left to run them and
    still hand over: then it is told to stop, and hands over what it has."""
    calls = isinstance(reply, AIMessage) and reply.tool_calls
    left = state.get("remaining_steps")
    if calls and left is not None and left <= _STEPS_AFTER_A_TOOL_CALL:
        return AIMessage(
            id=reply.id,
            content="I ran out of steps before my tool calls could run; "
            "I hand over what the evidence so far supports.",
        )
    return reply


def _after_model(state: _ReactState) -> str:
    last = state["messages"][-1]
    return "tools" if isinstance(last, AIMessage) and last.tool_calls else "respond"


def _after_tools(state: _ReactState) -> str:
    """A held call ends the loop: the model hands over what the call rests on, and
    goes on once the call is decided (with its outcome as the tool's result)."""
    latest: list[AnyMessage] = []
    for message in reversed(state["messages"]):
        if isinstance(message, AIMessage):
            break
        latest.append(message)
    return "respond" if any(is_held(m) for m in latest) else "agent"
