"""The ledger's write path: the checks an entry passes before anything is written, and
the rows an append writes under the log's and its run's locks.

One append and a batch of appends share it (:class:`Appender`): both check every
argument first, lock the Merkle log's row and the run's head once per transaction,
then per entry insert the row (unless its dedup key is taken) with its chain link,
its leaf index and the hashes of the subtrees it completes, and at the end advance
the run's head and the log's size once. The triggers accept an entry only as its
run's next link and the log's next leaf, and a head or a size only where the stored
entries put it.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Row
from sqlalchemy.exc import IntegrityError

from assay._db import DriverStatement, stored_timestamp
from assay._limits import (
    MAX_JSON_DEPTH,
    MAX_METADATA_BYTES,
    MAX_RUN_ID_CHARS,
    MAX_SOURCE_CHARS,
    check_text,
    json_problem,
    safe_repr,
)
from assay.errors import (
    ContentTooLarge,
    DatabaseError,
    InvalidEntry,
    InvalidMetadata,
    UnknownKind,
    UnknownRun,
)
from assay.ledger import _tables as t
from assay.ledger._hashing import (
    ENTRY_FORMAT,
    dedup_key,
    entry_hash,
    entry_id_for,
    format_fields,
    normalise_metadata,
    plain_json_text,
    sha256_hex,
)
from assay.ledger._merkle import Frontier, leaf_hash
from assay.ledger._records import ALL_KINDS, EVIDENCE_KINDS, RECORD_KINDS, LedgerEntry
from assay.ledger._stored_rows import entry_from_values

# The write path's statements, compiled once per dialect and sent to the driver
# directly (see ``DriverStatement``): an append runs five of them.
_LOCK_LOG = DriverStatement(
    sa.select(t.tree.c.size, t.tree.c.frontier).where(t.tree.c.id == 1).with_for_update()
)
_LOCK_HEAD = DriverStatement(
    sa.select(t.runs.c.head_seq, t.runs.c.head_hash, t.runs.c.run_hash)
    .where(t.runs.c.run_id == sa.bindparam("run"))
    .with_for_update()
)
_SAME_ENTRY = sa.select(t.entries).where(
    t.entries.c.run_id == sa.bindparam("run"), t.entries.c.dedup_key == sa.bindparam("key")
)
_SAME_ENTRIES = sa.select(t.entries).where(
    t.entries.c.run_id == sa.bindparam("run"),
    t.entries.c.dedup_key.in_(sa.bindparam("keys", expanding=True)),
)
_KEY_CHUNK = 500
_INSERT_ENTRY = DriverStatement(t.entries.insert())


@functools.cache
def _insert_entry_if_absent() -> DriverStatement:
    """PostgreSQL's insert of an entry unless its key is taken, built on first use (a
    process on SQLite does not import the dialect)."""
    from sqlalchemy.dialects import postgresql

    return DriverStatement(
        postgresql.insert(t.entries).on_conflict_do_nothing(index_elements=["run_id", "dedup_key"])
    )


_ADVANCE_HEAD = DriverStatement(
    t.runs.update()
    .where(t.runs.c.run_id == sa.bindparam("run"))
    .values(head_seq=sa.bindparam("new_seq"), head_hash=sa.bindparam("new_hash"))
)
_GROW_LOG = DriverStatement(
    t.tree.update()
    .where(t.tree.c.id == 1)
    .values(size=sa.bindparam("new_size"), frontier=sa.bindparam("new_frontier"))
)


@dataclass(frozen=True, kw_only=True)
class Prepared:
    """An append request that passed every check, with what its row needs."""

    run_id: str
    kind: str
    source: str
    content: str | bytes
    data: bytes
    is_text: bool
    digest: str
    metadata: dict[str, Any]
    metadata_text: str
    key: str


@dataclass(frozen=True, kw_only=True)
class Head:
    """A run's chain head and record hash, as read under its lock."""

    seq: int
    hash: str
    run_hash: str


