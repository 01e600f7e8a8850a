"""A ledger written before migration 0006 (entry format 1, no Merkle log) upgrades in
place: its entries keep their ids and hashes, become the first leaves of the log, its
runs get their record hashes, and new entries of those runs are of format 2."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import sqlalchemy as sa
from alembic import command

from assay import ControlPlane, _db
from assay.ledger import GENESIS_HASH, canonical_json, leaf_hash, verify_inclusion
from assay.ledger._hashing import dedup_key, entry_hash, entry_id_for, sha256_hex
from tests.ledger._tamper import tamper


def _old_ledger(engine: sa.Engine) -> dict[str, list[str]]:
    """Two runs written as the ledger wrote them before 0006, through its triggers."""
    written: dict[str, list[str]] = {}
    start = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
    for r, run_id in enumerate(("run_" + "a" * 32, "run_" + "b" * 32)):
        with engine.begin() as conn:
            conn.execute(
                sa.text(
                    "INSERT INTO ledger_runs (run_id, created_at, metadata_json, head_seq, "
                    "head_hash) VALUES (:r, :c, :m, 0, :g)"
                ),
                {"r": run_id, "c": _db.stored_timestamp(conn, start + timedelta(minutes=r)),
                 "m": '{"task":"old"}', "g": GENESIS_HASH},
            )  # fmt: skip
            prev = GENESIS_HASH
            written[run_id] = []
            for seq in range(1, 4):
                content = f"run {r} entry {seq}".encode()
                digest = sha256_hex(content)
                meta = {"n": seq}
                hashed = entry_hash(
                    run_id=run_id, seq=seq, kind="retrieval", source="doc", content_sha256=digest,
                    metadata=meta, prev_hash=prev,
                )  # fmt: skip
                key = dedup_key(
                    run_id=run_id, kind="retrieval", source="doc", content_sha256=digest,
                    metadata=meta,
                )  # fmt: skip
                conn.execute(
                    sa.text(
                        "INSERT INTO ledger_entries (entry_id, run_id, seq, kind, source, "
                        "content, is_text, content_sha256, metadata_json, prev_hash, entry_hash,"
                        " dedup_key, created_at) VALUES (:i, :r, :s, 'retrieval', 'doc', :c, "
                        ":t, :d, :m, :p, :h, :k, :w)"
                    ),
                    {"i": entry_id_for(hashed), "r": run_id, "s": seq, "c": content, "t": True,
                     "d": digest, "m": canonical_json(meta).decode(), "p": prev, "h": hashed,
                     "k": key,
                     "w": _db.stored_timestamp(conn, start + timedelta(minutes=r, seconds=seq))},
                )  # fmt: skip
                conn.execute(
                    sa.text(
                        "UPDATE ledger_runs SET head_seq = :s, head_hash = :h WHERE run_id = :r"
                    ),
                    {"s": seq, "h": hashed, "r": run_id},
                )
                written[run_id].append(entry_id_for(hashed))
                prev = hashed
    return written


def test_a_format_1_ledger_upgrades_and_keeps_every_id(empty_db_url: str) -> None:
    db_url = empty_db_url
    engine = _db.create_engine(db_url)
    try:
        _db.upgrade(engine, "0005_fence_runs")
        old = _old_ledger(engine)
        _db.upgrade(engine)
    finally:
        engine.dispose()
    with ControlPlane.open(db_url) as cp:
        assert cp.ledger.verify().ok
        first, second = old
        assert [e.id for e in cp.ledger.entries(first)] == old[first]
        # the runs' entries are the first leaves, run by run in creation order
        assert [e.leaf_index for e in cp.ledger.entries(first)] == [0, 1, 2]
        assert [e.leaf_index for e in cp.ledger.entries(second)] == [3, 4, 5]
        assert cp.ledger.tree_size() == 6
        newer = cp.ledger.append(first, kind="human_fact", source="reviewer", content="checked")
        assert (newer.seq, newer.leaf_index) == (4, 6)
        assert cp.ledger.verify().ok
        size, root = cp.ledger.root()
        for entry in cp.ledger.entries(first) + cp.ledger.entries(second):
            proof = cp.ledger.inclusion_proof(entry.id)
            verify_inclusion(
                leaf_hash(bytes.fromhex(entry.entry_hash)), entry.leaf_index, size,
                proof.hashes, root,
            )  # fmt: skip
        # the old run's metadata is covered from the migration on
        tamper(db_url, 'UPDATE ledger_runs SET metadata_json = \'{"task":"evil"}\'')
        report = cp.ledger.verify(first)
        assert not report.ok and "run record was edited" in (report.reason or "")


def test_downgrade_is_refused_once_format_2_entries_exist(db_url: str) -> None:
    with ControlPlane.open(db_url) as cp:
        run = cp.ledger.start_run()
        cp.ledger.append(run, kind="retrieval", source="s", content="x")
        try:
            with _db.write_transaction(cp.engine) as conn:
                command.downgrade(_db.alembic_config(conn), "0005_fence_runs")
        except RuntimeError as exc:
            assert "format 2" in str(exc)
        else:
            raise AssertionError("the downgrade went through")
        assert cp.ledger.verify().ok
