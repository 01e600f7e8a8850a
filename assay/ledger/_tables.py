"""SQLAlchemy Core tables of the ledger; the migration 0001_ledger creates them."""

from __future__ import annotations

import sqlalchemy as sa

metadata = sa.MetaData()

runs = sa.Table(
    "ledger_runs",
    metadata,
    sa.Column("run_id", sa.String(64), primary_key=True),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("metadata_json", sa.Text(), nullable=False),
    sa.Column("head_seq", sa.Integer(), nullable=False),
    sa.Column("head_hash", sa.String(64), nullable=False),
)

entries = sa.Table(
    "ledger_entries",
    metadata,
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
)
