"""Reading stored ledger rows back, whatever their columns hold.

The ledger writes every row itself, but whoever can write to the database can put
any value of any type in any column: text where bytes belong, a NULL, a number,
metadata that is not JSON or is nested 100 000 deep, text that is not UTF-8 (SQLite
stores what it is given), a time beyond Python's (PostgreSQL's ``infinity``), or a
column of another type altogether. The readers (``get``, ``entries``, ``run``,
``runs``…) decode rows here: every value is checked before it is used, and a row
that is not what the ledger writes raises :class:`~assay.errors.LedgerCorrupted`
naming the entry and what is wrong with it, never a ``TypeError`` or a
``UnicodeDecodeError`` from deep inside. The audit (:mod:`assay.ledger._chain_audit`)
applies the same checks and reports what they find instead of raising.

Rows are selected without SQLAlchemy's result processing (:data:`ENTRY_COLUMNS`,
:data:`RUN_COLUMNS`), so that no processor (SQLite's time parser, for one) ever sees
a tampered value, and :func:`reading` turns what the driver itself cannot load, or a
query that a changed schema refuses, into the same error.
"""

from __future__ import annotations

import json
import math
import re
import weakref
from collections.abc import Generator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from functools import cache
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import registry, sqlite
from sqlalchemy.engine import Connection
from sqlalchemy.exc import DataError, DBAPIError, OperationalError

from assay._db import DriverStatement
from assay._limits import MAX_JSON_DEPTH, MAX_METADATA_BYTES, bounded, safe_repr, visible
from assay.errors import AssayError, LedgerCorrupted
from assay.ledger import _tables as t
from assay.ledger._records import LedgerEntry, RunInfo

__all__ = [
    "ENTRY_COLUMNS",
    "RUN_COLUMNS",
    "NotText",
    "SchemaCheck",
    "StoredEntry",
    "StoredRun",
    "check_schema",
    "entry_from_values",
    "reading",
    "run_from_values",
    "shown",
    "stored_as",
    "stored_entry",
    "stored_run",
    "tolerant_text",
    "unreadable_text",
]

_HEX = frozenset("0123456789abcdef")
_MAX_SAFE_INTEGER = 2**53 - 1
_VERIFY = "run `assay ledger verify`"


def _untyped(table: sa.Table) -> tuple[sa.Label[Any], ...]:
    return tuple(sa.type_coerce(c, sa.types.NullType()).label(c.name) for c in table.columns)


#: Every column of ``ledger_entries``, in the table's order, as the driver returns it
#: (no result processing): ``sa.select(*ENTRY_COLUMNS)`` reads rows for
#: :func:`entry_from_values`.
ENTRY_COLUMNS = _untyped(t.entries)
#: Every column of ``ledger_runs`` likewise, for :func:`run_from_values`.
RUN_COLUMNS = _untyped(t.runs)

_E = {column.name: i for i, column in enumerate(t.entries.columns)}
_R = {column.name: i for i, column in enumerate(t.runs.columns)}


class _Unfit(Exception):
    """A stored value that is not what the ledger writes. ``field`` names the column in
    words; ``problem`` completes the sentence "its <field> …" ("is stored as text,
    not bytes"), so that a reader's error and the audit's report say the same thing.
    It never leaves this module: the decoders turn it into ``LedgerCorrupted``."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field} {problem}")
        self.field = field
        self.problem = problem


class NotText:
    """A SQLite text value that is not UTF-8, as :func:`tolerant_text` returns it: the
    driver would otherwise refuse the whole result at the first such cell."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data

    def __repr__(self) -> str:
        return f"<text that is not UTF-8: {self.data[:24]!r}>"


# --- reading ----------------------------------------------------------------------------


def _decode_text(data: bytes) -> str | NotText:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return NotText(data)


@contextmanager
def tolerant_text(conn: Connection) -> Generator[None, None, None]:
    """On SQLite, text cells that are not UTF-8 come back as :class:`NotText` while the
    block runs (the driver's default raises for the whole result); elsewhere nothing
    changes (PostgreSQL refuses such text on the way in)."""
    if conn.dialect.name != "sqlite":
        yield
        return
    raw: Any = conn.connection.driver_connection
    previous = raw.text_factory
    raw.text_factory = _decode_text
    try:
        yield
    finally:
        raw.text_factory = previous