def prepare(
    run_id: str,
    *,
    kind: str,
    source: str,
    content: str | bytes,
    metadata: Mapping[str, Any] | None,
    max_content_bytes: int,
) -> Prepared:
    """Check one append request; raise the ledger's usage error for a bad argument."""
    check_run_id(run_id)
    check_kind(kind)
    problem = check_text(source, field="source", max_chars=MAX_SOURCE_CHARS)
    if problem is not None:
        raise InvalidEntry(
            f"{problem}; a source names where content came from (raw data belongs "
            "in content or metadata)"
        )
    data, is_text = content_bytes(content, max_content_bytes)
    meta, meta_text = checked_metadata(metadata)
    digest = sha256_hex(data)
    return Prepared(
        run_id=run_id,
        kind=kind,
        source=source,
        content=content if is_text else data,
        data=data,
        is_text=is_text,
        digest=digest,
        metadata=meta,
        metadata_text=meta_text,
        key=dedup_key(
            run_id=run_id,
            kind=kind,
            source=source,
            content_sha256=digest,
            metadata=meta,
            metadata_text=meta_text,
            is_text=is_text,
        ),
    )


class Appender:
    """The write path of one transaction: the Merkle log and one run's head, locked
    once, then any number of entries, then the new head and log size written once.

    The log's row is locked first and the run's head second, in every transaction, so
    two appenders never wait on each other in opposite orders. On SQLite the
    transaction already holds the database's write lock (``BEGIN IMMEDIATE``); on
    PostgreSQL the log's row lock serialises every append, which is what gives the
    log one append order across runs.
    """

    def __init__(self, conn: Connection, run_id: str, head: Head | None = None) -> None:
        self._conn = conn
        self.run_id = run_id
        self._frontier: Frontier | None = None
        self._log_size = 0
        self._head = head
        self._start_seq = head.seq if head is not None else 0

    def lock(self) -> None:
        """Lock the log's row, then the run's head (unless the head was given: a run
        this transaction created, which nobody else can see). Done on the first write,
        so that a batch that appends nothing locks nothing."""
        if self._frontier is not None:
            return
        row = _LOCK_LOG.first(self._conn, {})
        if row is None:
            raise DatabaseError("the ledger's log row is missing: run `assay db upgrade`")
        self._frontier = Frontier.from_bytes(int(row[0]), bytes(row[1]))
        self._log_size = self._frontier.size
        if self._head is None:
            found = _LOCK_HEAD.first(self._conn, {"run": self.run_id})
            if found is None:
                raise UnknownRun(
                    f"no run {self.run_id!r} in this ledger; start one with start_run()"
                )
            self._head = Head(seq=int(found[0]), hash=found[1], run_hash=found[2])
            self._start_seq = self._head.seq

    def write(self, item: Prepared) -> tuple[LedgerEntry, bool]:
        """Append ``item`` after the head: the entry and whether it was written (an
        identical entry already stored is returned instead, and nothing moves)."""
        self.lock()
        entry, row, frontier = self._next(item)
        if not _insert_if_absent(self._conn, row):
            existing = self._conn.execute(
                _SAME_ENTRY, {"run": item.run_id, "key": item.key}
            ).first()
            if existing is None:  # another key of the row was taken: not a repeated append
                raise DatabaseError(f"could not append to run {item.run_id!r}: its entry exists")
            return entry_from_row(existing), False
        self._advance(entry, frontier)
        return entry, True

    def write_many(self, items: Sequence[Prepared]) -> list[LedgerEntry]:
        """Append ``items`` in order with one ``executemany``: the entries, those
        already stored (or repeated within ``items``) returned as stored.

        The dedup keys are looked up first, in one query per 500; under the log's
        lock no other transaction can store one of them meanwhile, so every row sent
        is new and the insert needs no conflict handling."""
        self.lock()
        stored = self._stored_by_key({item.key for item in items})
        entries: list[LedgerEntry] = []
        rows: list[dict[str, Any]] = []
        for item in items:
            found = stored.get(item.key)
            if found is None:
                found, row, frontier = self._next(item)
                self._advance(found, frontier)
                stored[item.key] = found
                rows.append(row)
            entries.append(found)
        if rows:
            _INSERT_ENTRY.many(self._conn, rows)
        return entries

    def _stored_by_key(self, keys: set[str]) -> dict[str, LedgerEntry]:
        ordered = sorted(keys)
        found: dict[str, LedgerEntry] = {}
        for start in range(0, len(ordered), _KEY_CHUNK):
            chunk = ordered[start : start + _KEY_CHUNK]
            for row in self._conn.execute(_SAME_ENTRIES, {"run": self.run_id, "keys": chunk}):
                entry = entry_from_row(row)
                found[row.dedup_key] = entry
        return found

    def _next(self, item: Prepared) -> tuple[LedgerEntry, dict[str, Any], Frontier]:
        """The entry ``item`` becomes after the head, its row, and the log with it."""
        head, log = self._head, self._frontier
        assert head is not None and log is not None  # lock() set both
        seq = head.seq + 1
        created_at = datetime.now(UTC)
        hash_hex = entry_hash(
            run_id=item.run_id,
            seq=seq,
            kind=item.kind,
            source=item.source,
            content_sha256=item.digest,
            metadata=item.metadata,
            prev_hash=head.hash,
            metadata_text=item.metadata_text,
            extra=format_fields(
                ENTRY_FORMAT, is_text=item.is_text, created_at=created_at, run_record=head.run_hash
            ),
        )
        frontier = log.copy()
        leaf_index = frontier.size
        subtrees = b"".join(frontier.append(leaf_hash(bytes.fromhex(hash_hex))))
        entry = LedgerEntry(
            id=entry_id_for(hash_hex),
            run_id=item.run_id,
            seq=seq,
            kind=item.kind,
            source=item.source,
            content=item.content,
            sha256=item.digest,
            metadata=item.metadata,
            prev_hash=head.hash,
            entry_hash=hash_hex,
            created_at=created_at,
            leaf_index=leaf_index,
        )
        row = {
            "entry_id": entry.id,
            "run_id": item.run_id,
            "seq": seq,
            "kind": item.kind,
            "source": item.source,
            "content": item.data,
            "is_text": item.is_text,
            "content_sha256": item.digest,
            "metadata_json": item.metadata_text,
            "prev_hash": head.hash,
            "entry_hash": hash_hex,
            "dedup_key": item.key,
            "created_at": stored_timestamp(self._conn, created_at),
            "format": ENTRY_FORMAT,
            "leaf_index": leaf_index,
            "subtrees": subtrees,
        }
        return entry, row, frontier

    def _advance(self, entry: LedgerEntry, frontier: Frontier) -> None:
        assert self._head is not None
        self._frontier = frontier
        self._head = Head(seq=entry.seq, hash=entry.entry_hash, run_hash=self._head.run_hash)

    def finish(self) -> None:
        """Write the run's new head and the log's new size, once for all entries."""
        head, log = self._head, self._frontier
        if head is None or log is None:
            return
        if head.seq != self._start_seq:
            _ADVANCE_HEAD.run(
                self._conn, {"run": self.run_id, "new_seq": head.seq, "new_hash": head.hash}
            )
            self._start_seq = head.seq
        if log.size != self._log_size:
            _GROW_LOG.run(self._conn, {"new_size": log.size, "new_frontier": log.to_bytes()})
            self._log_size = log.size

    @property
    def connection(self) -> Connection:
        return self._conn


