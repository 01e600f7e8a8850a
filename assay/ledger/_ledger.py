"""The append-only, content-hashed, hash-chained ledger.

Appends to one run are serialised by the database: SQLite takes its write lock at
``BEGIN IMMEDIATE``; PostgreSQL locks the run's head row (``SELECT … FOR UPDATE``).
Under that lock the ledger reads the head, links the new entry to it and advances
it, so ``seq`` runs 1..n without gaps however many threads or processes append.
The migration's triggers refuse any other change, from any client. A batch
(:meth:`Ledger.batch`) appends several entries the same way under one lock and
one commit, which is what a component that records several things at once uses.
"""

from __future__ import annotations

import functools
import json
import secrets
import threading
from collections.abc import Callable, Generator, Iterable, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine, Row

from assay._db import driver_errors, read_connection, write_transaction
from assay._limits import MAX_RUN_ID_CHARS, check_text
from assay.errors import InvalidEntry, UnknownEntry, UnknownKind, UnknownRun
from assay.ledger import _tables as t
from assay.ledger._append import (
    Head,
    LedgerBatch,
    check_kind,
    check_run_id,
    checked_metadata,
    entry_from_row,
    lock_head,
    prepare,
    write,
)
from assay.ledger._hashing import entry_hash, entry_id_for, sha256_hex
from assay.ledger._records import (
    ALL_KINDS,
    EVIDENCE_KINDS,
    GENESIS_HASH,
    ChainReport,
    LedgerEntry,
    RunInfo,
)

DEFAULT_MAX_CONTENT_BYTES = 10 * 1024 * 1024
_VERIFY_BATCH = 500
# Statements run on every call, built once (see the write path's in ``_append``).
_INSERT_RUN = t.runs.insert()
_RUN = sa.select(t.runs).where(t.runs.c.run_id == sa.bindparam("run"))
_RUN_ENTRIES = (
    sa.select(t.entries).where(t.entries.c.run_id == sa.bindparam("run")).order_by(t.entries.c.seq)
)
#: Up to this many ids (or kinds) are looked up with a statement built for that many
#: parameters, made once: an "expanding" IN is rewritten on every execution, which
#: costs more than looking up a few entries. More ids go by an expanding IN, in
#: chunks of ``_IN_CHUNK`` (well under either engine's limit of parameters).
_IN_LIST = 32
_IN_CHUNK = 500
_ENTRIES_BY_IDS = sa.select(t.entries).where(
    t.entries.c.entry_id.in_(sa.bindparam("ids", expanding=True))
)


@functools.cache
def _entries_by_id(count: int) -> sa.Select[Any]:
    ids = [sa.bindparam(f"id{i}") for i in range(count)]
    return sa.select(t.entries).where(t.entries.c.entry_id.in_(ids))


@functools.cache
def _run_entries_of_kinds(count: int) -> sa.Select[Any]:
    kinds = [sa.bindparam(f"kind{i}") for i in range(count)]
    return (
        sa.select(t.entries)
        .where(t.entries.c.run_id == sa.bindparam("run"), t.entries.c.kind.in_(kinds))
        .order_by(t.entries.c.seq)
    )


#: How many run ids a ledger remembers as existing (see :class:`_KnownRuns`).
_KNOWN_RUNS = 4096


