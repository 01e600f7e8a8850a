"""A run through the service end to end, on SQLite and on PostgreSQL: an agent starts
it, it pauses for a grant, a reviewer decides over HTTP, the flag is written once,
and a second decision is refused naming the one that stands."""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from assay.fence import DecisionStore
from tests.service.conftest import Service, serve


def test_pause_then_decide_writes_the_flag_once(service: Service, outbox: Path) -> None:
    client, h = service.client, service.headers
    started = service.start("amy")
    # What is verified is answered while the flag waits for a reviewer.
    assert started["status"] == "awaiting_grant" and started["answer"] is not None
    thread = started["thread_id"]
    [waiting] = started["pending_grants"]
    assert waiting["tool"] == "flag_invoice_line" and not outbox.exists()

    pending = client.get("/v1/grants/pending", headers=h["rita"]).json()
    assert [p["thread_id"] for p in pending] == [thread]
    assert pending[0]["started_by"] == "amy"
    assert pending[0]["result"]["pending_grants"][0]["args"] == waiting["args"]

    decided = client.post(
        f"/v1/runs/{thread}/decisions",
        json={"approve": True, "reason": "over the cap"},
        headers=h["rita"],
    )
    assert decided.status_code == 200, decided.text
    done = decided.json()
    assert done["status"] == "answered"
    [action] = done["actions"]
    assert (action["status"], action["approver"]) == ("executed", "rita")
    [grant] = service.cp.ledger.entries(done["run_id"], kinds=["grant"])
    assert json.loads(grant.text)["approver"] == "rita"
    [stored] = DecisionStore(service.cp.engine).for_run(done["run_id"]).values()
    assert (stored.approver, stored.reason) == ("rita", "over the cap")
    assert len(outbox.read_text().splitlines()) == 1

    again = client.post(f"/v1/runs/{thread}/decisions", json={"approve": False}, headers=h["rita"])
    assert again.status_code == 409
    assert again.headers["content-type"] == "application/problem+json"
    problem = again.json()
    assert problem["code"] == "already_decided" and "approved by 'rita'" in problem["detail"]
    assert problem["decision"]["approver"] == "rita" and problem["decision"]["approve"] is True
    assert len(outbox.read_text().splitlines()) == 1
    assert client.get("/v1/grants/pending", headers=h["rita"]).json() == []


def test_a_denial_records_the_principal_and_runs_nothing(service: Service, outbox: Path) -> None:
    thread = service.start("amy")["thread_id"]
    denied = service.client.post(
        f"/v1/runs/{thread}/decisions",
        json={"approve": False, "reason": "client consented"},
        headers=service.headers["rita"],
    ).json()
    [action] = denied["actions"]
    assert (action["status"], action["approver"]) == ("denied", "rita")
    assert not outbox.exists()


def test_the_approver_is_never_taken_from_the_body(service: Service, outbox: Path) -> None:
    thread = service.start("amy")["thread_id"]
    forged = service.client.post(
        f"/v1/runs/{thread}/decisions",
        json={"approve": True, "approver": "the-ceo"},
        headers=service.headers["rita"],
    )
    assert forged.status_code == 422
    problem = forged.json()
    assert problem["code"] == "validation_error" and "approver" in problem["detail"]
    assert not outbox.exists()
    coerced = service.client.post(
        f"/v1/runs/{thread}/decisions", json={"approve": "yes"}, headers=service.headers["rita"]
    )
    assert coerced.status_code == 422 and not outbox.exists()


def test_a_principal_may_not_decide_a_run_it_started(service: Service, outbox: Path) -> None:
    service.token("sam-agent", role="agent", name="sam")
    service.token("sam-reviewer", role="reviewer", name="sam")
    thread = service.start("sam-agent")["thread_id"]
    refused = service.client.post(
        f"/v1/runs/{thread}/decisions",
        json={"approve": True},
        headers=service.headers["sam-reviewer"],
    )
    assert refused.status_code == 403 and refused.json()["code"] == "separation_of_duties"
    assert not outbox.exists()
    assert service.cp.status(thread).status == "awaiting_grant"
    allowed = service.client.post(
        f"/v1/runs/{thread}/decisions", json={"approve": True}, headers=service.headers["rita"]
    )
    assert allowed.status_code == 200 and len(outbox.read_text().splitlines()) == 1


def test_separation_of_duties_can_be_turned_off(served_plane: object, outbox: Path) -> None:
    from assay import ControlPlane

    assert isinstance(served_plane, ControlPlane)
    lax = serve(served_plane, separation_of_duties=False)
    lax.token("sam-agent", role="agent", name="sam")
    lax.token("sam-reviewer", role="reviewer", name="sam")
    thread = lax.start("sam-agent")["thread_id"]
    done = lax.client.post(
        f"/v1/runs/{thread}/decisions", json={"approve": True}, headers=lax.headers["sam-reviewer"]
    ).json()
    assert done["actions"][0]["approver"] == "sam"
    assert len(outbox.read_text().splitlines()) == 1


def test_a_run_is_read_by_thread_or_run_id_and_audited(service: Service, outbox: Path) -> None:
    client, h = service.client, service.headers
    started = service.start("amy", "compliant")
    assert started["status"] == "answered"
    by_thread = client.get(f"/v1/runs/{started['thread_id']}", headers=h["amy"]).json()
    by_run = client.get(f"/v1/runs/{started['run_id']}", headers=h["otto"]).json()
    assert by_thread == by_run
    assert by_thread["result"]["answer"] == started["answer"]
    assert by_thread["started_by"] == "amy" and by_thread["graph_name"] == "invoice-audit"

    audit = client.get(f"/v1/runs/{started['run_id']}/audit", headers=h["otto"]).json()
    assert audit["run_id"] == started["run_id"] and audit["chain_ok"] is True
    assert [d["accepted"] for d in audit["gate_decisions"]][-1] is True
    entailed = [c for c in audit["claims"] if c["label"] == "entailment"]
    assert entailed and all(c["quote"] and c["ledger_id"] for c in entailed)
    entry = service.cp.ledger.get(entailed[0]["ledger_id"])
    start, end = entailed[0]["span"]
    assert entry.text[start:end] == entailed[0]["quote"]
    same = client.get(f"/v1/runs/{started['thread_id']}/audit", headers=h["rita"]).json()
    assert same == audit
    assert not outbox.exists()


def test_two_reviewers_at_once_one_decision_stands(service: Service, outbox: Path) -> None:
    service.token("rob", role="reviewer")
    thread = service.start("amy")["thread_id"]
    clients = {who: TestClient(service.client.app) for who in ("rita", "rob")}
    barrier = threading.Barrier(2)

    def decide(who: str) -> Any:
        barrier.wait()
        return clients[who].post(
            f"/v1/runs/{thread}/decisions",
            json={"approve": who == "rita"},
            headers=service.headers[who],
        )

    with ThreadPoolExecutor(max_workers=2) as pool:
        answers = list(pool.map(decide, ("rita", "rob")))
    assert sorted(a.status_code for a in answers) == [200, 409]
    [won] = [a.json() for a in answers if a.status_code == 200]
    [lost] = [a.json() for a in answers if a.status_code == 409]
    assert lost["code"] == "already_decided"
    assert lost["decision"]["approver"] == won["actions"][0]["approver"]
    flags = outbox.read_text().splitlines() if outbox.exists() else []
    assert len(flags) == (1 if won["actions"][0]["status"] == "executed" else 0)