def _insert_if_absent(conn: Connection, row: Mapping[str, Any]) -> bool:
    """Insert an entry unless its dedup key is taken; whether it was inserted.

    PostgreSQL: ``ON CONFLICT (run_id, dedup_key) DO NOTHING``, which also waits for
    a concurrent insert of the key. SQLite: a plain insert whose conflict is caught
    (the migration's triggers refuse a taken key whatever the conflict clause; the
    refused statement is undone alone and the transaction goes on)."""
    if conn.dialect.name == "postgresql":
        return _insert_entry_if_absent().run(conn, row) == 1
    try:
        _INSERT_ENTRY.run(conn, row)
    except IntegrityError:
        return False
    return True


class LedgerBatch:
    """Appends to one run inside one write transaction (see :meth:`Ledger.batch` and
    :meth:`Ledger.start_run_batch`).

    Each :meth:`append` behaves as :meth:`Ledger.append` does (the same checks, the
    same dedup, the same chain), and returns its entry at once, so a later entry of
    the batch may name an earlier one's id. Nothing is visible to others, and
    nothing is kept, until the ``with`` block ends without an exception.
    """

    def __init__(self, appender: Appender, *, max_content_bytes: int) -> None:
        self._appender: Appender | None = appender
        self._conn: Connection | None = appender.connection
        self._max_content_bytes = max_content_bytes
        self.run_id = appender.run_id
        #: The entries this batch wrote (not those it found already stored).
        self.written: list[LedgerEntry] = []

    def append(
        self,
        *,
        kind: str,
        source: str,
        content: str | bytes,
        metadata: Mapping[str, Any] | None = None,
    ) -> LedgerEntry:
        """Append one entry to the batch's run; see :meth:`Ledger.append`."""
        if self._appender is None:
            raise InvalidEntry("this ledger batch is closed: append inside its with block")
        item = prepare(
            self.run_id,
            kind=kind,
            source=source,
            content=content,
            metadata=metadata,
            max_content_bytes=self._max_content_bytes,
        )
        entry, created = self._appender.write(item)
        if created:
            self.written.append(entry)
        return entry

    @property
    def connection(self) -> Connection:
        """The batch's transaction, for rows of a component's own tables that must be
        written exactly when the batch's entries are (never for the ledger's tables,
        whose triggers refuse anything but an append)."""
        if self._conn is None:
            raise InvalidEntry("this ledger batch is closed: use it inside its with block")
        return self._conn

    def close(self) -> None:
        self._conn = None
        self._appender = None


