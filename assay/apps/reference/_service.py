"""Running the fenced reference graph for a service: start, pause for a grant,
resume — possibly in another process, since the checkpoints live in the database.

Nothing here is module-global: every call works on the control plane it is given,
so a web service can hold one control plane per process and serve many threads.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.runnables import RunnableConfig
from langgraph.types import Command

from assay.errors import RunError, UsageError
from assay.graph._decision import parse_decision
from assay.graph._fence import build_result
from assay.graph._result import RunResult
from assay.graph.reference import load_documents
from assay.graph.reference._inject import check_injection

if TYPE_CHECKING:
    from assay.control_plane import ControlPlane

AGENTS = ("rules", "llm")


class UnknownThread(UsageError):
    """A thread id with no run behind it."""


class ThreadInUse(UsageError):
    """A thread id that already holds a run; resume it or choose another id."""


def run(
    cp: ControlPlane,
    task: str,
    documents: Mapping[str, str] | str | Path,
    *,
    thread_id: str | None = None,
    agents: str = "rules",
    inject: str | None = None,
    seed: int = 0,
) -> RunResult:
    """Start a fenced run of the reference graph and return where it stands.

    ``agents="llm"`` uses the chat model ``ASSAY_MODEL`` names instead of the rule-based
    agents. A paused run resumes with either graph: after a grant only the grant,
    act and finish nodes run, which both share.
    """
    if not isinstance(task, str) or not task.strip():
        raise UsageError("task must be a non-empty string")
    _check_agents(agents, inject)
    check_injection(inject)
    docs = load_documents(documents)
    app = cp.reference
    graph = app.graph(agents=agents)
    thread_id = thread_id or "thr_" + secrets.token_hex(12)
    config: RunnableConfig = {"configurable": {"thread_id": thread_id}}
    if graph.get_state(config).values:
        raise ThreadInUse(f"thread {thread_id!r} already holds a run; resume it instead")
    corpus = app.store.add(docs)
    run_id = cp.ledger.start_run(
        metadata={
            "thread_id": thread_id,
            "agents": agents,
            "inject": inject,
            "seed": seed,
            "documents": sorted(docs),
            "corpus": corpus,
        }
    )
    graph.invoke(
        {
            "task": task,
            "run_id": run_id,
            "context": {"corpus": corpus, "inject": inject, "seed": seed},
        },
        config,
    )
    return _result(graph, config)


def resume(cp: ControlPlane, thread_id: str, decision: Mapping[str, Any]) -> RunResult:
    """Continue a paused run with a reviewer's decision; a finished run is returned
    as it ended, and nothing runs twice."""
    parse_decision(decision, None)
    graph = cp.reference.graph()
    config: RunnableConfig = {"configurable": {"thread_id": thread_id}}
    snapshot = graph.get_state(config)
    if not snapshot.values:
        raise UnknownThread(f"no run on thread {thread_id!r}")
    if snapshot.next:
        pending = [item["intent_id"] for item in snapshot.values.get("pending") or []]
        parse_decision(decision, pending)  # refuse a malformed decision before resuming
        values: Any = graph.invoke(Command(resume=dict(decision)), config)
        # This invocation's own outcome: the thread's latest checkpoint may be another
        # process's, when two resumed the same run at once.
        if isinstance(values.get("result"), RunResult):
            return values["result"]
        if values.get("__interrupt__"):
            return build_result(values)
    return _result(graph, config)


def _result(graph: Any, config: RunnableConfig) -> RunResult:
    snapshot = graph.get_state(config)
    values = snapshot.values
    result = values.get("result")
    if isinstance(result, RunResult):
        return result
    if snapshot.next:
        return build_result(values)
    raise RunError("the graph stopped without a result")  # pragma: no cover


def _check_agents(agents: str, inject: str | None) -> None:
    if agents not in AGENTS:
        raise UsageError(f"agents={agents!r} is not one of {', '.join(AGENTS)}")
    if agents == "llm" and inject is not None:
        raise UsageError("inject= makes the rule-based agents hallucinate; it needs agents='rules'")
    if agents == "llm" and not os.environ.get("ASSAY_MODEL"):
        raise UsageError("agents='llm' needs ASSAY_MODEL=provider:model, e.g. openai:gpt-4o-mini")
