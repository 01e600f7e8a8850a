"""The append-only, content-hashed, hash-chained ledger.

Appends to one run are serialised by the database: SQLite takes its write lock at
``BEGIN IMMEDIATE``; PostgreSQL locks the run's head row (``SELECT … FOR UPDATE``).
Under that lock the ledger reads the head, links the new entry to it and advances
it, so ``seq`` runs 1..n without gaps however many threads or processes append.
The migration's triggers refuse any other change, from any client.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine, Row

from assay._db import driver_errors, write_transaction
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
    InvalidEntry,
    InvalidMetadata,
    UnknownEntry,
    UnknownKind,
    UnknownRun,
)
from assay.ledger import _tables as t
from assay.ledger._hashing import (
    dedup_key,
    entry_hash,
    entry_id_for,
    normalise_metadata,
    sha256_hex,
)
from assay.ledger._records import (
    ALL_KINDS,
    EVIDENCE_KINDS,
    GENESIS_HASH,
    RECORD_KINDS,
    ChainReport,
    LedgerEntry,
    RunInfo,
)

DEFAULT_MAX_CONTENT_BYTES = 10 * 1024 * 1024
_VERIFY_BATCH = 500


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

    # --- writing --------------------------------------------------------------------

    def start_run(self, *, metadata: Mapping[str, Any] | None = None) -> str:
        """Open a new, empty run and return its id (``run_`` + 32 hex).

        Raises :class:`~assay.errors.InvalidMetadata` for metadata that is not a JSON
        object, is nested too deep or is too large; nothing is written then.
        """
        _, meta_text = _metadata(metadata)
        run_id = "run_" + secrets.token_hex(16)
        with driver_errors(), write_transaction(self._engine) as conn:
            conn.execute(
                t.runs.insert().values(
                    run_id=run_id,
                    created_at=datetime.now(UTC),
                    metadata_json=meta_text,
                    head_seq=0,
                    head_hash=GENESIS_HASH,
                )
            )
        return run_id

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
        _check_run_id(run_id)
        _check_kind(kind)
        problem = check_text(source, field="source", max_chars=MAX_SOURCE_CHARS)
        if problem is not None:
            raise InvalidEntry(
                f"{problem}; a source names where content came from (raw data belongs "
                "in content or metadata)"
            )
        data, is_text = self._content_bytes(content)
        meta, meta_text = _metadata(metadata)
        digest = sha256_hex(data)
        key = dedup_key(
            run_id=run_id, kind=kind, source=source, content_sha256=digest, metadata=meta
        )
        with driver_errors(), write_transaction(self._engine) as conn:
            head = conn.execute(
                sa.select(t.runs.c.head_seq, t.runs.c.head_hash)
                .where(t.runs.c.run_id == run_id)
                .with_for_update()
            ).first()
            if head is None:
                raise UnknownRun(f"no run {run_id!r} in this ledger; start one with start_run()")
            existing = conn.execute(
                sa.select(t.entries).where(
                    t.entries.c.run_id == run_id, t.entries.c.dedup_key == key
                )
            ).first()
            if existing is not None:
                return _entry_from_row(existing)
            seq = head.head_seq + 1
            hash_hex = entry_hash(
                run_id=run_id,
                seq=seq,
                kind=kind,
                source=source,
                content_sha256=digest,
                metadata=meta,
                prev_hash=head.head_hash,
            )
            entry = LedgerEntry(
                id=entry_id_for(hash_hex),
                run_id=run_id,
                seq=seq,
                kind=kind,
                source=source,
                content=content if is_text else data,
                sha256=digest,
                metadata=meta,
                prev_hash=head.head_hash,
                entry_hash=hash_hex,
                created_at=datetime.now(UTC),
            )
            conn.execute(
                t.entries.insert().values(
                    entry_id=entry.id,
                    run_id=run_id,
                    seq=seq,
                    kind=kind,
                    source=source,
                    content=data,
                    is_text=is_text,
                    content_sha256=digest,
                    metadata_json=meta_text,
                    prev_hash=entry.prev_hash,
                    entry_hash=hash_hex,
                    dedup_key=key,
                    created_at=entry.created_at,
                )
            )
            conn.execute(
                t.runs.update()
                .where(t.runs.c.run_id == run_id)
                .values(head_seq=seq, head_hash=hash_hex)
            )
            if on_append is not None:
                on_append(conn, entry)
        return entry

    def _content_bytes(self, content: str | bytes) -> tuple[bytes, bool]:
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
        if len(data) > self.max_content_bytes:
            raise ContentTooLarge(len(data), self.max_content_bytes)
        return data, is_text

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
        with driver_errors(), self._engine.connect() as conn:
            rows = conn.execute(sa.select(t.entries).where(t.entries.c.entry_id.in_(ids)))
            return {row.entry_id: _entry_from_row(row) for row in rows}

    def entries(self, run_id: str, *, kinds: Iterable[str] | None = None) -> list[LedgerEntry]:
        """The run's entries in chain order, optionally only of some kinds."""
        self.run(run_id)
        query = sa.select(t.entries).where(t.entries.c.run_id == run_id)
        if kinds is not None:
            if isinstance(kinds, str):
                raise UnknownKind(f"kinds must be a collection of kinds, not the string {kinds!r}")
            wanted = list(kinds)
            for kind in wanted:
                _check_kind(kind)
            query = query.where(t.entries.c.kind.in_(wanted))
        with driver_errors(), self._engine.connect() as conn:
            rows = conn.execute(query.order_by(t.entries.c.seq))
            return [_entry_from_row(row) for row in rows]

    def evidence(self, run_id: str) -> list[LedgerEntry]:
        """The run's citable entries (retrieval, tool output, human facts)."""
        return self.entries(run_id, kinds=sorted(EVIDENCE_KINDS))

    def run(self, run_id: str) -> RunInfo:
        """The run and its head; :class:`UnknownRun` if there is none."""
        _check_run_id(run_id)
        with driver_errors(), self._engine.connect() as conn:
            row = conn.execute(sa.select(t.runs).where(t.runs.c.run_id == run_id)).first()
        if row is None:
            raise UnknownRun(f"no run {run_id!r} in this ledger")
        return _run_from_row(row)

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
            _check_run_id(run_id)
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


