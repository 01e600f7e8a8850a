"""Re-deriving the ledger from its stored rows: each run's chain and the Merkle log.

Whoever can write to the database can put any value of any type in any column (with
the triggers dropped, or as a superuser), change a column's type, and insert, delete
or renumber rows. Reading for an audit therefore never trusts a column: the ledger's
schema is compared with the one it writes first, rows are fetched as the driver
returns them (no type processing; SQLite text that is not UTF-8 and PostgreSQL times
beyond year 9999 come back as values to report, not errors), every value is checked
(:mod:`assay.ledger._stored_rows`) before it is used, and the first bad entry is reported
with a reason. Everything stored is compared with what the ledger would have
written: every hash, the exact metadata text and time text, the dedup key, and no
row may stand outside a run's chain, the log or a run. Nothing here raises for
stored data; only the database's own failures propagate.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from assay._db import DriverStatement
from assay.errors import LedgerCorrupted
from assay.ledger import _tables as t
from assay.ledger._hashing import (
    ENTRY_FORMAT,
    canonical_json,
    dedup_key,
    entry_hash,
    entry_id_for,
    format_fields,
    run_hash,
    sha256_hex,
)
from assay.ledger._merkle import HASH_SIZE, Frontier, leaf_hash
from assay.ledger._records import GENESIS_HASH, ChainReport
from assay.ledger._stored_rows import (
    StoredEntry,
    check_schema,
    shown,
    stored_entry,
    stored_run,
    tolerant_text,
    unreadable_text,
)

_VERIFY_BATCH = 500
_HEX = frozenset("0123456789abcdef")
#: Rows out of their place (a seq or leaf index that is not the next one) set aside
#: while a walk goes on, to name the entry that belongs where the walk breaks.
_STRAYS = 16
#: PostgreSQL times outside these are read as text (Python's datetime stops at year
#: 9999, so the driver cannot load them); a day's margin covers any time zone.
_EARLIEST = datetime(1, 1, 2, tzinfo=UTC)
_LATEST = datetime(9999, 12, 30, tzinfo=UTC)


def _time_columns(column: sa.Column[Any], postgres: bool) -> list[sa.ColumnElement[Any]]:
    """A time column as two: the time when the driver can load it, and otherwise its
    text (PostgreSQL's ``infinity``, year 10000); SQLite stores text anyway."""
    if not postgres:
        return [column, sa.null()]
    loadable = column.between(sa.literal(_EARLIEST), sa.literal(_LATEST))
    as_text = sa.case((loadable, sa.null()), else_=sa.cast(column, sa.Text))
    return [sa.case((loadable, column)), as_text]


def _entry_columns(postgres: bool) -> list[sa.ColumnElement[Any]]:
    """Every entry column in the table's order, the time as its loadable value, and the
    time's text (see :func:`_time_columns`) last."""
    columns: list[sa.ColumnElement[Any]] = list(t.entries.columns)
    value, text_form = _time_columns(t.entries.c.created_at, postgres)
    at = [c.name for c in t.entries.columns].index("created_at")
    columns[at] = value
    return [*columns, text_form]


@dataclass(frozen=True)
class _Queries:
    run: DriverStatement
    chain: DriverStatement
    linked_in_run: DriverStatement
    linked: DriverStatement


def _queries(postgres: bool) -> _Queries:
    entry = _entry_columns(postgres)
    run_time = _time_columns(t.runs.c.created_at, postgres)
    e = t.entries.c
    return _Queries(
        run=DriverStatement(
            sa.select(
                t.runs.c.run_id,
                run_time[0],
                t.runs.c.metadata_json,
                t.runs.c.head_seq,
                t.runs.c.head_hash,
                t.runs.c.run_hash,
                run_time[1],
            ).where(t.runs.c.run_id == sa.bindparam("run"))
        ),
        chain=DriverStatement(
            sa.select(*entry).where(e.run_id == sa.bindparam("run")).order_by(e.seq)
        ),
        linked_in_run=DriverStatement(
            sa.select(*entry)
            .where(e.run_id == sa.bindparam("run"), e.prev_hash == sa.bindparam("prev"))
            .limit(1)
        ),
        linked=DriverStatement(
            sa.select(*entry).where(e.prev_hash == sa.bindparam("prev")).limit(1)
        ),
    )


_QUERIES = {False: _queries(False), True: _queries(True)}
_AT = {column.name: i for i, column in enumerate(t.entries.columns)}
_ID, _RUN, _SEQ, _PREV = _AT["entry_id"], _AT["run_id"], _AT["seq"], _AT["prev_hash"]

_LOG_ROWS = DriverStatement(
    sa.select(
        t.entries.c.entry_id,
        t.entries.c.run_id,
        t.entries.c.entry_hash,
        t.entries.c.leaf_index,
        t.entries.c.subtrees,
    ).order_by(t.entries.c.leaf_index)
)
_LOG_HEAD = DriverStatement(sa.select(t.tree.c.size, t.tree.c.frontier).where(t.tree.c.id == 1))
_TREE_IDS = DriverStatement(sa.select(t.tree.c.id))
_ORPHAN = DriverStatement(
    sa.select(t.entries.c.entry_id, t.entries.c.run_id)
    .where(~sa.exists().where(t.runs.c.run_id == t.entries.c.run_id))
    .limit(1)
)
_RUN_IDS = DriverStatement(sa.select(t.runs.c.run_id))
_RUN_IDS_IN_ORDER = DriverStatement(
    sa.select(t.runs.c.run_id).order_by(t.runs.c.created_at, t.runs.c.run_id)
)


class _Bad(Exception):
    """A stored value that fails a check; its message is the report's reason."""


def _schema_reason(problem: str) -> str:
    return f"the ledger's schema was changed: {problem}"


# --- one run's chain ------------------------------------------------------------------


def stored_run_ids(conn: Connection) -> list[str]:
    """Every run id, oldest run first. Ids a tamperer made unreadable (not text, NULL,
    text that is not UTF-8) are left out here and reported by :func:`verify_log`,
    and none are read from a changed schema (which :func:`verify_log` reports)."""
    with tolerant_text(conn):
        if check_schema(conn).blocking is not None:
            return []
        return [value for (value,) in _RUN_IDS_IN_ORDER(conn, {}) if isinstance(value, str)]


def verify_run(conn: Connection, run_id: str) -> ChainReport | None:
    """The report on one run's chain, or ``None`` when the ledger holds no such run."""
    with tolerant_text(conn):
        schema = check_schema(conn)
        if schema.blocking is not None:
            reason = _schema_reason(schema.blocking)
            return ChainReport(ok=False, checked=0, reason=reason, run_id=run_id)
        queries = _QUERIES[conn.dialect.name == "postgresql"]
        found = queries.run(conn, {"run": run_id}).first()
        if found is None:
            return None
        run = tuple(found)
        try:
            record = _run_record(run)
        except _Bad as bad:
            return ChainReport(ok=False, checked=0, first_bad_seq=0, reason=str(bad), run_id=run_id)
        walk = _Chain(conn=conn, queries=queries, run_id=run_id, record=record)
        streamed = conn.execution_options(yield_per=_VERIFY_BATCH, stream_results=True)
        with queries.chain(streamed, {"run": run_id}) as rows:
            report = walk.walk(rows, head_seq=run[3], head_hash=run[4])
    if report.ok and schema.problem is not None:
        reason = _schema_reason(schema.problem)
        return ChainReport(ok=False, checked=report.checked, reason=reason, run_id=run_id)
    return report


def _run_record(values: tuple[Any, ...]) -> str:
    """The run's stored record hash, once it is shown to match the run's row."""
    try:
        run = stored_run(values)
    except LedgerCorrupted as bad:
        raise _Bad(bad.reason) from None
    try:
        recomputed = run_hash(
            run_id=run.run_id,
            created_at=run.created_at,
            metadata=run.metadata,
            metadata_text=run.metadata_text,
        )
    except Exception as exc:
        raise _Bad(f"the run's metadata was edited: it cannot be hashed ({exc})") from None
    _need(
        recomputed == run.run_hash,
        "the run record was edited: its id, creation time or metadata no longer match its hash",
    )
    _need(
        _canonical(run.metadata) == run.metadata_text,
        "the run's metadata was edited: it is not the canonical JSON the ledger writes",
    )
    return run.run_hash


@dataclass(kw_only=True)
class _Chain:
    """One walk along a run's rows in seq order."""

    conn: Connection
    queries: _Queries
    run_id: str
    record: str

    def walk(self, rows: Iterable[Any], *, head_seq: int, head_hash: str) -> ChainReport:
        expected, prev, checked = 1, GENESIS_HASH, 0
        strays: list[tuple[Any, ...]] = []
        for raw in rows:
            values = tuple(raw)
            seq = values[_SEQ]
            if not _is_int(seq) or seq < expected:
                if len(strays) < _STRAYS:
                    strays.append(values)
                continue
            if seq > expected:
                return self._gap(expected, prev, checked, strays, values)
            try:
                entry = _entry(values)
                _check_entry(entry, prev, self.record)
            except _Bad as bad:
                return self._report(checked, expected, str(bad), values[_ID])
            checked += 1
            expected, prev = expected + 1, entry.entry_hash
        if head_seq >= expected:
            return self._gap(expected, prev, checked, strays, None, head_seq)
        if strays:
            seq = strays[0][_SEQ]
            return self._report(
                checked,
                seq if _is_int(seq) else None,
                f"an entry outside the chain is stored in this run (seq {shown(seq)}): "
                "it was inserted, copied or renumbered",
                strays[0][_ID],
            )
        if head_seq != expected - 1:
            reason = (
                f"the run's head is seq {head_seq} but the chain ends at seq {expected - 1}: "
                "the head was edited"
            )
            return self._report(checked, head_seq + 1 if head_seq >= 0 else None, reason, None)
        if head_hash != prev:
            reason = "the run's head hash does not match its last entry: the head was edited"
            return self._report(checked, expected - 1 or None, reason, None)
        return ChainReport(ok=True, checked=checked, run_id=self.run_id)

    def _gap(
        self,
        seq: int,
        prev: str,
        checked: int,
        strays: list[tuple[Any, ...]],
        after: tuple[Any, ...] | None,
        head_seq: int = 0,
    ) -> ChainReport:
        """Entry ``seq`` is not where it belongs (``after`` is the row stored next, if
        any): name the row that links to the entry before it (renumbered, or moved to
        another run), else the next row if it fails its own check (moved here), else
        say the entry is missing."""
        moved = next((row for row in strays if row[_PREV] == prev), None)
        if moved is None:
            query = self.queries.linked_in_run if seq == 1 else self.queries.linked
            found = query(self.conn, {"run": self.run_id, "prev": prev}).first()
            moved = tuple(found) if found is not None else None
        if moved is not None:
            if moved[_RUN] != self.run_id:
                change = f"its run id was edited (now {shown(moved[_RUN])})"
            else:
                change = f"its seq was edited (now {shown(moved[_SEQ])})"
            reason = f"entry seq {seq} is out of place: {change}"
            return self._report(checked, seq, reason, moved[_ID])
        if after is None:
            reason = (
                f"entry seq {seq} is missing (the run's head is seq {head_seq}): "
                "an entry was removed or renumbered"
            )
            return self._report(checked, seq, reason, None)
        problem = self._own_problem(after)
        if problem is not None:
            reason = (
                f"entry seq {seq} is missing, and the entry stored next as seq "
                f"{after[_SEQ]} does not belong here: {problem}"
            )
            return self._report(checked, seq, reason, after[_ID])
        reason = (
            f"entry seq {seq} is missing (the next stored is seq {after[_SEQ]}): "
            "an entry was removed or renumbered"
        )
        return self._report(checked, seq, reason, None)

    def _own_problem(self, values: tuple[Any, ...]) -> str | None:
        """What is wrong with an entry on its own (its link aside), or ``None``."""
        try:
            entry = _entry(values)
            _check_entry(entry, entry.prev_hash, self.record)
        except _Bad as bad:
            return str(bad)
        return None

    def _report(self, checked: int, seq: int | None, reason: str, stored_id: object) -> ChainReport:
        return ChainReport(
            ok=False,
            checked=checked,
            first_bad_seq=seq,
            reason=reason,
            run_id=self.run_id,
            entry_id=stored_id if isinstance(stored_id, str) else None,
        )


def _entry(values: Sequence[Any]) -> StoredEntry:
    try:
        return stored_entry(values, (1, ENTRY_FORMAT))
    except LedgerCorrupted as bad:
        raise _Bad(bad.reason) from None


def _check_entry(entry: StoredEntry, prev_hash: str, run_record: str) -> None:
    _need(
        entry.prev_hash == prev_hash,
        f"broken link: prev_hash does not match the hash of entry seq {entry.seq - 1}",
    )
    _need(
        sha256_hex(entry.content) == entry.sha256,
        "content was edited: its sha256 no longer matches the stored digest",
    )
    if entry.is_text:
        try:
            entry.content.decode("utf-8")
        except UnicodeDecodeError:
            raise _Bad(
                "the content's type flag was edited: binary content marked as text"
            ) from None
    extra = format_fields(
        entry.format, is_text=entry.is_text, created_at=entry.created_at, run_record=run_record
    )
    try:
        recomputed = entry_hash(
            run_id=entry.run_id,
            seq=entry.seq,
            kind=entry.kind,
            source=entry.source,
            content_sha256=entry.sha256,
            metadata=entry.metadata,
            prev_hash=entry.prev_hash,
            metadata_text=entry.metadata_text,
            extra=extra,
        )
    except Exception as exc:
        raise _Bad(f"an entry field was edited: the entry cannot be hashed ({exc})") from None
    what = (
        "kind, source, metadata, content type, creation time, run record, digest or hash"
        if extra
        else "kind, source, metadata, digest or hash"
    )
    _need(recomputed == entry.entry_hash, f"entry hash mismatch: {what} was edited")
    _need(
        entry.entry_id == entry_id_for(entry.entry_hash), "entry id does not match the entry hash"
    )
    _need(
        entry.subtrees[:HASH_SIZE] == leaf_hash(bytes.fromhex(entry.entry_hash)),
        "the entry's leaf hash in the log does not match its entry hash",
    )
    _check_stored_forms(entry)


def _check_stored_forms(entry: StoredEntry) -> None:
    """What the hash cannot see: the exact text of the metadata and the time (a hash
    covers the parsed value), and the dedup key (derived, not hashed)."""
    _need(
        _canonical(entry.metadata) == entry.metadata_text,
        "the metadata was edited: it is not the canonical JSON the ledger writes",
    )
    if entry.format == ENTRY_FORMAT:
        try:
            key = dedup_key(
                run_id=entry.run_id,
                kind=entry.kind,
                source=entry.source,
                content_sha256=entry.sha256,
                metadata=entry.metadata,
                metadata_text=entry.metadata_text,
                is_text=entry.is_text,
            )
        except Exception:
            key = None
        _need(key == entry.dedup_key, "the dedup key was edited: it does not match the entry")


# --- the Merkle log -------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class LogReport:
    """The result of rebuilding the Merkle log from every stored entry."""

    ok: bool
    size: int
    reason: str | None = None
    leaf_index: int | None = None
    entry_id: str | None = None
    run_id: str | None = None


def verify_log(conn: Connection) -> LogReport:
    """Rebuild the log leaf by leaf from the entries' hashes and compare every stored
    subtree hash and the log's head row with what the rebuild gives; then check that
    every entry belongs to a run and every run's id is readable."""
    with tolerant_text(conn):
        schema = check_schema(conn)
        if schema.blocking is not None:
            return LogReport(ok=False, size=0, reason=_schema_reason(schema.blocking))
        streamed = conn.execution_options(yield_per=_VERIFY_BATCH, stream_results=True)
        with _LOG_ROWS(streamed, {}) as rows:
            report, frontier = _rebuild_log(iter(rows))
        if report is not None:
            return report
        return (
            _check_log_head(conn, frontier)
            or _check_orphans(conn, frontier.size)
            or _check_run_ids(conn, frontier.size)
            or LogReport(
                ok=schema.problem is None,
                size=frontier.size,
                reason=None if schema.problem is None else _schema_reason(schema.problem),
            )
        )


def _rebuild_log(rows: Iterator[Any]) -> tuple[LogReport | None, Frontier]:
    frontier = Frontier()
    strays: list[tuple[Any, ...]] = []
    for raw in rows:
        values = tuple(raw)
        hash_hex, leaf, subtrees = values[2], values[3], values[4]
        expected = frontier.size
        if not _is_int(leaf) or leaf < expected:
            if len(strays) < _STRAYS:
                strays.append(values)
            continue
        if leaf > expected:
            moved = strays[0] if strays else None
            if moved is None and _belongs_at(frontier, values):
                moved = values
            if moved is None:
                moved = _out_of_order(rows, leaf)
            return _missing_leaf(expected, leaf, moved), frontier
        if not _is_hash(hash_hex):
            reason = "the entry hash was edited (not 64 hex digits)"
            return _bad_leaf(expected, reason, values), frontier
        made = b"".join(frontier.append(leaf_hash(bytes.fromhex(hash_hex))))
        if not isinstance(subtrees, bytes | memoryview) or bytes(subtrees) != made:
            reason = "the stored subtree hashes of this leaf do not match the rebuilt log"
            return _bad_leaf(expected, reason, values), frontier
    if strays:
        reason = (
            f"an entry outside the log's {frontier.size} leaves is stored (leaf index "
            f"{shown(strays[0][3])}): it was inserted, copied or its leaf index edited"
        )
        return _bad_leaf(None, reason, strays[0], size=frontier.size), frontier
    return None, frontier


def _belongs_at(frontier: Frontier, values: Sequence[Any]) -> bool:
    """Whether a row's stored subtree hashes are those of the log's next leaf: then its
    leaf index, not the row before it, was edited."""
    hash_hex, subtrees = values[2], values[4]
    if not _is_hash(hash_hex) or not isinstance(subtrees, bytes | memoryview):
        return False
    made = b"".join(frontier.copy().append(leaf_hash(bytes.fromhex(hash_hex))))
    return bytes(subtrees) == made


def _out_of_order(rows: Iterator[Any], last: int) -> tuple[Any, ...] | None:
    """The first of the remaining rows whose leaf index does not follow the one before."""
    for raw in rows:
        values = tuple(raw)
        leaf = values[3]
        if not _is_int(leaf) or leaf != last + 1:
            return values
        last = leaf
    return None


def _missing_leaf(index: int, next_index: int, moved: tuple[Any, ...] | None) -> LogReport:
    if moved is None:
        reason = (
            f"leaf {index} is missing (the next stored leaf index is {next_index}): "
            "an entry was removed"
        )
        return LogReport(ok=False, size=index, leaf_index=index, reason=reason)
    reason = f"the entry of leaf {index} is stored at leaf index {shown(moved[3])}: it was edited"
    return _bad_leaf(index, reason, moved)


def _bad_leaf(
    index: int | None, reason: str, values: Sequence[Any], *, size: int | None = None
) -> LogReport:
    entry_id, run_id = values[0], values[1]
    return LogReport(
        ok=False,
        size=size if size is not None else index or 0,
        leaf_index=index,
        reason=reason,
        entry_id=entry_id if isinstance(entry_id, str) else None,
        run_id=run_id if isinstance(run_id, str) else None,
    )


def _check_log_head(conn: Connection, frontier: Frontier) -> LogReport | None:
    ids = [value for (value,) in _TREE_IDS(conn, {})]
    if len(ids) > 1:
        return LogReport(
            ok=False, size=frontier.size, reason=f"the log's head table holds {len(ids)} rows"
        )
    head = _LOG_HEAD(conn, {}).first()
    if head is None or not ids or not _is_int(ids[0]):
        return LogReport(ok=False, size=frontier.size, reason="the log's head row is missing")
    size, stored = head
    if not _is_int(size) or size != frontier.size:
        return LogReport(
            ok=False,
            size=frontier.size,
            reason=f"the log's head says {shown(size)} leaves but {frontier.size} are stored",
        )
    if not isinstance(stored, bytes | memoryview) or bytes(stored) != frontier.to_bytes():
        return LogReport(
            ok=False, size=frontier.size, reason="the log's stored frontier was edited"
        )
    return None


def _check_orphans(conn: Connection, size: int) -> LogReport | None:
    found = _ORPHAN(conn, {}).first()
    if found is None:
        return None
    entry_id, run_id = found
    return LogReport(
        ok=False,
        size=size,
        reason=(
            f"an entry belongs to no run (its run id is {shown(run_id)}): its run id was "
            "edited or its run removed"
        ),
        entry_id=entry_id if isinstance(entry_id, str) else None,
    )


def _check_run_ids(conn: Connection, size: int) -> LogReport | None:
    for (run_id,) in _RUN_IDS(conn, {}):
        problem = unreadable_text(run_id)
        if problem is not None:
            return LogReport(ok=False, size=size, reason=f"a run's id was edited: it {problem}")
    return None


# --- checks on single values ------------------------------------------------------------


def _need(condition: bool, reason: str) -> None:
    if not condition:
        raise _Bad(reason)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_hash(value: object) -> bool:
    return isinstance(value, str) and len(value) == 64 and _HEX.issuperset(value)


def _canonical(value: dict[str, Any]) -> str | None:
    try:
        return canonical_json(value).decode("utf-8")
    except Exception:
        return None
