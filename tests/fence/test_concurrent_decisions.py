"""A decision on a paused call is taken once. A second decision on it is refused with
an error naming the first (who, when, what); of two reviewers deciding at once, on
SQLite and on PostgreSQL, exactly one decision takes effect, the other is told
which, and the irreversible call runs at most once."""

from __future__ import annotations

import copy
import json
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import sqlalchemy as sa
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.types import Command
from pydantic import JsonValue

from assay import ControlPlane
from assay.errors import AlreadyDecided, InvalidDecision
from assay.fence import fence
from assay.fence._decisions import DecisionStore
from assay.fence._review import IntentDecision, PendingCall
from assay.tool_bus import args_sha256
from assay.verifier import LexicalNLI
from tests.fence.test_decisions import ORDERS, order_agent, register_order_tools

THREAD = "decided-thread"
ISO_UTC = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z"
ALICE = {"approve": True, "approver": "alice", "reason": "stock is low"}
BOB_APPROVES = {"approve": True, "approver": "bob"}
BOB_DENIES = {"approve": False, "approver": "bob", "reason": "wait for the audit"}


@pytest.fixture
def cp(db_url: str) -> Iterator[ControlPlane]:
    with ControlPlane.open(db_url, nli=LexicalNLI()) as plane:
        register_order_tools(plane)
        yield plane


def _orders(cp: ControlPlane) -> list[dict[str, Any]]:
    return ORDERS[cp]


def _paused(cp: ControlPlane) -> tuple[Any, RunnableConfig, str]:
    """A fenced graph on the durable checkpointer paused for a grant: the graph, the
    config naming the paused checkpoint itself, and the run id."""
    graph = fence(order_agent(cp), control_plane=cp, name="orders")
    config: RunnableConfig = {"configurable": {"thread_id": THREAD}}
    state = graph.invoke({"task": "Restock BT-105"}, config)
    assert state["result"].status == "awaiting_grant", state["result"].errors
    snapshot = graph.get_state(config)
    return graph, snapshot.config, state["run_id"]


def _rows(cp: ControlPlane, sql: str) -> list[Any]:
    with cp.engine.connect() as conn:
        return list(conn.execute(sa.text(sql)).all())


def _call(intent_id: str = "order1", run_id: str = "run_x") -> PendingCall:
    args: dict[str, JsonValue] = {"sku": "BT-105", "units": 120}
    return PendingCall(
        intent_id=intent_id,
        tool="place_order",
        version="1.0.0",
        args=args,
        args_sha256=args_sha256(args),
        call_id=f"intent:{run_id}/{intent_id}",
        depends_on=["c1"],
        claims=[],
    )


# --- the store ------------------------------------------------------------------------


def test_the_store_keeps_the_first_decision_and_names_it(plane: ControlPlane) -> None:
    moment = datetime(2030, 1, 2, 3, 4, 5, 600_000, tzinfo=UTC)
    store = DecisionStore(plane.engine, clock=lambda: moment)
    first = store.record("run_x", _call(), IntentDecision(approve=False, approver="dave"))
    assert (first.approve, first.approver, first.reason, first.decided_at) == (
        False,
        "dave",
        None,
        moment,
    )
    later = DecisionStore(plane.engine, clock=lambda: moment + timedelta(hours=1))
    with pytest.raises(AlreadyDecided) as refused:
        later.record("run_x", _call(), IntentDecision(approve=True, approver="carol"))
    message = str(refused.value)
    assert "denied by 'dave' at 2030-01-02T03:04:05.600000Z (no reason given)" in message
    assert refused.value.decision == {
        "intent_id": "order1",
        "call_id": "intent:run_x/order1",
        "approve": False,
        "approver": "dave",
        "reason": None,
        "decided_at": "2030-01-02T03:04:05.600000Z",
    }
    assert isinstance(refused.value, InvalidDecision)  # a usage error: nothing was done
    assert store.for_run("run_x") == {"order1": first}
    assert store.for_calls(["intent:run_x/order1", "intent:run_x/none"]) == {
        "intent:run_x/order1": first
    }


def test_the_same_decision_again_is_refused_by_record_but_found_by_record_all(
    plane: ControlPlane,
) -> None:
    """``record`` refuses any second row; ``record_all`` (what the grant node uses)
    recognises its own decision replayed and refuses only a different one, writing
    nothing for any call when one of them was decided otherwise."""
    store = DecisionStore(plane.engine)
    alice = IntentDecision(approve=True, approver="alice", reason="ok")
    [stored] = store.record_all("run_x", [(_call(), alice)])
    with pytest.raises(AlreadyDecided, match=r"approved by 'alice'.*reason: 'ok'"):
        store.record("run_x", _call(), alice)
    assert store.record_all("run_x", [(_call(), alice)]) == [stored]
    bob = IntentDecision(approve=True, approver="bob")
    with pytest.raises(AlreadyDecided, match="'alice'"):
        store.record_all("run_x", [(_call("order2"), bob), (_call(), bob)])
    assert set(store.for_run("run_x")) == {"order1"}  # order2 was not written either
    assert store.rival([(_call(), alice), (_call("order2"), bob)]) is None
    assert store.rival([(_call("order2"), bob), (_call(), bob)]) == stored


