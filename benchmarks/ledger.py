"""Ledger throughput: appends/s with one writer and with 4 writer processes, and
verified entries/s, on SQLite (a file) and, when a server is given, PostgreSQL.

    python benchmarks/ledger.py [--appends 2000]

PostgreSQL is measured when ASSAY_BENCH_POSTGRES_URL or ASSAY_TEST_POSTGRES_URL is
set (a fresh database is created and dropped on that server).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from assay import ControlPlane
from benchmarks._common import (
    fresh_postgres_database,
    postgres_base_url,
    write_result,
)

CONTENT = "Invoice INV-4421, line 14: senior associate, 12.5 h at EUR 450/h. " * 4


def _writer(url: str, run_id: str, worker: int, count: int, start: Any) -> None:
    with ControlPlane.open(url, migrate=False) as cp:
        start.wait()
        for i in range(count):
            cp.ledger.append(
                run_id, kind="tool_output", source=f"w{worker}", content=f"{CONTENT}{worker}:{i}"
            )


def measure(url: str, appends: int) -> dict[str, Any]:
    with ControlPlane.open(url) as cp:
        run_id = cp.ledger.start_run()
        began = time.perf_counter()
        for i in range(appends):
            cp.ledger.append(run_id, kind="retrieval", source="doc", content=f"{CONTENT}{i}")
        single = appends / (time.perf_counter() - began)

        multi_run = cp.ledger.start_run()
    ctx = mp.get_context("spawn")
    start = ctx.Event()
    per_worker = appends // 4
    workers = [
        ctx.Process(target=_writer, args=(url, multi_run, n, per_worker, start)) for n in range(4)
    ]
    for w in workers:
        w.start()
    time.sleep(2.0)  # let every process import assay and connect before timing
    began = time.perf_counter()
    start.set()
    for w in workers:
        w.join()
    multi = (per_worker * 4) / (time.perf_counter() - began)

    with ControlPlane.open(url, migrate=False) as cp:
        began = time.perf_counter()
        report = cp.ledger.verify()
        verify_rate = report.checked / (time.perf_counter() - began)
        assert report.ok, report
    return {
        "appends_per_s_single_writer": round(single, 1),
        "appends_per_s_4_processes": round(multi, 1),
        "verified_entries_per_s": round(verify_rate, 1),
        "entries_verified": report.checked,
        "content_bytes": len(CONTENT) + 6,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--appends", type=int, default=2000)
    args = parser.parse_args()
    results: dict[str, Any] = {"appends": args.appends}
    with tempfile.TemporaryDirectory() as tmp:
        results["sqlite"] = measure(f"sqlite:///{tmp}/bench.db", args.appends)
    base = postgres_base_url()
    if base:
        with fresh_postgres_database(base) as url:
            results["postgres"] = measure(url, args.appends)
    else:
        results["postgres"] = "skipped: set ASSAY_BENCH_POSTGRES_URL"
    write_result("ledger", results)


if __name__ == "__main__":
    main()
