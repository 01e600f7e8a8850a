"""Several processes appending to one run: no duplicate or missing seq, chain intact."""

from __future__ import annotations

import multiprocessing as mp
from multiprocessing.synchronize import Event

from assay import ChainReport, ControlPlane

PROCESSES = 4
APPENDS = 250


def _append_many(url: str, run_id: str, worker: int, start: Event) -> None:
    with ControlPlane.open(url, migrate=False) as cp:
        start.wait()
        for i in range(APPENDS):
            cp.ledger.append(
                run_id, kind="tool_output", source=f"worker-{worker}", content=f"{worker}:{i}"
            )


def test_four_processes_append_1000_entries_to_one_run(db_url: str) -> None:
    with ControlPlane.open(db_url) as cp:
        run_id = cp.ledger.start_run()
    ctx = mp.get_context("spawn")
    start = ctx.Event()
    workers = [
        ctx.Process(target=_append_many, args=(db_url, run_id, n, start)) for n in range(PROCESSES)
    ]
    for worker in workers:
        worker.start()
    start.set()
    for worker in workers:
        worker.join(timeout=300)
    assert [w.exitcode for w in workers] == [0] * PROCESSES
    with ControlPlane.open(db_url, migrate=False) as cp:
        entries = cp.ledger.entries(run_id)
        assert [e.seq for e in entries] == list(range(1, PROCESSES * APPENDS + 1))
        assert len({e.content for e in entries}) == PROCESSES * APPENDS
        assert cp.ledger.verify(run_id) == ChainReport(ok=True, checked=1000, runs=1)
