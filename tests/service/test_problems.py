"""Errors are RFC 9457 problem details with a stable code; bodies have a size limit
and tokens a rate; the ledger's checks answer over HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from assay import ControlPlane
from assay.apps import reference
from assay.errors import DatabaseError, RunError
from assay.ledger import (
    generate_key,
    leaf_hash,
    verify_checkpoint,
    verify_consistency,
    verify_inclusion,
)
from assay.verifier import LexicalNLI
from tests.service.conftest import GRAPH, Service, case, serve

PROBLEM_KEYS = {"type", "title", "status", "detail", "code", "instance"}


def _problem(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    body = response.json()
    assert set(body) >= PROBLEM_KEYS
    assert (body["status"], body["code"]) == (status, code)
    assert body["type"].endswith("/" + code)
    assert "Traceback" not in response.text
    return body


@pytest.fixture
def sqlite_plane(sqlite_url: str, outbox: Path) -> Iterator[ControlPlane]:
    with ControlPlane.open(sqlite_url, nli=LexicalNLI()) as cp:
        yield cp


def test_mistakes_are_problem_details(service: Service) -> None:
    client, h = service.client, service.headers
    body = _problem(client.get("/v1/runs/thr_missing", headers=h["otto"]), 404, "unknown_thread")
    assert body["instance"] == "/v1/runs/thr_missing" and "thr_missing" in body["detail"]
    _problem(client.get("/v1/runs/run_missing", headers=h["otto"]), 404, "unknown_run")
    _problem(client.get("/v1/ledger/verify?run=run_missing", headers=h["otto"]), 404, "unknown_run")
    _problem(client.get("/v1/nowhere", headers=h["otto"]), 404, "not_found")
    _problem(client.delete("/v1/grants/pending", headers=h["otto"]), 405, "method_not_allowed")
    missing = client.post(f"/v1/graphs/{GRAPH}/runs", json={}, headers=h["amy"])
    invalid = _problem(missing, 422, "validation_error")
    assert invalid["errors"][0]["loc"] == ["body", "input"]
    unknown = client.post(
        "/v1/graphs/nope/runs", json={"input": case("compliant")}, headers=h["amy"]
    )
    _problem(unknown, 404, "unknown_graph")
    refused = client.post(
        f"/v1/graphs/{GRAPH}/runs",
        json={"input": {"task": "audit", "documents": {}}},
        headers=h["amy"],
    )
    assert "no documents" in _problem(refused, 400, "usage_error")["detail"]
    # A served graph reads no folder of the server, whatever path a client names.
    folder = str(reference.cases()["over_cap"])
    named = client.post(
        f"/v1/graphs/{GRAPH}/runs",
        json={"input": {"task": "audit", "documents": folder}},
        headers=h["amy"],
    )
    assert "reads no folder" in _problem(named, 400, "usage_error")["detail"]
    assert not any(
        "engagement" in e.text
        for r in service.cp.ledger.runs()
        for e in service.cp.ledger.entries(r.run_id)
    )
    not_json = client.post(
        f"/v1/graphs/{GRAPH}/runs",
        content=b"{not json",
        headers={**h["amy"], "content-type": "application/json"},
    )
    _problem(not_json, 422, "validation_error")


def test_a_decision_on_a_run_that_is_not_paused_is_a_conflict(service: Service) -> None:
    done = service.start("amy", "compliant")
    refused = service.client.post(
        f"/v1/runs/{done['thread_id']}/decisions",
        json={"approve": True},
        headers=service.headers["rita"],
    )
    assert "answered" in _problem(refused, 409, "invalid_decision")["detail"]


def test_run_time_failures_keep_their_details_in_the_log(sqlite_plane: ControlPlane) -> None:
    served = serve(sqlite_plane)
    app = served.client.app

    def database() -> None:
        raise DatabaseError("connection to db.internal:5432 refused for user assay_owner")

    def run_error() -> None:
        raise RunError("the fenced graph stopped without a result")

    def bug() -> None:
        raise ValueError("secret internals")

    for path, handler in (("/database", database), ("/run", run_error), ("/bug", bug)):
        app.add_api_route(path, handler)  # type: ignore[attr-defined]
    client = TestClient(app, raise_server_exceptions=False)
    hidden = _problem(client.get("/database"), 503, "database_unavailable")
    assert "db.internal" not in hidden["detail"] and "assay_owner" not in str(hidden)
    shown = _problem(client.get("/run"), 500, "run_error")
    assert shown["detail"] == "the fenced graph stopped without a result"
    opaque = _problem(client.get("/bug"), 500, "internal_error")
    assert "secret" not in opaque["detail"]


def test_bodies_over_the_limit_are_413(sqlite_plane: ControlPlane, outbox: Path) -> None:
    served = serve(sqlite_plane, max_body_bytes=2_048)
    headers = served.token("amy", role="agent")
    big = {"input": {"task": "x" * 4_096}}
    declared = served.client.post(f"/v1/graphs/{GRAPH}/runs", json=big, headers=headers)
    _problem(declared, 413, "body_too_large")

    def chunks() -> Iterator[bytes]:
        yield b'{"input": {"task": "'
        for _ in range(8):
            yield b"x" * 512
        yield b'"}}'

    streamed = served.client.post(
        f"/v1/graphs/{GRAPH}/runs",
        content=chunks(),
        headers={**headers, "content-type": "application/json"},
    )
    _problem(streamed, 413, "body_too_large")
    assert sqlite_plane.ledger.runs() == [] and not outbox.exists()
    small = served.client.post(
        f"/v1/graphs/{GRAPH}/runs", json={"input": {"task": "x"}}, headers=headers
    )
    assert small.status_code == 400  # under the limit: the graph's own refusal


def test_each_token_has_its_own_rate(sqlite_plane: ControlPlane) -> None:
    served = serve(sqlite_plane, rate_per_second=0.01, rate_burst=2)
    first, second = served.token("a", role="auditor"), served.token("b", role="auditor")
    assert [served.client.get("/v1/graphs", headers=first).status_code for _ in range(2)] == [
        200,
        200,
    ]
    limited = served.client.get("/v1/graphs", headers=first)
    body = _problem(limited, 429, "rate_limited")
    wait = int(limited.headers["retry-after"])
    assert 1 <= wait <= 100 and str(wait) in body["detail"]
    assert served.client.get("/v1/graphs", headers=second).status_code == 200


def test_checkpoints_and_inclusion_proofs_verify(service: Service) -> None:
    started = service.start("amy", "compliant")
    h = service.headers["otto"]
    missing_key = service.client.get("/v1/ledger/checkpoint", headers=h)
    _problem(missing_key, 503, "checkpoint_key_unavailable")

    signer, verifier = generate_key("assay-test")
    keyed = serve(service.cp, checkpoint_key=signer)
    auditor = keyed.token("auditor", role="auditor")
    body = keyed.client.get("/v1/ledger/checkpoint", headers=auditor).json()
    checkpoint = verify_checkpoint(body["checkpoint"], verifier)
    assert (checkpoint.size, checkpoint.root.hex()) == (body["tree_size"], body["root"])

    entry = service.cp.ledger.entries(started["run_id"])[-1]
    url = f"/v1/ledger/entries/{entry.id}/inclusion?tree_size={checkpoint.size}"
    proof = keyed.client.get(url, headers=auditor).json()
    verify_inclusion(
        leaf_hash(bytes.fromhex(entry.entry_hash)),
        proof["leaf_index"],
        proof["tree_size"],
        [bytes.fromhex(x) for x in proof["hashes"]],
        checkpoint.root,
    )
    assert proof["root"] == checkpoint.root.hex()
    gone = keyed.client.get("/v1/ledger/entries/led_missing/inclusion", headers=auditor)
    _problem(gone, 404, "unknown_entry")
    later = service.start("amy", "compliant")
    grown = keyed.client.get(
        f"/v1/ledger/consistency?old_size={checkpoint.size}", headers=auditor
    ).json()
    assert grown["new_size"] > checkpoint.size and grown["old_root"] == checkpoint.root.hex()
    verify_consistency(
        checkpoint.size,
        grown["new_size"],
        checkpoint.root,
        bytes.fromhex(grown["new_root"]),
        [bytes.fromhex(x) for x in grown["hashes"]],
    )
    too_big = f"/v1/ledger/consistency?old_size={grown['new_size'] + 1}"
    _problem(keyed.client.get(too_big, headers=auditor), 400, "invalid_tree_size")
    beyond = f"/v1/ledger/entries/{entry.id}/inclusion?tree_size={grown['new_size'] + 5}"
    _problem(keyed.client.get(beyond, headers=auditor), 400, "invalid_tree_size")
    assert later["status"] == "answered"
    report = keyed.client.get("/v1/ledger/verify", headers=auditor).json()
    assert report["ok"] is True and report["runs"] >= 1
    one = keyed.client.get(f"/v1/ledger/verify?run={started['run_id']}", headers=auditor).json()
    assert one["ok"] is True and one["runs"] == 1


def test_openapi_is_published_with_the_bearer_scheme(service: Service) -> None:
    spec = service.client.get("/openapi.json").json()
    assert {
        "/v1/graphs/{name}/runs",
        "/v1/runs/{ref}",
        "/v1/grants/pending",
        "/v1/runs/{thread}/decisions",
        "/v1/runs/{ref}/audit",
        "/v1/ledger/verify",
        "/v1/ledger/checkpoint",
        "/v1/ledger/entries/{entry_id}/inclusion",
        "/v1/ledger/consistency",
        "/v1/tokens",
    } <= set(spec["paths"])
    assert spec["components"]["securitySchemes"]["HTTPBearer"]["scheme"] == "bearer"
    decision = spec["components"]["schemas"]["DecisionBody"]
    assert set(decision["properties"]) == {"approve", "reason"}


def test_an_admin_makes_and_revokes_tokens_over_http(service: Service) -> None:
    client, admin = service.client, service.headers["ada"]
    made = client.post(
        "/v1/tokens", json={"name": "val", "role": "auditor", "expires_in": "1h"}, headers=admin
    )
    assert made.status_code == 201
    secret, token_id = made.json()["secret"], made.json()["id"]
    bearer = {"Authorization": f"Bearer {secret}"}
    assert client.get("/v1/ledger/verify", headers=bearer).status_code == 200
    listed = client.get("/v1/tokens", headers=admin).json()
    assert all("secret" not in t and "secret_sha256" not in t for t in listed)
    assert secret not in client.get("/v1/tokens", headers=admin).text
    revoked = client.post(f"/v1/tokens/{token_id}/revoke", headers=admin).json()
    assert revoked["active"] is False and revoked["revoked_at"]
    _problem(client.get("/v1/ledger/verify", headers=bearer), 401, "invalid_token")
    bad_role = client.post("/v1/tokens", json={"name": "x", "role": "root"}, headers=admin)
    _problem(bad_role, 422, "validation_error")