# --- checks -------------------------------------------------------------------------


def check_run_id(run_id: object) -> None:
    """A run id that no run can have (not a string, too long, NUL or a lone surrogate)
    is an unknown run, refused before it reaches a driver."""
    problem = check_text(run_id, field="run id", max_chars=MAX_RUN_ID_CHARS)
    if problem is not None:
        raise UnknownRun(f"no run {safe_repr(run_id, 80)} in this ledger: {problem}")


def check_kind(kind: object) -> None:
    if not isinstance(kind, str):
        raise UnknownKind(f"an entry kind is a string, not {type(kind).__name__}")
    if kind not in ALL_KINDS:
        raise UnknownKind(
            f"unknown entry kind {kind!r}; evidence kinds: {', '.join(sorted(EVIDENCE_KINDS))}; "
            f"record kinds: {', '.join(sorted(RECORD_KINDS))}"
        )


def content_bytes(content: str | bytes, max_content_bytes: int) -> tuple[bytes, bool]:
    if isinstance(content, str):
        try:
            data, is_text = content.encode("utf-8"), True
        except UnicodeEncodeError as exc:
            raise InvalidEntry(
                f"content is not valid Unicode text: lone surrogate at index {exc.start}; "
                "append binary data as bytes"
            ) from None
    elif isinstance(content, bytes | bytearray | memoryview):
        data, is_text = bytes(content), False
    else:
        raise InvalidEntry(f"content must be str or bytes, not {type(content).__name__}")
    if len(data) > max_content_bytes:
        raise ContentTooLarge(len(data), max_content_bytes)
    return data, is_text


def checked_metadata(metadata: Mapping[str, Any] | None) -> tuple[dict[str, Any], str]:
    """Metadata checked against its limits, depth first (``rfc8785`` and ``json``
    recurse), then as canonical JSON; :class:`InvalidMetadata` for any failure.

    A plain ``dict`` of plain values (every append of assay's own components) is
    checked and written in one walk; anything else, and anything that fails, takes
    the general path, which says what is wrong."""
    if type(metadata) is dict:
        text = plain_json_text(metadata, max_depth=MAX_JSON_DEPTH)
        if text is not None and len(text.encode("utf-8")) <= MAX_METADATA_BYTES:
            return json.loads(text), text
    if metadata is not None and isinstance(metadata, Mapping):
        try:
            problem = json_problem(
                metadata, field="metadata", max_depth=MAX_JSON_DEPTH, max_chars=MAX_METADATA_BYTES
            )
        except Exception as exc:  # a Mapping whose iteration fails
            problem = f"metadata cannot be read: {safe_repr(exc, 200)}"
        if problem is not None:
            raise InvalidMetadata(problem)
    meta, text = normalise_metadata(metadata)
    size = len(text.encode("utf-8"))
    if size > MAX_METADATA_BYTES:
        raise InvalidMetadata(
            f"metadata is {size} bytes of canonical JSON, over the limit of "
            f"{MAX_METADATA_BYTES} bytes; store large values as content"
        )
    return meta, text


def entry_from_row(row: Row[Any]) -> LedgerEntry:
    """The entry a row of ``select(entries)`` or ``select(*ENTRY_COLUMNS)`` holds;
    :class:`~assay.errors.LedgerCorrupted` for a row the ledger could not have written."""
    return entry_from_values(tuple(row))
