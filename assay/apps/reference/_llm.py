"""Chat-model agents for the invoice audit: any LangChain chat model with tool calling.

``ASSAY_MODEL=provider:model`` (``openai:…``, ``anthropic:…``, ``ollama:…``, each
from an optional extra) chooses the model. The rule-based agents stay the default
because they run offline and exactly the same every time.

A chat model is the unreliable runtime the control plane exists for, so this agent
is deliberately thin: it offers the model the bus's read-only tools, asks it for a
hand-over, and leaves every judgement to the gate, the verifier and the grants.
Irreversible tools are never offered: the model proposes them as action intents and
only a grant lets the bus run them. Model mistakes never raise into the graph: an
unknown tool, bad arguments or a spent budget come back to the model as structured
tool errors, output that is not a JSON object becomes a ``failed`` hand-over that
says why, and anything else wrong is for the gate to refuse with typed errors.

The prompts are package files (``prompts/*.md``), versioned and shipped with the
code that depends on them.
"""

from __future__ import annotations

import importlib
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib.resources import files
from string import Template
from typing import TYPE_CHECKING, Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
)
from langchain_core.tools import BaseTool

from assay.contract import Handover, handover_author_properties
from assay.errors import ConfigurationError, ToolNotFound, UsageError
from assay.fence import FenceState

if TYPE_CHECKING:
    from assay.fence import FenceComponents

__all__ = [
    "DRAFT_KEYS",
    "MODEL_ENV",
    "PROVIDERS",
    "READ_TOOLS",
    "LLMAgent",
    "Provider",
    "handover_draft_schema",
    "llm_agent_from_env",
    "prompt",
    "resolve_chat_model",
]

MODEL_ENV = "ASSAY_MODEL"
#: The tools a chat-model agent may call itself; all three are read-only.
READ_TOOLS = ("search_documents", "read_passage", "compute_overage")
#: The keys of a hand-over that the model writes; the agent sets the others.
DRAFT_KEYS = ("claims", "open_questions", "action_intents")
_MAX_CALL_ID = 200
_EXCERPT = 200


# --- choosing a model ------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Provider:
    """Where a provider's chat model lives and which extra installs it."""

    module: str
    chat_class: str
    extra: str


PROVIDERS: Mapping[str, Provider] = {
    "openai": Provider(module="langchain_openai", chat_class="ChatOpenAI", extra="openai"),
    "anthropic": Provider(
        module="langchain_anthropic", chat_class="ChatAnthropic", extra="anthropic"
    ),
    "ollama": Provider(module="langchain_ollama", chat_class="ChatOllama", extra="ollama"),
}
_SPEC = re.compile(r"(?P<provider>[A-Za-z][\w-]*):(?P<model>\S.*)")


def resolve_chat_model(spec: str) -> BaseChatModel:
    """The chat model ``provider:model`` names, e.g. ``openai:gpt-4o-mini`` or
    ``ollama:llama3.1:8b`` (only the first colon separates the two).

    Provider packages are optional extras, imported only here, so the default
    install stays offline; a missing one is a configuration mistake that says which
    extra to install.
    """
    provider, model = _parse_spec(spec)
    where = PROVIDERS[provider]
    try:
        module = importlib.import_module(where.module)
    except ImportError as exc:
        raise ConfigurationError(
            f"{MODEL_ENV}={spec!r} needs the {where.module.replace('_', '-')} package: "
            f"pip install 'assay[{where.extra}]'"
        ) from exc
    try:
        chat = getattr(module, where.chat_class)(model=model)
    except Exception as exc:  # the provider's own check, e.g. a missing API key
        raise ConfigurationError(
            f"{where.module}.{where.chat_class}(model={model!r}) could not be created: {exc}"
        ) from exc
    if not isinstance(chat, BaseChatModel):
        raise ConfigurationError(f"{where.module}.{where.chat_class} is not a chat model")
    return chat


