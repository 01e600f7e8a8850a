"""Chat-model agents on the real gate and verifier path, with a scripted model.

The scripted model replays tool-calling replies, but it reads the ledger ids it
cites from the tool messages the real bus sent back, as a real model must. No
provider is reached: the provider packages are optional extras, and their
resolution is tested with stand-in modules.
"""

from __future__ import annotations

import itertools
import json
import re
import secrets
import sys
import types
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from string import Template
from typing import Any

import pytest
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    InvalidToolCall,
    SystemMessage,
    ToolCall,
    ToolMessage,
)
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.types import Command
from pydantic import Field

import assay.apps.reference
from assay import ControlPlane
from assay.apps import reference
from assay.apps.reference import load_documents
from assay.apps.reference._agents import write
from assay.apps.reference._llm import (
    MODEL_ENV,
    READ_TOOLS,
    LLMAgent,
    handover_draft_schema,
    llm_agent_from_env,
    resolve_chat_model,
)
from assay.errors import ConfigurationError
from assay.fence import RunResult, fence
from tests.fence.conftest import case

PROMPTS = Path(assay.apps.reference.__file__).parent / "prompts"
INVENTED = "led_5f2b9c0d1e3a4f67"

Step = Callable[[list[BaseMessage]], AIMessage]


class ScriptedChatModel(BaseChatModel):
    """Replays ``steps``; each step sees the messages sent, as a real model does.

    ``seen`` keeps every message list the model was sent and ``bound`` the names of
    the tools (or structured-output schemas) bound to it, in order.
    """

    model: str = "scripted"
    steps: list[Any] = Field(default_factory=list)
    seen: list[list[BaseMessage]] = Field(default_factory=list)
    bound: list[list[str]] = Field(default_factory=list)

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
        self.bound.append([_name(t) for t in tools])
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.seen.append(list(messages))
        assert self.steps, "the script ran out of replies"
        step: Step = self.steps.pop(0)
        return ChatResult(generations=[ChatGeneration(message=step(list(messages)))])


def _name(tool: object) -> str:
    if isinstance(tool, BaseTool):
        return tool.name
    return str(tool.get("title")) if isinstance(tool, dict) else repr(tool)


# --- what the scripted model does ------------------------------------------------------


def _corpus(messages: Sequence[BaseMessage]) -> str:
    match = re.search(r"crp_[0-9a-f]{16}", str(messages[1].content))
    assert match, "the task message names the corpus"
    return match.group(0)


def _results(messages: Sequence[BaseMessage]) -> list[tuple[str, dict[str, Any]]]:
    """Every tool result the model was sent: (tool name, the ToolResult JSON)."""
    return [
        (m.name or "", json.loads(str(m.content))) for m in messages if isinstance(m, ToolMessage)
    ]


def _calls(ids: Iterator[int], *calls: tuple[str, dict[str, Any]]) -> AIMessage:
    tool_calls = [
        ToolCall(name=name, args=args, id=f"call_{next(ids)}", type="tool_call")
        for name, args in calls
    ]
    return AIMessage(content="", tool_calls=tool_calls)


def _wanted(preview: str) -> bool:
    return preview.startswith(("# Invoice INV-4421", "Line 14: senior associate, 12.5 h")) or (
        "senior associates is capped" in preview
    )


def research(ids: Iterator[int]) -> list[Step]:
    """Search, read the three passages line 14 turns on, compute the overage, stop."""

    def search(messages: list[BaseMessage]) -> AIMessage:
        query = "invoice INV-4421 line 14 senior associate hourly rate capped per hour"
        args = {"corpus": _corpus(messages), "query": query, "k": 20}
        return _calls(ids, ("search_documents", args))

    def read(messages: list[BaseMessage]) -> AIMessage:
        _, found = _results(messages)[-1]
        hits = [h for h in found["output"]["hits"] if _wanted(h["preview"])]
        assert len(hits) == 3
        corpus = _corpus(messages)
        return _calls(
            ids,
            *[
                (
                    "read_passage",
                    {"corpus": corpus, "document": h["document"], "passage": h["passage"]},
                )
                for h in hits
            ],
        )

    def overage(messages: list[BaseMessage]) -> AIMessage:
        args = {"line": 14, "hours": 12.5, "billed_rate": 450, "cap_rate": 380}
        return _calls(ids, ("compute_overage", args))

    def done(messages: list[BaseMessage]) -> AIMessage:
        return AIMessage(content="I have read the evidence for line 14.")

    return [search, read, overage, done]


