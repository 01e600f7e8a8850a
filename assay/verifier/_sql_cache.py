"""An :class:`EntailmentCache` stored in the control plane's database.

One row per (model id, premise sha256, hypothesis sha256) with the model's raw logits
as JSON; the migration ``0003_verifier_cache`` creates the table. Rows are only ever
inserted (a concurrent writer that stored the same key first wins: the logits of a
deterministic model are the same), so several processes can share the cache.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Engine

from assay._db import driver_errors
from assay.verifier._cache import CacheKey

metadata = sa.MetaData()

verifier_cache = sa.Table(
    "verifier_cache",
    metadata,
    sa.Column("model_id", sa.String(200), primary_key=True),
    sa.Column("premise_sha256", sa.String(64), primary_key=True),
    sa.Column("hypothesis_sha256", sa.String(64), primary_key=True),
    sa.Column("logits_json", sa.Text(), nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
)


class SqlEntailmentCache:
    """Window scores kept in the ``verifier_cache`` table of an assay database."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def _where(self, key: CacheKey) -> sa.ColumnElement[bool]:
        c = verifier_cache.c
        return sa.and_(
            c.model_id == key.model,
            c.premise_sha256 == key.premise_sha256,
            c.hypothesis_sha256 == key.hypothesis_sha256,
        )

    def get(self, key: CacheKey) -> tuple[float, ...] | None:
        query = sa.select(verifier_cache.c.logits_json).where(self._where(key))
        with driver_errors("verifier cache read failed"), self._engine.connect() as conn:
            raw = conn.execute(query).scalar_one_or_none()
        return None if raw is None else tuple(float(v) for v in json.loads(raw))

    def put(self, key: CacheKey, logits: tuple[float, ...]) -> None:
        values = {
            "model_id": key.model,
            "premise_sha256": key.premise_sha256,
            "hypothesis_sha256": key.hypothesis_sha256,
            "logits_json": json.dumps([float(v) for v in logits]),
            "created_at": datetime.now(UTC),
        }
        dialect = self._engine.dialect.name
        insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
        statement = insert(verifier_cache).values(**values).on_conflict_do_nothing()
        with driver_errors("verifier cache write failed"), self._engine.begin() as conn:
            conn.execute(statement)
