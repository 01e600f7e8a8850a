"""Eval throughput: cases per second for 1, 2 and 4 worker processes (and on a local
Ray with ``--ray``), on a shipped suite and its graph, with the shipped NLI model.

Each setting evaluates the suite on a fresh SQLite file (the schema is created
before the clock starts), ``--rounds`` times; the figure is the median. Worker
processes load the model themselves, so their start-up is part of what a user
waits for and is counted. The machine's core count bounds what more jobs can give.

    python benchmarks/eval_throughput.py [--suite evals/invoice-audit/suite.yaml]
        [--graph assay.apps.reference:graph] [--jobs 1 2 4] [--rounds 2] [--ray]
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from assay import ControlPlane
from assay.control_plane import GraphFactory
from assay.evals import evaluate, load_suite
from benchmarks._common import machine, write_result

ROOT = Path(__file__).resolve().parents[1]


def _factory(spec: str) -> GraphFactory:
    module, _, attr = spec.partition(":")
    found: Any = importlib.import_module(module)
    for part in attr.split("."):
        found = getattr(found, part)
    return found


def _once(suite: Path, graph: GraphFactory, jobs: int, ray: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{Path(folder) / 'eval.db'}"
        ControlPlane.open(url).close()  # the schema, before the clock starts
        start = time.perf_counter()
        report = evaluate(suite, graph, database_url=url, jobs=jobs, ray=ray)
        seconds = time.perf_counter() - start
    return {"seconds": seconds, "cases": report.metrics.cases}


def main() -> None:
    parser = argparse.ArgumentParser(description="Eval throughput for 1, 2 and 4 jobs.")
    parser.add_argument("--suite", type=Path, default=ROOT / "evals/invoice-audit/suite.yaml")
    parser.add_argument("--graph", default="assay.apps.reference:graph")
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--ray", action="store_true", help="also on a local Ray, 2 actors")
    args = parser.parse_args()
    suite = load_suite(args.suite)
    graph = _factory(args.graph)
    settings: list[tuple[str, int, bool]] = [(f"jobs_{j}", j, False) for j in args.jobs]
    if args.ray:
        settings.append(("ray_2", 2, True))
    results: dict[str, Any] = {}
    for name, jobs, ray in settings:
        rounds = [_once(args.suite, graph, jobs, ray) for _ in range(args.rounds)]
        seconds = statistics.median(r["seconds"] for r in rounds)
        cases = rounds[0]["cases"]
        results[name] = {
            "jobs": jobs,
            "ray": ray,
            "cases": cases,
            "seconds_median": round(seconds, 2),
            "cases_per_s": round(cases / seconds, 3),
            "rounds_s": [round(r["seconds"], 2) for r in rounds],
        }
        print(name, results[name], flush=True)
    write_result(
        "eval_throughput",
        {
            "machine": machine(),
            "suite": {"file": str(args.suite.relative_to(ROOT)), "id": suite.id},
            "graph": args.graph,
            "rounds": args.rounds,
            "settings": results,
        },
    )


if __name__ == "__main__":
    main()
