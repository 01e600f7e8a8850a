"""The service under concurrent load, on a real ``assay serve`` (uvicorn worker
processes, each with its own control plane) driven over HTTP by many clients at once.

Fifty reviewers deciding the same grant at once: one decision stands, the other
forty-nine are refused naming it, the flag is written once and the ledger holds one
grant. Many runs of the same invoice line started at once through four
workers on PostgreSQL: the flag's idempotency key lets exactly one run perform it,
every other run is refused as ``duplicate_effect``, and no run is lost.

``make test`` starts 64 runs at once (sixteen for each worker, enough to queue on
every one of them); ``ASSAY_LOAD_RUNS=200`` runs the longer version before a release.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from assay import ControlPlane
from assay.fence import DecisionStore
from assay.service import TokenStore
from assay.verifier import LexicalNLI
from tests.service._load_server import GRAPH, bearer, log_errors, served
from tests.service.conftest import case

REVIEWERS = 50
RUNS = int(os.environ.get("ASSAY_LOAD_RUNS", "64"))
#: How long a client waits for its answer. These tests prove what concurrency must not
#: break, not how fast it goes (``benchmarks/`` measures speed): hundreds of runs queued
#: on four workers that share two slow cores with PostgreSQL take minutes to drain, and
#: the last client in the queue must not give up on an answer that is still coming.
PATIENCE_S = 600.0


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def _at_once(
    count: int, base: str, send: Callable[[httpx.Client, int], httpx.Response]
) -> list[httpx.Response]:
    """``send(client, i)`` from ``count`` threads, each on its own connection,
    released together."""
    barrier = threading.Barrier(count)

    def one(i: int) -> httpx.Response:
        with httpx.Client(base_url=base, timeout=PATIENCE_S) as client:
            barrier.wait()
            return send(client, i)

    with ThreadPoolExecutor(max_workers=count) as pool:
        return list(pool.map(one, range(count)))


def test_fifty_reviewers_deciding_one_grant_at_once(db_url: str, tmp_path: Path) -> None:
    outbox, log = tmp_path / "outbox.jsonl", tmp_path / "serve.log"
    with ControlPlane.open(db_url, nli=LexicalNLI()) as cp:
        store = TokenStore(cp.engine)
        agent = bearer(store.create(name="amy", role="agent").secret)
        reviewers = [
            (
                f"reviewer-{i:02d}",
                bearer(store.create(name=f"reviewer-{i:02d}", role="reviewer").secret),
            )
            for i in range(REVIEWERS)
        ]
        with served(db_url, workers=2, outbox=outbox, log=log) as base:
            started = httpx.post(
                f"{base}/v1/graphs/{GRAPH}/runs",
                json={"input": case("over_cap")},
                headers=agent,
                timeout=60,
            )
            assert started.status_code == 201, started.text
            paused = started.json()
            assert paused["status"] == "awaiting_grant" and not outbox.exists()
            thread = paused["thread_id"]

            answers = _at_once(
                REVIEWERS,
                base,
                lambda client, i: client.post(
                    f"/v1/runs/{thread}/decisions",
                    json={"approve": True, "reason": f"load {i}"},
                    headers=reviewers[i][1],
                ),
            )
            pending = httpx.get(
                f"{base}/v1/grants/pending", headers=reviewers[0][1], timeout=60
            ).json()

        statuses = sorted(a.status_code for a in answers)
        assert statuses == [200] + [409] * (REVIEWERS - 1), [a.text for a in answers]
        [won] = [a.json() for a in answers if a.status_code == 200]
        [action] = won["actions"]
        assert action["status"] == "executed"
        winner = action["approver"]
        assert winner in {name for name, _ in reviewers}
        for lost in (a for a in answers if a.status_code == 409):
            assert lost.headers["content-type"] == "application/problem+json"
            problem = lost.json()
            assert problem["code"] == "already_decided"
            assert f"approved by {winner!r}" in problem["detail"]
            assert problem["decision"]["approver"] == winner

        assert len(_lines(outbox)) == 1
        assert json.loads(_lines(outbox)[0])["flag_id"] == action["output"]["flag_id"]
        [grant] = cp.ledger.entries(won["run_id"], kinds=["grant"])
        assert json.loads(grant.text)["approver"] == winner
        [decision] = DecisionStore(cp.engine).for_run(won["run_id"]).values()
        assert decision.approver == winner
        assert pending == []
        assert cp.ledger.verify().ok
    assert log_errors(log) == []


@pytest.mark.postgres
@pytest.mark.slow
def test_many_runs_at_once_through_four_workers(postgres_url: str, tmp_path: Path) -> None:
    outbox, log = tmp_path / "outbox.jsonl", tmp_path / "serve.log"
    with ControlPlane.open(postgres_url, nli=LexicalNLI()) as cp:
        store = TokenStore(cp.engine)
        agent = bearer(store.create(name="amy", role="agent").secret)
        with served(postgres_url, workers=4, outbox=outbox, log=log) as base:
            answers = _at_once(
                RUNS,
                base,
                lambda client, _: client.post(
                    f"/v1/graphs/{GRAPH}/runs",
                    json={"input": case("small_overage")},
                    headers=agent,
                ),
            )
            assert [a.status_code for a in answers] == [201] * RUNS, [
                a.text for a in answers if a.status_code != 201
            ]
            results = [a.json() for a in answers]
            with (
                httpx.Client(base_url=base, timeout=PATIENCE_S) as client,
                ThreadPoolExecutor(max_workers=16) as pool,
            ):
                read = list(
                    pool.map(
                        lambda r: client.get(f"/v1/runs/{r['thread_id']}", headers=agent).json(),
                        results,
                    )
                )

        assert len({r["thread_id"] for r in results}) == RUNS
        assert len({r["run_id"] for r in results}) == RUNS
        assert all(len(r["actions"]) == 1 for r in results)
        [(performer, performed)] = [
            (r["run_id"], a) for r in results for a in r["actions"] if a["status"] == "executed"
        ]
        refused = [a for r in results for a in r["actions"] if a["status"] != "executed"]
        assert len(refused) == RUNS - 1
        assert {(a["status"], a["error"]["code"]) for a in refused} == {
            ("duplicate", "duplicate_effect")
        }
        assert all(f"in run {performer}" in a["error"]["message"] for a in refused)

        # One run flagged the line; every other one ended incomplete, its flag refused.
        assert sorted(s["status"] for s in read) == ["answered"] + ["incomplete"] * (RUNS - 1)
        assert [s["run_id"] for s in read] == [r["run_id"] for r in results]
        assert [s["result"]["actions"] for s in read] == [r["actions"] for r in results]
        assert len(_lines(outbox)) == 1
        assert json.loads(_lines(outbox)[0])["flag_id"] == performed["output"]["flag_id"]
        assert cp.ledger.verify().ok
    assert log_errors(log) == []
