"""SQLAlchemy Core tables of the tool bus; the migration 0002_tool_registry creates them
(``tool_effects`` and ``tool_grants.supersedes_json``: 0007_tool_effects)."""

from __future__ import annotations

import sqlalchemy as sa

metadata = sa.MetaData()

registry = sa.Table(
    "tool_registry",
    metadata,
    sa.Column("name", sa.String(64), primary_key=True),
    sa.Column("version", sa.String(64), primary_key=True),
    sa.Column("spec_json", sa.Text(), nullable=False),
    sa.Column("spec_sha256", sa.String(64), nullable=False),
    sa.Column("registered_at", sa.DateTime(timezone=True), nullable=False),
)

grants = sa.Table(
    "tool_grants",
    metadata,
    sa.Column("grant_id", sa.String(40), primary_key=True),
    sa.Column("run_id", sa.String(64), nullable=False),
    sa.Column("tool", sa.String(64), nullable=False),
    sa.Column("version", sa.String(64), nullable=False),
    sa.Column("args_sha256", sa.String(64), nullable=False),
    sa.Column("depends_on_json", sa.Text(), nullable=False),
    sa.Column("approver", sa.Text(), nullable=False),
    sa.Column("via", sa.Text(), nullable=False),
    sa.Column("issued_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("ledger_id", sa.String(32), nullable=False),
    # The one call this grant may be used for (0004_refuse_replace).
    sa.Column("call_id", sa.String(200), nullable=True),
    # The earlier calls whose effect it repeats, a JSON list of ledger ids (0007).
    sa.Column("supersedes_json", sa.Text(), nullable=True),
)

grant_uses = sa.Table(
    "tool_grant_uses",
    metadata,
    sa.Column("grant_id", sa.String(40), primary_key=True),
    sa.Column("run_id", sa.String(64), nullable=False),
    sa.Column("call_id", sa.String(200), nullable=False),
    sa.Column("used_at", sa.DateTime(timezone=True), nullable=False),
)

calls = sa.Table(
    "tool_calls",
    metadata,
    sa.Column("run_id", sa.String(64), primary_key=True),
    sa.Column("call_id", sa.String(200), primary_key=True),
    sa.Column("tool", sa.String(64), nullable=False),
    sa.Column("version", sa.String(64), nullable=False),
    sa.Column("args_sha256", sa.String(64), nullable=False),
    sa.Column("call_ledger_id", sa.String(32), nullable=False),
    sa.Column("grant_id", sa.String(40), nullable=True),
    sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
)

results = sa.Table(
    "tool_call_results",
    metadata,
    sa.Column("run_id", sa.String(64), primary_key=True),
    sa.Column("call_id", sa.String(200), primary_key=True),
    sa.Column("result_json", sa.Text(), nullable=False),
    sa.Column("finished_at", sa.DateTime(timezone=True), nullable=False),
)

#: Who performed each effect of a tool with an idempotency key. Append-only: a call
#: that supersedes the holder adds the next generation, and of two such calls (or two
#: first calls) the primary key lets exactly one in.
effects = sa.Table(
    "tool_effects",
    metadata,
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
