"""Engine construction shared by every component: URL resolution, SQLite pragmas,
write transactions that serialise appends, driver-error translation and migrations.

SQLite runs in WAL mode with a busy timeout, and pysqlite's own transaction handling
is switched off so that assay can issue ``BEGIN IMMEDIATE`` for writes: the write
lock is then taken when the transaction starts, not when it first writes, which is
what keeps two appenders from reading the same chain head. PostgreSQL serialises
appends with a row lock on the run's head row instead (see the ledger). A read of one
statement (:func:`read_connection`) runs without ``BEGIN`` and ``ROLLBACK`` on
SQLite: one statement is its own transaction there, and the two extra round trips
cost more than the read itself.
"""

from __future__ import annotations

import functools
import os
import re
import sqlite3
import time
from collections.abc import Generator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import ArgumentError, DBAPIError, IntegrityError, NoSuchModuleError
from sqlalchemy.sql.compiler import SQLCompiler

from assay.errors import ConfigurationError, DatabaseError, LedgerWriteRefused

if TYPE_CHECKING:
    from alembic.config import Config

DEFAULT_URL = "sqlite:///./assay.db"
VERSION_TABLE = "assay_alembic_version"
#: Marker the append-only triggers put in their error message; see the migration.
APPEND_ONLY_MARKER = "assay: append-only"
_WRITE = "assay_write"
_ONE_STATEMENT = "assay_one_statement"
_SQLITE_BUSY_TIMEOUT_MS = 30_000


def resolve_url(url: str | None) -> str:
    """The URL to use: the argument, else ``ASSAY_DATABASE_URL``, else ./assay.db.

    ``postgresql://`` is read as ``postgresql+psycopg://``: psycopg 3 is the driver
    the ``postgres`` extra installs, and SQLAlchemy's own default (psycopg2) is not.
    """
    chosen = url or os.environ.get("ASSAY_DATABASE_URL") or DEFAULT_URL
    if chosen.startswith("postgresql://") or chosen.startswith("postgres://"):
        chosen = "postgresql+psycopg://" + chosen.split("://", 1)[1]
    return chosen


def create_engine(url: str) -> Engine:
    """One engine for one control plane, configured for the ledger's guarantees."""
    try:
        parsed = sa.make_url(url)
    except (ArgumentError, ValueError) as exc:
        raise ConfigurationError(f"not a database URL: {_redacted(url)!r}") from exc
    backend = parsed.get_backend_name()
    if backend not in ("sqlite", "postgresql"):
        raise ConfigurationError(
            f"unsupported database {backend!r}: assay runs on sqlite:/// or postgresql+psycopg://"
        )
    if backend == "sqlite" and (parsed.host or parsed.port or parsed.username):
        raise ConfigurationError(
            f"not a SQLite file URL: {_redacted(url)!r} names a host; a file is "
            "sqlite:///relative/path.db or sqlite:////absolute/path.db"
        )
    try:
        if backend == "sqlite":
            engine = _sqlite_engine(parsed)
        else:
            engine = sa.create_engine(parsed, pool_pre_ping=True)
    except NoSuchModuleError as exc:
        raise ConfigurationError(
            f"no driver for {parsed.drivername!r}; install assay[postgres] for PostgreSQL"
        ) from exc
    except ArgumentError as exc:
        raise ConfigurationError(
            f"not a usable database URL {_redacted(url)!r}: {_one_line(str(exc))}"
        ) from exc
    except ModuleNotFoundError as exc:
        raise ConfigurationError(
            f"the driver for {parsed.drivername!r} is not installed ({exc.name}); "
            "install assay[postgres] for PostgreSQL"
        ) from exc
    event.listen(engine, "handle_error", _translate_driver_error)
    return engine