def _parse_spec(spec: object) -> tuple[str, str]:
    known = ", ".join(sorted(PROVIDERS))
    match = _SPEC.fullmatch(spec.strip()) if isinstance(spec, str) else None
    if match is None:
        raise ConfigurationError(
            f"{MODEL_ENV} must be 'provider:model' (providers: {known}), got {spec!r}"
        )
    provider = match["provider"].lower()
    if provider not in PROVIDERS:
        raise ConfigurationError(
            f"unknown model provider {provider!r} in {spec!r}; the providers are {known}"
        )
    return provider, match["model"].strip()


def llm_agent_from_env(cp: FenceComponents, **options: Any) -> LLMAgent | None:
    """The chat-model agent ``ASSAY_MODEL`` asks for, or ``None`` when it is unset
    (the caller then keeps the rule-based agents)."""
    spec = os.environ.get(MODEL_ENV, "").strip()
    if not spec:
        return None
    return LLMAgent(cp, resolve_chat_model(spec), **options)


# --- prompts and the hand-over schema ----------------------------------------------------


def prompt(name: str) -> str:
    """The text of ``prompts/<name>.md``, as shipped in the package."""
    path = files("assay.apps.reference") / "prompts" / f"{name}.md"
    return path.read_text(encoding="utf-8")


def handover_draft_schema() -> dict[str, Any]:
    """What the model fills in: the hand-over's claims, open questions and action
    intents, as one self-contained JSON Schema.

    ``$ref``s are inlined because some providers refuse them in tool parameters.
    ``run_id``, ``from_agent`` and ``status`` are the agent's to set and
    ``entailment`` is the verifier's, so the model is never invited to write them.
    """
    return {
        "title": "handover",
        "description": "The audit's findings: typed claims citing ledger ids, open "
        "questions, and the action intents the claims support.",
        "type": "object",
        "additionalProperties": False,
        "required": list(DRAFT_KEYS),
        "properties": handover_author_properties(DRAFT_KEYS),
    }


