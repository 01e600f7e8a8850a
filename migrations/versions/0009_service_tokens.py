"""The HTTP service: bearer tokens, their revocations, and who started each run.

``service_tokens`` holds one row per token: its id, the principal's name, its role
(``agent``, ``reviewer``, ``auditor`` or ``admin``), the sha256 of its secret (never
the secret), when it was made and when it expires (null: never).
``service_token_revocations`` holds one row per revoked token, so revoking is an
insert and no token row is ever changed. ``service_runs`` records which token (and
principal) started each thread through the service, written before the run starts
so that no decision can come first: an agent reads its own runs, and a reviewer may
not decide a run the same principal started.

All three tables are append-only (UPDATE, DELETE, TRUNCATE and replacing inserts are
refused by the database).

Revision ID: 0009_service_tokens
Revises: 0008_eval_runs
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009_service_tokens"
down_revision: str | None = "0008_eval_runs"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: Each table and its key, for the triggers.
_TABLES = {
    "service_tokens": "id",
    "service_token_revocations": "token_id",
    "service_runs": "thread_id",
}


def _sqlite(table: str, key: str) -> list[str]:
    return [
        f"""
        CREATE TRIGGER {table}_refuse_update BEFORE UPDATE ON {table}
        BEGIN SELECT RAISE(ABORT, 'assay: append-only: {table} rows cannot be updated'); END
        """,
        f"""
        CREATE TRIGGER {table}_refuse_delete BEFORE DELETE ON {table}
        BEGIN SELECT RAISE(ABORT, 'assay: append-only: {table} rows cannot be deleted'); END
        """,
        f"""
        CREATE TRIGGER {table}_refuse_replace BEFORE INSERT ON {table}
        WHEN EXISTS (SELECT 1 FROM {table} x WHERE x.{key} = NEW.{key})
        BEGIN SELECT RAISE(ABORT,
            'assay: row exists: an insert into {table} would replace an existing row');
        END
        """,
    ]


# assay_refuse_change() is created by 0001_ledger.
def _postgres(table: str) -> list[str]:
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
        "service_tokens",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("secret_sha256", sa.String(64), nullable=False),
        sa.Column("created_at", _tz(), nullable=False),
        sa.Column("expires_at", _tz(), nullable=True),
    )
    op.create_index("service_tokens_by_name", "service_tokens", ["name"])
    op.create_table(
        "service_token_revocations",
        sa.Column("token_id", sa.String(40), primary_key=True),
        sa.Column("revoked_at", _tz(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
    )
    op.create_table(
        "service_runs",
        sa.Column("thread_id", sa.String(200), primary_key=True),
        sa.Column("graph", sa.String(200), nullable=False),
        sa.Column("token_id", sa.String(40), nullable=False),
        sa.Column("principal", sa.String(200), nullable=False),
        sa.Column("started_at", _tz(), nullable=False),
    )
    op.create_index("service_runs_by_principal", "service_runs", ["principal", "started_at"])
    postgres = op.get_context().dialect.name == "postgresql"
    for table, key in _TABLES.items():
        for statement in _postgres(table) if postgres else _sqlite(table, key):
            op.execute(statement)


def downgrade() -> None:
    for table in reversed(list(_TABLES)):
        op.drop_table(table)
