"""SQLAlchemy Core tables of the fence; the migration 0005_fence_runs creates them."""

from __future__ import annotations

import sqlalchemy as sa

metadata = sa.MetaData()

#: One reviewer decision per paused intent's call; append-only (see the migration).
decisions = sa.Table(
    "fence_decisions",
    metadata,
    sa.Column("call_id", sa.String(200), primary_key=True),
    sa.Column("run_id", sa.String(64), nullable=False),
    sa.Column("intent_id", sa.String(200), nullable=False),
    sa.Column("tool", sa.String(64), nullable=False),
    sa.Column("version", sa.String(64), nullable=False),
    sa.Column("args_sha256", sa.String(64), nullable=False),
    sa.Column("approve", sa.Boolean(), nullable=False),
    sa.Column("approver", sa.Text(), nullable=False),
    sa.Column("reason", sa.Text(), nullable=True),
    sa.Column("decided_at", sa.DateTime(timezone=True), nullable=False),
)

#: Which fenced graph owns a thread, its current run and where it stands.
threads = sa.Table(
    "fence_threads",
    metadata,
    sa.Column("thread_id", sa.String(200), primary_key=True),
    sa.Column("graph_name", sa.String(200), nullable=False),
    sa.Column("graph_version", sa.String(64), nullable=False),
    sa.Column("run_id", sa.String(64), nullable=True),
    sa.Column("status", sa.String(32), nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
)
