"""Close the insert paths around the append-only tables; bind grants to one call.

SQLite resolves ``INSERT OR REPLACE`` (and ``REPLACE INTO``) by deleting the row
that conflicts and inserting the new one, and it fires DELETE triggers for that
deletion only when the connection has set ``recursive_triggers``, which no client
is obliged to do. The UPDATE/DELETE triggers of 0001 and 0002 therefore do not
stop a client from rewriting a row by replacing it. This revision adds, on every
protected table, a BEFORE INSERT trigger that refuses an insert whose key (primary
or unique) is already taken, whatever conflict clause the client asked for, and an
insert trigger on ``ledger_runs`` that admits only a new, empty run (head at seq 0
and the genesis hash), so a run cannot be re-created with a moved head.

PostgreSQL has no REPLACE; ``INSERT ... ON CONFLICT DO UPDATE`` fires the UPDATE
triggers and is refused by them, and ``ON CONFLICT DO NOTHING`` changes nothing.
The empty-run rule is added there too.

``tool_grants`` gains ``call_id``: a grant is issued for one call id and the bus
honours it for no other (see ``Grants``).

The refusal messages of the conflict triggers start with ``assay: row exists`` (not
``assay: append-only``): to a client a taken key is a constraint violation, and the
bus relies on seeing it as one when two processes race to start the same call.

Revision ID: 0004_refuse_replace
Revises: 0003_verifier_cache
Create Date: 2026-11-30
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004_refuse_replace"
down_revision: str | None = "0003_verifier_cache"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_GENESIS = "0" * 64

#: Every key (primary or unique) of every protected table.
_KEYS: dict[str, list[tuple[str, ...]]] = {
    "ledger_runs": [("run_id",)],
    "ledger_entries": [("entry_id",), ("run_id", "seq"), ("run_id", "dedup_key"), ("entry_hash",)],
    "tool_registry": [("name", "version")],
    "tool_grants": [("grant_id",)],
    "tool_grant_uses": [("grant_id",)],
    "tool_calls": [("run_id", "call_id")],
    "tool_call_results": [("run_id", "call_id")],
}


def _taken(table: str) -> str:
    """A SQL condition: some key of NEW is already used by a stored row."""
    clauses = [" AND ".join(f"x.{column} = NEW.{column}" for column in key) for key in _KEYS[table]]
    return f"EXISTS (SELECT 1 FROM {table} x WHERE {' OR '.join(f'({c})' for c in clauses)})"


def _sqlite_statements() -> list[str]:
    statements = [
        f"""
        CREATE TRIGGER {table}_refuse_replace BEFORE INSERT ON {table}
        WHEN {_taken(table)}
        BEGIN SELECT RAISE(ABORT,
            'assay: row exists: an insert into {table} would replace an existing row');
        END
        """
        for table in _KEYS
    ]
    statements.append(
        f"""
        CREATE TRIGGER ledger_runs_new_only BEFORE INSERT ON ledger_runs
        WHEN NEW.head_seq IS NOT 0 OR NEW.head_hash IS NOT '{_GENESIS}'
        BEGIN SELECT RAISE(ABORT, 'assay: append-only: a run starts empty (seq 0, genesis)');
        END
        """
    )
    return statements


_POSTGRES_STATEMENTS = [
    f"""
    CREATE OR REPLACE FUNCTION assay_ledger_new_run() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
        IF NEW.head_seq IS DISTINCT FROM 0 OR NEW.head_hash IS DISTINCT FROM '{_GENESIS}' THEN
            RAISE EXCEPTION 'assay: append-only: a run starts empty (seq 0, genesis)'
                USING ERRCODE = 'insufficient_privilege';
        END IF;
        RETURN NEW;
    END $$
    """,
    """
    CREATE TRIGGER ledger_runs_new_only BEFORE INSERT ON ledger_runs
    FOR EACH ROW EXECUTE FUNCTION assay_ledger_new_run()
    """,
]


def upgrade() -> None:
    op.add_column("tool_grants", sa.Column("call_id", sa.String(200), nullable=True))
    postgres = op.get_context().dialect.name == "postgresql"
    for statement in _POSTGRES_STATEMENTS if postgres else _sqlite_statements():
        op.execute(statement)


def downgrade() -> None:
    if op.get_context().dialect.name == "postgresql":
        op.execute("DROP TRIGGER ledger_runs_new_only ON ledger_runs")
        op.execute("DROP FUNCTION assay_ledger_new_run()")
    else:
        for table in _KEYS:
            op.execute(f"DROP TRIGGER {table}_refuse_replace")
        op.execute("DROP TRIGGER ledger_runs_new_only")
    op.drop_column("tool_grants", "call_id")
