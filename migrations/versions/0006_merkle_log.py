"""Hash everything stored, and keep a Merkle log over every ledger entry.

* ``ledger_entries.format``: 1 for entries written before this revision, 2 for every
  entry written from now on. A format-2 entry's hash also covers its content's type,
  its creation time and its run's record (``ledger_runs.run_hash``: the run's id,
  creation time and metadata). Format-1 entries keep their hashes (they are cited by
  id) and are verified by the rule they were written under.
* ``ledger_runs.run_hash``: computed here for every existing run from its row as it
  stands, so a later edit of a run's metadata or creation time is detected; an edit
  made before this revision cannot be.
* ``ledger_entries.leaf_index`` / ``subtrees``: each entry is a leaf of an RFC 6962
  Merkle tree over the whole database in append order (leaf = SHA-256(0x00 ‖ entry
  hash)); ``subtrees`` holds the hashes of the complete subtrees that end at the
  leaf, level 0 first, so any proof reads O(log n) rows. Existing entries become
  leaves run by run, in the order the runs were created, each run's in seq order.
* ``ledger_tree``: one row, the tree's size and frontier.

The triggers are rebuilt so that the database holds every client to this: an entry
is inserted only as format 2, as its run's next link and as the log's next leaf
(both read from the stored entries, so one transaction may insert several entries);
a run's head and the log's size only move forward, to where the stored entries put
them; a run's hash never changes.

Downgrading is refused once format-2 entries exist: format 1 cannot express them.

Revision ID: 0006_merkle_log
Revises: 0005_fence_runs
Create Date: 2026-12-01
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

from assay.ledger._hashing import run_hash
from assay.ledger._merkle import Frontier, leaf_hash

revision: str = "0006_merkle_log"
down_revision: str | None = "0005_fence_runs"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_GENESIS = "0" * 64

# An entry extends its run's chain (the next seq, linked to the entry before it, or
# to the genesis hash for seq 1) and the log (the next leaf index). Both are read from
# the stored entries through their unique indexes, so a transaction may insert several
# entries before it moves the run's head and the log's size once.
_SQLITE_BAD_ENTRY = f"""
    NEW.format IS NOT 2
    OR NOT EXISTS (SELECT 1 FROM ledger_runs r WHERE r.run_id = NEW.run_id)
    OR NEW.seq IS NOT (
        SELECT COALESCE(MAX(e.seq), 0) + 1 FROM ledger_entries e WHERE e.run_id = NEW.run_id)
    OR NEW.prev_hash IS NOT COALESCE(
        (SELECT e.entry_hash FROM ledger_entries e
         WHERE e.run_id = NEW.run_id AND e.seq = NEW.seq - 1),
        CASE WHEN NEW.seq = 1 THEN '{_GENESIS}' END)
    OR NEW.leaf_index IS NOT (SELECT COALESCE(MAX(e.leaf_index), -1) + 1 FROM ledger_entries e)
    OR NEW.subtrees IS NULL OR length(NEW.subtrees) < 32
