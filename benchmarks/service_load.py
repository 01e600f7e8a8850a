"""Service load: requests per second and latency of ``assay serve`` under concurrent
clients, for reading a run's audit and for deciding a grant.

The server is ``assay serve --workers N`` of the reference invoice audit
(``assay.apps.reference:served_graph``) in a subprocess, on a fresh SQLite file or
a fresh PostgreSQL database. Before it starts, the runs it serves are made in this
process (on the deterministic stand-in NLI model; neither reading an audit nor
deciding a grant calls the model): one finished run whose audit every read asks
for, and one paused run per decision, each on its own invoice number, so every
approval performs its own flag. ``--clients`` threads, each on its own connection,
then send the requests as fast as the server answers; the figures are requests per
second over the whole batch and the p50/p95 latency of one request. Per-token rate
limits are raised out of the way (``ASSAY_SERVICE_RATE``): they are not measured.

    python benchmarks/service_load.py [--db sqlite|postgres] [--workers 2]
        [--clients 8] [--reads 600] [--decisions 150]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Generator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx

from assay import ControlPlane
from assay.apps import reference
from assay.service import TokenStore
from assay.verifier import LexicalNLI
from benchmarks._common import fresh_postgres_database, postgres_base_url, write_result
from tests.service._load_server import GRAPH, bearer, served
from tests.service.conftest import case

SERVED = "assay.apps.reference:served_graph"
_INVOICE = "INV-4421"  # the over_cap case's invoice, renumbered per paused run


@contextmanager
def _database(kind: str, folder: Path) -> Generator[str, None, None]:
    if kind == "sqlite":
        yield f"sqlite:///{folder / 'service.db'}"
        return
    base = postgres_base_url()
    if base is None:
        raise SystemExit("--db postgres needs ASSAY_BENCH_POSTGRES_URL or ASSAY_TEST_POSTGRES_URL")
    with fresh_postgres_database(base) as url:
        yield url


def _renumbered(name: str, invoice: str) -> dict[str, Any]:
    sent = case(name)
    return {
        "task": sent["task"].replace(_INVOICE, invoice),
        "documents": {k: v.replace(_INVOICE, invoice) for k, v in sent["documents"].items()},
    }


def _prepare(url: str, decisions: int) -> dict[str, Any]:
    """The finished run, the paused threads and a reviewer's token, made in-process."""
    with ControlPlane.open(url, nli=LexicalNLI()) as cp:
        graph = reference.served_graph(cp)
        finished = cp.run(graph, case("compliant"))
        assert finished.status == "answered" and finished.run_id is not None
        paused: list[str] = []
        for i in range(decisions):
            result = cp.run(graph, _renumbered("over_cap", f"INV-{700000 + i}"))
            assert result.status == "awaiting_grant", result.status
            paused.append(result.thread_id)
        reviewer = TokenStore(cp.engine).create(name="rita", role="reviewer").secret
    return {"run_id": finished.run_id, "paused": paused, "reviewer": bearer(reviewer)}


def _load(
    base: str, clients: int, requests: list[Callable[[httpx.Client], httpx.Response]]
) -> dict[str, Any]:
    """Send ``requests`` from ``clients`` threads; every answer must be a 2xx."""
    latencies: list[float] = []
    failures: list[str] = []
    lock = threading.Lock()
    queue = list(reversed(requests))

    def worker() -> None:
        with httpx.Client(base_url=base, timeout=120) as client:
            while True:
                with lock:
                    if not queue:
                        return
                    send = queue.pop()
                start = time.perf_counter()
                answer = send(client)
                took = time.perf_counter() - start
                with lock:
                    latencies.append(took)
                    if not answer.is_success:
                        failures.append(f"{answer.status_code} {answer.text[:200]}")

    threads = [threading.Thread(target=worker) for _ in range(clients)]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - start
    if failures:
        raise SystemExit(f"{len(failures)} requests failed, e.g. {failures[0]}")
    cuts = statistics.quantiles(latencies, n=100, method="inclusive")
    return {
        "requests": len(latencies),
        "seconds": round(seconds, 3),
        "requests_per_second": round(len(latencies) / seconds, 1),
        "p50_ms": round(cuts[49] * 1000, 1),
        "p95_ms": round(cuts[94] * 1000, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description="assay serve under concurrent clients.")
    parser.add_argument("--db", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--workers", type=int, default=2, help="uvicorn worker processes")
    parser.add_argument("--clients", type=int, default=8, help="concurrent client threads")
    parser.add_argument("--reads", type=int, default=600, help="audit reads")
    parser.add_argument("--decisions", type=int, default=150, help="grant decisions")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp, _database(args.db, Path(tmp)) as url:
        folder = Path(tmp)
        made = _prepare(url, args.decisions)
        headers, run_id = made["reviewer"], made["run_id"]
        with served(
            url,
            workers=args.workers,
            outbox=folder / "outbox.jsonl",
            log=folder / "serve.log",
            factory=SERVED,
        ) as base:
            audit = f"/v1/runs/{run_id}/audit"
            _load(base, args.clients, [lambda c: c.get(audit, headers=headers)] * 20)  # warm-up
            reads = _load(
                base, args.clients, [lambda c: c.get(audit, headers=headers)] * args.reads
            )
            decides = _load(
                base,
                args.clients,
                [
                    lambda c, t=thread: c.post(
                        f"/v1/runs/{t}/decisions", json={"approve": True}, headers=headers
                    )
                    for thread in made["paused"]
                ],
            )
        flags = len((folder / "outbox.jsonl").read_text().splitlines())
    if flags != args.decisions:
        raise SystemExit(f"{args.decisions} approvals wrote {flags} flags")
    write_result(
        "service_load",
        {
            "database": args.db,
            "workers": args.workers,
            "clients": args.clients,
            "graph": SERVED,
            "graph_name": GRAPH,
            "operations": {"read_audit": reads, "decide_grant": decides},
        },
    )


if __name__ == "__main__":
    main()
