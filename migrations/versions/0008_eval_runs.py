"""Eval runs: every evaluation of a suite on a fenced graph, kept for the trend.

``eval_runs`` holds one row per evaluation: the suite (id, name and file), the
fenced graph (name and version given to ``fence()``), when it started and finished,
the suite's figures and each case's outcome as JSON, whether the deploy gate passed
and why not, and the sha256 of the baseline file it was compared with (null when
none was). The table is append-only (UPDATE, DELETE, TRUNCATE and replacing inserts
are refused by the database): a recorded evaluation is history, never rewritten.

Revision ID: 0008_eval_runs
Revises: 0007_tool_effects
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008_eval_runs"
down_revision: str | None = "0007_tool_effects"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_SQLITE = [
    """
    CREATE TRIGGER eval_runs_refuse_update BEFORE UPDATE ON eval_runs
    BEGIN SELECT RAISE(ABORT, 'assay: append-only: eval_runs rows cannot be updated'); END
    """,
    """
    CREATE TRIGGER eval_runs_refuse_delete BEFORE DELETE ON eval_runs
    BEGIN SELECT RAISE(ABORT, 'assay: append-only: eval_runs rows cannot be deleted'); END
    """,
    """
    CREATE TRIGGER eval_runs_refuse_replace BEFORE INSERT ON eval_runs
    WHEN EXISTS (SELECT 1 FROM eval_runs x WHERE x.id = NEW.id)
    BEGIN SELECT RAISE(ABORT,
        'assay: row exists: an insert into eval_runs would replace an existing row');
    END
    """,
]

# assay_refuse_change() is created by 0001_ledger.
_POSTGRES = [
    """
    CREATE TRIGGER eval_runs_refuse_change BEFORE UPDATE OR DELETE ON eval_runs
    FOR EACH ROW EXECUTE FUNCTION assay_refuse_change()
    """,
    """
    CREATE TRIGGER eval_runs_refuse_truncate BEFORE TRUNCATE ON eval_runs
    FOR EACH STATEMENT EXECUTE FUNCTION assay_refuse_change()
    """,
]


def _tz() -> sa.DateTime:
    return sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "eval_runs",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("suite_id", sa.String(64), nullable=False),
        sa.Column("suite_name", sa.String(200), nullable=False),
        sa.Column("suite_file", sa.Text(), nullable=False),
        sa.Column("graph_name", sa.String(200), nullable=False),
        sa.Column("graph_version", sa.String(64), nullable=False),
        sa.Column("started_at", _tz(), nullable=False),
        sa.Column("finished_at", _tz(), nullable=False),
        sa.Column("cases", sa.Integer(), nullable=False),
        sa.Column("metrics_json", sa.Text(), nullable=False),
        sa.Column("cases_json", sa.Text(), nullable=False),
        sa.Column("passed", sa.Boolean(), nullable=False),
        sa.Column("failures_json", sa.Text(), nullable=False),
        sa.Column("baseline_sha256", sa.String(64), nullable=True),
    )
    op.create_index("eval_runs_by_suite", "eval_runs", ["suite_id", "finished_at"])
    op.create_index("eval_runs_by_graph", "eval_runs", ["graph_name", "finished_at"])
    op.create_index("eval_runs_by_time", "eval_runs", ["finished_at"])
    postgres = op.get_context().dialect.name == "postgresql"
    for statement in _POSTGRES if postgres else _SQLITE:
        op.execute(statement)


def downgrade() -> None:
    op.drop_table("eval_runs")
