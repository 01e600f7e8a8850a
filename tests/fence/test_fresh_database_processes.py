"""Four processes open one fresh database at the same moment: the ledger's migrations
and LangGraph's checkpoint tables are set up once, under one lock, and every
process's fenced run reaches its checkpoints (on SQLite and on PostgreSQL)."""

from __future__ import annotations

import multiprocessing as mp
from typing import Any

import pytest

from assay import ControlPlane
from tests.fence._fresh_worker import open_and_run, thread_id

PROCESSES = 4


@pytest.mark.slow
def test_four_processes_open_a_fresh_database_and_run_at_once(empty_db_url: str) -> None:
    db_url = empty_db_url
    ctx = mp.get_context("spawn")
    start = ctx.Event()
    workers = [ctx.Process(target=open_and_run, args=(db_url, n, start)) for n in range(PROCESSES)]
    for worker in workers:
        worker.start()
    start.set()
    for worker in workers:
        worker.join(timeout=300)
    assert [w.exitcode for w in workers] == [0] * PROCESSES
    with ControlPlane.open(db_url, migrate=False) as cp:
        for n in range(PROCESSES):
            config: Any = {"configurable": {"thread_id": thread_id(n)}}
            saved = cp.checkpointer.get_tuple(config)
            assert saved is not None
            # The checkpoint keeps the result as plain JSON; the thread reads it back.
            assert saved.checkpoint["channel_values"]["result"]["status"] == "answered"
            result = cp.status(thread_id(n)).result
            assert result is not None and result.status == "answered"
            assert cp.ledger.verify(result.run_id).ok
