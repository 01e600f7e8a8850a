"""An action intent's id names its call for the whole run: a hand-over that reuses the
id of an intent the run already decided is refused by the gate with
``intent_id_reused``, and the call it asks for never runs (nor is answered with the
earlier decision). An id whose hand-over was refused was never decided, and may be
handed over again. Every test runs on a real SQLite file and a real PostgreSQL
database (the gate reads the run's decisions from the ledger), with the stand-in NLI
model, which is not the subject here."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from assay import ControlPlane, ToolSpec
from assay.fence import FenceState, fence
from assay.gate import GATE_ERROR_CODES, intent_call_id
from assay.verifier import LexicalNLI
from tests.fence import _refunds

TAG_ORDER = ToolSpec(
    name="tag_order",
    version="1.0.0",
    side_effect="reversible",
    description="Put a tag on an order.",
    input_schema={
        "type": "object",
        "required": ["order", "tag"],
        "additionalProperties": False,
        "properties": {"order": {"type": "string"}, "tag": {"type": "string"}},
    },
    output_schema={"type": "object"},
)
REFUND = {"order": "ORD-1042", "amount": 40.0}
#: The tags the handler put on, in this process.
tagged: list[dict[str, Any]] = []


def _tag(args: dict[str, Any]) -> dict[str, Any]:
    tagged.append(args)
    return {"tags": len(tagged)}


class Agent:
    """An agent of a user's own: it looks the order up and hands over ``first``'s
    intents, asking for their outcomes (a continuation); handed them back, it hands
    over ``then``'s. Each intent is ``(id, tool, args)``."""

    def __init__(self, cp: ControlPlane, first: list[Any], then: list[Any]) -> None:
        self.cp, self.first, self.then = cp, first, then

    def __call__(self, state: FenceState) -> dict[str, Any]:
        run_id = state["run_id"]  # pyright: ignore[reportTypedDictNotRequiredAccess]
        looked = self.cp.bus.call(run_id, "lookup_order", {"order": "ORD-1042"})
        assert looked.ledger_id is not None
        claim = _refunds.claim("paid", _refunds.PAID, looked.ledger_id)
        intents = self.then if state.get("returned") else self.first
        handover = {
            "run_id": run_id,
            "from_agent": "desk",
            "status": "ok",
            "claims": [claim],
            "open_questions": [],
            "action_intents": [
                {
                    "id": i,
                    "tool": t,
                    "args": a,
                    "requires_grant": t == "issue_refund",
                    "depends_on": ["paid"],
                }
                for i, t, a in intents
            ],
        }
        if state.get("returned"):
            return {"handover": handover}
        return {"handover": handover, "continuation": {"awaits": [i for i, _, _ in intents]}}


@pytest.fixture
def cp(db_url: str) -> Iterator[ControlPlane]:
    _refunds.REFUNDS.clear()
    tagged.clear()
    with ControlPlane.open(db_url, nli=LexicalNLI()) as plane:
        _refunds.install(plane)
        plane.registry.register(TAG_ORDER, _tag)
        yield plane


def test_the_code_is_a_gate_code() -> None:
    assert "intent_id_reused" in GATE_ERROR_CODES


def test_an_id_whose_call_ran_is_refused_when_reused(cp: ControlPlane) -> None:
    returned = {"order": "ORD-1042", "tag": "returned"}
    refunded = {"order": "ORD-1042", "tag": "refunded"}
    agent = Agent(cp, [("a1", "tag_order", returned)], [("a1", "tag_order", refunded)])
    graph = fence(agent, control_plane=cp, name="desk", max_evidence_rounds=0)

    result = cp.run(graph, {"task": "Tag order ORD-1042."})

    assert tagged == [returned]  # the second call never ran
    assert result.status == "abstained"
    [error] = [e for e in result.errors if e["code"] == "intent_id_reused"]
    assert error["path"] == "$.action_intents[0].id"
    assert "'a1'" in error["message"] and "its call reached the tool bus" in error["message"]
    [action] = result.actions
    assert (action.intent_id, action.args, action.status) == ("a1", returned, "executed")


def test_an_id_a_reviewer_denied_is_refused_when_reused(cp: ControlPlane) -> None:
    agent = Agent(
        cp,
        [("r1", "issue_refund", REFUND)],
        [("r1", "tag_order", {"order": "ORD-1042", "tag": "refunded"})],
    )
    graph = fence(agent, control_plane=cp, name="desk", max_evidence_rounds=0)
    paused = cp.run(graph, {"task": "Refund order ORD-1042."}, thread_id="deny")
    assert paused.status == "awaiting_grant"

    done = cp.resume(graph, "deny", {"approve": False, "approver": "bob", "reason": "no"})

    # Without the gate's refusal the tag would have been reported denied by bob.
    assert tagged == [] and _refunds.REFUNDS == []
    [error] = [e for e in done.errors if e["code"] == "intent_id_reused"]
    assert "denied by a reviewer" in error["message"]
    [action] = done.actions
    assert (action.intent_id, action.tool, action.status) == ("r1", "issue_refund", "denied")


def test_a_new_id_for_the_next_call_runs(cp: ControlPlane) -> None:
    returned = {"order": "ORD-1042", "tag": "returned"}
    refunded = {"order": "ORD-1042", "tag": "refunded"}
    agent = Agent(cp, [("a1", "tag_order", returned)], [("a2", "tag_order", refunded)])
    graph = fence(agent, control_plane=cp, name="desk", max_evidence_rounds=0)

    result = cp.run(graph, {"task": "Tag order ORD-1042."})

    assert result.status == "answered" and tagged == [returned, refunded]
    assert [(a.intent_id, a.status) for a in result.actions] == [
        ("a1", "executed"),
        ("a2", "executed"),
    ]


def test_an_id_from_a_refused_hand_over_may_be_used_again(cp: ControlPlane) -> None:
    tag = {"order": "ORD-1042", "tag": "returned"}
    # Round one's refund is refused at the gate (400 is nowhere in the evidence), so
    # its intent was never decided; round two uses the id for the right call.
    rounds = iter([{"order": "ORD-1042", "amount": 400.0}, tag])

    def agent(state: FenceState) -> dict[str, Any]:
        args = next(rounds)
        tool = "issue_refund" if "amount" in args else "tag_order"
        return Agent(cp, [("a1", tool, args)], [])(state) | {"continuation": None}

    graph = fence(agent, control_plane=cp, name="desk", max_evidence_rounds=1)

    result = cp.run(graph, {"task": "Tag order ORD-1042."})

    assert result.status == "answered" and tagged == [tag]
    [first] = result.round_reasons
    assert [e["code"] for e in first.errors] == ["ungrounded_argument"]


def test_the_call_id_is_the_fences(cp: ControlPlane) -> None:
    assert intent_call_id("run_1", "a1") == "intent:run_1/a1"
