"""Batched appends and the ledger's cheap existence check, on SQLite and PostgreSQL.

A batch must be indistinguishable from the same appends made one by one (chain,
dedup, checks), except that it is one transaction: all of it or none of it.
"""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager
from datetime import UTC, datetime

import pytest
import sqlalchemy as sa
from sqlalchemy import event

from assay import ControlPlane, InvalidEntry, InvalidMetadata, UnknownKind, UnknownRun
from assay.ledger import GENESIS_HASH


@contextmanager
def counting(plane: ControlPlane) -> Generator[dict[str, int], None, None]:
    """Counts the statements and commits the control plane's engine runs."""
    counts = {"statements": 0, "commits": 0}

    def statement(*_: object) -> None:
        counts["statements"] += 1

    def commit(*_: object) -> None:
        counts["commits"] += 1

    event.listen(plane.engine, "before_cursor_execute", statement)
    event.listen(plane.engine, "commit", commit)
    try:
        yield counts
    finally:
        event.remove(plane.engine, "before_cursor_execute", statement)
        event.remove(plane.engine, "commit", commit)


def test_a_batch_chains_like_single_appends_in_one_commit(plane: ControlPlane) -> None:
    run = plane.ledger.start_run()
    first = plane.ledger.append(run, kind="tool_output", source="tool:a@1", content="EUR 380")
    with counting(plane) as counts, plane.ledger.batch(run) as batch:
        handover = batch.append(kind="handover", source="agent", content='{"claims":[]}')
        decision = batch.append(
            kind="gate_decision",
            source="assay.gate",
            content="accepted",
            metadata={"handover_id": handover.id},
        )
    assert counts["commits"] == 1
    assert (handover.seq, decision.seq) == (2, 3)
    assert handover.prev_hash == first.entry_hash
    assert decision.prev_hash == handover.entry_hash
    assert batch.written == [handover, decision]
    assert plane.ledger.entries(run) == [first, handover, decision]
    assert plane.ledger.run(run).head_hash == decision.entry_hash
    assert plane.ledger.verify(run).ok


def test_a_batch_deduplicates_like_append(plane: ControlPlane) -> None:
    run = plane.ledger.start_run()
    stored = plane.ledger.append(run, kind="verdict", source="verifier", content="entailed")
    with plane.ledger.batch(run) as batch:
        again = batch.append(kind="verdict", source="verifier", content="entailed")
        new = batch.append(kind="verdict", source="verifier", content="neutral")
        twice = batch.append(kind="verdict", source="verifier", content="neutral")
    assert again == stored
    assert twice == new
    assert batch.written == [new]
    assert [e.seq for e in plane.ledger.entries(run)] == [1, 2]


def test_an_exception_inside_the_block_writes_nothing(plane: ControlPlane) -> None:
    run = plane.ledger.start_run()
    with pytest.raises(RuntimeError, match="stop"), plane.ledger.batch(run) as batch:
        batch.append(kind="verdict", source="verifier", content="one")
        raise RuntimeError("stop")
    assert plane.ledger.entries(run) == []
    assert plane.ledger.run(run).head_hash == GENESIS_HASH


@pytest.mark.parametrize(
    ("bad", "error"),
    [
        ({"kind": "opinion", "source": "x", "content": "c"}, UnknownKind),
        ({"kind": "verdict", "source": "a\x00b", "content": "c"}, InvalidEntry),
        ({"kind": "verdict", "source": "x", "content": 3}, InvalidEntry),
        (
            {"kind": "verdict", "source": "x", "content": "c", "metadata": {"f": {1}}},
            InvalidMetadata,
        ),
    ],
)
def test_an_invalid_entry_fails_the_whole_batch(
    plane: ControlPlane, bad: dict[str, object], error: type[Exception]
) -> None:
    run = plane.ledger.start_run()
    with pytest.raises(error), plane.ledger.batch(run) as batch:
        batch.append(kind="verdict", source="verifier", content="fine")
        batch.append(**bad)  # type: ignore[arg-type]
    assert plane.ledger.entries(run) == []


def test_a_batch_for_an_unknown_run_is_refused(plane: ControlPlane) -> None:
    with pytest.raises(UnknownRun, match="run_missing"), plane.ledger.batch("run_missing"):
        pass
    with pytest.raises(UnknownRun), plane.ledger.batch(None):  # type: ignore[arg-type]
        pass


