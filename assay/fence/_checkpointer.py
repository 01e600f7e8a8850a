"""LangGraph checkpointers on the control plane's own database, for ``invoke`` and
``ainvoke`` alike.

A fenced graph is checkpointed by one :class:`DualSaver`: its synchronous methods
go to LangGraph's synchronous saver (``SqliteSaver`` on a ``sqlite3`` connection,
``PostgresSaver`` on a connection pool) and its asynchronous ones to LangGraph's
asynchronous saver on the same database (``AsyncSqliteSaver`` on ``aiosqlite``,
``AsyncPostgresSaver`` on an ``AsyncConnectionPool``), so one compiled graph runs
under ``invoke`` / ``stream`` and ``ainvoke`` / ``astream``, and a run paused under
one is resumed under the other. Either survives the process, which is what lets a
run paused for a grant be resumed by another process.

An async connection or pool belongs to the event loop it was opened on, and
``asyncio.run`` cancels that loop's tasks (a pool's workers among them) before
anything could close it. The async saver therefore lives on a private event loop
in a daemon thread, opened on the first async call: every ``asyncio.run``, thread
and loop of the process awaits it there, and :meth:`Checkpointer.close` releases it
from anywhere, inside a running loop included.

The checkpoint tables are created once, by the synchronous saver's ``setup()``
under :func:`assay._db.schema_lock` (the lock of assay's own migrations), so any
number of processes may open a fresh database at once; the async saver never runs
a setup of its own.

On SQLite both savers' connections run as the control plane's engine does: WAL
journal, ``synchronous=NORMAL`` (see :data:`SQLITE_PRAGMAS`). In WAL mode NORMAL
syncs the log at checkpoints of the WAL, not at every commit: a commit survives
the process crashing or being killed, and the database is never corrupted, but
the last commits before a power loss or an operating-system crash may be lost.
FULL would make each checkpoint commit wait for the disk, and would buy nothing:
the ledger, the tool bus and the fence's own tables, which hold what a checkpoint
refers to, already commit with NORMAL, and as every connection appends to the one
WAL of the file, what a power loss keeps is a prefix of all their commits, so a
checkpoint never survives without the ledger rows committed before it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import copy
import sqlite3
import threading
import uuid
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Collection,
    Coroutine,
    Iterator,
    Mapping,
    Sequence,
)
from typing import Any, TypeVar

import sqlalchemy as sa
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    DeltaChannelHistory,
)
from langgraph.checkpoint.serde.base import SerializerProtocol
from sqlalchemy.engine import Engine

from assay import _db
from assay.errors import ConfigurationError
from assay.fence._serde import checkpoint_serializer

__all__ = ["Checkpointer", "DualSaver"]

_T = TypeVar("_T")
#: An opened async saver and the coroutine function that releases what is under it.
_Opened = tuple[BaseCheckpointSaver[str], Callable[[], Awaitable[None]]]
#: The opened saver and what releases the connection or pool under its sync side.
_Saver = tuple["DualSaver", Callable[[], None]]
_BUSY_TIMEOUT_S = 30.0
_POOL_SIZE = 4
#: What every SQLite checkpoint connection runs first (see the module's docstring).
SQLITE_PRAGMAS = (
    f"PRAGMA busy_timeout = {int(_BUSY_TIMEOUT_S * 1000)}",
    "PRAGMA journal_mode = WAL",
    "PRAGMA synchronous = NORMAL",
)


class Checkpointer:
    """The durable saver on one database and everything under it (connections,
    pools, the async side's loop): opened on first use of :attr:`saver`, released by
    :meth:`close` (a later use opens it again). Safe to share between threads.

    The tables are set up under the schema lock taken through ``engine`` (an engine
    on the same database; a short-lived one is made when it is not given)."""

    def __init__(self, url: sa.URL, *, engine: Engine | None = None) -> None:
        backend = url.get_backend_name()
        if backend not in ("sqlite", "postgresql"):
            raise ConfigurationError(f"no checkpointer for {backend!r}")
        self._url = url
        self._engine = engine
        self._lock = threading.Lock()
        self._opened: _Saver | None = None

    @property
    def saver(self) -> DualSaver:
        """LangGraph's saver on the database, opened now if it is not open yet."""
        with self._lock:
            if self._opened is None:
                self._opened = _open(self._url, self._engine)
            return self._opened[0]

    def close(self) -> None:
        """Release the saver and what is under it, if it was opened."""
        with self._lock:
            opened, self._opened = self._opened, None
        if opened is None:
            return
        saver, release = opened
        try:
            saver.async_side.close()
        finally:
            release()


def _open(url: sa.URL, engine: Engine | None) -> _Saver:
    opener = _sqlite if url.get_backend_name() == "sqlite" else _postgres
    if engine is not None:
        return opener(url, engine)
    own = _db.create_engine(url.render_as_string(hide_password=False))
    try:
        return opener(url, own)
    finally:
        own.dispose()


class DualSaver(BaseCheckpointSaver[str]):
    """One checkpoint saver for ``invoke`` and ``ainvoke``: synchronous methods go to
    ``sync``, asynchronous ones to the async saver on the same tables (see the
    module's docstring)."""

    def __init__(self, sync: BaseCheckpointSaver[str], async_side: AsyncSide) -> None:
        super().__init__(serde=sync.serde)
        self.sync = sync
        self.async_side = async_side
        self._allowlists: tuple[tuple[tuple[str, ...], ...], ...] = ()
        self._derived: tuple[BaseCheckpointSaver[str], BaseCheckpointSaver[str]] | None = None

    def with_allowlist(self, extra_allowlist: Collection[tuple[str, ...]]) -> DualSaver:
        """What ``compile()`` asks for: both sides widened by ``extra_allowlist``."""
        sync = self.sync.with_allowlist(extra_allowlist)
        if sync is self.sync:
            return self
        clone = copy.copy(self)
        clone.sync, clone.serde = sync, sync.serde
        clone._allowlists = (*self._allowlists, tuple(extra_allowlist))
        clone._derived = None
        return clone

    async def _async(self) -> BaseCheckpointSaver[str]:
        """The async saver, widened by the same allowlists as the sync one."""
        base = await self.async_side.saver()
        derived = self._derived
        if derived is None or derived[0] is not base:
            widened = base
            for extra in self._allowlists:
                widened = widened.with_allowlist(extra)
            derived = self._derived = (base, widened)
        return derived[1]

    # --- synchronous: LangGraph's sync saver ------------------------------------------

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return self.sync.get_tuple(config)

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        return self.sync.list(config, filter=filter, before=before, limit=limit)

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return self.sync.put(config, checkpoint, metadata, new_versions)

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        self.sync.put_writes(config, writes, task_id, task_path)

    def delete_thread(self, thread_id: str) -> None:
        self.sync.delete_thread(thread_id)

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        self.sync.delete_for_runs(run_ids)

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        self.sync.copy_thread(source_thread_id, target_thread_id)

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        self.sync.prune(thread_ids, strategy=strategy)

    def get_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        return self.sync.get_delta_channel_history(config=config, channels=channels)

    def get_next_version(self, current: str | None, channel: None) -> str:
        return self.sync.get_next_version(current, channel)

    # --- asynchronous: LangGraph's async saver, on the private loop -------------------

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        saver = await self._async()
        return await self.async_side.run(saver.aget_tuple(config))

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        saver = await self._async()
        items = saver.alist(config, filter=filter, before=before, limit=limit)
        exhausted = False
        try:
            while not exhausted:
                exhausted, item = await self.async_side.run(_step(items))
                if not exhausted:
                    yield item
        finally:
            if not exhausted:  # the caller stopped early: end the iterator where it runs
                with contextlib.suppress(ConfigurationError):
                    await self.async_side.run(_close(items))

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        saver = await self._async()
        return await self.async_side.run(saver.aput(config, checkpoint, metadata, new_versions))

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        saver = await self._async()
        await self.async_side.run(saver.aput_writes(config, writes, task_id, task_path))

    async def adelete_thread(self, thread_id: str) -> None:
        saver = await self._async()
        await self.async_side.run(saver.adelete_thread(thread_id))

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        saver = await self._async()
        await self.async_side.run(saver.adelete_for_runs(run_ids))

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        saver = await self._async()
        await self.async_side.run(saver.acopy_thread(source_thread_id, target_thread_id))

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        saver = await self._async()
        await self.async_side.run(saver.aprune(thread_ids, strategy=strategy))

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        saver = await self._async()
        return await self.async_side.run(
            saver.aget_delta_channel_history(config=config, channels=channels)
        )


async def _step(items: AsyncIterator[CheckpointTuple]) -> tuple[bool, Any]:
    """One item of an async iterator, as ``(exhausted, item)``: ``StopAsyncIteration``
    is not carried across event loops."""
    try:
        return False, await anext(items)
    except StopAsyncIteration:
        return True, None


async def _close(items: AsyncIterator[CheckpointTuple]) -> None:
    aclose = getattr(items, "aclose", None)
    if aclose is not None:
        await aclose()


class AsyncSide:
    """LangGraph's async saver for one database, on a private event loop in a daemon
    thread, opened on first use and shared by every caller's loop."""

    def __init__(self, open_saver: Callable[[], Coroutine[Any, Any, _Opened]]) -> None:
        self._open_saver = open_saver
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._opening: concurrent.futures.Future[_Opened] | None = None
        self._closed = False

    async def saver(self) -> BaseCheckpointSaver[str]:
        """The async saver, opened on the private loop the first time it is asked for
        (again after an opening that failed)."""
        opening = self._start()
        # Shielded: a caller cancelled while it waits must not cancel the opening
        # that other callers wait for too.
        saver, _release = await asyncio.shield(asyncio.wrap_future(opening))
        return saver

    async def run(self, work: Coroutine[Any, Any, _T]) -> _T:
        """Await ``work`` (a coroutine of the async saver) on the private loop."""
        with self._lock:
            loop = self._loop
        if loop is None or self._closed:
            work.close()
            raise ConfigurationError("the checkpointer is closed")
        try:
            future = asyncio.run_coroutine_threadsafe(work, loop)
        except RuntimeError as exc:  # the loop closed in between
            work.close()
            raise ConfigurationError("the checkpointer is closed") from exc
        return await asyncio.wrap_future(future)

    def _start(self) -> concurrent.futures.Future[_Opened]:
        with self._lock:
            if self._closed:
                raise ConfigurationError("the checkpointer is closed")
            opening = self._opening
            if opening is not None and not (opening.done() and _failed(opening)):
                return opening
            if self._loop is None:
                self._loop = asyncio.SelectorEventLoop()
                self._thread = threading.Thread(
                    target=_serve, args=(self._loop,), name="assay-checkpoints", daemon=True
                )
                self._thread.start()
            self._opening = asyncio.run_coroutine_threadsafe(self._open_saver(), self._loop)
            return self._opening

    def close(self) -> None:
        """Release the async saver's connection or pool and stop the private loop;
        later async calls are refused. Safe to call more than once, from anywhere
        but the private loop itself."""
        with self._lock:
            self._closed = True
            loop, thread, opening = self._loop, self._thread, self._opening
            self._loop = self._thread = self._opening = None
        if loop is None or thread is None:
            return
        try:
            release = _release_of(opening)
            asyncio.run_coroutine_threadsafe(_shutdown(release), loop).result()
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join()
            loop.close()


def _failed(future: concurrent.futures.Future[Any]) -> bool:
    return future.cancelled() or future.exception() is not None


def _serve(loop: asyncio.AbstractEventLoop) -> None:
    asyncio.set_event_loop(loop)
    loop.run_forever()


def _release_of(
    opening: concurrent.futures.Future[_Opened] | None,
) -> Callable[[], Awaitable[None]] | None:
    """What releases the async saver's connection or pool, once its opening is over
    (nothing when it never opened, or failed to)."""
    if opening is None:
        return None
    concurrent.futures.wait([opening])
    return None if _failed(opening) else opening.result()[1]


async def _shutdown(release: Callable[[], Awaitable[None]] | None) -> None:
    """On the private loop: release the saver's connection or pool, then end whatever
    is still running there (a half-read ``alist``)."""
    try:
        if release is not None:
            await release()
    finally:
        me = asyncio.current_task()
        rest = [t for t in asyncio.all_tasks() if t is not me]
        for task in rest:
            task.cancel()
        await asyncio.gather(*rest, return_exceptions=True)
        await asyncio.get_running_loop().shutdown_asyncgens()


# --- SQLite -------------------------------------------------------------------------


def _sqlite(url: sa.URL, engine: Engine) -> _Saver:
    from langgraph.checkpoint.sqlite import SqliteSaver

    database, uri = _sqlite_target(url)
    serde = checkpoint_serializer()
    conn = sqlite3.connect(database, check_same_thread=False, timeout=_BUSY_TIMEOUT_S, uri=uri)
    try:
        for pragma in SQLITE_PRAGMAS:
            conn.execute(pragma)
        saver = SqliteSaver(conn, serde=serde)
        with _db.schema_lock(engine):
            saver.setup()
    except BaseException:
        conn.close()
        raise

    async def open_async() -> _Opened:
        return await _open_async_sqlite(database, uri, serde)

    return DualSaver(saver, AsyncSide(open_async)), conn.close


def _sqlite_target(url: sa.URL) -> tuple[str, bool]:
    """The file (or URI) both savers open. An in-memory database becomes a named,
    shared-cache one, so that the sync and the async saver see the same tables."""
    database = url.database or ":memory:"
    if database == ":memory:":
        return f"file:assay-checkpoints-{uuid.uuid4().hex}?mode=memory&cache=shared", True
    return database, database.startswith("file:")


async def _open_async_sqlite(database: str, uri: bool, serde: SerializerProtocol) -> _Opened:
    import aiosqlite
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    conn = await aiosqlite.connect(database, timeout=_BUSY_TIMEOUT_S, uri=uri)
    try:
        for pragma in SQLITE_PRAGMAS:
            await conn.execute(pragma)
        saver = AsyncSqliteSaver(conn, serde=serde)
    except BaseException:
        await conn.close()
        raise
    saver.is_setup = True  # done by the sync saver when the checkpointer opened
    return saver, conn.close


# --- PostgreSQL ---------------------------------------------------------------------


def _postgres(url: sa.URL, engine: Engine) -> _Saver:
    try:
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg_pool import ConnectionPool
    except ModuleNotFoundError as exc:  # pragma: no cover - depends on the extra
        raise ConfigurationError(
            "PostgreSQL checkpoints need the postgres extra: pip install 'assay[postgres]'"
        ) from exc
    conninfo = url.set(drivername="postgresql").render_as_string(hide_password=False)
    serde = checkpoint_serializer()
    pool: ConnectionPool[Any] = ConnectionPool(
        conninfo, min_size=1, max_size=_POOL_SIZE, kwargs=_connection_kwargs(), open=True
    )
    try:
        saver = PostgresSaver(pool, serde=serde)  # type: ignore[arg-type]
        with _db.schema_lock(engine):
            saver.setup()
    except BaseException:
        pool.close()
        raise

    async def open_async() -> _Opened:
        return await _open_async_postgres(conninfo, serde)

    return DualSaver(saver, AsyncSide(open_async)), pool.close


def _connection_kwargs() -> dict[str, Any]:
    from psycopg.rows import dict_row

    return {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}


async def _open_async_postgres(conninfo: str, serde: SerializerProtocol) -> _Opened:
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from psycopg_pool import AsyncConnectionPool

    pool: AsyncConnectionPool[Any] = AsyncConnectionPool(
        conninfo, min_size=1, max_size=_POOL_SIZE, kwargs=_connection_kwargs(), open=False
    )
    await pool.open(wait=True)
    try:
        saver = AsyncPostgresSaver(pool, serde=serde)  # type: ignore[arg-type]
    except BaseException:
        await pool.close()
        raise
    return saver, pool.close
