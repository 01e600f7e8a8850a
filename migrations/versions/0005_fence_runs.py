"""The fence's own tables: one decision per paused intent, and which graph owns a thread.

``fence_decisions`` holds the reviewer's decision on each paused irreversible call,
keyed by the call id the fence derives from the run and the intent. It is
append-only like the ledger (UPDATE, DELETE, TRUNCATE and replacing inserts are
refused by the database), so of two reviewers deciding the same intent at once
exactly one insert succeeds, on both engines, and the other is told whose decision
stands.

``fence_threads`` records, per LangGraph thread, the fenced graph (name and version
given to ``fence()``) that started it, its current run and where it stands. A thread
is never resumed with another graph. Its ``status`` and ``run_id`` change as the
thread moves on (a thread invoked again starts a new run), so this table is not
append-only; the audit trail of every run stays in the ledger.

Revision ID: 0005_fence_runs
Revises: 0004_refuse_replace
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005_fence_runs"
down_revision: str | None = "0004_refuse_replace"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _tz() -> sa.DateTime:
    return sa.DateTime(timezone=True)


_SQLITE = [
    """
    CREATE TRIGGER fence_decisions_refuse_update BEFORE UPDATE ON fence_decisions
    BEGIN SELECT RAISE(ABORT, 'assay: append-only: fence_decisions rows cannot be updated'); END
    """,
    """
    CREATE TRIGGER fence_decisions_refuse_delete BEFORE DELETE ON fence_decisions
    BEGIN SELECT RAISE(ABORT, 'assay: append-only: fence_decisions rows cannot be deleted'); END
    """,
    """
    CREATE TRIGGER fence_decisions_refuse_replace BEFORE INSERT ON fence_decisions
    WHEN EXISTS (SELECT 1 FROM fence_decisions x WHERE x.call_id = NEW.call_id)
    BEGIN SELECT RAISE(ABORT,
        'assay: row exists: an insert into fence_decisions would replace an existing row');
    END
    """,
]

# assay_refuse_change() is created by 0001_ledger.
_POSTGRES = [
    """
    CREATE TRIGGER fence_decisions_refuse_change BEFORE UPDATE OR DELETE ON fence_decisions
    FOR EACH ROW EXECUTE FUNCTION assay_refuse_change()
    """,
    """
    CREATE TRIGGER fence_decisions_refuse_truncate BEFORE TRUNCATE ON fence_decisions
    FOR EACH STATEMENT EXECUTE FUNCTION assay_refuse_change()
    """,
]


def upgrade() -> None:
    op.create_table(
        "fence_decisions",
        sa.Column("call_id", sa.String(200), primary_key=True),
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("intent_id", sa.String(200), nullable=False),
        sa.Column("tool", sa.String(64), nullable=False),
        sa.Column("version", sa.String(64), nullable=False),
        sa.Column("args_sha256", sa.String(64), nullable=False),
        sa.Column("approve", sa.Boolean(), nullable=False),
        sa.Column("approver", sa.Text(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("decided_at", _tz(), nullable=False),
    )
    op.create_index("fence_decisions_by_run", "fence_decisions", ["run_id"])
    op.create_table(
        "fence_threads",
        sa.Column("thread_id", sa.String(200), primary_key=True),
        sa.Column("graph_name", sa.String(200), nullable=False),
        sa.Column("graph_version", sa.String(64), nullable=False),
        sa.Column("run_id", sa.String(64), nullable=True),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("created_at", _tz(), nullable=False),
        sa.Column("updated_at", _tz(), nullable=False),
    )
    op.create_index("fence_threads_by_status", "fence_threads", ["status", "updated_at"])
    postgres = op.get_context().dialect.name == "postgresql"
    for statement in _POSTGRES if postgres else _SQLITE:
        op.execute(statement)


def downgrade() -> None:
    op.drop_table("fence_threads")
    op.drop_table("fence_decisions")
