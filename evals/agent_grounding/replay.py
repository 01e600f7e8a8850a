"""A small generic fenced graph for suites whose cases are tool results and one claim.

The agent replays each fixture of the case through one read-only bus tool, so every
tool result becomes a ``tool_output`` ledger entry exactly as the tool returned it,
and asserts the case's claim (``context["claim"]``) citing all of them. Whether the
claim is answered is then for the fence alone: the gate, the verifier and its
entailment model. A claim found Unsupported is dropped, never reworded, and the run
ends with an open question about it.

``graph`` is a module-level factory, so ``assay eval --jobs N`` workers can import it
(``--graph evals.agent_grounding.replay:graph``, run from the repository root).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from assay import ToolSpec
from assay.fence import FenceComponents, FencedGraph, FenceState, fence

__all__ = ["GRAPH_NAME", "REPLAY", "graph", "replay_agent"]

GRAPH_NAME = "tool-result-replay"
REPLAY = ToolSpec(
    name="replay_tool_result",
    version="1.0.0",
    side_effect="read_only",
    description="One recorded tool result of the run, returned exactly as it was recorded.",
    input_schema={
        "type": "object",
        "additionalProperties": False,
        "required": ["run", "source"],
        "properties": {
            "run": {"type": "string", "minLength": 1},
            "source": {"type": "string", "minLength": 1},
        },
    },
    output_schema={"type": ["string", "object", "array"]},
)

# Each run's recorded results, by run id: the handler serves them to the bus.
_RESULTS: dict[str, Mapping[str, Any]] = {}
_LOCK = threading.Lock()


def _replay(args: Mapping[str, Any]) -> Any:
    with _LOCK:
        return _RESULTS[str(args["run"])][str(args["source"])]


def replay_agent(components: FenceComponents) -> Any:
    """The agent: replay the fixtures, then claim ``context["claim"]`` on them."""

    def agent(state: FenceState) -> dict[str, Any]:
        run_id = str(state.get("run_id"))
        context = state.get("context", {})
        claim = str(context.get("claim", "")).strip()
        fixtures: Mapping[str, Any] = context.get("fixtures", {})
        handover: dict[str, Any] = {"run_id": run_id, "from_agent": "replay", "status": "ok"}
        if state.get("feedback"):
            # Refused last round: no new evidence exists, so ask instead of rewording.
            handover["open_questions"] = [
                {"id": "open.claim", "text": f"Not supported by the tool results: {claim}"}
            ]
            return {"handover": handover}
        with _LOCK:
            _RESULTS[run_id] = dict(fixtures)
        cited: list[str] = []
        for i, source in enumerate(sorted(fixtures)):
            out = components.bus.call(
                run_id, REPLAY.name, {"run": run_id, "source": source}, call_id=f"{run_id}/r{i}"
            )
            if out.ok and out.ledger_id is not None:
                cited.append(out.ledger_id)
        proposition = {"id": "claim.p", "text": claim, "ledger_ids": cited}
        handover["claims"] = [
            {
                "id": "claim",
                "type": "Assertion",
                "text": claim,
                "confidence": 0.9,
                "propositions": [proposition],
            }
        ]
        return {"handover": handover}

    return agent


def graph(components: FenceComponents) -> FencedGraph:
    """The fenced replay graph on ``components`` (its tool registered there)."""
    components.registry.register(REPLAY, _replay)
    return fence(
        replay_agent(components),
        control_plane=components,
        name=GRAPH_NAME,
        max_evidence_rounds=1,
    )