class Ledger:
    """Append-only evidence and audit store, shared by every component of a run.

    Every argument is checked before anything is written, each field against one
    limit (see ``assay._limits``): content against ``max_content_bytes``, a source
    against ``MAX_SOURCE_CHARS`` (and control characters, NUL among them, which
    PostgreSQL text cannot hold, so both engines accept exactly the same entries),
    metadata against ``MAX_JSON_DEPTH`` and ``MAX_METADATA_BYTES``. A bad value raises
    a :class:`~assay.errors.UsageError` of the ledger's own (``UnknownRun``,
    ``UnknownKind``, ``InvalidEntry``, ``InvalidMetadata``, ``ContentTooLarge``),
    never a driver's or a serializer's exception.
    """

    def __init__(self, engine: Engine, *, max_content_bytes: int = DEFAULT_MAX_CONTENT_BYTES):
        if (
            not isinstance(max_content_bytes, int)
            or isinstance(max_content_bytes, bool)
            or max_content_bytes <= 0
        ):
            raise InvalidEntry("max_content_bytes must be a positive integer")
        self._engine = engine
        self.max_content_bytes = max_content_bytes
        self._known_runs = _KnownRuns(_KNOWN_RUNS)

    # --- writing --------------------------------------------------------------------

    def start_run(self, *, metadata: Mapping[str, Any] | None = None) -> str:
        """Open a new, empty run and return its id (``run_`` + 32 hex).

        Raises :class:`~assay.errors.InvalidMetadata` for metadata that is not a JSON
        object, is nested too deep or is too large; nothing is written then.
        """
        with self.start_run_batch(metadata=metadata) as batch:
            pass
        return batch.run_id

    @contextmanager
    def start_run_batch(
        self, *, metadata: Mapping[str, Any] | None = None
    ) -> Generator[LedgerBatch, None, None]:
        """Open a new run and append its first entries in the same transaction: a
        :meth:`batch` on a run that exists only if the ``with`` block ends normally.

        Raises :class:`~assay.errors.InvalidMetadata` as :meth:`start_run` does.
        """
        _, meta_text = checked_metadata(metadata)
        run_id = "run_" + secrets.token_hex(16)
        with driver_errors(), write_transaction(self._engine) as conn:
            conn.execute(
                _INSERT_RUN,
                {
                    "run_id": run_id,
                    "created_at": datetime.now(UTC),
                    "metadata_json": meta_text,
                    "head_seq": 0,
                    "head_hash": GENESIS_HASH,
                },
            )
            head = Head(seq=0, hash=GENESIS_HASH)
            batch = LedgerBatch(conn, run_id, head, max_content_bytes=self.max_content_bytes)
            try:
                yield batch
            finally:
                batch.close()
        self._known_runs.add(run_id)

    def append(
        self,
        run_id: str,
        *,
        kind: str,
        source: str,
        content: str | bytes,
        metadata: Mapping[str, Any] | None = None,
        on_append: Callable[[Connection, LedgerEntry], None] | None = None,
    ) -> LedgerEntry:
        """Append one entry to ``run_id`` and return it.

        Appending the same (run, kind, source, content, metadata) again returns the
        entry already stored and writes nothing. Nothing is written when any argument
        is invalid: :class:`~assay.errors.UnknownRun` (also for a run id no run can
        have), :class:`~assay.errors.UnknownKind`, :class:`~assay.errors.InvalidEntry`
        (source, content type or text), :class:`~assay.errors.ContentTooLarge`,
        :class:`~assay.errors.InvalidMetadata`.

        ``on_append(connection, entry)`` runs inside the same transaction, after the
        entry is written and while the run's head is locked, so that a component can
        write a row that must exist exactly when its ledger record does (a grant);
        if it raises, neither is written and the exception propagates. It is not
        called when an identical entry already exists.
        """
        item = prepare(
            run_id,
            kind=kind,
            source=source,
            content=content,
            metadata=metadata,
            max_content_bytes=self.max_content_bytes,
        )
        with driver_errors(), write_transaction(self._engine) as conn:
            entry, _, created = write(conn, lock_head(conn, run_id), item)
            if created and on_append is not None:
                on_append(conn, entry)
        self._known_runs.add(run_id)
        return entry

    @contextmanager
    def batch(self, run_id: str) -> Generator[LedgerBatch, None, None]:
        """Append several entries to ``run_id`` in one transaction: one lock of the
        run's head and one commit, however many entries.

        Each ``batch.append(...)`` is checked, deduplicated and chained exactly as
        :meth:`append` would, and returns its entry at once (a later entry may cite
        an earlier one's id). The entries are kept only if the ``with`` block ends
        normally: an invalid entry, or any exception raised inside the block, writes
        none of them. The block holds the database's write lock (SQLite) or the run's
        head (PostgreSQL), so do the slow work, a model's above all, before it.

        Raises :class:`~assay.errors.UnknownRun` for a run the ledger does not hold.
        """
        check_run_id(run_id)
        with driver_errors(), write_transaction(self._engine) as conn:
            batch = LedgerBatch(
                conn, run_id, lock_head(conn, run_id), max_content_bytes=self.max_content_bytes
            )
            try:
                yield batch
            finally:
                batch.close()
        self._known_runs.add(run_id)

    # --- reading --------------------------------------------------------------------

    def get(self, entry_id: str) -> LedgerEntry:
        """The entry with this id; :class:`UnknownEntry` if there is none."""
        found = self.get_many([entry_id])
        if entry_id not in found:
            raise UnknownEntry(f"no ledger entry {entry_id!r}")
        return found[entry_id]

    def get_many(self, entry_ids: Iterable[str]) -> dict[str, LedgerEntry]:
        """The entries among ``entry_ids`` that exist, by id (missing ids are absent)."""
        ids = sorted({i for i in entry_ids if _usable_id(i)})
        if not ids:
            return {}
        if len(ids) <= _IN_LIST:
            queries = [(_entries_by_id(len(ids)), {f"id{i}": v for i, v in enumerate(ids)})]
        else:
            chunks = (ids[i : i + _IN_CHUNK] for i in range(0, len(ids), _IN_CHUNK))
            queries = [(_ENTRIES_BY_IDS, {"ids": chunk}) for chunk in chunks]
        found: dict[str, LedgerEntry] = {}
        # Each statement is a snapshot of its own; entries are never changed or removed,
        # so what one finds is still there when the next runs.
        with driver_errors(), read_connection(self._engine) as conn:
            for query, params in queries:
                for row in conn.execute(query, params):
                    entry = entry_from_row(row)
                    found[entry.id] = entry
        return found

    def entries(self, run_id: str, *, kinds: Iterable[str] | None = None) -> list[LedgerEntry]:
        """The run's entries in chain order, optionally only of some kinds.

        Raises :class:`~assay.errors.UnknownRun` for a run the ledger does not hold,
        :class:`~assay.errors.UnknownKind` for a kind that does not exist.
        """
        check_run_id(run_id)
        query, params = _RUN_ENTRIES, {"run": run_id}
        if kinds is not None:
            if isinstance(kinds, str):
                self.require_run(run_id)
                raise UnknownKind(f"kinds must be a collection of kinds, not the string {kinds!r}")
            wanted = list(kinds)
            for kind in wanted:
                if not isinstance(kind, str) or kind not in ALL_KINDS:
                    self.require_run(run_id)  # an unknown run is still reported first
                    check_kind(kind)
            wanted = sorted(set(wanted))
            query = _run_entries_of_kinds(len(wanted))
            params = {"run": run_id, **{f"kind{i}": kind for i, kind in enumerate(wanted)}}
        with driver_errors(), read_connection(self._engine) as conn:
            found = [entry_from_row(row) for row in conn.execute(query, params)]
        if not found:
            self.require_run(run_id)  # an empty answer is only right for a run that exists
        return found

    def evidence(self, run_id: str) -> list[LedgerEntry]:
        """The run's citable entries (retrieval, tool output, human facts)."""
        return self.entries(run_id, kinds=sorted(EVIDENCE_KINDS))

    def run(self, run_id: str) -> RunInfo:
        """The run and its head; :class:`UnknownRun` if there is none."""
        check_run_id(run_id)
        with driver_errors(), read_connection(self._engine) as conn:
            row = conn.execute(_RUN, {"run": run_id}).first()
        if row is None:
            raise UnknownRun(f"no run {run_id!r} in this ledger")
        self._known_runs.add(run_id)
        return _run_from_row(row)

    def require_run(self, run_id: str) -> None:
        """Raise :class:`~assay.errors.UnknownRun` unless the run exists.

        Runs are never deleted (the database refuses it), so a run this ledger has
        seen once is remembered and asked about again without a query: a component
        that checks its run on every call costs nothing after the first.
        """
        check_run_id(run_id)
        if run_id not in self._known_runs:
            self.run(run_id)

    def head(self, run_id: str) -> str:
        """The run's head hash: the last entry's hash, or 64 zeros when empty."""
        return self.run(run_id).head_hash

    def runs(self) -> list[RunInfo]:
        """Every run, oldest first."""
        with driver_errors(), self._engine.connect() as conn:
            rows = conn.execute(sa.select(t.runs).order_by(t.runs.c.created_at, t.runs.c.run_id))
            return [_run_from_row(row) for row in rows]

    # --- verification ---------------------------------------------------------------

    def verify(self, run_id: str | None = None) -> ChainReport:
        """Re-derive every hash of one run (or of all runs) from the stored rows.

        Detects edited content, kind, source or metadata, an edited hash, a removed,
        inserted or reordered entry, and a head that no longer matches the chain.
        Stops at the first bad entry and names it.
        """
        if run_id is not None:
            check_run_id(run_id)
        run_ids = [run_id] if run_id is not None else [r.run_id for r in self.runs()]
        checked = 0
        with driver_errors(), self._engine.connect() as conn:
            for rid in run_ids:
                head = conn.execute(sa.select(t.runs).where(t.runs.c.run_id == rid)).first()
                if head is None:
                    raise UnknownRun(f"no run {rid!r} in this ledger")
                report = _verify_run(conn, head)
                checked += report.checked
                if not report.ok:
                    return ChainReport(
                        ok=False,
                        checked=checked,
                        first_bad_seq=report.first_bad_seq,
                        reason=report.reason,
                        run_id=rid,
                        entry_id=report.entry_id,
                        runs=len(run_ids),
                    )
        return ChainReport(ok=True, checked=checked, runs=len(run_ids))


