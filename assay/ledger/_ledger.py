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

import dataclasses
import functools
import os
import secrets
import threading
from collections.abc import Callable, Generator, Iterable, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, cast

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine, Row

from assay._db import driver_errors, read_connection, write_transaction
from assay._limits import MAX_RUN_ID_CHARS, check_text, safe_repr
from assay.errors import InvalidEntry, LedgerError, UnknownEntry, UnknownKind, UnknownRun
from assay.ledger import _log
from assay.ledger import _tables as t
from assay.ledger._append import (
    Appender,
    Head,
    LedgerBatch,
    Prepared,
    check_kind,
    check_run_id,
    checked_metadata,
    entry_from_row,
    prepare,
)
from assay.ledger._chain_audit import stored_run_ids, verify_log, verify_run
from assay.ledger._export import export_run
from assay.ledger._hashing import run_hash
from assay.ledger._log import InclusionProof
from assay.ledger._records import (
    ALL_KINDS,
    EVIDENCE_KINDS,
    GENESIS_HASH,
    ChainReport,
    LedgerEntry,
    RunInfo,
)
from assay.ledger._signed_checkpoint import Signer
from assay.ledger._stored_rows import ENTRY_COLUMNS, RUN_COLUMNS, reading, run_from_values

DEFAULT_MAX_CONTENT_BYTES = 10 * 1024 * 1024
_ENTRY_FIELDS = frozenset({"kind", "source", "content", "metadata"})
_VERIFY_BATCH = 500
# Statements run on every call, built once (see the write path's in ``_append``).
_INSERT_RUN = t.runs.insert()
_RUN = sa.select(*RUN_COLUMNS).where(t.runs.c.run_id == sa.bindparam("run"))
_RUN_ENTRIES = (
    sa.select(*ENTRY_COLUMNS)
    .where(t.entries.c.run_id == sa.bindparam("run"))
    .order_by(t.entries.c.seq)
)
#: Up to this many ids (or kinds) are looked up with a statement built for that many
#: parameters, made once: an "expanding" IN is rewritten on every execution, which
#: costs more than looking up a few entries. More ids go by an expanding IN, in
#: chunks of ``_IN_CHUNK`` (well under either engine's limit of parameters).
_IN_LIST = 32
_IN_CHUNK = 500
_ENTRIES_BY_IDS = sa.select(*ENTRY_COLUMNS).where(
    t.entries.c.entry_id.in_(sa.bindparam("ids", expanding=True))
)


@functools.cache
def _entries_by_id(count: int) -> sa.Select[Any]:
    ids = [sa.bindparam(f"id{i}") for i in range(count)]
    return sa.select(*ENTRY_COLUMNS).where(t.entries.c.entry_id.in_(ids))


