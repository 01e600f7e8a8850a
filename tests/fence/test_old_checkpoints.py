"""Checkpoints an earlier version wrote are read back and resumed; one that cannot be
read is an ``UnreadableCheckpoint`` naming its thread, and nothing runs. Each test
pauses a refund for a grant on a real SQLite file and a real PostgreSQL database, then
rewrites the thread's checkpoint in the control plane's own saver as an earlier
version stored it (or breaks it), and reads it back through ``desk_cp.status`` and
``desk_cp.resume``. The stand-in NLI model is used: the model is not the subject here."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
import sqlalchemy as sa

from assay import ControlPlane, UnreadableCheckpoint
from assay.fence import FencedGraph, RunResult, fence, react_agent, thread_row
from assay.fence._result import result_from_json, result_to_json
from assay.testing import ScriptedChatModel, call, claim, hand_over, intent
from tests.fence import _refunds

TASK = {"task": "The customer returned order ORD-1042: refund it."}
REFUND = {"order": "ORD-1042", "amount": 40.0}
PAID = "Order ORD-1042 was paid {lookup_order[amount]} {lookup_order[currency]}."


def _desk(desk_cp: ControlPlane, *, refused_first: bool = False) -> FencedGraph:
    """A desk whose hand-over proposes the refund as an action intent (the shape
    every version wrote); with ``refused_first``, a first round the gate refuses."""
    wrong = [
        call("lookup_order", order="ORD-1042"),
        hand_over(claim("Order ORD-1042 was paid 41.00 EUR.", cites="lookup_order")),
    ]
    script = [
        *(wrong if refused_first else []),
        call("lookup_order", order="ORD-1042"),
        hand_over(
            claim(PAID, cites="lookup_order"), action_intents=[intent("issue_refund", REFUND)]
        ),
    ]
    agent = react_agent(ScriptedChatModel(script=script), desk_cp, tools=["lookup_order"])
    return fence(agent, control_plane=desk_cp, name="refund-desk", max_evidence_rounds=1)


def _rewrite(
    desk_cp: ControlPlane, thread_id: str, change: Callable[[dict[str, Any]], None]
) -> None:
    """Store the thread's latest checkpoint again with ``change`` applied to its
    values, as the saver stores any checkpoint (changed channels get new versions)."""
    saver = desk_cp.checkpointer
    config: Any = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
    saved = saver.get_tuple(config)
    assert saved is not None
    checkpoint: Any = copy.deepcopy(saved.checkpoint)
    values: dict[str, Any] = checkpoint["channel_values"]
    before = copy.deepcopy(values)
    change(values)
    versions: dict[str, Any] = checkpoint["channel_versions"]
    for gone in set(before) - set(values):
        versions.pop(gone, None)
    changed = [k for k in values if k not in before or values[k] != before[k]]
    changed += [k for k in values if type(values[k]) is not type(before.get(k))]
    for key in set(changed):
        versions[key] = saver.get_next_version(versions.get(key), None)
    saver.put(
        saved.parent_config or config,
        checkpoint,
        saved.metadata,
        {k: versions[k] for k in set(changed)},
    )


def _as_an_earlier_version_wrote(values: dict[str, Any]) -> None:
    """The state before held calls, per-round reasons and policy reasons: no
    ``round_reasons``, ``continuation`` or ``returned``, pending calls and the result
    without ``policy``, the result without ``round_reasons``."""
    for key in ("round_reasons", "continuation", "returned"):
        values.pop(key, None)
    values["pending"] = [{k: v for k, v in p.items() if k != "policy"} for p in values["pending"]]
    result = {k: v for k, v in values["result"].items() if k != "round_reasons"}
    result["pending_grants"] = [
        {k: v for k, v in p.items() if k != "policy"} for p in result["pending_grants"]
    ]
    values["result"] = result


def _as_a_record(values: dict[str, Any]) -> None:
    """The result as the record itself, which earlier versions checkpointed."""
    values["result"] = result_from_json(values["result"])


@pytest.mark.parametrize("shape", [_as_an_earlier_version_wrote, _as_a_record])
def test_a_run_paused_by_an_earlier_version_is_read_and_resumed(
    desk_cp: ControlPlane, shape: Callable[[dict[str, Any]], None]
) -> None:
    graph = _desk(desk_cp)
    paused = desk_cp.run(graph, TASK, thread_id="old")
    assert paused.status == "awaiting_grant"
    _rewrite(desk_cp, "old", shape)

    shown = desk_cp.status("old").result
    assert shown is not None and shown.status == "awaiting_grant"
    assert [p.args for p in shown.pending_grants] == [REFUND]

    done = desk_cp.resume(graph, "old", {"approve": True, "approver": "alice"})

    assert done.status == "answered" and _refunds.REFUNDS == [REFUND]
    assert [(a.intent_id, a.status) for a in done.actions] == [("a1", "executed")]


def test_every_rounds_reasons_survive_the_checkpoint(desk_cp: ControlPlane) -> None:
    paused = desk_cp.run(_desk(desk_cp, refused_first=True), TASK, thread_id="rounds")
    assert paused.status == "awaiting_grant"
    [first] = paused.round_reasons
    assert [e["code"] for e in first.errors] == ["unverified_value"]

    shown = desk_cp.status("rounds").result

    assert shown is not None and shown.round_reasons == paused.round_reasons
    assert result_from_json(result_to_json(paused)) == paused


def _row_status(desk_cp: ControlPlane, thread_id: str) -> str:
    """The thread's status as its row holds it, read without its checkpoint."""
    row = thread_row(desk_cp.engine, thread_id)
    assert row is not None
    return row.status