@pytest.mark.parametrize(
    "value",
    [{"approve": "yes", "approver": "alice"}, {"decisions": {"ghost": ALICE}}, "approve"],
)
def test_a_malformed_decision_writes_no_decision(cp: ControlPlane, value: object) -> None:
    graph, at_pause, run_id = _paused(cp)
    state = graph.invoke(Command(resume=value), at_pause)
    assert state["__interrupt__"][0].value["refused"]["code"] == "invalid_decision"
    assert DecisionStore(cp.engine).for_run(run_id) == {}
    assert cp.ledger.entries(run_id, kinds=["grant"]) == [] and _orders(cp) == []


# --- two reviewers at once ------------------------------------------------------------


def _holding(saver: BaseCheckpointSaver[Any], hook: Callable[[], object]) -> Any:
    """``saver`` on the same connection, calling ``hook`` once, right after it first
    loads a checkpoint: where an invocation has read the paused run and not yet acted
    on it. (The same shallow clone LangGraph's ``with_allowlist`` makes.)"""
    fired: list[bool] = []

    class Holding(type(saver)):  # type: ignore[misc]  # pyright: ignore[reportUntypedBaseClass]
        def get_tuple(self, config: RunnableConfig) -> Any:
            found = super().get_tuple(config)
            if not fired:
                fired.append(True)
                hook()
            return found

    clone = copy.copy(saver)
    clone.__class__ = Holding
    return clone


def _reviewers(
    stack: ExitStack, db_url: str, orders: list[dict[str, Any]], hooks: list[Callable[[], object]]
) -> list[Any]:
    """One fenced graph per hook, each on its own control plane (engine and
    checkpointer, as another process would have); orders any of them places land in
    ``orders``."""
    graphs: list[Any] = []
    for hook in hooks:
        plane = stack.enter_context(ControlPlane.open(db_url, nli=LexicalNLI()))
        register_order_tools(plane, orders)
        saver = _holding(plane.checkpointer, hook)
        graphs.append(
            fence(order_agent(plane), control_plane=plane, name="orders", checkpointer=saver)
        )
    return graphs


