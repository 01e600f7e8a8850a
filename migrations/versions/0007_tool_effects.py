"""Idempotent effects: who performed each effect of a tool with an idempotency key.

``tool_effects`` holds, per tool and key (the sha256 of the key's values), the call
that performed the effect: its run, call id and ``tool_call`` ledger entry. A later
call with the same key is refused (``duplicate_effect``) unless its grant names the
holder as superseded; it then adds the next generation. The table is append-only
(UPDATE, DELETE, TRUNCATE and replacing inserts are refused by the database), so of
two calls claiming the same key, or superseding the same holder, exactly one insert
succeeds, on both engines.

``tool_grants.supersedes_json`` records the earlier calls a grant lets its call
repeat; it is also in the grant's ledger record, which the row must agree with.

Revision ID: 0007_tool_effects
Revises: 0006_merkle_log
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007_tool_effects"
down_revision: str | None = "0006_merkle_log"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_SQLITE = [
    """
    CREATE TRIGGER tool_effects_refuse_update BEFORE UPDATE ON tool_effects
    BEGIN SELECT RAISE(ABORT, 'assay: append-only: tool_effects rows cannot be updated'); END
    """,
    """
    CREATE TRIGGER tool_effects_refuse_delete BEFORE DELETE ON tool_effects
    BEGIN SELECT RAISE(ABORT, 'assay: append-only: tool_effects rows cannot be deleted'); END
    """,
    """
    CREATE TRIGGER tool_effects_refuse_replace BEFORE INSERT ON tool_effects
    WHEN EXISTS (
        SELECT 1 FROM tool_effects x
        WHERE x.tool = NEW.tool AND x.key_sha256 = NEW.key_sha256
          AND x.generation = NEW.generation
    )
    BEGIN SELECT RAISE(ABORT,
        'assay: row exists: an insert into tool_effects would replace an existing row');
    END
    """,
]

# assay_refuse_change() is created by 0001_ledger.
_POSTGRES = [
    """
    CREATE TRIGGER tool_effects_refuse_change BEFORE UPDATE OR DELETE ON tool_effects
    FOR EACH ROW EXECUTE FUNCTION assay_refuse_change()
    """,
    """
    CREATE TRIGGER tool_effects_refuse_truncate BEFORE TRUNCATE ON tool_effects
    FOR EACH STATEMENT EXECUTE FUNCTION assay_refuse_change()
    """,
]


def upgrade() -> None:
    op.create_table(
        "tool_effects",
        sa.Column("tool", sa.String(64), primary_key=True),
        sa.Column("key_sha256", sa.String(64), primary_key=True),
        sa.Column("generation", sa.Integer(), primary_key=True, autoincrement=False),
        sa.Column("key_json", sa.Text(), nullable=False),
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("call_id", sa.String(200), nullable=False),
        sa.Column("call_ledger_id", sa.String(32), nullable=False),
        sa.Column("supersedes", sa.String(32), nullable=True),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("tool_effects_by_call", "tool_effects", ["run_id", "call_id"])
    # A plain ADD COLUMN: a batch rebuild would drop tool_grants' own triggers.
    op.add_column("tool_grants", sa.Column("supersedes_json", sa.Text(), nullable=True))
    postgres = op.get_context().dialect.name == "postgresql"
    for statement in _POSTGRES if postgres else _SQLITE:
        op.execute(statement)


def downgrade() -> None:
    op.drop_column("tool_grants", "supersedes_json")
    op.drop_table("tool_effects")
