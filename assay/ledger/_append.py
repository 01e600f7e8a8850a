"""The ledger's write path: the checks an entry passes before anything is written, and
the rows an append writes under its run's locked head.

One append and a batch of appends share it: both check every argument first, lock
the run's head once per transaction, and then, per entry, look up the dedup key,
insert the row and advance the head by exactly one (the triggers accept nothing
else). A batch differs only in holding one transaction, and so one lock and one
commit, for all its entries.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Row

from assay._db import InsertIfAbsent
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
    dedup_key,
    entry_hash,
    entry_id_for,
    normalise_metadata,
    plain_json_text,
    sha256_hex,
)
from assay.ledger._records import ALL_KINDS, EVIDENCE_KINDS, RECORD_KINDS, LedgerEntry

# The write path's statements, built once: a statement built per call costs more
# (its construction and cache key) than SQLite takes to run it.
_LOCK_HEAD = (
    sa.select(t.runs.c.head_seq, t.runs.c.head_hash)
    .where(t.runs.c.run_id == sa.bindparam("run"))
    .with_for_update()
)
_SAME_ENTRY = sa.select(t.entries).where(
    t.entries.c.run_id == sa.bindparam("run"), t.entries.c.dedup_key == sa.bindparam("key")
)
_INSERT_NEW_ENTRY = InsertIfAbsent(t.entries, key=("run_id", "dedup_key"))
_ADVANCE_HEAD = (
    t.runs.update()
    .where(t.runs.c.run_id == sa.bindparam("run"))
    .values(head_seq=sa.bindparam("new_seq"), head_hash=sa.bindparam("new_hash"))
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
    """A run's chain head, as read under its lock."""

    seq: int
    hash: str


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
        ),
    )


def lock_head(conn: Connection, run_id: str) -> Head:
    """The run's head, locked until the transaction ends (SQLite: the transaction
    already holds the database's write lock; PostgreSQL: ``SELECT … FOR UPDATE``)."""
    row = conn.execute(_LOCK_HEAD, {"run": run_id}).first()
    if row is None:
        raise UnknownRun(f"no run {run_id!r} in this ledger; start one with start_run()")
    return Head(seq=row.head_seq, hash=row.head_hash)


def write(conn: Connection, head: Head, item: Prepared) -> tuple[LedgerEntry, Head, bool]:
    """Append ``item`` after ``head``: the entry, the new head and whether it was written
    (an identical entry already stored is returned instead, and the head stays).

    The row is inserted unless its dedup key is taken (``ON CONFLICT DO NOTHING``),
    and only then is the stored entry read: an append that writes costs two
    statements, the insert and the head's advance, not a lookup before them."""
    seq = head.seq + 1
    hash_hex = entry_hash(
        run_id=item.run_id,
        seq=seq,
        kind=item.kind,
        source=item.source,
        content_sha256=item.digest,
        metadata=item.metadata,
        prev_hash=head.hash,
        metadata_text=item.metadata_text,
    )
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
        created_at=datetime.now(UTC),
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
        "created_at": entry.created_at,
    }
    if not _INSERT_NEW_ENTRY(conn, row):
        existing = conn.execute(_SAME_ENTRY, {"run": item.run_id, "key": item.key}).first()
        if existing is None:  # another key of the row was taken: not a repeated append
            raise DatabaseError(f"could not append to run {item.run_id!r}: its entry exists")
        return entry_from_row(existing), head, False
    conn.execute(_ADVANCE_HEAD, {"run": item.run_id, "new_seq": seq, "new_hash": hash_hex})
    return entry, Head(seq=seq, hash=hash_hex), True


class LedgerBatch:
    """Appends to one run inside one write transaction (see :meth:`Ledger.batch` and
    :meth:`Ledger.start_run_batch`).

    Each :meth:`append` behaves as :meth:`Ledger.append` does (the same checks, the
    same dedup, the same chain), and returns its entry at once, so a later entry of
    the batch may name an earlier one's id. Nothing is visible to others, and
    nothing is kept, until the ``with`` block ends without an exception.
    """

    def __init__(
        self, conn: Connection, run_id: str, head: Head, *, max_content_bytes: int
    ) -> None:
        self._conn: Connection | None = conn
        self._head = head
        self._max_content_bytes = max_content_bytes
        self.run_id = run_id
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
        if self._conn is None:
            raise InvalidEntry("this ledger batch is closed: append inside its with block")
        item = prepare(
            self.run_id,
            kind=kind,
            source=source,
            content=content,
            metadata=metadata,
            max_content_bytes=self._max_content_bytes,
        )
        entry, self._head, created = write(self._conn, self._head, item)
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


def _utc(value: datetime) -> datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


#: Where each column sits in a row of ``select(entries)``, the only query whose rows
#: become entries: read by position, a row is unpacked without a lookup per field.
_AT = {column.name: i for i, column in enumerate(t.entries.columns)}
_ID, _RUN, _SEQ, _KIND, _SOURCE = (_AT[k] for k in ("entry_id", "run_id", "seq", "kind", "source"))
_CONTENT, _IS_TEXT, _SHA = (_AT[k] for k in ("content", "is_text", "content_sha256"))
_META, _PREV, _HASH, _CREATED = (
    _AT[k] for k in ("metadata_json", "prev_hash", "entry_hash", "created_at")
)


def entry_from_row(row: Row[Any]) -> LedgerEntry:
    """The entry a row of ``select(entries)`` holds."""
    values = tuple(row)
    data = bytes(values[_CONTENT])
    return LedgerEntry(
        id=values[_ID],
        run_id=values[_RUN],
        seq=values[_SEQ],
        kind=values[_KIND],
        source=values[_SOURCE],
        content=data.decode("utf-8") if values[_IS_TEXT] else data,
        sha256=values[_SHA],
        metadata=json.loads(values[_META]),
        prev_hash=values[_PREV],
        entry_hash=values[_HASH],
        created_at=_utc(values[_CREATED]),
    )