"""

_SQLITE_TRIGGERS = [
    """
    CREATE TRIGGER ledger_entries_refuse_update BEFORE UPDATE ON ledger_entries
    BEGIN SELECT RAISE(ABORT, 'assay: append-only: ledger_entries rows cannot be updated'); END
    """,
    f"""
    CREATE TRIGGER ledger_entries_next_link BEFORE INSERT ON ledger_entries
    WHEN {_SQLITE_BAD_ENTRY}
    BEGIN SELECT RAISE(ABORT,
        'assay: append-only: an entry must extend its run''s chain and the log');
    END
    """,
    """
    CREATE TRIGGER ledger_runs_head_only BEFORE UPDATE ON ledger_runs
    WHEN NEW.run_id IS NOT OLD.run_id
      OR NEW.created_at IS NOT OLD.created_at
      OR NEW.metadata_json IS NOT OLD.metadata_json
      OR NEW.run_hash IS NOT OLD.run_hash
      OR NEW.head_seq <= OLD.head_seq
      OR NEW.head_seq IS NOT (
          SELECT MAX(e.seq) FROM ledger_entries e WHERE e.run_id = NEW.run_id)
      OR NOT EXISTS (
          SELECT 1 FROM ledger_entries e
          WHERE e.run_id = NEW.run_id AND e.seq = NEW.head_seq AND e.entry_hash = NEW.head_hash
      )
    BEGIN SELECT RAISE(ABORT,
        'assay: append-only: a run''s head only moves forward to its last entry');
    END
    """,
    """
    CREATE TRIGGER ledger_entries_refuse_replace BEFORE INSERT ON ledger_entries
    WHEN EXISTS (SELECT 1 FROM ledger_entries x WHERE x.entry_id = NEW.entry_id
        OR (x.run_id = NEW.run_id AND x.seq = NEW.seq)
        OR (x.run_id = NEW.run_id AND x.dedup_key = NEW.dedup_key)
        OR x.entry_hash = NEW.entry_hash OR x.leaf_index = NEW.leaf_index)
    BEGIN SELECT RAISE(ABORT,
        'assay: row exists: an insert into ledger_entries would replace an existing row');
    END
    """,
    """
    CREATE TRIGGER ledger_tree_refuse_delete BEFORE DELETE ON ledger_tree
    BEGIN SELECT RAISE(ABORT, 'assay: append-only: ledger_tree rows cannot be deleted'); END
    """,
    """
    CREATE TRIGGER ledger_tree_one_row BEFORE INSERT ON ledger_tree
    WHEN EXISTS (SELECT 1 FROM ledger_tree)
    BEGIN SELECT RAISE(ABORT, 'assay: append-only: the log has one tree row'); END
    """,
    """
    CREATE TRIGGER ledger_tree_grow_only BEFORE UPDATE ON ledger_tree
    WHEN NEW.id IS NOT OLD.id
      OR NEW.size <= OLD.size
      OR NEW.size IS NOT (SELECT COALESCE(MAX(e.leaf_index), -1) + 1 FROM ledger_entries e)
    BEGIN SELECT RAISE(ABORT, 'assay: append-only: the log only grows to its stored leaves');
    END
    """,
]

#: The triggers of 0001 and 0004 that this revision rebuilds (SQLite).
_SQLITE_REPLACED = [
    "ledger_entries_refuse_update",
    "ledger_entries_next_link",
    "ledger_runs_head_only",
    "ledger_entries_refuse_replace",
]

_POSTGRES_DDL = [
    """
    CREATE OR REPLACE FUNCTION assay_ledger_next_link() RETURNS trigger
    LANGUAGE plpgsql AS $$
    DECLARE
        last_seq integer;
        last_hash text;
        last_leaf bigint;
    BEGIN
        -- The run exists (its foreign key says so); its last entry is one index probe,
        -- the log's last leaf another.
        SELECT e.seq, e.entry_hash INTO last_seq, last_hash FROM ledger_entries e
        WHERE e.run_id = NEW.run_id ORDER BY e.seq DESC LIMIT 1;
        IF NOT FOUND THEN
            last_seq := 0;
            last_hash := repeat('0', 64);
        END IF;
        SELECT max(e.leaf_index) INTO last_leaf FROM ledger_entries e;
        IF NEW.format IS DISTINCT FROM 2
           OR NEW.seq IS DISTINCT FROM last_seq + 1
           OR NEW.prev_hash IS DISTINCT FROM last_hash
           OR NEW.leaf_index IS DISTINCT FROM COALESCE(last_leaf, -1) + 1
           OR NEW.subtrees IS NULL OR length(NEW.subtrees) < 32 THEN
            RAISE EXCEPTION
                'assay: append-only: an entry must extend its run''s chain and the log'
                USING ERRCODE = 'insufficient_privilege';
        END IF;
        RETURN NEW;
    END $$
    """,
    """
    CREATE OR REPLACE FUNCTION assay_ledger_head_only() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
        IF NEW.run_id IS DISTINCT FROM OLD.run_id
           OR NEW.created_at IS DISTINCT FROM OLD.created_at
           OR NEW.metadata_json IS DISTINCT FROM OLD.metadata_json
           OR NEW.run_hash IS DISTINCT FROM OLD.run_hash
           OR NEW.head_seq <= OLD.head_seq
           OR NEW.head_seq IS DISTINCT FROM (
               SELECT MAX(e.seq) FROM ledger_entries e WHERE e.run_id = NEW.run_id)
           OR NOT EXISTS (
               SELECT 1 FROM ledger_entries e
               WHERE e.run_id = NEW.run_id AND e.seq = NEW.head_seq
                 AND e.entry_hash = NEW.head_hash
           ) THEN
            RAISE EXCEPTION
                'assay: append-only: a run''s head only moves forward to its last entry'
                USING ERRCODE = 'insufficient_privilege';
        END IF;
        RETURN NEW;
    END $$
    """,
    """
    CREATE OR REPLACE FUNCTION assay_ledger_tree_grow() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'INSERT' THEN
            IF EXISTS (SELECT 1 FROM ledger_tree) THEN
                RAISE EXCEPTION 'assay: append-only: the log has one tree row'
                    USING ERRCODE = 'insufficient_privilege';
            END IF;
            RETURN NEW;
        END IF;
        IF NEW.id IS DISTINCT FROM OLD.id
           OR NEW.size <= OLD.size
           OR NEW.size IS DISTINCT FROM (
               SELECT COALESCE(MAX(e.leaf_index), -1) + 1 FROM ledger_entries e) THEN
            RAISE EXCEPTION 'assay: append-only: the log only grows to its stored leaves'
                USING ERRCODE = 'insufficient_privilege';
        END IF;
        RETURN NEW;
    END $$
    """,
    """
    CREATE TRIGGER ledger_tree_grow_only BEFORE INSERT OR UPDATE ON ledger_tree
    FOR EACH ROW EXECUTE FUNCTION assay_ledger_tree_grow()
    """,
    """
    CREATE TRIGGER ledger_tree_refuse_delete BEFORE DELETE ON ledger_tree
    FOR EACH ROW EXECUTE FUNCTION assay_refuse_change()
    """,
    """
    CREATE TRIGGER ledger_tree_refuse_truncate BEFORE TRUNCATE ON ledger_tree
    FOR EACH STATEMENT EXECUTE FUNCTION assay_refuse_change()
    """,
]


def _utc(value: datetime | str) -> datetime:
    if isinstance(value, str):  # SQLite through a plain text() query
        value = datetime.fromisoformat(value)
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def _backfill(conn: sa.Connection) -> Frontier:
    """Give every existing run its hash and every existing entry its leaf."""
    frontier = Frontier()
    runs = conn.execute(
        sa.text(
            "SELECT run_id, created_at, metadata_json FROM ledger_runs ORDER BY created_at, run_id"
        )
    ).all()
    for run_id, created_at, metadata_json in runs:
        metadata = json.loads(metadata_json)
        record = run_hash(
            run_id=run_id,
            created_at=_utc(created_at),
            metadata=metadata,
            metadata_text=metadata_json,
        )
        conn.execute(
            sa.text("UPDATE ledger_runs SET run_hash = :h WHERE run_id = :r"),
            {"h": record, "r": run_id},
        )
        rows = conn.execute(
            sa.text(
                "SELECT entry_id, entry_hash FROM ledger_entries WHERE run_id = :r ORDER BY seq"
            ),
            {"r": run_id},
        ).all()
        for entry_id, entry_hash in rows:
            index = frontier.size
            subtrees = b"".join(frontier.append(leaf_hash(bytes.fromhex(entry_hash))))
            conn.execute(
                sa.text(
                    "UPDATE ledger_entries SET leaf_index = :i, subtrees = :s WHERE entry_id = :e"
                ),
                {"i": index, "s": subtrees, "e": entry_id},
            )
    return frontier


def upgrade() -> None:
    conn = op.get_bind()
    postgres = conn.dialect.name == "postgresql"
    if postgres:
        op.execute("ALTER TABLE ledger_entries DISABLE TRIGGER USER")
        op.execute("ALTER TABLE ledger_runs DISABLE TRIGGER USER")
    else:
        for name in _SQLITE_REPLACED:
            op.execute(f"DROP TRIGGER {name}")
    op.add_column(
        "ledger_runs", sa.Column("run_hash", sa.String(64), nullable=False, server_default="")
    )
    op.add_column(
        "ledger_entries", sa.Column("format", sa.Integer(), nullable=False, server_default="1")
    )
    op.add_column(
        "ledger_entries",
        sa.Column("leaf_index", sa.BigInteger(), nullable=False, server_default="-1"),
    )
    op.add_column(
        "ledger_entries",
        sa.Column("subtrees", sa.LargeBinary(), nullable=False, server_default=sa.text("''")),
    )
    op.create_table(
        "ledger_tree",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("frontier", sa.LargeBinary(), nullable=False),
    )
    frontier = _backfill(conn)
    conn.execute(
        sa.text("INSERT INTO ledger_tree (id, size, frontier) VALUES (1, :n, :f)"),
        {"n": frontier.size, "f": frontier.to_bytes()},
    )
    op.create_index("uq_ledger_entries_leaf", "ledger_entries", ["leaf_index"], unique=True)
    if postgres:
        for column in ("run_hash",):
            op.execute(f"ALTER TABLE ledger_runs ALTER COLUMN {column} DROP DEFAULT")
        for column in ("format", "leaf_index", "subtrees"):
            op.execute(f"ALTER TABLE ledger_entries ALTER COLUMN {column} DROP DEFAULT")
        for statement in _POSTGRES_DDL:
            op.execute(statement)
        op.execute("ALTER TABLE ledger_entries ENABLE TRIGGER USER")
        op.execute("ALTER TABLE ledger_runs ENABLE TRIGGER USER")
    else:
        for statement in _SQLITE_TRIGGERS:
            op.execute(statement)


# What 0001 and 0004 defined, restored by a downgrade.
_SQLITE_BEFORE = [
    """
    CREATE TRIGGER ledger_entries_refuse_update BEFORE UPDATE ON ledger_entries
    BEGIN SELECT RAISE(ABORT, 'assay: append-only: ledger_entries rows cannot be updated'); END
    """,
    """
    CREATE TRIGGER ledger_entries_next_link BEFORE INSERT ON ledger_entries
    WHEN NOT EXISTS (
        SELECT 1 FROM ledger_runs r
        WHERE r.run_id = NEW.run_id AND NEW.seq = r.head_seq + 1 AND NEW.prev_hash = r.head_hash
    )
    BEGIN SELECT RAISE(ABORT, 'assay: append-only: an entry must extend its run''s chain head');
    END
    """,
    """
    CREATE TRIGGER ledger_runs_head_only BEFORE UPDATE ON ledger_runs
    WHEN NEW.run_id IS NOT OLD.run_id
      OR NEW.created_at IS NOT OLD.created_at
      OR NEW.metadata_json IS NOT OLD.metadata_json
      OR NEW.head_seq IS NOT OLD.head_seq + 1
      OR NOT EXISTS (
          SELECT 1 FROM ledger_entries e
          WHERE e.run_id = NEW.run_id AND e.seq = NEW.head_seq AND e.entry_hash = NEW.head_hash
      )
    BEGIN SELECT RAISE(ABORT, 'assay: append-only: a run may only advance its head by one entry');
    END
    """,
    """
    CREATE TRIGGER ledger_entries_refuse_replace BEFORE INSERT ON ledger_entries
    WHEN EXISTS (SELECT 1 FROM ledger_entries x WHERE (x.entry_id = NEW.entry_id)
        OR (x.run_id = NEW.run_id AND x.seq = NEW.seq)
        OR (x.run_id = NEW.run_id AND x.dedup_key = NEW.dedup_key)
        OR (x.entry_hash = NEW.entry_hash))
    BEGIN SELECT RAISE(ABORT,
        'assay: row exists: an insert into ledger_entries would replace an existing row');
    END
    """,
]

_POSTGRES_BEFORE = [
    """
    CREATE OR REPLACE FUNCTION assay_ledger_next_link() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
        IF NOT EXISTS (
            SELECT 1 FROM ledger_runs r
            WHERE r.run_id = NEW.run_id AND NEW.seq = r.head_seq + 1
              AND NEW.prev_hash = r.head_hash
        ) THEN
            RAISE EXCEPTION 'assay: append-only: an entry must extend its run''s chain head'
                USING ERRCODE = 'insufficient_privilege';
        END IF;
        RETURN NEW;
    END $$
    """,
    """
    CREATE OR REPLACE FUNCTION assay_ledger_head_only() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
        IF NEW.run_id IS DISTINCT FROM OLD.run_id
           OR NEW.created_at IS DISTINCT FROM OLD.created_at
           OR NEW.metadata_json IS DISTINCT FROM OLD.metadata_json
           OR NEW.head_seq IS DISTINCT FROM OLD.head_seq + 1
           OR NOT EXISTS (
               SELECT 1 FROM ledger_entries e
               WHERE e.run_id = NEW.run_id AND e.seq = NEW.head_seq
                 AND e.entry_hash = NEW.head_hash
           ) THEN
            RAISE EXCEPTION 'assay: append-only: a run may only advance its head by one entry'
                USING ERRCODE = 'insufficient_privilege';
        END IF;
        RETURN NEW;
    END $$
    """,
]


def downgrade() -> None:
    """Back to format 1, only while no entry of format 2 exists: those hash fields that
    format 1 does not keep, so their chain could not be verified afterwards."""
    conn = op.get_bind()
    newer = conn.execute(sa.text("SELECT count(*) FROM ledger_entries WHERE format = 2")).scalar()
    if newer:
        raise RuntimeError(
            f"0006_merkle_log cannot be downgraded: {newer} entries are of format 2, whose "
            "hashes cover fields format 1 does not store"
        )
    if conn.dialect.name == "postgresql":
        op.execute("DROP TRIGGER ledger_tree_grow_only ON ledger_tree")
        op.execute("DROP TRIGGER ledger_tree_refuse_delete ON ledger_tree")
        op.execute("DROP TRIGGER ledger_tree_refuse_truncate ON ledger_tree")
        op.execute("DROP FUNCTION assay_ledger_tree_grow()")
        for statement in _POSTGRES_BEFORE:
            op.execute(statement)
    else:
        for name in [*_SQLITE_REPLACED, "ledger_tree_refuse_delete", "ledger_tree_one_row",
                     "ledger_tree_grow_only"]:  # fmt: skip
            op.execute(f"DROP TRIGGER {name}")
    op.drop_table("ledger_tree")
    op.drop_index("uq_ledger_entries_leaf", "ledger_entries")
    for column in ("subtrees", "leaf_index", "format"):
        op.drop_column("ledger_entries", column)
    op.drop_column("ledger_runs", "run_hash")
    if conn.dialect.name != "postgresql":
        for statement in _SQLITE_BEFORE:
            op.execute(statement)
