"""The tool bus: versioned schema registry, grants, grant uses and idempotent calls.

Five append-only tables, protected like the ledger (every refusal message starts with
``assay: append-only``, so assay translates it into ``LedgerWriteRefused``):

* ``tool_registry`` — one row per ``name@version``: the canonical spec JSON and its
  sha256. A version, once registered, never changes.
* ``tool_grants`` — a grant bound to run, tool, version, the arguments' hash and the
  claim set, with its expiry and the ledger entry that records it.
* ``tool_grant_uses`` — at most one row per grant (its primary key): a grant is
  single-use across threads and processes because the database refuses a second row.
* ``tool_calls`` — one row per (run, call id) whose handler was started, inserted in
  the same transaction as the grant use; a second start of the same call id is
  refused by the primary key, so a replayed step never repeats a side effect.
* ``tool_call_results`` — the result of a started call, kept so that a replay with
  the same call id returns it, even from another process.

Revision ID: 0002_tool_registry
Revises: 0001_ledger
Create Date: 2026-11-30
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002_tool_registry"
down_revision: str | None = "0001_ledger"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TABLES = ("tool_registry", "tool_grants", "tool_grant_uses", "tool_calls", "tool_call_results")


def _sqlite_triggers(table: str) -> list[str]:
    return [
        f"""
        CREATE TRIGGER {table}_refuse_update BEFORE UPDATE ON {table}
        BEGIN SELECT RAISE(ABORT, 'assay: append-only: {table} rows cannot be updated'); END
        """,
        f"""
        CREATE TRIGGER {table}_refuse_delete BEFORE DELETE ON {table}
        BEGIN SELECT RAISE(ABORT, 'assay: append-only: {table} rows cannot be deleted'); END
        """,
    ]


def _postgres_triggers(table: str) -> list[str]:
    # assay_refuse_change() is created by 0001_ledger.
    return [
        f"""
        CREATE TRIGGER {table}_refuse_change BEFORE UPDATE OR DELETE ON {table}
        FOR EACH ROW EXECUTE FUNCTION assay_refuse_change()
        """,
        f"""
        CREATE TRIGGER {table}_refuse_truncate BEFORE TRUNCATE ON {table}
        FOR EACH STATEMENT EXECUTE FUNCTION assay_refuse_change()
        """,
    ]


def _tz() -> sa.DateTime:
    return sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "tool_registry",
        sa.Column("name", sa.String(64), primary_key=True),
        sa.Column("version", sa.String(64), primary_key=True),
        sa.Column("spec_json", sa.Text(), nullable=False),
        sa.Column("spec_sha256", sa.String(64), nullable=False),
        sa.Column("registered_at", _tz(), nullable=False),
    )
    op.create_table(
        "tool_grants",
        sa.Column("grant_id", sa.String(40), primary_key=True),
        sa.Column("run_id", sa.String(64), sa.ForeignKey("ledger_runs.run_id"), nullable=False),
        sa.Column("tool", sa.String(64), nullable=False),
        sa.Column("version", sa.String(64), nullable=False),
        sa.Column("args_sha256", sa.String(64), nullable=False),
        sa.Column("depends_on_json", sa.Text(), nullable=False),
        sa.Column("approver", sa.Text(), nullable=False),
        sa.Column("via", sa.Text(), nullable=False),
        sa.Column("issued_at", _tz(), nullable=False),
        sa.Column("expires_at", _tz(), nullable=False),
        sa.Column("ledger_id", sa.String(32), nullable=False),
    )
    op.create_table(
        "tool_grant_uses",
        sa.Column(
            "grant_id", sa.String(40), sa.ForeignKey("tool_grants.grant_id"), primary_key=True
        ),
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("call_id", sa.String(200), nullable=False),
        sa.Column("used_at", _tz(), nullable=False),
    )
    op.create_table(
        "tool_calls",
        sa.Column("run_id", sa.String(64), sa.ForeignKey("ledger_runs.run_id"), primary_key=True),
        sa.Column("call_id", sa.String(200), primary_key=True),
        sa.Column("tool", sa.String(64), nullable=False),
        sa.Column("version", sa.String(64), nullable=False),
        sa.Column("args_sha256", sa.String(64), nullable=False),
        sa.Column("call_ledger_id", sa.String(32), nullable=False),
        sa.Column("grant_id", sa.String(40), nullable=True),
        sa.Column("started_at", _tz(), nullable=False),
    )
    op.create_table(
        "tool_call_results",
        sa.Column("run_id", sa.String(64), primary_key=True),
        sa.Column("call_id", sa.String(200), primary_key=True),
        sa.Column("result_json", sa.Text(), nullable=False),
        sa.Column("finished_at", _tz(), nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id", "call_id"],
            ["tool_calls.run_id", "tool_calls.call_id"],
            name="fk_tool_call_results_call",
        ),
    )
    postgres = op.get_context().dialect.name == "postgresql"
    for table in _TABLES:
        for statement in _postgres_triggers(table) if postgres else _sqlite_triggers(table):
            op.execute(statement)


def downgrade() -> None:
    for table in reversed(_TABLES):
        op.execute(f"DROP TABLE {table}")
