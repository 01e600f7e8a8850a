"""A call no policy rule approved says why, wherever the pending call is shown: the
``RunResult``, the review request, ``assay audit`` (text and ``--json``) and the
reviewer page. On a real SQLite file and a real PostgreSQL database."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from assay import ControlPlane
from assay.cli import app
from assay.fence import FencedGraph, ReviewRequest, fence
from assay.verifier import LexicalNLI
from tests.fence import _refunds
from tests.fence._refunds import ScriptedChatModel, refund_desk
from tests.service.conftest import serve
from tests.service.test_pages import login

TASK = {"task": "The customer returned order ORD-1042: refund it."}
SMALL_REFUNDS = {
    "rules": [{"name": "small-refunds", "tool": "issue_refund", "args": {"amount": {"le": 10}}}]
}
ANY_REFUND = {"rules": [{"name": "any-refund", "tool": "issue_refund"}]}
cli = CliRunner()


def _desk(desk_cp: ControlPlane, policy: dict[str, Any] | None) -> FencedGraph:
    agent = _refunds.agent(desk_cp, ScriptedChatModel(script=refund_desk()))
    return fence(agent, control_plane=desk_cp, name="refund-desk", policy=policy)


def test_a_rule_whose_bound_the_call_exceeds_says_so(desk_cp: ControlPlane) -> None:
    graph = _desk(desk_cp, SMALL_REFUNDS)

    paused = desk_cp.run(graph, TASK, thread_id="policy-1")

    [pending] = paused.pending_grants
    assert pending.policy == ('rule small-refunds: amount is 40, the rule requires {"le":10}',)
    [task] = graph.get_state({"configurable": {"thread_id": "policy-1"}}).tasks
    [call] = ReviewRequest.from_interrupt(task.interrupts[0]).pending
    assert call.policy == list(pending.policy)


def test_a_rule_that_matches_says_what_the_verified_facts_do_not_bind(
    desk_cp: ControlPlane,
) -> None:
    paused = desk_cp.run(_desk(desk_cp, ANY_REFUND), TASK, thread_id="policy-2")

    [pending] = paused.pending_grants
    [reason] = pending.policy
    # The figures are verified, but nothing binds them to the refund's arguments.
    assert reason.startswith("rule any-refund: /amount: declares no role")
    assert "/order: declares no role" in reason


def test_a_policy_without_a_rule_for_the_tool_says_so(desk_cp: ControlPlane) -> None:
    paused = desk_cp.run(_desk(desk_cp, None), TASK, thread_id="policy-3")

    assert paused.pending_grants[0].policy == (
        "no policy rule names issue_refund (the policy holds 0 rule(s))",
    )


def test_assay_audit_shows_why_the_pending_call_waits(desk_cp: ControlPlane, db_url: str) -> None:
    paused = desk_cp.run(_desk(desk_cp, SMALL_REFUNDS), TASK, thread_id="policy-4")
    env = {"COLUMNS": "200"}

    as_json = cli.invoke(app, ["audit", paused.run_id, "--db", db_url, "--json"], env=env)
    as_text = cli.invoke(app, ["audit", paused.run_id, "--db", db_url], env=env)

    assert as_json.exit_code == 0, as_json.output
    [pending] = json.loads(as_json.output)["pending"]
    assert (pending["tool"], pending["intent_id"]) == ("issue_refund", "call:refund-1")
    assert pending["policy"] == ['rule small-refunds: amount is 40, the rule requires {"le":10}']
    assert as_text.exit_code == 0, as_text.output
    assert "not approved by policy: rule small-refunds: amount is 40" in as_text.output


def test_the_reviewer_page_shows_why_the_pending_call_waits(db_url: str, outbox: Path) -> None:
    with ControlPlane.open(db_url, nli=LexicalNLI()) as served:
        page = _queue_page(served)

    assert "Not approved by policy" in page
    assert "rule small-overages: amount_over_cap is 875, the rule requires" in page


def _queue_page(served: ControlPlane) -> str:
    """The invoice audit's over-cap case started by an agent, as a reviewer sees the
    queue."""
    service = serve(served)
    service.token("amy", role="agent")
    service.token("rita", role="reviewer")
    started = service.start("amy", "over_cap")
    assert started["status"] == "awaiting_grant"
    return login(service, "rita").get("/ui/").text
