"""The refund desk of ``examples/refund_desk.py`` over HTTP, served by the name
``ASSAY_SERVICE_GRAPHS`` gives it: an agent starts a run, which pauses on the model's
own refund call; a reviewer decides on a service started again (a new graph and a new
scripted model, as after a restart), and the refund runs once, or not at all when
denied. The stand-in NLI model (the verifier is not the subject), on a real SQLite
file and a real PostgreSQL database."""

from __future__ import annotations

import importlib
from typing import Any

import pytest

from assay import ControlPlane
from assay.service import graphs_from_env
from tests.service.conftest import Service, serve_graphs

TASK = {"task": "The customer returned order D-4410: refund it."}
TOTAL = "The total of order D-4410 was 29.97 USD."

pytestmark = pytest.mark.slow


def _desk(cp: ControlPlane) -> Service:
    """The desk served as ``refunds``, with an agent (amy) and a reviewer (rita); the
    payment provider's refunds in this process cleared."""
    graphs = graphs_from_env({"ASSAY_SERVICE_GRAPHS": "refunds=examples.refund_desk:graph"})
    _provider().clear()
    served = serve_graphs(cp, graphs)
    served.token("amy", role="agent")
    served.token("rita", role="reviewer")
    return served


def _paused(served: Service) -> dict[str, Any]:
    started = served.client.post(
        "/v1/graphs/refunds/runs", json={"input": TASK}, headers=served.headers["amy"]
    )
    assert started.status_code == 201, started.text
    body = started.json()
    assert body["status"] == "awaiting_grant"
    [pending] = body["pending_grants"]
    assert (pending["tool"], pending["args"]) == (
        "issue_refund",
        {"order": "D-4410", "amount": 29.97},
    )
    return body


def _provider() -> list[Any]:
    """The refunds the example's payment provider made in this process."""
    return importlib.import_module("examples.refund_desk").REFUNDS


def _refunds(cp: ControlPlane, run_id: str) -> int:
    outputs = cp.ledger.entries(run_id, kinds=["tool_output"])
    return [e.source for e in outputs].count("tool:issue_refund@1.0.0")


def test_a_refund_approved_over_http_after_a_restart_runs_once(served_plane: ControlPlane) -> None:
    thread = _paused(_desk(served_plane))["thread_id"]
    restarted = _desk(served_plane)
    waiting = restarted.client.get("/v1/grants/pending", headers=restarted.headers["rita"])
    assert [p["thread_id"] for p in waiting.json()] == [thread]

    decided = restarted.client.post(
        f"/v1/runs/{thread}/decisions", json={"approve": True}, headers=restarted.headers["rita"]
    )

    assert decided.status_code == 200, decided.text
    done = decided.json()
    assert done["status"] == "answered"
    assert [(a["status"], a["approver"]) for a in done["actions"]] == [("executed", "rita")]
    assert [c["text"] for c in done["claims"]] == [TOTAL, "Refund R-1 was issued."]
    again = restarted.client.post(
        f"/v1/runs/{thread}/decisions", json={"approve": True}, headers=restarted.headers["rita"]
    )
    assert again.status_code == 409 and again.json()["code"] == "already_decided"
    assert _refunds(served_plane, done["run_id"]) == 1
    [(order, amount, key)] = _provider()
    assert (order, amount, len(key)) == ("D-4410", 29.97, 64)


def test_a_refund_denied_over_http_runs_nothing(served_plane: ControlPlane) -> None:
    served = _desk(served_plane)
    thread = _paused(served)["thread_id"]

    decided = served.client.post(
        f"/v1/runs/{thread}/decisions",
        json={"approve": False, "reason": "the return has not arrived"},
        headers=served.headers["rita"],
    )

    done = decided.json()
    assert done["status"] == "denied"
    [action] = done["actions"]
    assert (action["status"], action["approver"]) == ("denied", "rita")
    assert [c["text"] for c in done["claims"]] == [TOTAL]
    assert _refunds(served_plane, done["run_id"]) == 0 and _provider() == []