def _sqlite_engine(url: sa.URL) -> Engine:
    database = url.database or ""
    if database and database != ":memory:" and not database.startswith("file:"):
        parent = Path(database).expanduser().resolve().parent
        if not parent.is_dir():
            raise ConfigurationError(f"directory for the SQLite file does not exist: {parent}")
    engine = sa.create_engine(
        url, connect_args={"timeout": _SQLITE_BUSY_TIMEOUT_MS / 1000, "check_same_thread": False}
    )

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Hand transaction control to SQLAlchemy's "begin" event below.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {_SQLITE_BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA journal_mode = WAL")
        cursor.execute("PRAGMA synchronous = NORMAL")
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        options = conn.get_execution_options()
        if options.get(_ONE_STATEMENT, False):
            return  # autocommit: the statement is its own (read) transaction
        statement = "BEGIN IMMEDIATE" if options.get(_WRITE, False) else "BEGIN"
        driver = conn.connection.driver_connection
        if driver is None:  # pragma: no cover - a connection is always open here
            conn.exec_driver_sql(statement)
            return
        try:
            # On the driver itself: through SQLAlchemy this one statement cost as much
            # as the append it opens. A busy database waits (busy_timeout) inside it.
            driver.execute(statement)
        except sqlite3.Error as exc:
            raise DatabaseError(f"could not begin a transaction: {exc}") from exc

    return engine


@contextmanager
def write_transaction(engine: Engine) -> Generator[Connection, None, None]:
    """A transaction that holds the database's write lock from its first statement
    (SQLite ``BEGIN IMMEDIATE``); on PostgreSQL an ordinary transaction, in which
    callers take row locks themselves."""
    with engine.connect() as conn:
        conn = conn.execution_options(**{_WRITE: True})
        with conn.begin():
            yield conn


@contextmanager
def read_connection(engine: Engine) -> Generator[Connection, None, None]:
    """A connection for reads of one statement each. On SQLite no transaction is
    opened around them (each statement is its own, and sees one snapshot), which
    saves a ``BEGIN`` and a ``ROLLBACK`` per read; two statements that must agree
    with each other belong in an ordinary ``engine.connect()`` transaction instead.
    On PostgreSQL it is an ordinary connection."""
    with engine.connect() as conn:
        yield conn.execution_options(**{_ONE_STATEMENT: True})


class InsertIfAbsent:
    """An ``INSERT`` of one row into ``table`` that leaves the row already stored
    under the same key alone; calling it says whether the row was inserted, and the
    transaction goes on either way.

    On PostgreSQL it is ``ON CONFLICT (key) DO NOTHING`` (on any key when ``key`` is
    not given), which also waits for a concurrent insert of the same key to commit
    or roll back before it decides. On SQLite it is a plain ``INSERT`` whose
    conflict is caught: the triggers of the migration 0004 refuse an insert on a
    taken key of an append-only table whatever conflict clause it carries, and a
    refused statement is undone alone (SQLite's ``ABORT``), the transaction kept.
    SQLite refuses a conflict on any key of the row; the caller tells them apart.
    """

    def __init__(self, table: sa.Table, key: Sequence[str] | None = None) -> None:
        self._table = table
        self._key = None if key is None else list(key)
        self._plain = table.insert()

    @functools.cached_property
    def _postgres(self) -> Any:
        """The PostgreSQL statement, built on first use: the dialect (with its
        asyncio driver) is not imported by a process that only uses SQLite."""
        from sqlalchemy.dialects import postgresql

        return (
            postgresql.insert(self._table)
            .on_conflict_do_nothing(index_elements=self._key)
            .execution_options(preserve_rowcount=True)
        )

    def __call__(self, conn: Connection, row: Mapping[str, Any]) -> bool:
        if conn.dialect.name == "postgresql":
            return conn.execute(self._postgres, dict(row)).rowcount == 1
        try:
            conn.execute(self._plain, dict(row))
        except IntegrityError:
            return False
        return True


