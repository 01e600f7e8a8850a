"""The refund desk of ``examples/refund_desk.py`` runs end to end from Python: LangGraph's
prebuilt ReAct agent with assay's bus tools, its model's own refund call paused for a
person, then approved (the refund runs once, with its idempotency key) or denied
(nothing runs). The stand-in NLI model checks the claims (the model is not the
subject here), on a real SQLite file and a real PostgreSQL database."""

from __future__ import annotations

import asyncio
import runpy
from pathlib import Path
from typing import Any

import pytest

from assay import ControlPlane
from assay.verifier import LexicalNLI

DESK = Path(__file__).resolve().parents[1] / "examples" / "refund_desk.py"


def _desk() -> dict[str, Any]:
    """The example's names, without running it as a program."""
    return runpy.run_path(str(DESK), run_name="refund_desk")


@pytest.mark.slow
def test_an_approved_refund_runs_once(db_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    desk = _desk()

    paused, done = desk["main"](db_url, approve=True, nli=LexicalNLI())

    [pending] = paused.pending_grants
    assert paused.status == "awaiting_grant" and pending.tool == "issue_refund"
    assert pending.args == {"order": "D-4410", "amount": 29.97}
    assert done.status == "answered"
    assert [(a.tool, a.status, a.approver) for a in done.actions] == [
        ("issue_refund", "executed", "ana")
    ]
    [(order, amount, key)] = desk["REFUNDS"]
    assert (order, amount, len(key)) == ("D-4410", 29.97, 64)
    assert [c.text for c in done.claims] == [
        "The total of order D-4410 was 29.97 USD.",
        "Refund R-1 was issued.",
    ]
    out = capsys.readouterr().out
    assert out.startswith("awaiting_grant issue_refund {'order': 'D-4410', 'amount': 29.97}")
    assert "answered [('issue_refund', 'executed')]" in out


@pytest.mark.slow
def test_a_denied_refund_runs_nothing(db_url: str) -> None:
    desk = _desk()

    paused, done = desk["main"](db_url, approve=False, nli=LexicalNLI())

    assert paused.status == "awaiting_grant"
    assert done.status == "denied" and desk["REFUNDS"] == []
    [action] = done.actions
    assert (action.status, action.reason) == ("denied", "the return has not arrived")
    assert [c.text for c in done.claims] == ["The total of order D-4410 was 29.97 USD."]


@pytest.mark.slow
def test_the_desk_runs_under_arun_and_resumes_on_a_graph_built_anew(db_url: str) -> None:
    """Async from Python, the resume on a new graph and model from ``graph(cp)`` (what
    another process builds): the refund runs once."""
    desk = _desk()

    async def scenario(cp: ControlPlane) -> tuple[Any, Any]:
        paused = await cp.arun(desk["graph"](cp), {"task": "Refund order D-4410."}, thread_id="a")
        approval = {"approve": True, "approver": "ana"}
        return paused, await cp.aresume(desk["graph"](cp), "a", approval)

    with ControlPlane.open(db_url, nli=LexicalNLI()) as cp:
        paused, done = asyncio.run(scenario(cp))

    assert paused.status == "awaiting_grant" and done.status == "answered"
    assert [(a.tool, a.status) for a in done.actions] == [("issue_refund", "executed")]
    assert [order for order, _, _ in desk["REFUNDS"]] == ["D-4410"]
    assert [c.text for c in done.claims][-1] == "Refund R-1 was issued."