@functools.cache
def _run_entries_of_kinds(count: int) -> sa.Select[Any]:
    kinds = [sa.bindparam(f"kind{i}") for i in range(count)]
    return (
        sa.select(*ENTRY_COLUMNS)
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
        meta, meta_text = checked_metadata(metadata)
        run_id = "run_" + secrets.token_hex(16)
        created_at = datetime.now(UTC)
        record = run_hash(
            run_id=run_id, created_at=created_at, metadata=meta, metadata_text=meta_text
        )
        with driver_errors(), write_transaction(self._engine) as conn:
            conn.execute(
                _INSERT_RUN,
                {
                    "run_id": run_id,
                    "created_at": created_at,
                    "metadata_json": meta_text,
                    "head_seq": 0,
                    "head_hash": GENESIS_HASH,
                    "run_hash": record,
                },
            )
            appender = Appender(conn, run_id, Head(seq=0, hash=GENESIS_HASH, run_hash=record))
            batch = LedgerBatch(appender, max_content_bytes=self.max_content_bytes)
            try:
                yield batch
                appender.finish()
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
            appender = Appender(conn, run_id)
            entry, created = appender.write(item)
            if created and on_append is not None:
                on_append(conn, entry)
            appender.finish()
        self._known_runs.add(run_id)
        return entry

    def append_many(self, run_id: str, entries: Iterable[Mapping[str, Any]]) -> list[LedgerEntry]:
        """Append several entries to ``run_id`` in one transaction and return them in
        order: ``entries`` are mappings of :meth:`append`'s keyword arguments
        (``kind``, ``source``, ``content`` and optionally ``metadata``).

        Every entry is checked before anything is written; one bad entry raises the
        error :meth:`append` would (its message names the entry's position) and
        writes none of them. An entry identical to one already stored, or to an
        earlier one of the same call, is returned as stored and written once.
        """
        check_run_id(run_id)
        items = [self._prepared(run_id, position, spec) for position, spec in enumerate(entries)]
        if not items:
            self.require_run(run_id)
            return []
        with driver_errors(), write_transaction(self._engine) as conn:
            appender = Appender(conn, run_id)
            written = appender.write_many(items)
            appender.finish()
        self._known_runs.add(run_id)
        return written

    def _prepared(self, run_id: str, position: int, spec: object) -> Prepared:
        if not isinstance(spec, Mapping):
            raise InvalidEntry(
                f"entry {position}: an entry is a mapping of kind, source, content and "
                f"metadata, not {type(spec).__name__}"
            )
        fields = cast("Mapping[str, Any]", spec)
        unknown = sorted(str(k) for k in fields if k not in _ENTRY_FIELDS)
        missing = [k for k in ("kind", "source", "content") if k not in fields]
        if unknown or missing:
            parts = [f"unknown field(s) {', '.join(unknown)}"] if unknown else []
            parts += [f"missing {', '.join(missing)}"] if missing else []
            raise InvalidEntry(f"entry {position}: {'; '.join(parts)}")
        try:
            return prepare(
                run_id,
                kind=fields["kind"],
                source=fields["source"],
                content=fields["content"],
                metadata=fields.get("metadata"),
                max_content_bytes=self.max_content_bytes,
            )
        except LedgerError as exc:
            exc.args = (f"entry {position}: {exc.args[0] if exc.args else exc}",)
            raise

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
            appender = Appender(conn, run_id)
            appender.lock()  # an unknown run is refused at once, not at the first append
            batch = LedgerBatch(appender, max_content_bytes=self.max_content_bytes)
            try:
                yield batch
                appender.finish()
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
        with driver_errors(), read_connection(self._engine) as conn, reading(conn):
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
        with driver_errors(), read_connection(self._engine) as conn, reading(conn):
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
        with driver_errors(), read_connection(self._engine) as conn, reading(conn):
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
        with driver_errors(), self._engine.connect() as conn, reading(conn):
            rows = conn.execute(
                sa.select(*RUN_COLUMNS).order_by(t.runs.c.created_at, t.runs.c.run_id)
            )
            return [_run_from_row(row) for row in rows]

    # --- the Merkle log ---------------------------------------------------------------

    def tree_size(self) -> int:
        """How many entries the Merkle log holds (every entry of every run)."""
        with driver_errors(), self._engine.connect() as conn:
            return _log.tree_size(conn)

    def root(self, tree_size: int | None = None) -> tuple[int, bytes]:
        """The log's size and RFC 6962 root hash, now or at an earlier ``tree_size``."""
        with driver_errors(), self._engine.connect() as conn, conn.begin():
            return _log.root_at(conn, tree_size)

    def checkpoint(
        self, key: str | os.PathLike[str] | Signer | None = None, *, origin: str | None = None
    ) -> str:
        """A signed checkpoint of the log as it stands: C2SP ``tlog-checkpoint`` text
        (origin, size, base64 root) in a signed note (Ed25519).

        ``key`` is the signing key (see :func:`load_signer`: a key's text, a file, or
        by default ``ASSAY_LEDGER_KEY`` / ``ASSAY_LEDGER_KEY_FILE``); ``origin`` names
        the log and defaults to the key's name. Keep the checkpoints somewhere the
        database's operator cannot rewrite: ``witness`` later proves the log still
        extends them.
        """
        signer = _log.load_signer(key)
        with driver_errors(), self._engine.connect() as conn, conn.begin():
            return _log.signed_checkpoint(conn, signer, origin)[1]

    def inclusion_proof(self, entry_id: str, tree_size: int | None = None) -> InclusionProof:
        """The proof that ``entry_id`` is a leaf of the log at ``tree_size`` (default:
        now). :class:`~assay.errors.UnknownEntry` for an id the ledger does not hold."""
        if not _usable_id(entry_id):
            raise UnknownEntry(f"no ledger entry {safe_repr(entry_id, 80)}")
        with driver_errors(), self._engine.connect() as conn, conn.begin():
            return _log.prove_inclusion(conn, entry_id, tree_size)

    def consistency_proof(self, old_size: int, new_size: int | None = None) -> list[bytes]:
        """The proof that the log at ``new_size`` (default: now) extends the log at
        ``old_size`` unchanged (RFC 9162 §2.1.4)."""
        with driver_errors(), self._engine.connect() as conn, conn.begin():
            return _log.prove_consistency(conn, old_size, new_size)

    def export_bundle(self, run_id: str, key: str | os.PathLike[str] | Signer | None = None) -> str:
        """An offline audit bundle of one run: its entries, each with its inclusion
        proof, a signed checkpoint they are proved against, and a run head signed for
        that checkpoint that proves the bundle holds every entry of the run up to it
        (see :func:`assay.ledger.verify_bundle`). Signing key as for :meth:`checkpoint`."""
        signer = _log.load_signer(key)
        check_run_id(run_id)
        with driver_errors(), self._engine.connect() as conn, conn.begin(), reading(conn):
            return export_run(conn, signer, run_id)

    # --- verification ---------------------------------------------------------------

    def verify(
        self,
        run_id: str | None = None,
        *,
        progress: Callable[[int, int, str], None] | None = None,
    ) -> ChainReport:
        """Re-derive every hash of one run (or of all runs and the Merkle log) from the
        stored rows.

        Detects an edit of any stored field (content and its type, kind, source,
        metadata, creation times, the run's record, any hash), a removed, inserted or
        reordered entry, a head that no longer matches the chain, and, when every run
        is checked, a log whose leaves or subtree hashes no longer match the entries.
        Whatever a column holds, the answer is a report naming the first bad entry
        and why, never an exception about the data. Raises
        :class:`~assay.errors.UnknownRun` only for a run id the ledger does not hold.
        ``progress`` is told ``(runs done, runs in all, "runs verified")`` after each
        run, for a long check of a whole ledger.
        """
        if run_id is not None:
            check_run_id(run_id)
        with driver_errors(), self._engine.connect() as conn:
            run_ids = [run_id] if run_id is not None else stored_run_ids(conn)
            checked = 0
            for done, rid in enumerate(run_ids, start=1):
                report = verify_run(conn, rid)
                if report is None:
                    raise UnknownRun(f"no run {rid!r} in this ledger")
                checked += report.checked
                if progress is not None:
                    progress(done, len(run_ids), "runs verified")
                if not report.ok:
                    return dataclasses.replace(report, checked=checked, runs=len(run_ids))
            if run_id is None:
                log = verify_log(conn)
                if not log.ok:
                    return ChainReport(
                        ok=False,
                        checked=checked,
                        reason=f"Merkle log, leaf {log.leaf_index}: {log.reason}"
                        if log.leaf_index is not None
                        else f"Merkle log: {log.reason}",
                        run_id=log.run_id,
                        entry_id=log.entry_id,
                        runs=len(run_ids),
                    )
        return ChainReport(ok=True, checked=checked, runs=len(run_ids))


def _usable_id(value: object) -> bool:
    return check_text(value, field="id", max_chars=MAX_RUN_ID_CHARS) is None


def _run_from_row(row: Row[Any]) -> RunInfo:
    return run_from_values(tuple(row))


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
