"""LangGraph checkpointers on the control plane's own database.

SQLite URLs get LangGraph's SQLite saver on the same file (its own connection, with
a busy timeout, beside the ledger's tables); PostgreSQL URLs get its Postgres saver
on a small connection pool. Either survives the process, which is what lets a run
paused for a grant be resumed by another process.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import sqlalchemy as sa
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from assay.errors import ConfigurationError


def _serializer() -> JsonPlusSerializer:
    """A serializer that revives assay's own result records and nothing unexpected."""
    from assay.gate import Claim, Proposition, PropositionVerdict
    from assay.graph._result import ActionRecord, PendingGrant, RunResult
    from assay.verifier._unsupported import Unsupported

    return JsonPlusSerializer(
        allowed_msgpack_modules=[
            RunResult,
            ActionRecord,
            PendingGrant,
            Unsupported,
            Claim,
            Proposition,
            PropositionVerdict,
        ]
    )


class Checkpointer:
    """Owns a saver and the connection or pool under it; ``close`` releases both."""

    def __init__(self, saver: BaseCheckpointSaver[Any], closer: Any) -> None:
        self.saver = saver
        self._closer = closer

    def close(self) -> None:
        self._closer.close()


def open_checkpointer(url: sa.URL) -> Checkpointer:
    """A durable checkpointer for the database at ``url``."""
    backend = url.get_backend_name()
    if backend == "sqlite":
        return _sqlite(url)
    if backend == "postgresql":
        return _postgres(url)
    raise ConfigurationError(f"no checkpointer for {backend!r}")


def _sqlite(url: sa.URL) -> Checkpointer:
    from langgraph.checkpoint.sqlite import SqliteSaver

    database = url.database or ":memory:"
    conn = sqlite3.connect(database, check_same_thread=False, timeout=30)
    conn.execute("PRAGMA busy_timeout = 30000")
    saver = SqliteSaver(conn, serde=_serializer())
    saver.setup()
    return Checkpointer(saver, conn)


def _postgres(url: sa.URL) -> Checkpointer:
    try:
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg.rows import dict_row
        from psycopg_pool import ConnectionPool
    except ModuleNotFoundError as exc:  # pragma: no cover - depends on the extra
        raise ConfigurationError(
            "PostgreSQL checkpoints need the postgres extra: pip install 'assay[postgres]'"
        ) from exc
    conninfo = url.set(drivername="postgresql").render_as_string(hide_password=False)
    pool: ConnectionPool[Any] = ConnectionPool(
        conninfo,
        min_size=1,
        max_size=4,
        kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
        open=True,
    )
    saver = PostgresSaver(pool, serde=_serializer())  # type: ignore[arg-type]
    saver.setup()
    return Checkpointer(saver, pool)
