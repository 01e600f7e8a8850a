"""Who may call what: every role against every endpoint, with no token, and with a
revoked or an expired one, on SQLite and on PostgreSQL (one served database per
engine for the whole table)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from assay import ControlPlane
from assay.ledger import generate_key
from assay.service import TokenStore
from assay.verifier import LexicalNLI
from tests.conftest import fresh_postgres_database
from tests.service.conftest import Service, serve

ROLES = ("agent", "reviewer", "auditor", "admin")

#: endpoint → (method, path, JSON body, the roles allowed). Paths name the run the
#: agent started ({thread}, {run}) and one of its ledger entries ({entry}); where a
#: target is missing on purpose, an allowed role gets a 404, never a 403.
MATRIX: dict[str, tuple[str, str, Any, set[str]]] = {
    "list graphs": ("GET", "/v1/graphs", None, {"agent", "reviewer", "auditor", "admin"}),
    "start a run": ("POST", "/v1/graphs/missing/runs", {"input": {"task": "t"}}, {"agent"}),
    "read a run": ("GET", "/v1/runs/{thread}", None, {"agent", "reviewer", "auditor"}),
    "read a run by run id": ("GET", "/v1/runs/{run}", None, {"agent", "reviewer", "auditor"}),
    "audit a run": ("GET", "/v1/runs/{run}/audit", None, {"reviewer", "auditor"}),
    "pending grants": ("GET", "/v1/grants/pending", None, {"reviewer", "auditor"}),
    "decide": ("POST", "/v1/runs/thr_missing/decisions", {"approve": True}, {"reviewer"}),
    "verify the ledger": ("GET", "/v1/ledger/verify", None, {"auditor"}),
    "checkpoint": ("GET", "/v1/ledger/checkpoint", None, {"auditor"}),
    "inclusion proof": ("GET", "/v1/ledger/entries/{entry}/inclusion", None, {"auditor"}),
    "consistency proof": ("GET", "/v1/ledger/consistency?old_size=1", None, {"auditor"}),
    "list tokens": ("GET", "/v1/tokens", None, {"admin"}),
    "create a token": ("POST", "/v1/tokens", {"name": "new", "role": "auditor"}, {"admin"}),
    "revoke a token": ("POST", "/v1/tokens/tok_0000000000000000/revoke", None, {"admin"}),
}


@dataclass
class Table:
    service: Service
    targets: dict[str, str]
    verifier_key: str

    def call(self, endpoint: str, headers: dict[str, str]) -> Any:
        method, path, body, _ = MATRIX[endpoint]
        return self.service.client.request(
            method, path.format(**self.targets), json=body, headers=headers
        )


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def table(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Table]:
    folder: Path = tmp_path_factory.mktemp("roles")
    databases = (
        iter([f"sqlite:///{folder / 'assay.db'}"])
        if request.param == "sqlite"
        else fresh_postgres_database()
    )
    url = next(databases)
    signer, verifier = generate_key("assay-test")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ASSAY_OUTBOX", str(folder / "outbox.jsonl"))
        with ControlPlane.open(url, nli=LexicalNLI()) as cp:
            served = serve(cp, rate_burst=10_000, checkpoint_key=signer)
            for role in ROLES:
                served.token(role, role=role)
            started = served.start("agent", "compliant")
            entry = cp.ledger.entries(started["run_id"])[0].id
            targets = {"thread": started["thread_id"], "run": started["run_id"], "entry": entry}
            yield Table(service=served, targets=targets, verifier_key=verifier)
    next(databases, None)


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("endpoint", list(MATRIX))
def test_each_role_is_allowed_exactly_its_endpoints(table: Table, endpoint: str, role: str) -> None:
    response = table.call(endpoint, table.service.headers[role])
    if role in MATRIX[endpoint][3]:
        assert response.status_code not in (401, 403), response.text
        assert response.status_code < 500, response.text
    else:
        assert response.status_code == 403, response.text
        assert response.json()["code"] == "forbidden"
        assert response.headers["content-type"] == "application/problem+json"


@pytest.mark.parametrize("endpoint", list(MATRIX))
def test_no_token_is_401_with_a_bearer_challenge(table: Table, endpoint: str) -> None:
    for headers in ({}, {"Authorization": "Basic YWxhZGRpbjpvcGVuc2VzYW1l"}):
        response = table.call(endpoint, headers)
        assert response.status_code == 401
        assert response.json()["code"] == "unauthenticated"
        assert response.headers["www-authenticate"].startswith("Bearer")


@pytest.mark.parametrize("endpoint", list(MATRIX))
def test_revoked_expired_and_forged_tokens_are_401(table: Table, endpoint: str) -> None:
    store = table.service.tokens
    revoked = store.create(name="rev", role=next(iter(MATRIX[endpoint][3])))
    store.revoke(revoked.info.id)
    past = TokenStore(table.service.cp.engine, clock=lambda: datetime.now(UTC) - timedelta(days=2))
    expired = past.create(name="old", role="auditor", expires_in=timedelta(days=1))
    live = store.create(name="live", role="auditor")
    forged = live.secret[:-4] + ("AAAA" if not live.secret.endswith("AAAA") else "BBBB")
    for secret in (revoked.secret, expired.secret, forged, "not-a-token"):
        response = table.call(endpoint, {"Authorization": f"Bearer {secret}"})
        assert response.status_code == 401, secret
        assert response.json()["code"] == "invalid_token"


def test_an_agent_reads_only_its_own_runs(table: Table) -> None:
    other = table.service.token("another-agent", role="agent")
    thread = table.targets["thread"]
    refused = table.service.client.get(f"/v1/runs/{thread}", headers=other)
    assert refused.status_code == 403 and refused.json()["code"] == "not_your_run"
    for missing in ("thr_missing", "run_missing"):
        hidden = table.service.client.get(f"/v1/runs/{missing}", headers=other)
        assert hidden.status_code == 403 and hidden.json()["code"] == "not_your_run"
    run = table.service.client.get(f"/v1/runs/{table.targets['run']}", headers=other)
    assert run.status_code == 403
    own = table.service.client.get(f"/v1/runs/{thread}", headers=table.service.headers["agent"])
    assert own.status_code == 200 and own.json()["started_by"] == "agent"
