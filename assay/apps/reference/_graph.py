"""The invoice-audit graph: planner → researcher → analyst, fenced by the control
plane (gate → verifier → abstain | policy → grant → act), with the writer composing
the answer from verified claims only.

The application is built on public API alone, as a user's would be: it registers
its tools into the registry it is given, brings its own auto-approval policy to its
fenced graph (the control plane's own policy is left alone), and takes its
documents in the run's input, so any runner (``cp.run``, ``assay run --graph``)
can start it and any process can resume it.
"""

# Nodes read the keys the fence's "begin" node sets (run_id, ...) directly.
# pyright: reportTypedDictNotRequiredAccess=false
from __future__ import annotations

import os
import weakref
from collections.abc import Mapping
from dataclasses import asdict
from functools import partial
from importlib.resources import files
from pathlib import Path
from typing import Any, TypedDict, cast

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from assay.apps.reference import _agents as agents_mod
from assay.apps.reference._inject import check_injection, inject
from assay.apps.reference._llm import LLMAgent, llm_agent_from_env
from assay.apps.reference._reading import Evidence, parse
from assay.apps.reference._tools import (
    DocumentStore,
    Outbox,
    corpus_of,
    load_documents,
    register_tools,
)
from assay.contract import Handover
from assay.errors import UsageError
from assay.fence import FenceComponents, FencedGraph, FenceState, fence
from assay.tool_bus import Policy, ToolRegistry, load_policy

CASES_DIR = Path(str(files("assay.apps.reference") / "cases"))
POLICY_FILE = Path(str(files("assay.apps.reference") / "policy.yaml"))
OUTBOX_ENV = "ASSAY_OUTBOX"
#: The name and version the audit's graph is fenced with: its threads carry them.
GRAPH_NAME = "invoice-audit"
GRAPH_VERSION = "1"
AGENTS = ("rules", "llm")
_INPUT_KEYS = ("task", "documents", "inject", "seed")


def cases() -> dict[str, Path]:
    """The bundled example cases, by name."""
    return {p.name: p for p in sorted(CASES_DIR.iterdir()) if p.is_dir()}


def case_input(name: str, *, inject: str | None = None, seed: int = 0) -> dict[str, Any]:
    """The run input of the bundled case ``name``: its task and its folder."""
    found = cases()
    if name not in found:
        raise UsageError(f"no bundled case {name!r}; one of: {', '.join(found)}")
    folder = found[name]
    task = (folder / "task.txt").read_text(encoding="utf-8").strip()
    return {"task": task, "documents": str(folder), "inject": inject, "seed": seed}


def prepare_input(
    value: Mapping[str, Any], *, agents: str = "rules", folders: bool = True
) -> dict[str, Any]:
    """The audit's input, checked, as the fenced graph runs on it.

    ``{"task": str, "documents": {name: text} | folder, "inject": class | None,
    "seed": int}`` becomes ``{"task": ..., "context": {"documents", "corpus",
    "inject", "seed"}}``: a folder is read here, so the run carries its documents
    and any process can continue it. With ``folders=False`` (a graph served to
    clients who must not read the server's files) only the documents' text is
    taken. Raises :class:`UsageError` on anything else.
    """
    unknown = sorted(repr(k) for k in value if k not in _INPUT_KEYS)
    if unknown:
        raise UsageError(
            f"the invoice audit takes {', '.join(_INPUT_KEYS)}, not {', '.join(unknown)}"
        )
    task = value.get("task")
    if not isinstance(task, str) or not task.strip():
        raise UsageError("task must be a non-empty string")
    if value.get("documents") is None:
        raise UsageError("the invoice audit needs documents: a mapping of name to text or a folder")
    if not folders and not isinstance(value["documents"], Mapping):
        raise UsageError(
            "this graph takes the documents' text, as a mapping of name to text; "
            "it reads no folder of the server"
        )
    documents = load_documents(value["documents"])
    injected, seed = value.get("inject"), value.get("seed", 0)
    if injected is not None and not isinstance(injected, str):
        raise UsageError("inject must name a class of hallucination")
    check_injection(injected)
    if agents == "llm" and injected is not None:
        raise UsageError("inject= makes the rule-based agents hallucinate; it needs agents='rules'")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise UsageError("seed must be an integer")
    context = {"documents": documents, "corpus": corpus_of(documents), "inject": injected}
    return {"task": task, "context": {**context, "seed": seed}}