@contextmanager
def reading(conn: Connection) -> Generator[None, None, None]:
    """Reads of ledger rows on ``conn``, made safe against what a tampered database holds.

    Within the block, SQLite text that is not UTF-8 is read as :class:`NotText` (so the
    decoders name the entry that holds it), and a failure to read a stored value
    becomes :class:`~assay.errors.LedgerCorrupted`: a value the driver cannot load (a
    PostgreSQL time beyond year 9999, JSON nested too deep for its loader), or a query
    that fails because a ledger table's columns were changed. A database failure that
    has nothing to do with the stored data propagates unchanged.
    """
    with tolerant_text(conn):
        try:
            yield
        except AssayError:
            raise
        except DBAPIError as exc:
            if exc.connection_invalidated or not _from_stored_data(exc):
                raise
            problem = _schema_problem_elsewhere(conn)
            if problem is not None:
                raise LedgerCorrupted(
                    f"the ledger's tables were changed: {problem}; {_VERIFY}"
                ) from exc
            raise LedgerCorrupted(
                f"a stored ledger value cannot be read ({_first_line(exc.orig)}); {_VERIFY}"
            ) from exc
        except (ValueError, TypeError, OverflowError, RecursionError, MemoryError) as exc:
            raise LedgerCorrupted(
                f"a stored ledger value cannot be read ({type(exc).__name__}: "
                f"{_first_line(exc)}); {_VERIFY}"
            ) from exc


def _first_line(exc: object) -> str:
    text = str(exc).strip().splitlines()
    return bounded(text[0] if text else type(exc).__name__, 200)


#: PostgreSQL errors that a fixed query of the ledger meets only when a table was
#: changed under it: a column or table gone, or of a type the query cannot compare.
_CHANGED_TABLE_STATES = frozenset({"42703", "42P01", "42883", "42804", "42846", "42P18"})


def _from_stored_data(exc: DBAPIError) -> bool:
    """Whether a driver error comes from what is stored rather than from the database:
    a value it cannot load or convert (a data exception), or a table changed under the
    query (PostgreSQL's undefined column, table or operator; SQLite's "no such")."""
    if isinstance(exc, DataError):
        return True
    if getattr(exc.orig, "sqlstate", None) in _CHANGED_TABLE_STATES:
        return True
    return isinstance(exc, OperationalError) and str(exc.orig).startswith("no such ")


def _schema_problem_elsewhere(conn: Connection) -> str | None:
    """The change to the ledger's schema behind a failed read, checked on a connection
    of its own (the failed one may be inside its caller's transaction, which a
    PostgreSQL error has aborted); ``None`` when that cannot be told."""
    try:
        with conn.engine.connect() as other:
            return check_schema(other).blocking
    except DBAPIError:
        return None


# --- decoding rows ----------------------------------------------------------------------


def entry_from_values(values: Sequence[Any]) -> LedgerEntry:
    """The entry a row of ``ledger_entries`` holds (all its columns, in the table's
    order, as the driver or SQLAlchemy returned them); :class:`LedgerCorrupted` when
    the row is not one the ledger could have written."""
    if len(values) != len(_E):
        raise LedgerCorrupted(f"a ledger entry row has {len(values)} columns; {_VERIFY}")
    stored_id = values[_E["entry_id"]]
    if not isinstance(stored_id, str):
        raise LedgerCorrupted(
            f"an entry of the ledger cannot be read: its id {_not('text', stored_id)}; {_VERIFY}"
        )
    try:
        return _entry(values, stored_id)
    except _Unfit as bad:
        raise LedgerCorrupted(
            f"entry {visible(stored_id, 40)} cannot be read: its {bad}; {_VERIFY}", stored_id
        ) from None


def _entry(values: Sequence[Any], entry_id: str) -> LedgerEntry:
    data = _blob(values[_E["content"]], "content")
    content: str | bytes = data
    if _flag(values[_E["is_text"]], "content type flag"):
        try:
            content = data.decode("utf-8")
        except UnicodeDecodeError:
            raise _Unfit("content", "is marked as text but is not UTF-8") from None
    return LedgerEntry(
        id=entry_id,
        run_id=_text(values[_E["run_id"]], "run id"),
        seq=_integer(values[_E["seq"]], "seq"),
        kind=_text(values[_E["kind"]], "kind"),
        source=_text(values[_E["source"]], "source"),
        content=content,
        sha256=_digest(values[_E["content_sha256"]], "content digest"),
        metadata=_metadata(values[_E["metadata_json"]], "metadata"),
        prev_hash=_digest(values[_E["prev_hash"]], "previous hash"),
        entry_hash=_digest(values[_E["entry_hash"]], "entry hash"),
        created_at=_timestamp(values[_E["created_at"]], "creation time"),
        leaf_index=_integer(values[_E["leaf_index"]], "leaf index"),
    )