class DriverStatement:
    """A Core statement compiled once per dialect and sent to the driver directly.

    SQLAlchemy 2 spends about 40 µs of Python on each execution of a Core statement
    (parameter processing, cache lookup, result set-up). Calling the object sends the
    compiled SQL with ``exec_driver_sql`` (about 9 µs, still through the engine's
    events, and streamable); :meth:`first`, :meth:`run` and :meth:`many` go to the
    driver's cursor inside the connection's transaction (about 3 µs), translating its
    errors themselves. The ledger's write path runs a handful of statements per
    append, which is where this matters; SQLAlchemy offers no cheaper path, so this
    layer is written here. The price: parameters reach the driver as they are, with
    no type processing, so the caller passes values the driver takes natively
    (:func:`stored_timestamp` for a time), and rows come back as the driver returns
    them (which is what the audit wants: see ``assay.ledger._chain_audit``).
    """

    def __init__(self, statement: sa.ClauseElement) -> None:
        self._statement = statement
        self._compiled: dict[str, tuple[str, tuple[str, ...] | None, dict[str, Any]]] = {}

    def __call__(
        self, conn: Connection, params: Mapping[str, Any]
    ) -> sa.CursorResult[*tuple[Any, ...]]:
        sql, args = self._bound(conn, params)
        return conn.exec_driver_sql(sql, args)

    def first(self, conn: Connection, params: Mapping[str, Any]) -> tuple[Any, ...] | None:
        """The first row of a query, run on the driver's own cursor (see :meth:`run`)."""
        cursor = self._raw(conn, params)
        try:
            row = cursor.fetchone()
        finally:
            cursor.close()
        return None if row is None else tuple(row)

    def run(self, conn: Connection, params: Mapping[str, Any]) -> int:
        """Run a statement on the driver's own cursor, inside the connection's
        transaction, and return its row count: the append path's statements, where
        even ``exec_driver_sql``'s 9 µs is most of a statement's cost. Driver errors
        are translated as the engine's ``handle_error`` would (a refusal of the
        append-only triggers is :class:`LedgerWriteRefused`, anything else the
        SQLAlchemy exception of its kind, e.g. ``IntegrityError``)."""
        cursor = self._raw(conn, params)
        try:
            return cursor.rowcount
        finally:
            cursor.close()

    def _raw(self, conn: Connection, params: Mapping[str, Any]) -> Any:
        sql, args = self._bound(conn, params)
        driver = conn.connection.driver_connection
        assert driver is not None
        cursor = driver.cursor()
        try:
            cursor.execute(sql, args)
        except conn.dialect.loaded_dbapi.Error as exc:
            cursor.close()
            if APPEND_ONLY_MARKER in str(exc):
                refusal = str(exc).strip().splitlines()[0]
                raise LedgerWriteRefused(f"the database refused the write ({refusal})") from exc
            raise DBAPIError.instance(
                sql, args, exc, conn.dialect.loaded_dbapi.Error, dialect=conn.dialect
            ) from exc
        return cursor

    def many(self, conn: Connection, rows: Sequence[Mapping[str, Any]]) -> None:
        """Run the statement once per row through the driver's ``executemany``
        (sqlite3 loops in C; psycopg sends the rows in one pipeline)."""
        if not rows:
            return
        sql = self._compiled_for(conn)[0]
        conn.exec_driver_sql(sql, [self._bound(conn, row)[1] for row in rows])

    def _bound(self, conn: Connection, params: Mapping[str, Any]) -> tuple[str, Any]:
        """The SQL for ``conn``'s dialect and ``params`` (with the statement's own
        values) in its parameter style: a dict, or a tuple in placeholder order."""
        sql, order, fixed = self._compiled_for(conn)
        values = {**fixed, **params} if fixed else params
        if order is None:
            return sql, dict(values)
        return sql, tuple(values[name] for name in order)

    def _compiled_for(self, conn: Connection) -> tuple[str, tuple[str, ...] | None, dict[str, Any]]:
        found = self._compiled.get(conn.dialect.name)
        if found is None:
            compiled = cast("SQLCompiler", self._statement.compile(dialect=conn.dialect))
            order = tuple(compiled.positiontup or ()) if compiled.positional else None
            # Values written into the statement itself (``column == 1``) are bound
            # parameters too; they are sent with the caller's.
            fixed: dict[str, Any] = {
                name: bind.effective_value
                for name, bind in compiled.binds.items()
                if not bind.required
            }
            found = (compiled.string, order, fixed)
            self._compiled[conn.dialect.name] = found
        return found


