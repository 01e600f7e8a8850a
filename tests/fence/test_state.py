"""The fenced graph's state: the round's hand-over is validated once and carried as a
model between the round's nodes, never in a checkpoint, which holds plain JSON only
(the run's ``result`` aside) and resumes in another control plane."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from assay import ControlPlane
from assay.contract import Handover
from assay.fence import FenceState, fence
from assay.verifier import LexicalNLI
from tests.fence.test_decisions import ORDERS, order_agent, register_order_tools

APPROVE = {"approve": True, "approver": "alice"}


@pytest.fixture
def cp(db_url: str) -> Iterator[ControlPlane]:
    with ControlPlane.open(db_url, nli=LexicalNLI()) as plane:
        register_order_tools(plane)
        yield plane


@pytest.fixture
def validations(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every value ``Handover.model_validate`` is asked to validate, from now on."""
    seen: list[object] = []
    original = Handover.model_validate

    def counting(value: object, **options: Any) -> Handover:
        seen.append(value)
        return original(value, **options)

    monkeypatch.setattr(Handover, "model_validate", counting)
    return seen


def test_a_round_validates_its_hand_over_once(cp: ControlPlane, validations: list[object]) -> None:
    """The gate validates the agent's hand-over; the verifier, the policy node, the
    paused result and the runner use the model it carried. Resumed from the
    checkpoint, the run reads the verified hand-over back once, for its act and
    finish nodes together."""
    graph = fence(order_agent(cp), control_plane=cp, name="orders")
    paused = cp.run(graph, {"task": "Restock BT-105"}, thread_id="thr_once")
    assert paused.status == "awaiting_grant"
    assert len(validations) == 1
    done = cp.resume(graph, "thr_once", APPROVE)
    assert [a.status for a in done.actions] == ["executed"]
    assert ORDERS[cp] == [{"sku": "BT-105", "units": 120}]
    assert len(validations) == 2


def test_a_checkpoint_holds_plain_json_and_no_parsed_hand_over(
    cp: ControlPlane, db_url: str
) -> None:
    graph = fence(order_agent(cp), control_plane=cp, name="orders")
    cp.run(graph, {"task": "Restock BT-105"}, thread_id="thr_json")
    saved = cp.checkpointer.get_tuple({"configurable": {"thread_id": "thr_json"}})
    assert saved is not None
    values: dict[str, Any] = saved.checkpoint["channel_values"]
    assert "accepted_handover" not in values and "verified_handover" not in values
    state = {k: v for k, v in values.items() if k in FenceState.__annotations__}
    assert {"verified", "pending", "granted", "handover"} <= state.keys()
    plain = {k: v for k, v in state.items() if k != "result"}
    assert json.loads(json.dumps(plain)) == plain
    # Another control plane (as another process would open) resumes from it.
    with ControlPlane.open(db_url, nli=LexicalNLI()) as other:
        register_order_tools(other)
        again = fence(order_agent(other), control_plane=other, name="orders")
        done = other.resume(again, "thr_json", APPROVE)
    assert [(a.status, a.approver) for a in done.actions] == [("executed", "alice")]
    assert ORDERS[other] == [{"sku": "BT-105", "units": 120}]


def test_a_hand_over_given_as_a_model_is_kept_as_its_dict(cp: ControlPlane) -> None:
    agent = order_agent(cp)

    def as_model(state: FenceState) -> dict[str, Any]:
        return {"handover": Handover.model_validate(agent(state)["handover"])}

    graph = fence(as_model, control_plane=cp, name="orders")
    result = cp.run(graph, {"task": "Restock BT-105"}, thread_id="thr_model")
    assert result.status == "awaiting_grant"
    values = graph.get_state({"configurable": {"thread_id": "thr_model"}}).values
    assert isinstance(values["handover"], dict) and not isinstance(values["handover"], BaseModel)
    assert values["handover"]["action_intents"][0]["id"] == "order1"