def _verify_run(conn: sa.Connection, head: Row[Any]) -> ChainReport:
    expected_seq, prev_hash, checked = 1, GENESIS_HASH, 0
    rows = conn.execution_options(yield_per=_VERIFY_BATCH).execute(
        sa.select(t.entries).where(t.entries.c.run_id == head.run_id).order_by(t.entries.c.seq)
    )
    for row in rows:
        reason = _row_problem(row, expected_seq, prev_hash)
        if reason is not None:
            rows.close()
            bad_seq = expected_seq if row.seq != expected_seq else row.seq
            return ChainReport(
                ok=False,
                checked=checked,
                first_bad_seq=bad_seq,
                reason=reason,
                entry_id=row.entry_id,
            )
        checked += 1
        expected_seq, prev_hash = row.seq + 1, row.entry_hash
    if head.head_seq != expected_seq - 1 or head.head_hash != prev_hash:
        return ChainReport(
            ok=False,
            checked=checked,
            first_bad_seq=expected_seq,
            reason=(
                f"the run's head is seq {head.head_seq} but the chain ends at seq "
                f"{expected_seq - 1}: entries were removed or the head was edited"
            ),
        )
    return ChainReport(ok=True, checked=checked)


def _row_problem(row: Row[Any], expected_seq: int, prev_hash: str) -> str | None:
    if row.seq != expected_seq:
        return f"entry seq {expected_seq} is missing (the next stored entry is seq {row.seq})"
    if sha256_hex(bytes(row.content)) != row.content_sha256:
        return "content was edited: its sha256 no longer matches the stored digest"
    if row.prev_hash != prev_hash:
        return f"broken link: prev_hash does not match the hash of entry seq {row.seq - 1}"
    try:
        meta = json.loads(row.metadata_json)
    except ValueError:
        return "metadata was edited: it is no longer valid JSON"
    recomputed = entry_hash(
        run_id=row.run_id,
        seq=row.seq,
        kind=row.kind,
        source=row.source,
        content_sha256=row.content_sha256,
        metadata=meta,
        prev_hash=row.prev_hash,
    )
    if recomputed != row.entry_hash:
        return "entry hash mismatch: kind, source, metadata, digest or hash was edited"
    if row.entry_id != entry_id_for(row.entry_hash):
        return "entry id does not match the entry hash"
    return None


def _usable_id(value: object) -> bool:
    return check_text(value, field="id", max_chars=MAX_RUN_ID_CHARS) is None


def _utc(value: datetime) -> datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def _run_from_row(row: Row[Any]) -> RunInfo:
    return RunInfo(
        run_id=row.run_id,
        created_at=_utc(row.created_at),
        metadata=json.loads(row.metadata_json),
        head_seq=row.head_seq,
        head_hash=row.head_hash,
    )


class _KnownRuns:
    """Run ids known to exist, at most ``limit`` of them (the oldest forgotten first):
    a run, once it exists, always will, so remembering one is never wrong."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._ids: dict[str, None] = {}
        self._lock = threading.Lock()

    def __contains__(self, run_id: object) -> bool:
        return run_id in self._ids

    def add(self, run_id: str) -> None:
        with self._lock:
            if run_id in self._ids:
                return
            if len(self._ids) >= self._limit:
                del self._ids[next(iter(self._ids))]
            self._ids[run_id] = None
