"""SQLAlchemy Core table of the recorded evaluations; the migration 0008_eval_runs
creates it."""

from __future__ import annotations

import sqlalchemy as sa

metadata = sa.MetaData()

#: One row per evaluation of a suite on a fenced graph; append-only (see the migration).
eval_runs = sa.Table(
    "eval_runs",
    metadata,
    sa.Column("id", sa.String(40), primary_key=True),
    sa.Column("suite_id", sa.String(64), nullable=False),
    sa.Column("suite_name", sa.String(200), nullable=False),
    sa.Column("suite_file", sa.Text(), nullable=False),
    sa.Column("graph_name", sa.String(200), nullable=False),
    sa.Column("graph_version", sa.String(64), nullable=False),
    sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("finished_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("cases", sa.Integer(), nullable=False),
    sa.Column("metrics_json", sa.Text(), nullable=False),
    sa.Column("cases_json", sa.Text(), nullable=False),
    sa.Column("passed", sa.Boolean(), nullable=False),
    sa.Column("failures_json", sa.Text(), nullable=False),
    sa.Column("baseline_sha256", sa.String(64), nullable=True),
)