class ReferenceState(TypedDict, total=False):
    task: str
    context: dict[str, Any]
    run_id: str
    round: int
    feedback: list[dict[str, Any]]
    queries: list[str]
    evidence: list[dict[str, Any]]
    research_entry: str | None
    handover: Any


class ReferenceApp:
    """The invoice audit: its documents, tools, outbox and auto-approval policy.

    ``install(registry)`` registers the tools (once per registry); ``graph(components)``
    fences the audit's agents on those components. :func:`app_for` keeps one per
    registry, which is what the module-level :func:`graph` uses.
    """

    def __init__(
        self,
        *,
        outbox: str | Path | None = None,
        policy: str | Path | Mapping[str, Any] | Policy = POLICY_FILE,
    ) -> None:
        self.store = DocumentStore()
        self.outbox = Outbox(Path(outbox or os.environ.get(OUTBOX_ENV) or "assay-outbox.jsonl"))
        self.policy = load_policy(policy)
        self._installed: weakref.WeakSet[ToolRegistry] = weakref.WeakSet()

    def install(self, registry: ToolRegistry) -> None:
        """Register the audit's tools, bound to this application, into ``registry``."""
        if registry in self._installed:
            return
        register_tools(registry, self.store, self.outbox)
        self._installed.add(registry)
        _APPS.setdefault(registry, self)

    def graph(
        self,
        components: FenceComponents,
        *,
        agents: str = "rules",
        checkpointer: BaseCheckpointSaver[Any] | None = None,
        max_evidence_rounds: int = 2,
        document_folders: bool = True,
    ) -> FencedGraph:
        """The fenced audit, with the rule-based agents or (``agents="llm"``) the chat
        model ``ASSAY_MODEL`` names; ``document_folders=False`` takes the documents'
        text only, never a folder path (see :func:`served_graph`)."""
        if agents not in AGENTS:
            raise UsageError(f"agents={agents!r} is not one of {', '.join(AGENTS)}")
        self.install(components.registry)
        agent: Any = self.agent(components) if agents == "rules" else self.llm_agent(components)
        return fence(
            agent,
            control_plane=components,
            name=GRAPH_NAME,
            version=GRAPH_VERSION,
            checkpointer=checkpointer,
            max_evidence_rounds=max_evidence_rounds,
            writer=agents_mod.write,
            policy=self.policy,
            prepare=partial(prepare_input, agents=agents, folders=document_folders),
        )

    def agent(
        self, components: FenceComponents
    ) -> CompiledStateGraph[ReferenceState, None, ReferenceState, ReferenceState]:
        """planner → researcher → analyst, as one LangGraph graph."""
        return _RuleAgents(self.store, components).compile()

    def llm_agent(self, components: FenceComponents) -> _Indexing:
        """The chat-model agent ``ASSAY_MODEL`` names (``provider:model``)."""
        agent = llm_agent_from_env(components)
        if agent is None:
            raise UsageError(
                "agents='llm' needs ASSAY_MODEL=provider:model, e.g. openai:gpt-4o-mini"
            )
        return _Indexing(self.store, agent)


# One application per registry: its tools' handlers are bound to it.
_APPS: weakref.WeakKeyDictionary[ToolRegistry, ReferenceApp] = weakref.WeakKeyDictionary()


def app_for(components: FenceComponents) -> ReferenceApp:
    """The application installed in ``components``' registry (installed now if none is)."""
    app = _APPS.get(components.registry)
    if app is None:
        app = ReferenceApp()
        app.install(components.registry)
    return app


