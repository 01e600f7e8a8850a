"""The verifier's cache of NLI premise scores.

One table, ``verifier_cache``: the raw logits of one model for one (premise,
claim sentence) pair, keyed by (model id, premise sha256, hypothesis sha256). It is a
cache, not evidence or audit trail, so it is not append-only protected: deleting rows
only costs recomputation.

Revision ID: 0003_verifier_cache
Revises: 0002_tool_registry
Create Date: 2026-11-30
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003_verifier_cache"
down_revision: str | None = "0002_tool_registry"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "verifier_cache",
        sa.Column("model_id", sa.String(200), primary_key=True),
        sa.Column("premise_sha256", sa.String(64), primary_key=True),
        sa.Column("hypothesis_sha256", sa.String(64), primary_key=True),
        sa.Column("logits_json", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("verifier_cache")