def run_from_values(values: Sequence[Any]) -> RunInfo:
    """The run a row of ``ledger_runs`` holds (all its columns, in the table's order);
    :class:`LedgerCorrupted` when the row is not one the ledger could have written."""
    if len(values) != len(_R):
        raise LedgerCorrupted(f"a ledger run row has {len(values)} columns; {_VERIFY}")
    stored_id = values[_R["run_id"]]
    if not isinstance(stored_id, str):
        raise LedgerCorrupted(
            f"a run of the ledger cannot be read: its id {_not('text', stored_id)}; {_VERIFY}"
        )
    try:
        return RunInfo(
            run_id=stored_id,
            created_at=_timestamp(values[_R["created_at"]], "creation time"),
            metadata=_metadata(values[_R["metadata_json"]], "metadata"),
            head_seq=_integer(values[_R["head_seq"]], "head seq"),
            head_hash=_digest(values[_R["head_hash"]], "head hash"),
            run_hash=_digest(values[_R["run_hash"]], "record hash"),
        )
    except _Unfit as bad:
        raise LedgerCorrupted(
            f"run {visible(stored_id, 70)} cannot be read: its {bad}; {_VERIFY}"
        ) from None


# --- decoding rows for the audit ----------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class StoredEntry:
    """Every stored field of one entry, each checked for its type and its form."""

    entry_id: str
    run_id: str
    seq: int
    kind: str
    source: str
    content: bytes
    is_text: bool
    sha256: str
    metadata: dict[str, Any]
    metadata_text: str
    prev_hash: str
    entry_hash: str
    dedup_key: str
    created_at: datetime
    format: int
    leaf_index: int
    subtrees: bytes


@dataclass(frozen=True, kw_only=True)
class StoredRun:
    """Every stored field of one run, each checked for its type and its form."""

    run_id: str
    created_at: datetime
    metadata: dict[str, Any]
    metadata_text: str
    head_seq: int
    head_hash: str
    run_hash: str


def stored_entry(values: Sequence[Any], formats: tuple[int, ...]) -> StoredEntry:
    """An entry row as the audit reads it: every column in the table's order, then the
    text of a time the driver could not load (or ``None``). Stricter than
    :func:`entry_from_values`: every column is checked, and a time must be stored in
    the one form the ledger writes. :class:`LedgerCorrupted` says which field fails
    ("the content was edited: it is stored as text, not bytes")."""
    (entry_id, run_id, seq, kind, source, content, is_text, sha, metadata_text, prev_hash,
     hash_hex, dedup, created_at, fmt, leaf_index, subtrees, created_text) = values  # fmt: skip
    try:
        stored_format = _integer(fmt, "entry format")
        if stored_format not in formats:
            raise _Unfit("entry format", f"is {stored_format}, not one the ledger writes")
        trees = _blob(subtrees, "list of subtree hashes")
        if not trees or len(trees) % 32:
            raise _Unfit("list of subtree hashes", f"is {len(trees)} bytes, not whole hashes")
        return StoredEntry(
            entry_id=_text(entry_id, "entry id"),
            run_id=_text(run_id, "run id"),
            seq=_integer(seq, "seq"),
            kind=_text(kind, "kind"),
            source=_text(source, "source"),
            content=_blob(content, "content"),
            is_text=_flag(is_text, "content type flag"),
            sha256=_digest(sha, "content digest"),
            metadata=_metadata(metadata_text, "metadata"),
            metadata_text=metadata_text,
            prev_hash=_digest(prev_hash, "previous hash"),
            entry_hash=_digest(hash_hex, "entry hash"),
            dedup_key=_digest(dedup, "dedup key"),
            created_at=_stored_time(created_at, created_text, "creation time"),
            format=stored_format,
            leaf_index=_integer(leaf_index, "leaf index"),
            subtrees=trees,
        )
    except _Unfit as bad:
        stored_id = entry_id if isinstance(entry_id, str) else None
        raise LedgerCorrupted(f"the {bad.field} was edited: it {bad.problem}", stored_id) from None