def _cite(messages: Sequence[BaseMessage], needle: str) -> tuple[str, str]:
    """The ledger id and text of the successful result that contains ``needle``."""
    for _, result in _results(messages):
        if result["ok"] and isinstance(result["output"], str) and needle in result["output"]:
            return result["ledger_id"], result["output"]
    raise AssertionError(f"no tool result contains {needle!r}")


def _claim(cid: str, text: str, ledger_id: str, *typed: Any) -> dict[str, Any]:
    """A claim; ``typed`` (pred, args) types its proposition, which the flag's
    declared roles read its arguments from."""
    prop: dict[str, Any] = {"id": f"{cid}.p", "text": text, "ledger_ids": [ledger_id]}
    if typed:
        prop.update(pred=typed[0], args=list(typed[1]))
    return {"id": cid, "type": "Assertion", "text": text, "confidence": 0.9, "propositions": [prop]}


def draft(messages: Sequence[BaseMessage], *, invent: bool = False) -> dict[str, Any]:
    """The hand-over a careful model writes from the results it was sent."""
    invoice, _ = _cite(messages, "# Invoice INV-4421")
    billed, _ = _cite(messages, "Line 14: senior associate, 12.5 h")
    cap, _ = _cite(messages, "senior associates is capped at EUR 380")
    over, over_text = _cite(messages, "above the cap")
    claims = [
        _claim(
            "invoice",
            "The invoice under audit is INV-4421.",
            INVENTED if invent else invoice,
            "invoice",
            ["INV-4421"],
        ),
        _claim(
            "line14.billed", "Line 14 bills 12.5 h at EUR 450/h for a senior associate.", billed
        ),
        _claim(
            "line14.cap", "The engagement letter caps senior associates at EUR 380 per hour.", cap
        ),
        _claim("line14.overage", over_text, over, "over_cap", ["Line 14", "EUR 875.00"]),
    ]
    flag = {
        "id": "flag14",
        "tool": "flag_invoice_line",
        "version": "1.4.0",
        "requires_grant": True,
        "depends_on": [c["id"] for c in claims],
        "args": {
            "invoice": "INV-4421",
            "line": 14,
            "amount_over_cap": 875.0,
            "currency": "EUR",
            "reason": "senior associate billed at EUR 450/h against a cap of EUR 380/h",
        },
    }
    return {"claims": claims, "open_questions": [], "action_intents": [flag]}


CONSENT = "The client gave prior written consent to the senior associate rate."


def hand_over(
    *, invent: bool = False, how: str = "json", consent: bool = False, dropped: bool = False
) -> Step:
    """The final reply: the draft as plain JSON, as JSON in prose, or as the
    structured-output tool call; ``consent`` adds a claim its evidence does not
    support, ``dropped`` turns it into an open question instead."""

    def step(messages: list[BaseMessage]) -> AIMessage:
        body = draft(messages, invent=invent)
        if consent:
            cap, _ = _cite(messages, "senior associates is capped at EUR 380")
            body["claims"].append(_claim("consent", CONSENT, cap))
        if dropped:
            body["open_questions"].append({"id": "open.consent", "text": CONSENT})
        if how == "tool_call":
            call = ToolCall(name="handover", args=body, id="call_handover", type="tool_call")
            return AIMessage(content="", tool_calls=[call])
        if how == "fenced":
            return AIMessage(content=f"Here it is:\n```json\n{json.dumps(body)}\n```\nDone.")
        return AIMessage(content=json.dumps(body))

    return step


def say(content: str) -> Step:
    def step(messages: list[BaseMessage]) -> AIMessage:
        return AIMessage(content=content)

    return step


# --- running the fenced graph -----------------------------------------------------------


