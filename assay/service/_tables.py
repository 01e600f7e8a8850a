"""SQLAlchemy Core tables of the service; the migration 0009_service_tokens creates them."""

from __future__ import annotations

import sqlalchemy as sa

metadata = sa.MetaData()

#: One row per bearer token: the sha256 of its secret, never the secret; append-only.
tokens = sa.Table(
    "service_tokens",
    metadata,
    sa.Column("id", sa.String(40), primary_key=True),
    sa.Column("name", sa.String(200), nullable=False),
    sa.Column("role", sa.String(16), nullable=False),
    sa.Column("secret_sha256", sa.String(64), nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True),
)

#: One row per revoked token; revoking is an insert, so no token row ever changes.
revocations = sa.Table(
    "service_token_revocations",
    metadata,
    sa.Column("token_id", sa.String(40), primary_key=True),
    sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("reason", sa.Text(), nullable=True),
)

#: Which token (and principal) started each thread through the service.
runs = sa.Table(
    "service_runs",
    metadata,
    sa.Column("thread_id", sa.String(200), primary_key=True),
    sa.Column("graph", sa.String(200), nullable=False),
    sa.Column("token_id", sa.String(40), nullable=False),
    sa.Column("principal", sa.String(200), nullable=False),
    sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
)
