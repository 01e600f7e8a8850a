"""An :class:`EntailmentCache` stored in the control plane's database.

One row per (model id, premise sha256, hypothesis sha256) with the model's raw logits
as JSON; the migration ``0003_verifier_cache`` creates the table. Rows are only ever
inserted (a concurrent writer that stored the same key first wins: the logits of a
deterministic model are the same), so several processes can share the cache.
``get_many`` and ``put_many`` serve a whole check in one read and one write.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Engine

from assay._db import driver_errors
from assay.verifier._cache import CacheKey

#: Keys looked up per statement: two parameters each, well under any engine's limit.
_CHUNK = 200

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

# Built once, with the keys as an expanding parameter: one statement per chunk.
_c = verifier_cache.c
_LOOKUP = sa.select(_c.premise_sha256, _c.hypothesis_sha256, _c.logits_json).where(
    _c.model_id == sa.bindparam("model"),
    sa.tuple_(_c.premise_sha256, _c.hypothesis_sha256).in_(sa.bindparam("pairs", expanding=True)),
)


class SqlEntailmentCache:
    """Window scores kept in the ``verifier_cache`` table of an assay database."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def get(self, key: CacheKey) -> tuple[float, ...] | None:
        return self.get_many([key]).get(key)

    def get_many(self, keys: Sequence[CacheKey]) -> dict[CacheKey, tuple[float, ...]]:
        """The logits of every key that is stored, in one read transaction."""
        wanted = set(keys)
        found: dict[CacheKey, tuple[float, ...]] = {}
        by_model: dict[str, list[CacheKey]] = {}
        for key in wanted:
            by_model.setdefault(key.model, []).append(key)
        with driver_errors("verifier cache read failed"), self._engine.connect() as conn:
            for model, group in by_model.items():
                for start in range(0, len(group), _CHUNK):
                    chunk = group[start : start + _CHUNK]
                    pairs = [(k.premise_sha256, k.hypothesis_sha256) for k in chunk]
                    for row in conn.execute(_LOOKUP, {"model": model, "pairs": pairs}):
                        key = CacheKey(
                            model=model,
                            premise_sha256=row.premise_sha256,
                            hypothesis_sha256=row.hypothesis_sha256,
                        )
                        if key in wanted:
                            found[key] = tuple(float(v) for v in json.loads(row.logits_json))
        return found

    def put(self, key: CacheKey, logits: tuple[float, ...]) -> None:
        self.put_many([(key, logits)])

    def put_many(self, items: Sequence[tuple[CacheKey, tuple[float, ...]]]) -> None:
        """Store every (key, logits) in one write transaction; a key already stored
        keeps its row."""
        now = datetime.now(UTC)
        rows = {
            key: {
                "model_id": key.model,
                "premise_sha256": key.premise_sha256,
                "hypothesis_sha256": key.hypothesis_sha256,
                "logits_json": json.dumps([float(v) for v in logits]),
                "created_at": now,
            }
            for key, logits in items
        }
        if not rows:
            return
        dialect = self._engine.dialect.name
        insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
        statement = insert(verifier_cache).on_conflict_do_nothing()
        with driver_errors("verifier cache write failed"), self._engine.begin() as conn:
            conn.execute(statement, list(rows.values()))
