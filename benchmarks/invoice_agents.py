"""The invoice-audit suite through both of the reference application's agents: the
deterministic readers (``assay.apps.reference:graph``) and a chat model with the
shipped prompts (``assay.apps.reference:llm_graph``), on the same cases, with the
shipped NLI model, each on a fresh SQLite file.

The chat model runs only where one is configured (``ASSAY_MODEL=provider:model`` and
the provider's key); otherwise its entry says why it was skipped. Figures per agent:
the suite's metrics and the cases whose run missed their gold (status, facts,
actions, grants, or a forbidden claim or action).

    python benchmarks/invoice_agents.py [--suite evals/invoice-audit/suite.yaml]
        [--agents rules llm]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from assay.apps import reference
from assay.evals import EvalReport, evaluate, load_suite
from benchmarks._common import write_result

ROOT = Path(__file__).resolve().parents[1]
GRAPHS = {"rules": reference.graph, "llm": reference.llm_graph}


def skipped(agent: str) -> str | None:
    """Why ``agent`` cannot run here, or ``None`` when it can."""
    if agent == "llm" and not os.environ.get("ASSAY_MODEL"):
        return "no chat model configured: set ASSAY_MODEL=provider:model (and its API key)"
    return None


def missed(report: EvalReport) -> dict[str, list[str]]:
    """Each case whose run missed its gold, with what it missed."""
    found: dict[str, list[str]] = {}
    for case in report.cases:
        why = [
            *(
                [f"status {case.status}, expected {case.expected_status}"]
                if case.status != case.expected_status
                else []
            ),
            *(f"missing fact {f}" for f in case.missing_facts),
            *(f"forbidden claim {c}" for c in case.forbidden_claims),
            *case.action_problems,
            *case.hygiene_violations,
            *([] if case.grants_ok else ["grant requests differ from the gold"]),
            *([f"error {case.error}"] if case.error else []),
        ]
        if why:
            found[case.case_id] = why
    return found


def run(suite: Path, agent: str) -> dict[str, Any]:
    reason = skipped(agent)
    if reason is not None:
        return {"skipped": reason}
    with tempfile.TemporaryDirectory() as folder:
        os.environ["ASSAY_OUTBOX"] = str(Path(folder) / "outbox.jsonl")
        start = time.perf_counter()
        report = evaluate(suite, GRAPHS[agent], database_url=f"sqlite:///{folder}/eval.db")
        seconds = time.perf_counter() - start
    metrics = dataclasses.asdict(report.metrics)
    return {
        "seconds": round(seconds, 1),
        "metrics": {k: round(v, 3) if isinstance(v, float) else v for k, v in metrics.items()},
        "cases_missed": missed(report),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description="The invoice suite through each agent.")
    parser.add_argument("--suite", type=Path, default=ROOT / "evals/invoice-audit/suite.yaml")
    parser.add_argument("--agents", nargs="+", choices=sorted(GRAPHS), default=["rules", "llm"])
    args = parser.parse_args()
    suite = load_suite(args.suite)
    results = {agent: run(args.suite, agent) for agent in args.agents}
    write_result(
        "invoice_agents",
        {
            "suite": {"file": str(args.suite.resolve().relative_to(ROOT)), "id": suite.id},
            "cases": len(suite.cases),
            "model": os.environ.get("ASSAY_MODEL"),
            "agents": results,
        },
    )


if __name__ == "__main__":
    main()