def _dumps(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def _feedback_text(feedback: Sequence[Mapping[str, Any]], previous: Any) -> str:
    """The previous round's refusals, with the hand-over their paths point into."""
    if isinstance(previous, Handover):
        previous = previous.model_dump(mode="json")
    draft = {k: previous.get(k, []) for k in DRAFT_KEYS} if isinstance(previous, Mapping) else None
    return Template(prompt("feedback")).substitute(
        previous=_dumps(draft), feedback=_dumps([dict(item) for item in feedback])
    )


# --- the agent -------------------------------------------------------------------------


class LLMAgent:
    """A chat model as the fence's agent: ``agent(state) -> {"handover": dict}``.

    Each round starts a fresh conversation: the system prompt, the task with its
    corpus id and, after a refused round, the feedback with the hand-over it refers
    to. The model researches with the read-only tools (at most ``max_tool_calls``
    requests), then is asked for the hand-over as structured output.
    """

    def __init__(
        self,
        cp: FenceComponents,
        model: BaseChatModel,
        *,
        max_tool_calls: int = 12,
        name: str = "analyst",
        tools: Sequence[str] = READ_TOOLS,
    ) -> None:
        if not isinstance(model, BaseChatModel):
            raise UsageError(f"model must be a LangChain chat model, got {type(model).__name__}")
        if type(model).bind_tools is BaseChatModel.bind_tools:
            raise ConfigurationError(f"{type(model).__name__} does not support tool calling")
        if not isinstance(max_tool_calls, int) or max_tool_calls < 0:
            raise UsageError("max_tool_calls must be a non-negative integer")
        self.cp = cp
        self.model = model
        self.max_tool_calls = max_tool_calls
        self.name = name
        self.tool_names = tuple(tools)

    def __call__(self, state: FenceState) -> dict[str, Any]:
        run_id = state.get("run_id")
        corpus = state.get("context", {}).get("corpus")
        if not run_id or not corpus:
            raise UsageError("the chat-model agent needs run_id and context['corpus']")
        tools = self._tools(run_id)
        messages = self._opening(state, corpus)
        self._research(messages, tools, f"{self.name}-r{state.get('round', 0)}")
        return {"handover": self._handover(run_id, self._ask_for_handover(messages))}

    def _tools(self, run_id: str) -> dict[str, BaseTool]:
        """The tools offered: those named in ``tools`` that are registered read-only.

        Nothing with a side effect is offered, whatever ``tools`` says: such calls
        are proposed as action intents and reach the bus only with a grant.
        """
        offered = {
            tool.name: tool
            for tool in self.cp.bus.as_langchain_tools(run_id)
            if tool.name in self.tool_names and self._read_only(tool.name)
        }
        if not offered:
            raise ConfigurationError(
                f"none of {list(self.tool_names)} is registered read-only on this control "
                "plane (ReferenceApp.install registers the invoice-audit tools)"
            )
        return offered

    def _read_only(self, name: str) -> bool:
        try:
            return self.cp.registry.get(name).side_effect == "read_only"
        except ToolNotFound:
            return False

    def _opening(self, state: FenceState, corpus: str) -> list[BaseMessage]:
        text = Template(prompt("task")).substitute(task=state.get("task", ""), corpus=corpus)
        feedback = state.get("feedback") or []
        if state.get("round", 0) > 0 and feedback:
            text += "\n\n" + _feedback_text(feedback, state.get("handover"))
        return [SystemMessage(content=prompt("system")), HumanMessage(content=text)]

    def _research(self, messages: list[BaseMessage], tools: dict[str, BaseTool], tag: str) -> None:
        """The tool-calling loop, until the model stops asking or the budget is spent.

        Every request counts against the budget, refused ones too, so a model that
        keeps asking for something it cannot have still ends the loop.
        """
        bound = self.model.bind_tools(list(tools.values()))
        used = 0
        while True:
            reply = bound.invoke(messages)
            answers = self._answer(reply, tools, tag, used)
            messages += [reply, *answers]
            used += len(answers)
            if not answers or used >= self.max_tool_calls:
                return

    def _answer(
        self, reply: AIMessage, tools: dict[str, BaseTool], tag: str, used: int
    ) -> list[ToolMessage]:
        """One tool message for every call the reply requests, in order (providers
        expect an answer to each): the bus's result, or why the call was refused."""
        answers: list[ToolMessage] = []
        for call in reply.tool_calls:
            fallback = f"{tag}-c{used + len(answers) + 1}"
            if used + len(answers) >= self.max_tool_calls:
                answers.append(
                    _refusal(
                        call.get("id") or fallback,
                        call["name"],
                        "tool_budget_spent",
                        f"the budget of {self.max_tool_calls} tool calls is spent: hand over "
                        "what the evidence you already have supports",
                    )
                )
            else:
                answers.append(self._call(call, tools, fallback))
        for bad in reply.invalid_tool_calls:
            fallback = f"{tag}-c{used + len(answers) + 1}"
            answers.append(
                _refusal(
                    bad.get("id") or fallback,
                    bad.get("name") or "",
                    "invalid_tool_call",
                    f"the call could not be read: {bad.get('error')}",
                )
            )
        return answers

    def _call(self, call: ToolCall, tools: dict[str, BaseTool], fallback: str) -> ToolMessage:
        """Run one requested call through the bus; its ledger id is in the reply."""
        name = call["name"]
        reply_id = call.get("id") or fallback
        tool = tools.get(name)
        if tool is None:
            return _refusal(reply_id, name, "tool_not_offered", self._not_offered(name, tools))
        bus_id = reply_id if len(reply_id) <= _MAX_CALL_ID else fallback
        out = tool.invoke({"name": name, "args": call["args"], "id": bus_id, "type": "tool_call"})
        content = out.content if isinstance(out, ToolMessage) else str(out)
        return ToolMessage(content=content, tool_call_id=reply_id, name=name)

    def _not_offered(self, name: str, tools: Mapping[str, BaseTool]) -> str:
        try:
            spec = self.cp.registry.get(name)
        except ToolNotFound:
            return f"there is no tool named {name!r}; your tools are {sorted(tools)}"
        if spec.side_effect == "read_only":
            return f"{name!r} is not offered in this audit; your tools are {sorted(tools)}"
        return (
            f"{name!r} has side effects ({spec.side_effect}) and is not yours to call: "
            "propose it as an action intent in your hand-over, with depends_on naming "
            "the claims it rests on; the control plane decides whether it runs"
        )

    def _ask_for_handover(self, messages: list[BaseMessage]) -> dict[str, Any] | str:
        """The model's draft hand-over as a JSON object, or why there is none.

        Structured output is asked for first; a model that answers in prose instead
        (or has no structured output) has its reply parsed as JSON.
        """
        request = [*messages, HumanMessage(content=prompt("handover"))]
        try:
            structured = self.model.with_structured_output(
                handover_draft_schema(), include_raw=True
            )
        except NotImplementedError:
            return _draft_from(self.model.invoke(request))
        out = structured.invoke(request)
        if not isinstance(out, dict):
            return _draft_from_value(out)
        parsed = out.get("parsed")
        if isinstance(parsed, dict):
            return parsed
        raw = out.get("raw")
        draft = _draft_from(raw) if isinstance(raw, BaseMessage) else "the model returned nothing"
        problem = out.get("parsing_error")
        if isinstance(draft, str) and problem is not None:
            draft += f" (structured output: {_excerpt(str(problem))})"
        return draft

    def _handover(self, run_id: str, draft: dict[str, Any] | str) -> dict[str, Any]:
        """The agent's hand-over: the model's draft under this run and this agent's
        name, or a ``failed`` one whose error says what the model got wrong."""
        if isinstance(draft, str):
            failed = Handover(run_id=run_id, from_agent=self.name, status="failed", errors=[draft])
            return failed.model_dump(mode="json")
        mine = {"run_id": run_id, "from_agent": self.name, "status": "ok"}
        return {**mine, **{k: v for k, v in draft.items() if k not in mine}}


# --- reading the model's replies ---------------------------------------------------------


def _refusal(call_id: str, name: str, code: str, message: str) -> ToolMessage:
    """A call that never reached the bus, in the shape of the bus's own ``ToolResult``."""
    result = {
        "ok": False,
        "output": None,
        "ledger_id": None,
        "error": {"code": code, "message": message, "details": [], "request": None},
    }
    return ToolMessage(
        content=json.dumps(result, sort_keys=True),
        tool_call_id=call_id,
        name=name,
        status="error",
    )


def _text(content: str | list[str | dict[str, Any]]) -> str:
    if isinstance(content, str):
        return content
    parts = [
        part if isinstance(part, str) else str(part.get("text", ""))
        for part in content
        if isinstance(part, str) or part.get("type") == "text"
    ]
    return "".join(parts)


_FENCED = re.compile(r"```(?:json)?\s*\n(?P<body>.*?)\n\s*```", re.DOTALL)


def _draft_from(message: BaseMessage) -> dict[str, Any] | str:
    """A JSON object from a reply's text: a fenced block, the outermost braces, or all."""
    text = _text(message.content).strip()
    fenced = _FENCED.search(text)
    if fenced:
        candidate = fenced["body"]
    elif "{" in text and "}" in text:
        candidate = text[text.index("{") : text.rindex("}") + 1]
    else:
        candidate = text
    try:
        value = json.loads(candidate)
    except ValueError:
        return f"the model's hand-over is not JSON: {_excerpt(text)}"
    return _draft_from_value(value)


def _draft_from_value(value: Any) -> dict[str, Any] | str:
    if isinstance(value, dict):
        return value
    return f"the model's hand-over is not a JSON object: {_excerpt(_dumps(value))}"


def _excerpt(text: str) -> str:
    text = " ".join(text.split())
    shown = text if len(text) <= _EXCERPT else text[:_EXCERPT] + "…"
    return repr(shown) if shown else "an empty reply"