def test_a_closed_batch_refuses_appends(plane: ControlPlane) -> None:
    run = plane.ledger.start_run()
    with plane.ledger.batch(run) as batch:
        batch.append(kind="verdict", source="verifier", content="kept")
    with pytest.raises(InvalidEntry, match="closed"):
        batch.append(kind="verdict", source="verifier", content="late")
    assert len(plane.ledger.entries(run)) == 1


def test_require_run_asks_the_database_once_per_run(plane: ControlPlane) -> None:
    run = plane.ledger.start_run()
    with counting(plane) as counts:
        plane.ledger.require_run(run)
        plane.ledger.require_run(run)
    assert counts["statements"] == 0  # this ledger opened the run: it exists
    with pytest.raises(UnknownRun, match="run_missing"):
        plane.ledger.require_run("run_missing")
    with pytest.raises(UnknownRun):
        plane.ledger.require_run("run_missing")  # an unknown run is never remembered


def test_a_run_opened_elsewhere_is_found_once(plane: ControlPlane) -> None:
    with ControlPlane.open(plane.url) as other:
        run = other.ledger.start_run()
    with counting(plane) as counts:
        plane.ledger.require_run(run)
        first = counts["statements"]
        plane.ledger.require_run(run)
    assert first > 0 and counts["statements"] == first


def test_entries_of_an_empty_or_unknown_run(plane: ControlPlane) -> None:
    run = plane.ledger.start_run()
    assert plane.ledger.entries(run) == []
    assert plane.ledger.evidence(run) == []
    with pytest.raises(UnknownRun):
        plane.ledger.entries("run_missing")
    with pytest.raises(UnknownRun):  # the unknown run is reported before the bad kind
        plane.ledger.entries("run_missing", kinds=["opinion"])
    with pytest.raises(UnknownKind):
        plane.ledger.entries(run, kinds=["opinion"])
    with pytest.raises(UnknownKind):
        plane.ledger.entries(run, kinds="verdict")
    assert plane.ledger.entries(run, kinds=[]) == []


def test_a_run_started_in_a_batch_exists_only_with_its_entries(plane: ControlPlane) -> None:
    with plane.ledger.start_run_batch(metadata={"thread_id": "t1"}) as batch:
        task = batch.append(kind="human_fact", source="user:task", content="audit 1")
    assert plane.ledger.run(batch.run_id).metadata == {"thread_id": "t1"}
    assert plane.ledger.entries(batch.run_id) == [task]
    assert task.seq == 1 and task.prev_hash == GENESIS_HASH
    assert plane.ledger.verify(batch.run_id).ok
    with pytest.raises(RuntimeError), plane.ledger.start_run_batch() as failed:
        failed.append(kind="human_fact", source="user:task", content="audit 2")
        raise RuntimeError("the caller failed")
    with pytest.raises(UnknownRun):
        plane.ledger.run(failed.run_id)
    with pytest.raises(InvalidMetadata), plane.ledger.start_run_batch(metadata={"x": {1}}):
        pass


def test_rows_written_through_the_batch_share_its_fate(plane: ControlPlane) -> None:
    from assay.verifier._sql_cache import verifier_cache

    def row(key: str) -> dict[str, object]:
        return {
            "model_id": "m",
            "premise_sha256": key,
            "hypothesis_sha256": key,
            "logits_json": "[]",
            "created_at": datetime.now(UTC),
        }

    run = plane.ledger.start_run()
    with plane.ledger.batch(run) as batch:
        batch.connection.execute(verifier_cache.insert(), row("kept"))
        batch.append(kind="verdict", source="verifier", content="kept")
    with pytest.raises(RuntimeError), plane.ledger.batch(run) as batch:
        batch.connection.execute(verifier_cache.insert(), row("dropped"))
        raise RuntimeError("the caller failed")
    with plane.engine.connect() as conn:
        keys = conn.execute(sa.select(verifier_cache.c.premise_sha256)).scalars().all()
    assert keys == ["kept"]
    with pytest.raises(InvalidEntry, match="closed"):
        _ = batch.connection
