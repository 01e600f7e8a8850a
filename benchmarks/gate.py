"""Gate throughput: hand-overs checked per second, each of 10 claims x 3 propositions
citing 2 ledger entries apiece, with identifiers in every proposition to trace.

    python benchmarks/gate.py [--checks 300]

``check`` is the full decision as a caller sees it: schema, ledger look-up, every
check, and the two appends that record the hand-over and the decision. ``errors``
is the same without recording (the checks alone). Both are measured for the gate as
the control plane wires it (with the checks other components register) and for a
bare gate with only the built-in checks. SQLite always; PostgreSQL too when
ASSAY_BENCH_POSTGRES_URL or ASSAY_TEST_POSTGRES_URL is set.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from assay import ControlPlane, Handover
from assay.gate import Gate
from benchmarks._common import fresh_postgres_database, postgres_base_url, write_result

CLAIMS, PROPOSITIONS, CITED = 10, 3, 2


def _evidence(cp: ControlPlane, run: str) -> list[str]:
    ids: list[str] = []
    for i in range(CLAIMS * PROPOSITIONS):
        content = (
            f"Invoice INV-{4400 + i}, line {i + 1}: senior associate, 12.5 h at EUR {400 + i} "
            f"per hour, billed 2024-03-{(i % 28) + 1:02d} under commit {i:07x}a9f3c2e1."
        )
        ids.append(
            cp.ledger.append(run, kind="tool_output", source=f"erp@1.0.0#{i}", content=content).id
        )
    return ids


def _handover(run: str, ids: list[str], agent: str) -> dict[str, Any]:
    claims: list[dict[str, Any]] = []
    for c in range(CLAIMS):
        props: list[dict[str, Any]] = []
        for p in range(PROPOSITIONS):
            i = c * PROPOSITIONS + p
            cited = [ids[i], ids[(i + 1) % len(ids)]]
            props.append(
                {
                    "id": f"p{i}",
                    "ledger_ids": cited,
                    "text": f"Invoice INV-{4400 + i} bills EUR {400 + i} per hour on "
                    f"2024-03-{(i % 28) + 1:02d} (commit {i:07x}a9f3c2e1).",
                }
            )
        claims.append(
            {
                "id": f"c{c}",
                "type": "Assertion",
                "confidence": 0.9,
                "text": f"Invoice INV-{4400 + c * PROPOSITIONS} is billed as agreed.",
                "propositions": props,
            }
        )
    return {"run_id": run, "from_agent": agent, "status": "ok", "claims": claims}


def _rate(n: int, step: Callable[[int], object]) -> dict[str, float]:
    times: list[float] = []
    for i in range(n):
        start = time.perf_counter()
        step(i)
        times.append(time.perf_counter() - start)
    total = sum(times)
    return {
        "per_s": round(n / total, 1),
        "p50_ms": round(statistics.median(times) * 1000, 2),
        "p95_ms": round(statistics.quantiles(times, n=20)[18] * 1000, 2),
    }


def measure(url: str, n: int) -> dict[str, Any]:
    with ControlPlane.open(url) as cp:
        run = cp.ledger.start_run()
        ids = _evidence(cp, run)
        model = Handover.model_validate(_handover(run, ids, "bench"))
        first = cp.gate.check(run, _handover(run, ids, "warm-up"))
        assert first.accepted, first.errors
        bare = Gate(cp.ledger, registry=cp.registry)
        result: dict[str, Any] = {}
        for name, gate in (("wired", cp.gate), ("bare", bare)):
            result[name] = {
                "check": _rate(
                    n,
                    lambda i, g=gate, label=name: g.check(run, _handover(run, ids, f"{label}-{i}")),
                ),
                "errors": _rate(n, lambda i, g=gate: g.errors(run, model)),
            }
        return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--checks", type=int, default=300)
    args = parser.parse_args()
    shape = {
        "claims": CLAIMS,
        "propositions_per_claim": PROPOSITIONS,
        "ledger_ids_per_proposition": CITED,
        "checks": args.checks,
    }
    engines: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        engines["sqlite"] = measure(f"sqlite:///{tmp}/bench.db", args.checks)
    base = postgres_base_url()
    if base:
        with fresh_postgres_database(base) as url:
            engines["postgresql"] = measure(url, args.checks)
    path = write_result("gate", {"hand_over": shape, "engines": engines})
    print(f"wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
