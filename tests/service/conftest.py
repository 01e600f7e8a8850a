"""Fixtures for the HTTP service: the invoice audit served on a control plane with the
deterministic stand-in NLI model (the model is not the subject here), on a real
SQLite file and on the real PostgreSQL server, driven through FastAPI's TestClient."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from assay import ControlPlane
from assay.apps import reference
from assay.control_plane import GraphFactory
from assay.service import ServiceSettings, TokenStore, create_app
from assay.verifier import LexicalNLI

#: The graph name the tests start runs by.
GRAPH = "invoices"


def case(name: str) -> dict[str, Any]:
    """A bundled case of the invoice audit as a client sends it: the documents'
    text in the body, not a folder on the server."""
    folder = reference.cases()[name]
    task = (folder / "task.txt").read_text(encoding="utf-8").strip()
    documents = {
        p.name: p.read_text(encoding="utf-8")
        for p in sorted(folder.iterdir())
        if p.is_file() and p.name != "task.txt"
    }
    return {"task": task, "documents": documents}


@dataclass
class Service:
    """A served control plane: the client, the token store, and bearer headers by
    principal."""

    cp: ControlPlane
    client: TestClient
    tokens: TokenStore
    headers: dict[str, dict[str, str]] = field(default_factory=dict)

    def token(self, key: str, *, role: str, name: str | None = None) -> dict[str, str]:
        """Make a token (``name`` defaults to ``key``) and keep its header under ``key``."""
        issued = self.tokens.create(name=name or key, role=role)
        self.headers[key] = {"Authorization": f"Bearer {issued.secret}"}
        return self.headers[key]

    def start(self, who: str, case_name: str = "over_cap") -> dict[str, Any]:
        response = self.client.post(
            f"/v1/graphs/{GRAPH}/runs", json={"input": case(case_name)}, headers=self.headers[who]
        )
        assert response.status_code == 201, response.text
        return response.json()


@pytest.fixture
def served_plane(db_url: str, outbox: Path) -> Iterator[ControlPlane]:
    with ControlPlane.open(db_url, nli=LexicalNLI()) as cp:
        yield cp


def serve(cp: ControlPlane, **settings: Any) -> Service:
    """The invoice audit served on ``cp`` with ``settings``."""
    return serve_graphs(cp, {GRAPH: reference.served_graph}, **settings)


def serve_graphs(cp: ControlPlane, graphs: Mapping[str, GraphFactory], **settings: Any) -> Service:
    """``graphs`` (name to factory) served on ``cp`` with ``settings``."""
    app = create_app(cp, graphs, settings=ServiceSettings(**settings))
    return Service(cp=cp, client=TestClient(app), tokens=TokenStore(cp.engine))


@pytest.fixture
def service(served_plane: ControlPlane) -> Service:
    """The service with an agent (amy), a reviewer (rita), an auditor (otto) and an
    admin (ada)."""
    served = serve(served_plane)
    for key, role in (("amy", "agent"), ("rita", "reviewer"), ("otto", "auditor")):
        served.token(key, role=role)
    served.token("ada", role="admin")
    return served