def _not_a_result(values: dict[str, Any]) -> None:
    values["result"] = {**values["result"], "colour": "red"}


def _not_a_call(values: dict[str, Any]) -> None:
    values["pending"] = [{"intent_id": "a1", "tool": 7}]


def test_a_result_in_no_known_shape_is_unreadable_and_nothing_runs(desk_cp: ControlPlane) -> None:
    graph = _desk(desk_cp)
    desk_cp.run(graph, TASK, thread_id="broken")
    _rewrite(desk_cp, "broken", _not_a_result)

    with pytest.raises(UnreadableCheckpoint, match="'colour'") as shown:
        desk_cp.status("broken")
    assert shown.value.thread_id == "broken" and shown.value.code == "unreadable_checkpoint"
    with pytest.raises(UnreadableCheckpoint, match="thread 'broken'"):
        desk_cp.resume(graph, "broken", {"approve": True, "approver": "alice"})

    assert _refunds.REFUNDS == []
    assert _row_status(desk_cp, "broken") == "awaiting_grant"


def test_pending_calls_in_no_known_shape_are_unreadable(desk_cp: ControlPlane) -> None:
    graph = _desk(desk_cp)
    desk_cp.run(graph, TASK, thread_id="calls")
    _rewrite(desk_cp, "calls", _not_a_call)

    with pytest.raises(UnreadableCheckpoint, match="pending calls") as raised:
        desk_cp.resume(graph, "calls", {"approve": True, "approver": "alice"})

    assert raised.value.thread_id == "calls" and _refunds.REFUNDS == []
    assert _row_status(desk_cp, "calls") == "awaiting_grant"


def test_bytes_that_do_not_decode_are_unreadable(desk_cp: ControlPlane, db_url: str) -> None:
    graph = _desk(desk_cp)
    desk_cp.run(graph, TASK, thread_id="bytes")
    # 0xc1 is the one byte msgpack never uses.
    statement = (
        "UPDATE checkpoints SET checkpoint = X'c1', type = 'msgpack' WHERE thread_id = :t"
        if db_url.startswith("sqlite")
        else "UPDATE checkpoint_blobs SET blob = '\\xc1'::bytea, type = 'msgpack' "
        "WHERE thread_id = :t AND channel = 'result'"
    )
    engine = sa.create_engine(db_url)
    try:
        with engine.begin() as conn:
            assert conn.execute(sa.text(statement), {"t": "bytes"}).rowcount > 0
    finally:
        engine.dispose()

    with pytest.raises(UnreadableCheckpoint, match="cannot be decoded") as raised:
        desk_cp.resume(graph, "bytes", {"approve": True, "approver": "alice"})

    assert raised.value.thread_id == "bytes" and _refunds.REFUNDS == []
    with pytest.raises(UnreadableCheckpoint, match="thread 'bytes'"):
        desk_cp.status("bytes")
    assert _row_status(desk_cp, "bytes") == "awaiting_grant"


def test_a_result_that_is_no_mapping_is_unreadable() -> None:
    result = RunResult(run_id="run_1", thread_id="t", status="answered", answer="ok")
    data = result_to_json(result)
    assert result_from_json(data) == result
    with pytest.raises(UnreadableCheckpoint, match="not a run status"):
        result_from_json({**data, "status": "done"})
    with pytest.raises(UnreadableCheckpoint, match="'run_id'"):
        result_from_json({k: v for k, v in data.items() if k != "run_id"})