def run_fenced(
    cp: ControlPlane, model: ScriptedChatModel, *, rounds: int = 2, max_tool_calls: int = 12
) -> tuple[Any, RunnableConfig, RunResult]:
    task, folder = case("over_cap")["task"], case("over_cap")["documents"]
    app = reference.app_for(cp)
    corpus = app.store.add(load_documents(folder))
    agent = LLMAgent(cp, model, max_tool_calls=max_tool_calls)
    graph = fence(
        agent,
        control_plane=cp,
        name="invoice-audit-scripted",
        writer=write,
        max_evidence_rounds=rounds,
        policy=app.policy,
    )
    config: RunnableConfig = {"configurable": {"thread_id": f"thr_{secrets.token_hex(6)}"}}
    graph.invoke({"task": task, "context": {"corpus": corpus}}, config)
    return graph, config, graph.get_state(config).values["result"]


@pytest.mark.parametrize("how", ["json", "fenced", "tool_call"])
def test_a_careful_model_ends_awaiting_the_grant_for_its_flag(
    audit: ControlPlane, outbox: Path, how: str
) -> None:
    model = ScriptedChatModel(steps=[*research(itertools.count(1)), hand_over(how=how)])
    graph, config, paused = run_fenced(audit, model)

    assert paused.status == "awaiting_grant", paused.errors
    assert {c.id for c in paused.claims} == {
        "invoice",
        "line14.billed",
        "line14.cap",
        "line14.overage",
    }
    [pending] = paused.pending_grants
    assert (pending.tool, pending.args["amount_over_cap"]) == ("flag_invoice_line", 875.0)
    assert set(pending.depends_on) == {c.id for c in paused.claims}
    assert not outbox.exists() and not model.steps
    assert [set(names) for names in model.bound] == [set(READ_TOOLS), {"handover"}]

    graph.invoke(Command(resume={"approve": True, "approver": "alice"}), config)
    done: RunResult = graph.get_state(config).values["result"]
    assert done.status == "answered"
    [action] = done.actions
    assert (action.status, action.approver) == ("executed", "alice")
    assert len(outbox.read_text().splitlines()) == 1


def test_an_invented_ledger_id_is_refused_and_the_run_abstains(
    audit: ControlPlane, outbox: Path
) -> None:
    ids = itertools.count(1)
    script = [*research(ids), hand_over(invent=True), *research(ids), hand_over(invent=True)]
    _, _, result = run_fenced(audit, ScriptedChatModel(steps=script), rounds=1)

    assert result.status == "abstained"
    refused = {e["path"]: e["code"] for e in result.errors}
    assert refused["$.claims[0].propositions[0].ledger_ids[0]"] == "unknown_ledger_id"
    assert result.claims == () and result.actions == () and not outbox.exists()


def test_the_messages_carry_the_packaged_prompts_and_the_feedback(
    audit: ControlPlane, outbox: Path
) -> None:
    ids = itertools.count(1)
    script = [*research(ids), hand_over(invent=True), *research(ids), hand_over()]
    model = ScriptedChatModel(steps=script)
    _, _, result = run_fenced(audit, model, rounds=1)
    assert result.status == "awaiting_grant"

    task = case("over_cap")["task"]
    corpus = _corpus(model.seen[0])
    system = SystemMessage(content=(PROMPTS / "system.md").read_text())
    opening = Template((PROMPTS / "task.md").read_text()).substitute(task=task, corpus=corpus)
    assert model.seen[0] == [system, HumanMessage(content=opening)]
    asked = HumanMessage(content=(PROMPTS / "handover.md").read_text())
    assert model.seen[4][-1] == asked and model.seen[9][-1] == asked

    round_two = model.seen[5]
    assert round_two[0] == system and len(round_two) == 2
    text = str(round_two[1].content)
    assert text.startswith(opening + "\n\n")
    fixed = [line for line in (PROMPTS / "feedback.md").read_text().splitlines() if "$" not in line]
    assert all(line in text for line in fixed)
    assert '"code": "unknown_ledger_id"' in text
    assert '"path": "$.claims[0].propositions[0].ledger_ids[0]"' in text
    assert text.count(INVENTED) == 2  # cited in the previous hand-over, named in the error