def stored_run(values: Sequence[Any]) -> StoredRun:
    """A run row as the audit reads it (its columns in the table's order, then the text
    of a time the driver could not load), checked as :func:`stored_entry` checks."""
    run_id, created_at, metadata_text, head_seq, head_hash, record, created_text = values
    try:
        return StoredRun(
            run_id=_text(run_id, "id"),
            created_at=_stored_time(created_at, created_text, "creation time"),
            metadata=_metadata(metadata_text, "metadata"),
            metadata_text=metadata_text,
            head_seq=_integer(head_seq, "head seq"),
            head_hash=_digest(head_hash, "head hash"),
            run_hash=_digest(record, "record hash"),
        )
    except _Unfit as bad:
        raise LedgerCorrupted(f"the run's {bad.field} was edited: it {bad.problem}") from None


def unreadable_text(value: object) -> str | None:
    """Why a stored value is not text ("is NULL, not text"), or ``None`` if it is."""
    try:
        _text(value, "value")
    except _Unfit as bad:
        return bad.problem
    return None


def _stored_time(value: object, text_form: object, field: str) -> datetime:
    """A creation time exactly as the ledger stores it: PostgreSQL's time (one Python
    cannot hold comes as ``text_form`` and is reported), or SQLite's text in the one
    form SQLAlchemy writes (``assay._db.stored_timestamp``)."""
    if value is None and isinstance(text_form, str):
        raise _Unfit(field, f"is {shown(text_form)}, beyond the times the ledger writes")
    when = _timestamp(value, field)
    if isinstance(value, str) and value != _sqlite_time(when):
        raise _Unfit(field, f"is {shown(value)}, not a time as the ledger stores it")
    return when


def _sqlite_time(when: datetime) -> str:
    if when.utcoffset():
        when = when.astimezone(UTC)
    return (
        f"{when.year:04d}-{when.month:02d}-{when.day:02d} "
        f"{when.hour:02d}:{when.minute:02d}:{when.second:02d}.{when.microsecond:06d}"
    )


# --- checks on single values ------------------------------------------------------------


def stored_as(value: object) -> str:
    """A stored value's type, in words, for a reason."""
    if value is None:
        return "NULL"
    words = {
        bool: "a boolean",
        str: "text",
        bytes: "bytes",
        memoryview: "bytes",
        NotText: "text that is not UTF-8",
        int: "an integer",
        float: "a real number",
        Decimal: "a decimal number",
        datetime: "a time",
        dict: "a JSON object",
        list: "a list",
    }
    for kind, word in words.items():
        if isinstance(value, kind):
            return word
    return f"a value of type {type(value).__name__}"


def shown(value: object) -> str:
    """A short, safe rendering of a stored value for a reason."""
    if value is None:
        return "NULL"
    if isinstance(value, str):
        return repr(visible(value, 30))
    return safe_repr(value, 40)


def _not(wanted: str, value: object) -> str:
    if value is None:
        return f"is NULL, not {wanted}"
    if isinstance(value, NotText):
        return "is stored as text that is not UTF-8"
    return f"is stored as {stored_as(value)}, not {wanted}"


def _text(value: object, field: str) -> str:
    if isinstance(value, str):
        return value
    raise _Unfit(field, _not("text", value))


def _integer(value: object, field: str) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if value is None or isinstance(value, NotText):
        raise _Unfit(field, _not("an integer", value))
    raise _Unfit(field, f"{_not('an integer', value)} ({shown(value)})")


def _blob(value: object, field: str) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, memoryview):
        return bytes(value)
    raise _Unfit(field, _not("bytes", value))


def _flag(value: object, field: str) -> bool:
    """A boolean as stored: PostgreSQL's ``boolean``, SQLite's integer 0 or 1."""
    if isinstance(value, bool):
        return value
    if type(value) is int and value in (0, 1):
        return bool(value)
    if value is None or isinstance(value, NotText):
        raise _Unfit(field, _not("true or false", value))
    raise _Unfit(field, f"is {shown(value)}, not true or false")