def _check_run_id(run_id: object) -> None:
    """A run id that no run can have (not a string, too long, NUL or a lone surrogate)
    is an unknown run, refused before it reaches a driver."""
    problem = check_text(run_id, field="run id", max_chars=MAX_RUN_ID_CHARS)
    if problem is not None:
        raise UnknownRun(f"no run {safe_repr(run_id, 80)} in this ledger: {problem}")


def _usable_id(value: object) -> bool:
    return check_text(value, field="id", max_chars=MAX_RUN_ID_CHARS) is None


def _metadata(metadata: Mapping[str, Any] | None) -> tuple[dict[str, Any], str]:
    """Metadata checked against its limits, depth first (``rfc8785`` and ``json``
    recurse), then as canonical JSON; :class:`InvalidMetadata` for any failure."""
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


def _check_kind(kind: object) -> None:
    if not isinstance(kind, str):
        raise UnknownKind(f"an entry kind is a string, not {type(kind).__name__}")
    if kind not in ALL_KINDS:
        raise UnknownKind(
            f"unknown entry kind {kind!r}; evidence kinds: {', '.join(sorted(EVIDENCE_KINDS))}; "
            f"record kinds: {', '.join(sorted(RECORD_KINDS))}"
        )


def _utc(value: datetime) -> datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def _entry_from_row(row: Row[Any]) -> LedgerEntry:
    data = bytes(row.content)
    return LedgerEntry(
        id=row.entry_id,
        run_id=row.run_id,
        seq=row.seq,
        kind=row.kind,
        source=row.source,
        content=data.decode("utf-8") if row.is_text else data,
        sha256=row.content_sha256,
        metadata=json.loads(row.metadata_json),
        prev_hash=row.prev_hash,
        entry_hash=row.entry_hash,
        created_at=_utc(row.created_at),
    )


def _run_from_row(row: Row[Any]) -> RunInfo:
    return RunInfo(
        run_id=row.run_id,
        created_at=_utc(row.created_at),
        metadata=json.loads(row.metadata_json),
        head_seq=row.head_seq,
        head_hash=row.head_hash,
    )