def test_an_unsupported_claim_comes_back_and_is_dropped_not_reworded(
    audit: ControlPlane, outbox: Path
) -> None:
    ids = itertools.count(1)
    script = [*research(ids), hand_over(consent=True), *research(ids), hand_over(dropped=True)]
    model = ScriptedChatModel(steps=script)
    _, _, result = run_fenced(audit, model, rounds=1)

    feedback = str(model.seen[5][1].content)
    assert '"kind": "unsupported"' in feedback and f'"proposition": "{CONSENT}"' in feedback
    assert [u.claim_id for u in audit.verifier.unsupported(result.run_id)] == ["consent"]
    assert result.status == "awaiting_grant" and result.rounds == 1
    assert "consent" not in {c.id for c in result.claims}


@pytest.mark.parametrize(
    "reply",
    ["I could not finish the audit, sorry.", "[1, 2, 3]", '{"claims": [', ""],
)
def test_output_that_is_no_json_object_ends_failed_without_raising(
    audit: ControlPlane, outbox: Path, reply: str
) -> None:
    model = ScriptedChatModel(steps=[say("Nothing to look up."), say(reply)])
    _, _, result = run_fenced(audit, model)

    assert result.status == "failed" and result.answer is None
    [handover] = audit.ledger.entries(result.run_id, kinds=["handover"])
    recorded = json.loads(handover.text)
    assert recorded["status"] == "failed"
    assert re.match(r"the model's hand-over is not (JSON|a JSON object)", recorded["errors"][0])


def test_a_hand_over_outside_the_contract_is_refused_by_the_gate(
    audit: ControlPlane, outbox: Path
) -> None:
    bad = {"claims": [{"id": "c1", "text": "Line 14 is fine."}], "summary": "all good"}
    model = ScriptedChatModel(steps=[say("Done."), say(json.dumps(bad))])
    _, _, result = run_fenced(audit, model, rounds=0)

    assert result.status == "abstained"
    assert {e["code"] for e in result.errors} == {"schema_violation"}


def _codes(messages: Sequence[BaseMessage]) -> list[str]:
    return [r["error"]["code"] if r["error"] else "ok" for _, r in _results(messages)]


def test_tool_misuse_comes_back_to_the_model_and_never_reaches_the_bus(
    audit: ControlPlane, outbox: Path
) -> None:
    flag_args = {
        "invoice": "INV-4421",
        "line": 14,
        "amount_over_cap": 875.0,
        "currency": "EUR",
        "reason": "over",
    }

    def misuse(messages: list[BaseMessage]) -> AIMessage:
        reply = _calls(itertools.count(1), ("flag_invoice_line", flag_args), ("delete_ledger", {}))
        bad = InvalidToolCall(
            name="read_passage",
            args="{oops",
            id="call_x",
            error="bad JSON",
            type="invalid_tool_call",
        )
        return AIMessage(content="", tool_calls=reply.tool_calls, invalid_tool_calls=[bad])

    def reads(messages: list[BaseMessage]) -> AIMessage:
        corpus = _corpus(messages)
        return _calls(
            itertools.count(10),
            ("read_passage", {"corpus": corpus, "document": "invoice.md", "passage": "two"}),
            ("read_passage", {"corpus": corpus, "document": "invoice.md", "passage": 0}),
        )

    unknown = {
        "claims": [],
        "action_intents": [],
        "open_questions": [{"id": "q", "text": "No evidence read."}],
    }
    model = ScriptedChatModel(steps=[misuse, reads, say(json.dumps(unknown))])
    _, _, result = run_fenced(audit, model, max_tool_calls=4)

    first, last = model.seen[1], model.seen[2]
    assert _codes(first) == ["tool_not_offered", "tool_not_offered", "invalid_tool_call"]
    refusals = [str(m.content) for m in first if isinstance(m, ToolMessage)]
    assert "propose it as an action intent" in refusals[0]
    assert "no tool named 'delete_ledger'" in refusals[1]
    assert _codes(last)[3:] == ["invalid_arguments", "tool_budget_spent"]
    assert result.status == "abstained" and result.actions == ()
    calls = audit.ledger.entries(result.run_id, kinds=["tool_call"])
    assert calls and not any("flag_invoice_line" in c.text for c in calls)
    assert not outbox.exists()


# --- choosing a model -------------------------------------------------------------------


class StandInOllama(ScriptedChatModel):
    """What ``langchain_ollama.ChatOllama`` is replaced by: no server is reached."""