def _digest(value: object, field: str) -> str:
    """A SHA-256 hash as the ledger stores it: 64 lowercase hex digits."""
    if isinstance(value, str) and len(value) == 64 and _HEX.issuperset(value):
        return value
    if not isinstance(value, str):
        raise _Unfit(field, _not("64 hex digits", value))
    raise _Unfit(field, f"is not 64 lowercase hex digits ({shown(value)})")


def _timestamp(value: object, field: str) -> datetime:
    """A creation time as stored: a datetime (PostgreSQL, or SQLAlchemy's processing)
    or SQLite's text; a naive one is UTC."""
    if isinstance(value, datetime):
        return value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    if isinstance(value, str) and len(value) <= 40:
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            pass
        else:
            return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)
    if isinstance(value, str):
        raise _Unfit(field, f"is {shown(value)}, not a time")
    raise _Unfit(field, _not("a time", value))


def _metadata(value: object, field: str) -> dict[str, Any]:
    """Stored metadata read back, refused rather than parsed when it could not have been
    written: larger or deeper than metadata can be, not a JSON object, holding a NaN,
    an infinity, an integer beyond 2**53 or a lone surrogate."""
    if not isinstance(value, str):
        raise _Unfit(field, _not("JSON text", value))
    if len(value) > 4 * MAX_METADATA_BYTES:
        raise _Unfit(field, f"is {len(value)} characters long, more than metadata can be")
    try:
        parsed = _JSON.decode(value)
    except RecursionError:
        raise _Unfit(field, "is nested deeper than metadata can be") from None
    except ValueError as exc:
        raise _Unfit(field, f"is not valid JSON ({_first_line(exc)})") from None
    if not isinstance(parsed, dict):
        raise _Unfit(field, f"is {stored_as(parsed)} in JSON, not a JSON object")
    problem = None if _plainly_fine(value) else _json_problem(parsed)
    if problem is not None:
        raise _Unfit(field, problem)
    return parsed  # pyright: ignore[reportUnknownVariableType]


def _plainly_fine(text: str) -> bool:
    """Whether metadata's text alone shows that its parsed value passes
    :func:`_json_problem`: too few brackets to nest too deep, no ``\\u`` escape (the
    only way to a lone surrogate in text read from the database), no run of 16 digits
    (the shortest integer beyond 2**53). Scanned in C: most metadata skips the walk."""
    return (
        text.count("[") + text.count("{") < MAX_JSON_DEPTH
        and "\\u" not in text
        and _LONG_NUMBER.search(text) is None
    )


def _refuse_constant(name: str) -> float:
    raise ValueError(f"{name} is not JSON")


def _finite_float(literal: str) -> float:
    value = float(literal)
    if math.isinf(value):
        raise ValueError(f"{literal[:40]} is beyond the numbers JSON holds")
    return value


#: Made once: ``json.loads`` with any option builds a new decoder per call.
_JSON = json.JSONDecoder(parse_constant=_refuse_constant, parse_float=_finite_float)
_LONG_NUMBER = re.compile(r"[0-9]{16}")


def _json_problem(value: dict[Any, Any]) -> str | None:
    """What no metadata the ledger writes can hold, found without recursion."""
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth >= MAX_JSON_DEPTH:
                return "is nested deeper than metadata can be"
            if isinstance(item, dict):
                for key in item:  # pyright: ignore[reportUnknownVariableType]
                    if not _valid_text(key):  # pyright: ignore[reportUnknownArgumentType]
                        return "holds a string that is not valid Unicode"
                children: Any = item.values()  # pyright: ignore[reportUnknownMemberType]
            else:
                children = item
            stack.extend((child, depth + 1) for child in children)
        elif isinstance(item, str):
            if not _valid_text(item):
                return "holds a string that is not valid Unicode"
        elif (
            isinstance(item, int)
            and not isinstance(item, bool)
            and not -_MAX_SAFE_INTEGER <= item <= _MAX_SAFE_INTEGER
        ):
            return "holds an integer beyond what JSON numbers hold exactly"
    return None


def _valid_text(value: str) -> bool:
    if value.isascii():
        return True
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


# --- the schema ---------------------------------------------------------------------------

_LEDGER_TABLES = (t.runs, t.entries, t.tree)

