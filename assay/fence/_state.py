"""The state a fenced graph carries between its nodes.

Everything but ``result`` is plain JSON, so a checkpoint written by one process
reads back identically in another (the durable-resume guarantee rests on that).
"""

from __future__ import annotations

from typing import Any, TypedDict

from assay.fence._result import RunResult


class FenceState(TypedDict, total=False):
    """Keys an agent reads: ``task``, ``context`` (what the caller passed for the agent,
    such as a corpus id), ``run_id``, ``round`` and ``feedback`` (the gate errors and
    ``Unsupported`` items of the previous round, as dicts with a ``kind`` of
    ``gate_error`` or ``unsupported``). An agent returns ``{"handover": ...}``.

    ``graph`` is the ``name`` and ``version`` given to ``fence()`` by the graph that
    started the run; ``thread_id`` the LangGraph thread it runs on."""

    task: str
    context: dict[str, Any]
    run_id: str
    thread_id: str
    graph: dict[str, str]
    round: int
    feedback: list[dict[str, Any]]
    handover: Any
    failure: str | None
    accepted: dict[str, Any] | None
    verified: dict[str, Any] | None
    gate_errors: list[dict[str, Any]]
    unsupported: list[dict[str, Any]]
    granted: dict[str, dict[str, Any]]
    denied: dict[str, dict[str, Any]]
    pending: list[dict[str, Any]]
    actions: list[dict[str, Any]]
    result: RunResult