def graph(components: FenceComponents) -> FencedGraph:
    """The fenced invoice audit with the rule-based agents: what ``assay run`` and
    ``assay resume`` load by default (``assay.apps.reference:graph``)."""
    return app_for(components).graph(components)


def served_graph(components: FenceComponents) -> FencedGraph:
    """The audit of :func:`graph` for clients who must not name the server's files
    (``assay serve --graph invoices=assay.apps.reference:served_graph``): its input's
    documents are text, never a folder. Same graph name and version, so either
    resumes the other's threads."""
    return app_for(components).graph(components, document_folders=False)


def llm_graph(components: FenceComponents) -> FencedGraph:
    """The fenced invoice audit with the ``ASSAY_MODEL`` chat model as its agent
    (``assay.apps.reference:llm_graph``); it resumes the same threads as :func:`graph`."""
    return app_for(components).graph(components, agents="llm")


def _documents(store: DocumentStore, context: Mapping[str, Any]) -> str:
    """The corpus id of the run's documents, indexed in this process."""
    documents = context.get("documents")
    if documents is not None:
        return store.add(load_documents(documents))
    corpus = context.get("corpus")
    if not corpus:
        raise UsageError("the invoice audit needs context['documents'] (use cp.run)")
    return str(corpus)


class _Indexing:
    """An agent run after the run's documents are indexed, so that its search tools
    find them in whichever process runs the round."""

    def __init__(self, store: DocumentStore, agent: LLMAgent) -> None:
        self.store = store
        self.agent = agent

    def __call__(self, state: FenceState) -> dict[str, Any]:
        context = dict(state.get("context", {}))
        context["corpus"] = _documents(self.store, context)
        return self.agent(cast(FenceState, {**state, "context": context}))


class _RuleAgents:
    """The deterministic agents' nodes, bound to a document store and components."""

    def __init__(self, store: DocumentStore, components: FenceComponents) -> None:
        self.store = store
        self.cp = components

    def compile(self) -> CompiledStateGraph[ReferenceState, None, ReferenceState, ReferenceState]:
        builder: StateGraph[ReferenceState, None, ReferenceState, ReferenceState] = StateGraph(
            ReferenceState
        )
        builder.add_node("planner", self.planner)
        builder.add_node("researcher", self.researcher)
        builder.add_node("analyst", self.analyst)
        builder.add_edge(START, "planner")
        builder.add_edge("planner", "researcher")
        builder.add_edge("researcher", "analyst")
        builder.add_edge("analyst", END)
        return builder.compile()

    def planner(self, state: ReferenceState) -> dict[str, Any]:
        return {"queries": agents_mod.plan(state["task"], state.get("feedback", []))}

    def researcher(self, state: ReferenceState) -> dict[str, Any]:
        corpus = _documents(self.store, state.get("context", {}))
        evidence = agents_mod.research(self.cp, state["run_id"], corpus, state["queries"])
        decision = self.cp.gate.check(
            state["run_id"], agents_mod.research_handover(state["run_id"], evidence)
        )
        if not decision.accepted:
            codes = sorted(decision.codes)
            raise RuntimeError(f"the researcher's hand-over was rejected: {codes}")
        return {
            "evidence": [asdict(e) for e in evidence],
            "research_entry": decision.handover_entry_id,
        }

    def analyst(self, state: ReferenceState) -> dict[str, Any]:
        evidence = [Evidence(**e) for e in state.get("evidence", [])]
        findings = parse(evidence)
        context = state.get("context", {})
        previous = state.get("handover")
        dropped = agents_mod.dropped_claims(
            state.get("feedback", []),
            Handover.model_validate(previous) if isinstance(previous, dict) else None,
        )
        handover = agents_mod.analyse(self.cp, state["run_id"], findings, dropped)
        kind = context.get("inject")
        if kind:
            handover = inject(
                kind,
                cp=self.cp,
                run_id=state["run_id"],
                seed=int(context.get("seed", 0)),
                handover=handover,
                findings=findings,
                evidence=evidence,
                research_entry=state.get("research_entry"),
            )
        return {"handover": handover.model_dump(mode="json")}
