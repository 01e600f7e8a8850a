"""The fence's overhead per agent step, against the same graph without it.

Both graphs run the same agent (it calls a read-only tool through the bus and hands
over claims citing the outputs) on SQLite with LangGraph's SQLite checkpointer. The
fenced graph adds the gate, the verifier (deterministic checks and the NLI model),
the policy/grant/act nodes and the ledger records; the baseline ends right after the
agent. The NLI model's own time is measured separately, inside the model. Claims
change every iteration so the entailment cache never hits.

    python benchmarks/graph_overhead.py [--runs 30] [--claims 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langgraph.graph import END, START, StateGraph

from assay import ControlPlane, ToolSpec, fence
from assay.graph import FenceState
from assay.verifier import Entailment, EntailmentCache, Verifier
from benchmarks._common import write_result

TOOL = ToolSpec(
    name="line_item",
    version="1.0.0",
    side_effect="read_only",
    description="An invoice line.",
    input_schema={
        "type": "object",
        "required": ["line", "rate"],
        "additionalProperties": False,
        "properties": {"line": {"type": "integer"}, "rate": {"type": "integer"}},
    },
    output_schema={"type": "string"},
)


class TimedModel:
    """Wraps the NLI model and adds up the time spent inside it."""

    def __init__(self, inner: Verifier) -> None:
        self.inner = inner
        self.seconds = 0.0

    @property
    def threshold(self) -> float:
        return self.inner.threshold

    def check_many(
        self, pairs: Iterable[tuple[str, str]], *, cache: EntailmentCache | None = None
    ) -> list[Entailment]:
        began = time.perf_counter()
        try:
            return self.inner.check_many(pairs, cache=cache)
        finally:
            self.seconds += time.perf_counter() - began


def make_agent(cp: ControlPlane, claims: int) -> Any:
    def agent(state: FenceState) -> dict[str, Any]:
        run_id = state["run_id"]  # type: ignore[typeddict-item]
        seed = int(state["task"].split()[-1])  # type: ignore[typeddict-item]
        items = []
        for line in range(1, claims + 1):
            rate = 300 + seed * 7 + line
            out = cp.bus.call(run_id, "line_item", {"line": line, "rate": rate})
            text = f"Line {line} bills 2.5 h at EUR {rate}/h for a senior associate."
            items.append(
                {
                    "id": f"c{line}",
                    "type": "Assertion",
                    "text": text,
                    "confidence": 0.9,
                    "propositions": [
                        {"id": f"c{line}.p", "text": text, "ledger_ids": [out.ledger_id]}
                    ],
                }
            )
        return {
            "handover": {"run_id": run_id, "from_agent": "bench", "status": "ok", "claims": items}
        }

    return agent


def baseline_graph(cp: ControlPlane, agent: Any) -> Any:
    def start(state: FenceState) -> dict[str, Any]:
        return {"run_id": state.get("run_id") or cp.ledger.start_run()}

    builder = StateGraph(FenceState)
    builder.add_node("start", start)
    builder.add_node("agent", agent)
    builder.add_edge(START, "start")
    builder.add_edge("start", "agent")
    builder.add_edge("agent", END)
    return builder.compile(checkpointer=cp.checkpointer)


def measure(graph: Any, runs: int, offset: int, model: TimedModel | None) -> dict[str, Any]:
    totals, model_ms = [], []
    for i in range(runs):
        before = model.seconds if model else 0.0
        began = time.perf_counter()
        graph.invoke(
            {"task": f"audit {offset + i}"}, {"configurable": {"thread_id": f"t{offset + i}"}}
        )
        totals.append((time.perf_counter() - began) * 1000)
        model_ms.append(((model.seconds - before) if model else 0.0) * 1000)
    return {
        "median_ms": round(statistics.median(totals), 1),
        "p95_ms": round(sorted(totals)[max(0, int(0.95 * len(totals)) - 1)], 1),
        "model_median_ms": round(statistics.median(model_ms), 1),
        "model_p95_ms": round(sorted(model_ms)[max(0, int(0.95 * len(model_ms)) - 1)], 1),
        "samples_ms": [round(t, 1) for t in totals],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--claims", type=int, default=5)
    args = parser.parse_args()
    model = TimedModel(Verifier.default())
    with (
        tempfile.TemporaryDirectory() as tmp,
        ControlPlane.open(f"sqlite:///{tmp}/bench.db", nli=model) as cp,
    ):
        cp.registry.register(
            TOOL,
            lambda a: f"Invoice line {a['line']}: senior associate, 2.5 h at EUR {a['rate']}/h.",
        )
        agent = make_agent(cp, args.claims)
        plain, fenced = baseline_graph(cp, agent), fence(agent, control_plane=cp)
        measure(plain, 3, 10_000, None)
        measure(fenced, 3, 20_000, model)  # warm-up: model load, first compiles
        base = measure(plain, args.runs, 0, None)
        guarded = measure(fenced, args.runs, 100_000, model)
        assert guarded["samples_ms"], "no samples"
    overhead = guarded["median_ms"] - base["median_ms"]
    write_result(
        "graph_overhead",
        {
            "runs": args.runs,
            "claims_per_step": args.claims,
            "engine": "sqlite",
            "model": model.inner.model_id,
            "baseline": {k: v for k, v in base.items() if not k.startswith("model")},
            "fenced": guarded,
            "overhead_median_ms": round(overhead, 1),
            "overhead_without_model_median_ms": round(overhead - guarded["model_median_ms"], 1),
        },
    )


if __name__ == "__main__":
    main()