def stored_timestamp(conn: Connection, value: datetime) -> datetime | str:
    """``value`` as the driver takes it for a ``DateTime(timezone=True)`` column:
    itself for PostgreSQL, SQLAlchemy's SQLite text form (UTC, microseconds) for
    SQLite, so that Core reads it back exactly as if Core had written it."""
    if conn.dialect.name != "sqlite":
        return value
    if value.tzinfo is not UTC:
        value = value.astimezone(UTC)
    return value.replace(tzinfo=None).isoformat(sep=" ", timespec="microseconds")


def _translate_driver_error(context: sa.engine.ExceptionContext) -> BaseException | None:
    original = context.original_exception
    if context.is_pre_ping:
        return None  # the pool reconnects on a failed ping; only the reconnect may fail
    if context.connection is None and context.engine is not None:
        return _connect_error(context.engine.url, original)
    if APPEND_ONLY_MARKER in str(original):
        refusal = str(original).strip().splitlines()[0]
        return LedgerWriteRefused(f"the database refused the write ({refusal})")
    if isinstance(context.sqlalchemy_exception, DBAPIError) and context.is_disconnect:
        return DatabaseError(f"lost the database connection: {original}")
    return None


# What a refused connection says when the URL, not the server, is wrong: the same URL
# fails again. libpq gives no SQLSTATE for a refused connection, only its message.
_POSTGRES_MISTAKES = re.compile(
    r"authentication failed|does not exist|no pg_hba\.conf"
    r"|not permitted to log in|permission denied for database|no password supplied"
    r"|invalid (?:port|sslmode|connection option|integer value)"
)
_SQLITE_MISTAKES = ("SQLITE_NOTADB", "SQLITE_CANTOPEN", "SQLITE_PERM", "SQLITE_READONLY")


def _connect_error(url: sa.URL, original: BaseException) -> DatabaseError | ConfigurationError:
    """A failure to open the database at ``url`` as one line naming it (password
    hidden) and the driver's cause: :class:`ConfigurationError` when the URL names
    something unusable (a wrong password, an unknown database or role, a file that is
    no SQLite database, a directory, a file that cannot be read), else
    :class:`DatabaseError` (a server that does not answer, a damaged file)."""
    where = url.render_as_string(hide_password=True)
    cause = _one_line(str(original)).removeprefix("connection failed: ")
    if url.get_backend_name() == "sqlite":
        name = getattr(original, "sqlite_errorname", "")
        mistake = name in _SQLITE_MISTAKES
        path = Path(url.database or "").expanduser()
        if name == "SQLITE_NOTADB":
            cause = f"the file is not a SQLite database ({cause})"
        elif name == "SQLITE_CANTOPEN" and path.is_dir():
            cause = "it is a directory, not a SQLite file"
        elif name == "SQLITE_CANTOPEN" and path.exists() and not os.access(path, os.R_OK):
            cause = f"permission denied: the file cannot be read ({cause})"
    else:
        mistake = bool(_POSTGRES_MISTAKES.search(cause))
    error = ConfigurationError if mistake else DatabaseError
    return error(f"cannot open the database {where}: {cause}")


def _one_line(text: str) -> str:
    """``text`` on one line: its lines joined, runs of white space made one space."""
    return " ".join(text.split())


_PASSWORD = re.compile(r"(://[^:/@\s]*:)[^@\s]*@")


def _redacted(url: str) -> str:
    """A URL that did not parse, with anything in the place of a password hidden."""
    return _PASSWORD.sub(r"\1***@", url)


@contextmanager
def driver_errors(what: str = "database error") -> Generator[None, None, None]:
    """Translate a driver error reaching a component's boundary into
    :class:`DatabaseError` (``what`` opens the message), for the paths that
    ``handle_error`` does not cover, such as errors raised while committing."""
    try:
        yield
    except DBAPIError as exc:
        raise DatabaseError(f"{what}: {exc.orig}") from exc


# --- migrations ---------------------------------------------------------------------
# A database at the newest revision (what almost every open finds) is recognised
# without importing Alembic, which costs more than a short command's work: from the
# migration files' revision lines and the version table. Anything else is Alembic's.


def alembic_config(connection: Connection | None = None) -> Config:
    """Alembic configuration pointing at the migrations shipped inside the package."""
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(files("assay.migrations")))
    if connection is not None:
        cfg.attributes["connection"] = connection
    return cfg


