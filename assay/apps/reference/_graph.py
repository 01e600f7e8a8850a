"""The invoice-audit reference graph: planner → researcher → analyst, fenced by the
control plane (gate → verifier → abstain | policy → grant → act), with the writer
composing the answer from verified claims only."""

# Nodes read the keys the fence's "begin" node sets (run_id, ...) directly.
# pyright: reportTypedDictNotRequiredAccess=false
from __future__ import annotations

import os
from dataclasses import asdict
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from langgraph.graph import END, START, StateGraph

from assay.errors import UsageError
from assay.gate import Handover
from assay.graph._fence import fence
from assay.graph.reference import _agents as agents_mod
from assay.graph.reference._inject import inject
from assay.graph.reference._llm import LLMAgent, llm_agent_from_env
from assay.graph.reference._tools import DocumentStore, Outbox, register_tools

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver
    from langgraph.graph.state import CompiledStateGraph

    from assay.control_plane import ControlPlane

CASES_DIR = Path(str(files("assay.graph.reference") / "cases"))
POLICY_FILE = Path(str(files("assay.graph.reference") / "policy.yaml"))
OUTBOX_ENV = "ASSAY_OUTBOX"


def cases() -> dict[str, Path]:
    """The bundled example cases, by name."""
    return {p.name: p for p in sorted(CASES_DIR.iterdir()) if p.is_dir()}


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
    """The reference application bound to one control plane: its documents, tools,
    outbox and auto-approval policy. One per control plane (``cp.reference``)."""

    def __init__(self, cp: ControlPlane, *, outbox: str | Path | None = None) -> None:
        self.cp = cp
        self.store = DocumentStore()
        self.outbox = Outbox(Path(outbox or os.environ.get(OUTBOX_ENV) or "assay-outbox.jsonl"))
        register_tools(cp.registry, self.store, self.outbox)
        if not cp.grants.policy.rules:
            cp.grants.load_policy(POLICY_FILE)

    def agent(self) -> CompiledStateGraph[ReferenceState, None, ReferenceState, ReferenceState]:
        """planner → researcher → analyst, as one LangGraph graph."""
        builder: StateGraph[ReferenceState, None, ReferenceState, ReferenceState] = StateGraph(
            ReferenceState
        )
        builder.add_node("planner", self._planner)
        builder.add_node("researcher", self._researcher)
        builder.add_node("analyst", self._analyst)
        builder.add_edge(START, "planner")
        builder.add_edge("planner", "researcher")
        builder.add_edge("researcher", "analyst")
        builder.add_edge("analyst", END)
        return builder.compile()

    def graph(
        self,
        *,
        checkpointer: BaseCheckpointSaver[Any] | None = None,
        max_evidence_rounds: int = 2,
        agents: str = "rules",
    ) -> CompiledStateGraph[Any, None, Any, Any]:
        """The fenced reference graph, with the rule-based agents or (``agents="llm"``)
        the chat model named by ``ASSAY_MODEL``."""
        agent: Any = self.agent() if agents == "rules" else self.llm_agent()
        return fence(
            agent,
            control_plane=self.cp,
            checkpointer=checkpointer,
            max_evidence_rounds=max_evidence_rounds,
            writer=agents_mod.write,
        )

    def llm_agent(self) -> LLMAgent:
        """The chat-model agent ``ASSAY_MODEL`` names (``provider:model``)."""
        agent = llm_agent_from_env(self.cp)
        if agent is None:
            raise UsageError(
                "agents='llm' needs ASSAY_MODEL=provider:model, e.g. openai:gpt-4o-mini"
            )
        return agent

    # --- nodes ------------------------------------------------------------------------

    def _planner(self, state: ReferenceState) -> dict[str, Any]:
        return {"queries": agents_mod.plan(state["task"], state.get("feedback", []))}

    def _researcher(self, state: ReferenceState) -> dict[str, Any]:
        corpus = state.get("context", {}).get("corpus")
        if not corpus:
            raise UsageError("the reference graph needs context['corpus'] (use cp.run)")
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

    def _analyst(self, state: ReferenceState) -> dict[str, Any]:
        evidence = [agents_mod.Evidence(**e) for e in state.get("evidence", [])]
        findings = agents_mod.parse(evidence)
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