@pytest.fixture
def ollama(monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType("langchain_ollama")
    setattr(module, "ChatOllama", StandInOllama)  # noqa: B010
    monkeypatch.setitem(sys.modules, "langchain_ollama", module)


@pytest.mark.parametrize("spec", ["gpt-4o", "openai:", ":gpt-4o", "", "  "])
def test_a_malformed_spec_is_a_configuration_error(spec: str) -> None:
    with pytest.raises(ConfigurationError, match="'provider:model'"):
        resolve_chat_model(spec)


def test_an_unknown_provider_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="unknown model provider 'mistral'"):
        resolve_chat_model("mistral:large")


@pytest.mark.parametrize("provider", ["openai", "anthropic", "ollama"])
def test_a_missing_provider_package_names_its_extra(
    monkeypatch: pytest.MonkeyPatch, provider: str
) -> None:
    monkeypatch.setitem(sys.modules, f"langchain_{provider}", None)
    with pytest.raises(ConfigurationError, match=rf"pip install 'assay\[{provider}\]'"):
        resolve_chat_model(f"{provider}:some-model")


def test_a_provider_model_is_built_from_the_spec(ollama: None) -> None:
    chat = resolve_chat_model(" ollama:llama3.1:8b ")
    assert isinstance(chat, StandInOllama) and chat.model == "llama3.1:8b"


def test_a_provider_that_refuses_to_start_is_a_configuration_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refuse(**kwargs: Any) -> BaseChatModel:
        raise ValueError("OPENAI_API_KEY is not set")

    module = types.ModuleType("langchain_openai")
    setattr(module, "ChatOpenAI", refuse)  # noqa: B010
    monkeypatch.setitem(sys.modules, "langchain_openai", module)
    with pytest.raises(ConfigurationError, match="OPENAI_API_KEY"):
        resolve_chat_model("openai:gpt-4o-mini")


def test_assay_model_chooses_the_agent(
    audit: ControlPlane, monkeypatch: pytest.MonkeyPatch, ollama: None
) -> None:
    monkeypatch.delenv(MODEL_ENV, raising=False)
    assert llm_agent_from_env(audit) is None
    monkeypatch.setenv(MODEL_ENV, "ollama:qwen2.5")
    agent = llm_agent_from_env(audit, max_tool_calls=3)
    assert agent is not None and agent.max_tool_calls == 3
    assert isinstance(agent.model, StandInOllama) and agent.model.model == "qwen2.5"
    monkeypatch.setenv(MODEL_ENV, "cohere:command")
    with pytest.raises(ConfigurationError):
        llm_agent_from_env(audit)


def test_the_chat_model_graph_runs_through_the_runner_and_resumes_with_either_graph(
    audit: ControlPlane, outbox: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``llm_graph`` is the audit with ASSAY_MODEL's model as its agent, its documents
    taken from the run's input; after the grant only the fence's own nodes run, so
    the rule-based graph of the same name resumes it."""
    script = [*research(itertools.count(1)), hand_over()]
    module = types.ModuleType("langchain_ollama")
    setattr(module, "ChatOllama", lambda **_: ScriptedChatModel(steps=list(script)))  # noqa: B010
    monkeypatch.setitem(sys.modules, "langchain_ollama", module)
    monkeypatch.setenv(MODEL_ENV, "ollama:scripted")

    paused = audit.run(reference.llm_graph(audit), case("over_cap"))
    assert paused.status == "awaiting_grant", paused.errors
    assert [p.args["amount_over_cap"] for p in paused.pending_grants] == [875.0]
    done = audit.resume(
        reference.graph(audit), paused.thread_id, {"approve": True, "approver": "al"}
    )
    assert [(a.status, a.approver) for a in done.actions] == [("executed", "al")]
    assert len(outbox.read_text().splitlines()) == 1


def test_a_model_without_tool_calling_is_refused(audit: ControlPlane) -> None:
    with pytest.raises(ConfigurationError, match="tool calling"):
        LLMAgent(audit, FakeListChatModel(responses=["hi"]))


def test_the_draft_schema_is_self_contained_and_leaves_entailment_to_the_verifier() -> None:
    schema = handover_draft_schema()
    text = json.dumps(schema)
    assert set(schema["properties"]) == {"claims", "open_questions", "action_intents"}
    assert "$ref" not in text and "entailment" not in text and "run_id" not in text