_REVISION = re.compile(r"^revision(?:\s*:\s*str)?\s*=\s*(['\"])([^'\"]+)\1", re.MULTILINE)
_DOWN = re.compile(r"^down_revision(?:\s*:[^=]*)?=\s*(?:None|(['\"])([^'\"]+)\1)\s*$", re.MULTILINE)


@functools.cache
def head_revision() -> str | None:
    """The newest revision of the migrations shipped inside the package."""
    revisions: set[str] = set()
    parents: set[str] = set()
    for path in files("assay.migrations").joinpath("versions").iterdir():
        if not path.name.endswith(".py") or path.name.startswith("_"):
            continue
        text = path.read_text(encoding="utf-8")
        revision, down = _REVISION.search(text), _DOWN.search(text)
        if revision is None or down is None:
            return _alembic_head()  # a file written another way: Alembic reads it
        revisions.add(revision.group(2))
        if down.group(2):
            parents.add(down.group(2))
    heads = revisions - parents
    return heads.pop() if len(heads) == 1 else _alembic_head()


def _alembic_head() -> str | None:
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(alembic_config()).get_current_head()


def current_revision(engine: Engine) -> str | None:
    """The revision the database's schema is at (``None``: nothing migrated)."""
    with engine.connect() as conn:
        if not sa.inspect(conn).has_table(VERSION_TABLE):
            return None
        rows = conn.execute(sa.text(f"SELECT version_num FROM {VERSION_TABLE}")).all()
        if len(rows) <= 1:
            return str(rows[0][0]) if rows else None
        from alembic.runtime.migration import MigrationContext

        ctx = MigrationContext.configure(conn, opts={"version_table": VERSION_TABLE})
        return ctx.get_current_revision()  # several rows: Alembic says what they mean


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Bring the schema to ``revision`` under :func:`schema_lock` and the write lock,
    so that two processes opening a fresh database at once do not both create it. A
    database already at the newest revision is left alone, without taking the lock."""
    if revision == "head" and current_revision(engine) == head_revision():
        return
    from alembic import command

    with schema_lock(engine), write_transaction(engine) as conn:
        command.upgrade(alembic_config(conn), revision)


@contextmanager
def schema_lock(engine: Engine) -> Generator[None, None, None]:
    """Hold the lock under which every schema change to the database is made: assay's
    migrations and the setup of LangGraph's checkpoint tables, so that any number of
    processes may open a fresh database at once.

    On PostgreSQL it is a session advisory lock, held on a connection of its own
    outside any transaction and waited for by polling ``pg_try_advisory_lock``:
    LangGraph's setup builds its indexes ``CONCURRENTLY``, which waits for every
    older snapshot in the database, and a process blocked inside
    ``pg_advisory_lock`` holds one, so the holder would wait for its own waiters.
    A process that dies holding the lock ends its session, and the lock with it.

    On SQLite nothing more is held here: SQLite makes every schema change under its
    one write lock (assay's migrations in a single ``BEGIN IMMEDIATE`` transaction,
    LangGraph's setup statement by statement, each idempotent), and a lock held on
    another connection across the setup would only keep the setup from writing.
    """
    if engine.dialect.name != "postgresql":
        yield
        return
    with engine.connect() as conn:
        conn = conn.execution_options(isolation_level="AUTOCOMMIT")
        _wait_for_advisory_lock(conn)
        try:
            yield
        finally:
            try:
                conn.execute(sa.text("SELECT pg_advisory_unlock(hashtext(:key))"), _LOCK_KEY)
            except (DBAPIError, DatabaseError):
                conn.invalidate()  # the session ends, and its lock with it


_LOCK_KEY = {"key": "assay_migrations"}
_LOCK_POLL_S = (0.005, 0.25)


def _wait_for_advisory_lock(conn: Connection) -> None:
    """Take the schema lock, polling with a growing pause; between two attempts this
    session holds no snapshot, so nothing waits for it."""
    pause, longest = _LOCK_POLL_S
    try_lock = sa.text("SELECT pg_try_advisory_lock(hashtext(:key))")
    while not conn.execute(try_lock, _LOCK_KEY).scalar():
        time.sleep(pause)
        pause = min(pause * 2, longest)
