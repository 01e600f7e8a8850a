"""The append-only, hash-chained ledger.

Two tables: ``ledger_runs`` (one row per run, holding the chain head) and
``ledger_entries``. The database itself enforces the ledger's rules, so a raw SQL
client is held to them too:

* entries are never updated or deleted (nor truncated on PostgreSQL);
* an entry is inserted only as the next link of its run's chain (``seq`` is the
  head's plus one and ``prev_hash`` is the head's hash);
* a run row is never deleted, and its only permitted change is advancing the head
  by one to an entry that exists with exactly that hash.

Every refusal message starts with ``assay: append-only`` so that assay can translate
it into ``LedgerWriteRefused``.

Revision ID: 0001_ledger
Revises:
Create Date: 2026-11-30
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001_ledger"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_GENESIS = "0" * 64

_SQLITE_TRIGGERS = [
    """
    CREATE TRIGGER ledger_entries_refuse_update BEFORE UPDATE ON ledger_entries
    BEGIN SELECT RAISE(ABORT, 'assay: append-only: ledger_entries rows cannot be updated'); END
    """,
    """
    CREATE TRIGGER ledger_entries_refuse_delete BEFORE DELETE ON ledger_entries
    BEGIN SELECT RAISE(ABORT, 'assay: append-only: ledger_entries rows cannot be deleted'); END
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
    CREATE TRIGGER ledger_runs_refuse_delete BEFORE DELETE ON ledger_runs
    BEGIN SELECT RAISE(ABORT, 'assay: append-only: ledger_runs rows cannot be deleted'); END
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
]

_POSTGRES_DDL = [
    """
    CREATE OR REPLACE FUNCTION assay_refuse_change() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
        RAISE EXCEPTION 'assay: append-only: % on % is refused', TG_OP, TG_TABLE_NAME
            USING ERRCODE = 'insufficient_privilege';
    END $$
    """,
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
    """
    CREATE TRIGGER ledger_entries_refuse_change BEFORE UPDATE OR DELETE ON ledger_entries
    FOR EACH ROW EXECUTE FUNCTION assay_refuse_change()
    """,
    """
    CREATE TRIGGER ledger_entries_refuse_truncate BEFORE TRUNCATE ON ledger_entries
    FOR EACH STATEMENT EXECUTE FUNCTION assay_refuse_change()
    """,
    """
    CREATE TRIGGER ledger_entries_next_link BEFORE INSERT ON ledger_entries
    FOR EACH ROW EXECUTE FUNCTION assay_ledger_next_link()
    """,
    """
    CREATE TRIGGER ledger_runs_refuse_delete BEFORE DELETE ON ledger_runs
    FOR EACH ROW EXECUTE FUNCTION assay_refuse_change()
    """,
    """
    CREATE TRIGGER ledger_runs_refuse_truncate BEFORE TRUNCATE ON ledger_runs
    FOR EACH STATEMENT EXECUTE FUNCTION assay_refuse_change()
    """,
    """
    CREATE TRIGGER ledger_runs_head_only BEFORE UPDATE ON ledger_runs
    FOR EACH ROW EXECUTE FUNCTION assay_ledger_head_only()
    """,
]


def upgrade() -> None:
    op.create_table(
        "ledger_runs",
        sa.Column("run_id", sa.String(64), primary_key=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("metadata_json", sa.Text(), nullable=False),
        sa.Column("head_seq", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("head_hash", sa.String(64), nullable=False, server_default=_GENESIS),
    )
    op.create_table(
        "ledger_entries",
        sa.Column("entry_id", sa.String(32), primary_key=True),
        sa.Column("run_id", sa.String(64), sa.ForeignKey("ledger_runs.run_id"), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("content", sa.LargeBinary(), nullable=False),
        sa.Column("is_text", sa.Boolean(), nullable=False),
        sa.Column("content_sha256", sa.String(64), nullable=False),
        sa.Column("metadata_json", sa.Text(), nullable=False),
        sa.Column("prev_hash", sa.String(64), nullable=False),
        sa.Column("entry_hash", sa.String(64), nullable=False),
        sa.Column("dedup_key", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("run_id", "seq", name="uq_ledger_entries_run_seq"),
        sa.UniqueConstraint("run_id", "dedup_key", name="uq_ledger_entries_run_dedup"),
        sa.UniqueConstraint("entry_hash", name="uq_ledger_entries_hash"),
    )
    op.create_index("ix_ledger_entries_run_kind", "ledger_entries", ["run_id", "kind"])
    statements = (
        _POSTGRES_DDL if op.get_context().dialect.name == "postgresql" else _SQLITE_TRIGGERS
    )
    for statement in statements:
        op.execute(statement)


def downgrade() -> None:
    if op.get_context().dialect.name == "postgresql":
        op.execute("DROP TABLE ledger_entries")
        op.execute("DROP TABLE ledger_runs")
        for fn in ("assay_ledger_head_only", "assay_ledger_next_link", "assay_refuse_change"):
            op.execute(f"DROP FUNCTION {fn}()")
        return
    op.drop_table("ledger_entries")
    op.drop_table("ledger_runs")
