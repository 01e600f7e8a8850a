"""Ledger throughput: appends/s with one writer and with 4 writer processes,
``append_many`` entries/s, verified entries/s, and the cost of a checkpoint and of
inclusion and consistency proofs, on SQLite (a file) and, when a server is given,
PostgreSQL. Every append maintains the Merkle log.

For scale, the same machine's plain ``sqlite3`` is timed on the same rows: one table
without indexes or triggers, the same SHA-256 and canonical-JSON hashing per row, one
transaction per row (and one for all rows, against ``append_many``). The ratio says
what the ledger's guarantees (the triggers' checks, five unique keys, the log) cost.

    python benchmarks/ledger.py [--appends 2000] [--batch 20000]

PostgreSQL is measured when ASSAY_BENCH_POSTGRES_URL or ASSAY_TEST_POSTGRES_URL is
set (a fresh database is created and dropped on that server).
"""

from __future__ import annotations

import argparse
import hashlib
import multiprocessing as mp
import sqlite3
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from assay import ControlPlane
from assay.ledger import (
    canonical_json,
    generate_key,
    leaf_hash,
    verify_checkpoint,
    verify_consistency,
    verify_inclusion,
)
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


def measure(url: str, appends: int, batch: int) -> dict[str, Any]:
    with ControlPlane.open(url) as cp:
        run_id = cp.ledger.start_run()
        began = time.perf_counter()
        for i in range(appends):
            cp.ledger.append(run_id, kind="retrieval", source="doc", content=f"{CONTENT}{i}")
        single = appends / (time.perf_counter() - began)

        many_run = cp.ledger.start_run()
        rows = [
            {"kind": "retrieval", "source": "doc", "content": f"{CONTENT}{i}"} for i in range(batch)
        ]
        began = time.perf_counter()
        cp.ledger.append_many(many_run, rows)
        many = batch / (time.perf_counter() - began)
        proofs = _proofs(cp)

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
        "append_many_entries_per_s": round(many, 1),
        "append_many_batch": batch,
        **proofs,
        "appends_per_s_4_processes": round(multi, 1),
        "verified_entries_per_s": round(verify_rate, 1),
        "entries_verified": report.checked,
        "content_bytes": len(CONTENT) + 6,
    }


def _proofs(cp: ControlPlane) -> dict[str, Any]:
    """Median milliseconds of a checkpoint, an inclusion proof and a consistency proof
    (each built from the database and checked), on the log as the appends left it."""
    signer, verifier = generate_key("bench.example/ledger")
    size = cp.ledger.tree_size()
    entries = cp.ledger.entries(cp.ledger.runs()[0].run_id)
    timings: dict[str, list[float]] = {"checkpoint": [], "inclusion": [], "consistency": []}
    for i in range(50):
        began = time.perf_counter()
        note = verify_checkpoint(cp.ledger.checkpoint(signer), verifier)
        timings["checkpoint"].append(time.perf_counter() - began)
        entry = entries[(i * 37) % len(entries)]
        began = time.perf_counter()
        proof = cp.ledger.inclusion_proof(entry.id)
        verify_inclusion(
            leaf_hash(bytes.fromhex(entry.entry_hash)), proof.leaf_index, size, proof.hashes,
            note.root,
        )  # fmt: skip
        timings["inclusion"].append(time.perf_counter() - began)
        old = 1 + (i * 7919) % (size - 1)
        began = time.perf_counter()
        _, old_root = cp.ledger.root(old)
        verify_consistency(old, size, old_root, note.root, cp.ledger.consistency_proof(old))
        timings["consistency"].append(time.perf_counter() - began)
    return {
        "log_size": size,
        **{f"{k}_ms_p50": round(statistics.median(v) * 1000, 3) for k, v in timings.items()},
    }


def plain_sqlite(path: str, count: int, *, one_transaction: bool) -> float:
    """Rows/s of plain ``sqlite3`` doing what an append must at least do: hash the
    content and the entry's canonical JSON, insert one row, commit."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute(
        "CREATE TABLE plain (entry_id TEXT, run_id TEXT, seq INTEGER, kind TEXT, source TEXT,"
        " content BLOB, content_sha256 TEXT, metadata_json TEXT, prev_hash TEXT,"
        " entry_hash TEXT, created_at TEXT)"
    )
    prev = "0" * 64
    began = time.perf_counter()
    if one_transaction:
        conn.execute("BEGIN")
    for i in range(count):
        data = f"{CONTENT}{i}".encode()
        digest = hashlib.sha256(data).hexdigest()
        when = datetime.now(UTC).isoformat()
        body = {
            "run_id": "run_x",
            "seq": i + 1,
            "kind": "retrieval",
            "source": "doc",
            "sha256": digest,
            "metadata": {},
            "prev_hash": prev,
            "created_at": when,
        }
        entry = hashlib.sha256(canonical_json(body)).hexdigest()
        if not one_transaction:
            conn.execute("BEGIN IMMEDIATE")
        conn.execute(
            "INSERT INTO plain VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            ("led_" + entry[:16], "run_x", i + 1, "retrieval", "doc", data, digest, "{}", prev,
             entry, when),
        )  # fmt: skip
        if not one_transaction:
            conn.execute("COMMIT")
        prev = entry
    if one_transaction:
        conn.execute("COMMIT")
    rate = count / (time.perf_counter() - began)
    conn.close()
    return rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--appends", type=int, default=2000)
    parser.add_argument("--batch", type=int, default=20000)
    args = parser.parse_args()
    results: dict[str, Any] = {"appends": args.appends}
    with tempfile.TemporaryDirectory() as tmp:
        results["sqlite"] = measure(f"sqlite:///{tmp}/bench.db", args.appends, args.batch)
        single = plain_sqlite(f"{tmp}/plain1.db", args.appends, one_transaction=False)
        many = plain_sqlite(f"{tmp}/plain2.db", args.batch, one_transaction=True)
    results["plain_sqlite3"] = {
        "rows_per_s_one_transaction_each": round(single, 1),
        "rows_per_s_one_transaction": round(many, 1),
    }
    results["sqlite"]["ratio_to_plain_sqlite3_single"] = round(
        results["sqlite"]["appends_per_s_single_writer"] / single, 3
    )
    results["sqlite"]["ratio_to_plain_sqlite3_append_many"] = round(
        results["sqlite"]["append_many_entries_per_s"] / many, 3
    )
    base = postgres_base_url()
    if base:
        with fresh_postgres_database(base) as url:
            results["postgres"] = measure(url, args.appends, args.batch)
    else:
        results["postgres"] = "skipped: set ASSAY_BENCH_POSTGRES_URL"
    write_result("ledger", results)


if __name__ == "__main__":
    main()
