"""Which fenced graph owns a thread, its current run and where it stands.

A LangGraph thread is a checkpoint history; nothing in it says which graph wrote
it, and a thread resumed with another graph runs that graph's nodes on the first
one's state. ``fence_threads`` keeps, per thread, the name and version given to
``fence()`` by the graph that started it, so a runner (or the begin node itself)
refuses any other graph before it touches the thread. The row is claimed by one
insert: of two starts of one new thread at once, one wins. The begin node binds the
thread to its run (:func:`start`) inside the ledger transaction that opens the run,
so the thread row and the run's first entries are written together or not at all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import DBAPIError, IntegrityError

from assay._db import InsertIfAbsent, driver_errors, read_connection, write_transaction
from assay.errors import DatabaseError, UsageError, WrongGraph
from assay.fence._tables import threads

if TYPE_CHECKING:
    from assay.fence._result import ThreadState

__all__ = [
    "MAX_GRAPH_NAME",
    "MAX_GRAPH_VERSION",
    "MAX_THREAD_ID",
    "GraphIdentity",
    "ThreadRow",
    "check_identity",
    "check_thread_id",
]

MAX_GRAPH_NAME = 200
MAX_GRAPH_VERSION = 64
MAX_THREAD_ID = 200
_SPACE_AT_ENDS = re.compile(r"^\s|\s$")
# The begin node's statements, built once (it runs them on every run).
_LOCK_THREAD = (
    sa.select(threads).where(threads.c.thread_id == sa.bindparam("thread")).with_for_update()
)
_INSERT_IF_ABSENT = InsertIfAbsent(threads)
_RESTART = (
    threads.update()
    .where(threads.c.thread_id == sa.bindparam("thread"))
    .values(run_id=sa.bindparam("run"), status="running", updated_at=sa.bindparam("now"))
)
_SET_STATUS = (
    threads.update()
    .where(threads.c.thread_id == sa.bindparam("thread"))
    .values(status=sa.bindparam("status"), updated_at=sa.bindparam("now"))
)
_SET_STATUS_AND_RUN = _SET_STATUS.values(run_id=sa.bindparam("run"))
_THREAD = sa.select(threads).where(threads.c.thread_id == sa.bindparam("thread"))


@dataclass(frozen=True, kw_only=True)
class GraphIdentity:
    """The name and version given to ``fence()``: what a thread is bound to."""

    name: str
    version: str

    def __str__(self) -> str:
        return f"{self.name!r} version {self.version!r}"


@dataclass(frozen=True, kw_only=True)
class ThreadRow:
    """One row of ``fence_threads``."""

    thread_id: str
    graph: GraphIdentity
    run_id: str | None
    status: ThreadState
    created_at: datetime
    updated_at: datetime


def _text_problem(value: object, what: str, limit: int) -> str | None:
    if not isinstance(value, str) or not value:
        return f"{what} must be a non-empty string"
    if len(value) > limit:
        return f"{what} is longer than {limit} characters"
    if not value.isprintable() or _SPACE_AT_ENDS.search(value):
        return f"{what} {value!r} must be printable text without spaces at its ends"
    if any(0xD800 <= ord(c) <= 0xDFFF for c in value):
        return f"{what} must be valid Unicode text"
    return None


def check_identity(name: object, version: object) -> GraphIdentity:
    """A graph identity, or :class:`UsageError` naming what is wrong with it."""
    problem = _text_problem(name, "a graph name", MAX_GRAPH_NAME) or _text_problem(
        version, "a graph version", MAX_GRAPH_VERSION
    )
    if problem:
        raise UsageError(problem)
    assert isinstance(name, str) and isinstance(version, str)
    return GraphIdentity(name=name, version=version)


def check_thread_id(thread_id: object) -> str:
    """``thread_id`` if it is a usable thread id, else :class:`UsageError`."""
    problem = _text_problem(thread_id, "a thread id", MAX_THREAD_ID)
    if problem:
        raise UsageError(problem)
    assert isinstance(thread_id, str)
    return thread_id


def wrong_graph(thread_id: str, owner: GraphIdentity, other: GraphIdentity) -> WrongGraph:
    return WrongGraph(
        f"thread {thread_id!r} belongs to graph {owner}, not to graph {other}: "
        "resume it with the graph that started it"
    )


def get(engine: Engine, thread_id: str) -> ThreadRow | None:
    with driver_errors("could not read the thread"), read_connection(engine) as conn:
        row = conn.execute(_THREAD, {"thread": thread_id}).first()
    return None if row is None else _row(row)


def claim(
    engine: Engine, thread_id: str, graph: GraphIdentity, *, run_id: str | None = None
) -> bool:
    """Insert the thread for ``graph`` (status ``running``); False when the thread
    already exists, whoever holds it. One insert decides between concurrent starts."""
    now = datetime.now(UTC)
    try:
        with write_transaction(engine) as conn:
            conn.execute(
                threads.insert().values(
                    thread_id=thread_id,
                    graph_name=graph.name,
                    graph_version=graph.version,
                    run_id=run_id,
                    status="running",
                    created_at=now,
                    updated_at=now,
                )
            )
    except IntegrityError:
        return False
    except DBAPIError as exc:
        raise DatabaseError(f"could not record the thread: {exc.orig}") from exc
    return True


def start(conn: Connection, thread_id: str, graph: GraphIdentity, run_id: str) -> None:
    """Bind ``thread_id`` to ``graph`` and its run ``run_id``, status ``running``, on
    ``conn``, a write transaction of the caller's (the ledger batch that opens the run);
    :class:`WrongGraph` when another graph holds the thread, and the caller's
    transaction then writes nothing.

    A new thread is inserted unless a row appeared meanwhile (a concurrent first start,
    which the insert waits for on PostgreSQL); that row is then locked and judged as
    any existing one."""
    now = datetime.now(UTC)
    row = conn.execute(_LOCK_THREAD, {"thread": thread_id}).first()
    if row is None:
        inserted = _INSERT_IF_ABSENT(
            conn,
            {
                "thread_id": thread_id,
                "graph_name": graph.name,
                "graph_version": graph.version,
                "run_id": run_id,
                "status": "running",
                "created_at": now,
                "updated_at": now,
            },
        )
        if inserted:
            return
        row = conn.execute(_LOCK_THREAD, {"thread": thread_id}).first()
        if row is None:  # pragma: no cover - a thread row is never deleted
            raise DatabaseError(f"could not record thread {thread_id!r}")
    held = _row(row).graph
    if held != graph:
        raise wrong_graph(thread_id, held, graph)
    conn.execute(_RESTART, {"thread": thread_id, "run": run_id, "now": now})


def set_status(
    engine: Engine, thread_id: str, status: ThreadState, *, run_id: str | None = None
) -> None:
    """Record where the thread stands now (and its run, when given)."""
    params = {"thread": thread_id, "status": status, "now": datetime.now(UTC)}
    statement = _SET_STATUS if run_id is None else _SET_STATUS_AND_RUN
    if run_id is not None:
        params["run"] = run_id
    with driver_errors("could not update the thread"), write_transaction(engine) as conn:
        conn.execute(statement, params)


def listed(
    engine: Engine, status: ThreadState, graph_name: str | None, limit: int
) -> list[ThreadRow]:
    """Threads in ``status``, most recently updated first."""
    query = sa.select(threads).where(threads.c.status == status)
    if graph_name is not None:
        query = query.where(threads.c.graph_name == graph_name)
    query = query.order_by(threads.c.updated_at.desc(), threads.c.thread_id).limit(limit)
    with driver_errors("could not list the threads"), engine.connect() as conn:
        return [_row(row) for row in conn.execute(query)]


def _row(row: sa.Row[Any]) -> ThreadRow:
    return ThreadRow(
        thread_id=row.thread_id,
        graph=GraphIdentity(name=row.graph_name, version=row.graph_version),
        run_id=row.run_id,
        status=row.status,
        created_at=_utc(row.created_at),
        updated_at=_utc(row.updated_at),
    )


def _utc(value: datetime) -> datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)