def _in_threads(calls: list[Callable[[], Any]]) -> list[Any]:
    """Run each call in its own thread; what each returned or raised, in order."""
    outcomes: list[Any] = [None] * len(calls)

    def run(i: int) -> None:
        try:
            outcomes[i] = calls[i]()
        except Exception as exc:  # handed to the test's thread
            outcomes[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes


def _race(
    cp: ControlPlane, db_url: str, config: RunnableConfig, values: list[Any], *, meet: bool
) -> list[Any]:
    """Each value resumed by its own reviewer in its own thread. With ``meet``, none
    goes on until all of them have read the paused run, so every one of them takes
    its decision to the grant node; without, they interleave as they will."""
    met = threading.Barrier(len(values), timeout=120)
    hooks: list[Callable[[], object]] = [met.wait if meet else lambda: None for _ in values]
    with ExitStack() as stack:
        graphs = _reviewers(stack, db_url, _orders(cp), hooks)
        return _in_threads(
            [
                lambda g=graph, v=value: g.invoke(Command(resume=v), config)
                for graph, value in zip(graphs, values, strict=True)
            ]
        )


def _winner(cp: ControlPlane) -> Any:
    [row] = _rows(cp, "SELECT approver, approve, reason FROM fence_decisions")
    return row


def test_a_decision_after_another_names_the_first(cp: ControlPlane, db_url: str) -> None:
    """Bob read the paused run, then Alice's decision went through: Bob's resume is
    refused, and the error names Alice's decision (who, when, what, why)."""
    graph, config, run_id = _paused(cp)
    read, alice_done = threading.Event(), threading.Event()

    def bob_waits() -> None:
        read.set()
        alice_done.wait(timeout=120)

    with ExitStack() as stack:
        [bobs] = _reviewers(stack, db_url, _orders(cp), [bob_waits])

        def alice() -> Any:
            read.wait(timeout=120)
            try:
                return graph.invoke(Command(resume=ALICE), config)
            finally:
                alice_done.set()

        done, refused = _in_threads(
            [alice, lambda: bobs.invoke(Command(resume=BOB_DENIES), config)]
        )
    assert isinstance(refused, AlreadyDecided), refused
    [action] = done["result"].actions
    assert (action.status, action.approver) == ("executed", "alice")
    message = str(refused)
    assert "'order1'" in message and "approved by 'alice'" in message
    assert "reason: 'stock is low'" in message and re.search(ISO_UTC, message)
    assert refused.decision["approver"] == "alice" and refused.decision["approve"] is True
    assert refused.decision["call_id"] == f"intent:{run_id}/order1"
    assert _orders(cp) == [{"sku": "BT-105", "units": 120}]
    assert [r.approver for r in _rows(cp, "SELECT approver FROM fence_decisions")] == ["alice"]
    assert len(_rows(cp, "SELECT grant_id FROM tool_grants")) == 1
    assert [e for e in cp.ledger.entries(run_id, kinds=["grant"]) if "denied" in e.text] == []
    [rival] = cp.ledger.entries(run_id, kinds=["error"])
    body = json.loads(rival.text)
    assert rival.metadata["code"] == body["code"] == "already_decided"
    assert (body["attempted"]["approver"], body["standing"]["approver"]) == ("bob", "alice")


@pytest.mark.parametrize(
    "rival", [BOB_APPROVES, BOB_DENIES], ids=["approve-vs-approve", "approve-vs-deny"]
)
def test_of_two_decisions_at_once_exactly_one_takes_effect(
    cp: ControlPlane, db_url: str, rival: dict[str, Any]
) -> None:
    """Both reviewers have read the paused run when they decide: whichever decision
    is stored first stands, the other is refused naming it, nothing is done twice."""
    _, config, run_id = _paused(cp)
    outcomes = _race(cp, db_url, config, [ALICE, rival], meet=True)
    refused = [o for o in outcomes if isinstance(o, AlreadyDecided)]
    finished = [o for o in outcomes if isinstance(o, dict)]
    assert (len(refused), len(finished)) == (1, 1), outcomes
    winner = _winner(cp)
    assert refused[0].decision["approver"] == winner.approver
    assert refused[0].decision["approve"] == bool(winner.approve)
    verb = "approved" if winner.approve else "denied"
    assert f"{verb} by {winner.approver!r}" in str(refused[0])
    [action] = finished[0]["result"].actions
    grants = [g.approver for g in _rows(cp, "SELECT approver FROM tool_grants")]
    denials = [e for e in cp.ledger.entries(run_id, kinds=["grant"]) if "denied" in e.text]
    if winner.approve:
        assert (action.status, action.approver) == ("executed", winner.approver)
        assert _orders(cp) == [{"sku": "BT-105", "units": 120}]
        assert grants == [winner.approver] and denials == []
    else:
        assert (action.status, action.approver) == ("denied", "bob")
        assert _orders(cp) == [] and grants == [] and len(denials) == 1


def test_the_same_decision_twice_at_once_is_one_decision(cp: ControlPlane, db_url: str) -> None:
    """Two processes apply Alice's decision at once (a retried request): the second
    finds it already stored as its own, so neither is refused, and it runs once."""
    _, config, _ = _paused(cp)
    outcomes = _race(cp, db_url, config, [ALICE, ALICE], meet=True)
    assert all(isinstance(o, dict) for o in outcomes), outcomes
    for outcome in outcomes:
        [action] = outcome["result"].actions
        assert (action.status, action.approver) == ("executed", "alice")
    assert _orders(cp) == [{"sku": "BT-105", "units": 120}]
    assert len(_rows(cp, "SELECT call_id FROM fence_decisions")) == 1
    assert len(_rows(cp, "SELECT grant_id FROM tool_grants")) == 1


def test_however_two_decisions_interleave_one_stands_and_both_callers_learn_it(
    cp: ControlPlane, db_url: str
) -> None:
    """Without a meeting point the later caller may find the run already past its
    pause (LangGraph then hands back the outcome) or still at it (refused): either
    way it learns whose decision stands, and the order is placed once."""
    _, config, _ = _paused(cp)
    outcomes = _race(cp, db_url, config, [ALICE, BOB_APPROVES], meet=False)
    winner = _winner(cp)
    for outcome in outcomes:
        if isinstance(outcome, AlreadyDecided):
            assert outcome.decision["approver"] == winner.approver
        else:
            assert isinstance(outcome, dict), outcome
            [action] = outcome["result"].actions
            assert (action.status, action.approver) == ("executed", winner.approver)
    assert _orders(cp) == [{"sku": "BT-105", "units": 120}]
    assert [g.approver for g in _rows(cp, "SELECT approver FROM tool_grants")] == [winner.approver]