_SQLITE_COLUMNS = DriverStatement(
    sa.text(
        'SELECT m.name, p.name, p.type, p."notnull" FROM sqlite_master AS m '
        "JOIN pragma_table_info(m.name) AS p "
        "WHERE m.type = 'table' AND m.name IN ('ledger_runs', 'ledger_entries', 'ledger_tree')"
    )
)
_POSTGRES_COLUMNS = DriverStatement(
    sa.text(
        "SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull "
        "FROM pg_catalog.pg_attribute AS a JOIN pg_catalog.pg_class AS c ON c.oid = a.attrelid "
        "WHERE a.attrelid IN (to_regclass('ledger_runs'), to_regclass('ledger_entries'), "
        "to_regclass('ledger_tree')) AND a.attnum > 0 AND NOT a.attisdropped"
    )
)


@cache
def _expected_schema(dialect_name: str) -> dict[str, dict[str, str]]:
    """The declared type of every column of the ledger's tables, as the engine's
    catalog spells it (SQLite: the migration's DDL; PostgreSQL: ``format_type``)."""
    postgres = dialect_name == "postgresql"  # the dialect loaded by a PostgreSQL process only
    dialect = registry.load("postgresql")() if postgres else None
    expected: dict[str, dict[str, str]] = {}
    for table in _LEDGER_TABLES:
        columns: dict[str, str] = {}
        for column in table.columns:
            if dialect is None:
                columns[column.name] = column.type.compile(dialect=sqlite.dialect())
                continue
            name = column.type.compile(dialect=dialect).lower()
            if name.startswith("varchar"):
                name = "character varying" + name[len("varchar") :]
            columns[column.name] = name
        expected[table.name] = columns
    return expected


@dataclass(frozen=True)
class SchemaCheck:
    """How the ledger's tables differ from the schema the ledger writes.

    ``blocking`` is a difference that keeps rows from being read as the ledger's (a
    table or column missing, a PostgreSQL column of another type, whose values the
    driver loads as that type); ``problem`` is the first difference of any kind (also
    a SQLite column declared another type, which changes no stored value, a NOT NULL
    dropped, a column added). Both are ``None`` for the ledger's own schema.
    """

    blocking: str | None = None
    problem: str | None = None


#: The last check made on a connection, with the transaction it was made in: an audit
#: checks the schema once per run it verifies, all in one transaction.
_CHECKED: weakref.WeakKeyDictionary[Connection, tuple[object, SchemaCheck]] = (
    weakref.WeakKeyDictionary()
)


def check_schema(conn: Connection) -> SchemaCheck:
    """Compare the ledger's tables with the schema the ledger writes: the columns of
    each table, their declared types and NOT NULL. Only the columns: what they hold is
    the audit's business, and indexes and triggers hold no data. Made once per
    transaction of ``conn``."""
    transaction = conn.get_transaction()
    cached = _CHECKED.get(conn)
    if transaction is not None and cached is not None and cached[0] is transaction:
        return cached[1]
    found = _compare_schema(conn)
    if transaction is not None:
        _CHECKED[conn] = (transaction, found)
    return found


def _compare_schema(conn: Connection) -> SchemaCheck:
    postgres = conn.dialect.name == "postgresql"
    stored: dict[str, dict[str, tuple[object, object]]] = {}
    for table, column, declared, not_null in (_POSTGRES_COLUMNS if postgres else _SQLITE_COLUMNS)(
        conn, {}
    ):
        stored.setdefault(str(table), {})[str(column)] = (declared, not_null)
    problem: str | None = None
    for table, columns in _expected_schema(conn.dialect.name).items():
        found = stored.get(table, {})
        for name, declared in columns.items():
            if name not in found:
                missing = (
                    f"column {table}.{name} is missing" if found else f"table {table} is missing"
                )
                return SchemaCheck(blocking=missing, problem=missing)
            stored_type, not_null = found[name]
            if stored_type != declared:
                changed = (
                    f"column {table}.{name} is declared {shown(stored_type)}, not {declared!r}"
                )
                if postgres:
                    return SchemaCheck(blocking=changed, problem=changed)
                problem = problem or changed
            if not not_null:
                problem = problem or f"column {table}.{name} no longer refuses NULL"
        extra = sorted(set(found) - set(columns))
        if extra:
            problem = (
                problem
                or f"table {table} has a column the ledger does not write ({shown(extra[0])})"
            )
    return SchemaCheck(problem=problem)
