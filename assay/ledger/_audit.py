"""Re-deriving the ledger from its stored rows: each run's chain and the Merkle log.

Whoever can write to the database can put any value of any type in any column (with
the triggers dropped, or as a superuser). Reading for an audit therefore never trusts
a column's type: rows are fetched as the driver returns them, with no type processing
(a text where bytes belong, a NULL, a float, a huge or deeply nested JSON), every
value is checked before it is used, and the first bad entry is reported with a reason.
Nothing here raises for stored data; only the database's own failures propagate.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from assay._db import DriverStatement
from assay._limits import MAX_JSON_DEPTH, MAX_METADATA_BYTES
from assay.ledger import _tables as t
from assay.ledger._hashing import (
    ENTRY_FORMAT,
    entry_hash,
    entry_id_for,
    format2_fields,
    run_hash,
    sha256_hex,
)
from assay.ledger._merkle import HASH_SIZE, Frontier, leaf_hash
from assay.ledger._records import GENESIS_HASH, ChainReport

_VERIFY_BATCH = 500
_HEX = frozenset("0123456789abcdef")

_ENTRY_COLUMNS = [
    t.entries.c.entry_id,
    t.entries.c.run_id,
    t.entries.c.seq,
    t.entries.c.kind,
    t.entries.c.source,
    t.entries.c.content,
    t.entries.c.is_text,
    t.entries.c.content_sha256,
    t.entries.c.metadata_json,
    t.entries.c.prev_hash,
    t.entries.c.entry_hash,
    t.entries.c.created_at,
    t.entries.c.format,
    t.entries.c.leaf_index,
    t.entries.c.subtrees,
]
_RUN_ROWS = DriverStatement(
    sa.select(
        t.runs.c.run_id,
        t.runs.c.created_at,
        t.runs.c.metadata_json,
        t.runs.c.head_seq,
        t.runs.c.head_hash,
        t.runs.c.run_hash,
    ).where(t.runs.c.run_id == sa.bindparam("run"))
)
_CHAIN_ROWS = DriverStatement(
    sa.select(*_ENTRY_COLUMNS)
    .where(t.entries.c.run_id == sa.bindparam("run"))
    .order_by(t.entries.c.seq)
)
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


@dataclass(frozen=True, kw_only=True)
class _Entry:
    """The stored fields of one entry, each already checked for its type."""

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
    created_at: datetime
    format: int
    leaf_index: int
    subtrees: bytes


class _Bad(Exception):
    """A stored value that fails a check; its message is the report's reason."""


# --- one run's chain ------------------------------------------------------------------


def verify_run(conn: Connection, run_id: str) -> ChainReport | None:
    """The report on one run's chain, or ``None`` when the ledger holds no such run."""
    run = _RUN_ROWS(conn, {"run": run_id}).first()
    if run is None:
        return None
    try:
        record = _run_record(tuple(run))
    except _Bad as bad:
        return ChainReport(ok=False, checked=0, first_bad_seq=0, reason=str(bad), run_id=run_id)
    streamed = conn.execution_options(yield_per=_VERIFY_BATCH, stream_results=True)
    with _CHAIN_ROWS(streamed, {"run": run_id}) as rows:
        return _verify_chain(rows, run, record, run_id)


def _verify_chain(rows: Iterable[Any], run: Sequence[Any], record: str, run_id: str) -> ChainReport:
    expected_seq, prev_hash, checked = 1, GENESIS_HASH, 0
    for raw in rows:
        values = tuple(raw)
        stored_id = values[0] if isinstance(values[0], str) else None
        try:
            entry = _entry(values)
            _check_link(entry, expected_seq, prev_hash, run_id)
            _check_hashes(entry, record)
        except _Bad as bad:
            return ChainReport(
                ok=False,
                checked=checked,
                first_bad_seq=expected_seq,
                reason=str(bad),
                run_id=run_id,
                entry_id=stored_id,
            )
        checked += 1
        expected_seq, prev_hash = entry.seq + 1, entry.entry_hash
    head_seq, head_hash = run[3], run[4]
    if head_seq != expected_seq - 1 or head_hash != prev_hash:
        return ChainReport(
            ok=False,
            checked=checked,
            first_bad_seq=expected_seq,
            reason=(
                f"the run's head is seq {_shown(head_seq)} but the chain ends at seq "
                f"{expected_seq - 1}: entries were removed or the head was edited"
            ),
            run_id=run_id,
        )
    return ChainReport(ok=True, checked=checked, run_id=run_id)


def _run_record(run: tuple[Any, ...]) -> str:
    """The run's stored record hash, once it is shown to match the run's row."""
    run_id, created_at, metadata_text, head_seq, head_hash, stored = run
    _need(isinstance(run_id, str), "the run's id was edited (not text)")
    _need(_is_int(head_seq), f"the run's head seq was edited (a {_type(head_seq)})")
    _need(_is_hash(head_hash), "the run's head hash was edited (not 64 hex digits)")
    _need(_is_hash(stored), "the run's record hash was edited (not 64 hex digits)")
    when = _timestamp(created_at, "the run's creation time")
    metadata = _json_object(metadata_text, "the run's metadata")
    try:
        recomputed = run_hash(
            run_id=run_id, created_at=when, metadata=metadata, metadata_text=metadata_text
        )
    except Exception as exc:
        raise _Bad(f"the run's metadata was edited: it cannot be hashed ({exc})") from None
    _need(
        recomputed == stored,
        "the run record was edited: its id, creation time or metadata no longer match its hash",
    )
    return stored


def _entry(values: tuple[Any, ...]) -> _Entry:
    (entry_id, run_id, seq, kind, source, content, is_text, digest, metadata_text,
     prev_hash, hash_hex, created_at, fmt, leaf_index, subtrees) = values  # fmt: skip
    _need(isinstance(entry_id, str), f"the entry id was edited (a {_type(entry_id)})")
    _need(isinstance(run_id, str), f"the run id was edited (a {_type(run_id)})")
    _need(_is_int(seq), f"seq was edited (a {_type(seq)}: {_shown(seq)})")
    _need(isinstance(kind, str), f"kind was edited (a {_type(kind)})")
    _need(isinstance(source, str), f"source was edited (a {_type(source)}, not text)")
    _need(
        isinstance(content, bytes | memoryview),
        f"content was edited: its stored type is now {_type(content)}, not bytes",
    )
    _need(
        is_text in (0, 1) and not isinstance(is_text, float),
        f"the content's type flag was edited ({_shown(is_text)})",
    )
    _need(_is_hash(digest), "the content digest was edited (not 64 hex digits)")
    _need(_is_hash(prev_hash), "prev_hash was edited (not 64 hex digits)")
    _need(_is_hash(hash_hex), "the entry hash was edited (not 64 hex digits)")
    _need(fmt in (1, ENTRY_FORMAT) and _is_int(fmt), f"the entry format was edited ({_shown(fmt)})")
    _need(_is_int(leaf_index), f"the leaf index was edited ({_shown(leaf_index)})")
    _need(
        isinstance(subtrees, bytes | memoryview)
        and len(subtrees) >= HASH_SIZE
        and len(subtrees) % HASH_SIZE == 0,
        "the entry's stored subtree hashes were edited",
    )
    return _Entry(
        entry_id=entry_id,
        run_id=run_id,
        seq=int(seq),
        kind=kind,
        source=source,
        content=bytes(content),
        is_text=bool(is_text),
        sha256=digest,
        metadata=_json_object(metadata_text, "metadata"),
        metadata_text=metadata_text,
        prev_hash=prev_hash,
        entry_hash=hash_hex,
        created_at=_timestamp(created_at, "the creation time"),
        format=int(fmt),
        leaf_index=int(leaf_index),
        subtrees=bytes(subtrees),
    )


def _check_link(entry: _Entry, expected_seq: int, prev_hash: str, run_id: str) -> None:
    _need(
        entry.seq == expected_seq,
        f"entry seq {expected_seq} is missing (the next stored entry is seq {entry.seq})",
    )
    _need(entry.run_id == run_id, "the run id was edited")
    _need(
        entry.prev_hash == prev_hash,
        f"broken link: prev_hash does not match the hash of entry seq {entry.seq - 1}",
    )


def _check_hashes(entry: _Entry, run_record: str) -> None:
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
    extra = (
        format2_fields(is_text=entry.is_text, created_at=entry.created_at, run_record=run_record)
        if entry.format == ENTRY_FORMAT
        else None
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
            extra=extra,
        )
    except Exception as exc:
        raise _Bad(f"metadata was edited: it cannot be hashed ({exc})") from None
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
    subtree hash and the log's head row with what the rebuild gives."""
    streamed = conn.execution_options(yield_per=_VERIFY_BATCH, stream_results=True)
    with _LOG_ROWS(streamed, {}) as rows:
        report, frontier = _rebuild_log(rows)
    if report is not None:
        return report
    return _check_log_head(conn, frontier)


def _rebuild_log(rows: Iterable[Any]) -> tuple[LogReport | None, Frontier]:
    frontier = Frontier()
    for raw in rows:
        entry_id, run_id, hash_hex, leaf_index, subtrees = tuple(raw)
        where = {
            "entry_id": entry_id if isinstance(entry_id, str) else None,
            "run_id": run_id if isinstance(run_id, str) else None,
        }
        expected = frontier.size
        if not _is_int(leaf_index) or leaf_index != expected:
            reason = (
                f"leaf {expected} is missing (the next stored leaf index is "
                f"{_shown(leaf_index)}): an entry was removed, inserted or moved"
            )
            return _bad_leaf(expected, reason, where), frontier
        if not _is_hash(hash_hex):
            reason = "the entry hash was edited (not 64 hex digits)"
            return _bad_leaf(expected, reason, where), frontier
        made = b"".join(frontier.append(leaf_hash(bytes.fromhex(hash_hex))))
        if not isinstance(subtrees, bytes | memoryview) or bytes(subtrees) != made:
            reason = "the stored subtree hashes of this leaf do not match the rebuilt log"
            return _bad_leaf(expected, reason, where), frontier
    return None, frontier


def _bad_leaf(index: int, reason: str, where: Mapping[str, str | None]) -> LogReport:
    return LogReport(
        ok=False,
        size=index,
        leaf_index=index,
        reason=reason,
        entry_id=where["entry_id"],
        run_id=where["run_id"],
    )


def _check_log_head(conn: Connection, frontier: Frontier) -> LogReport:
    head = _LOG_HEAD(conn, {}).first()
    if head is None:
        return LogReport(ok=False, size=frontier.size, reason="the log's head row is missing")
    size, stored = head
    if not _is_int(size) or size != frontier.size:
        return LogReport(
            ok=False,
            size=frontier.size,
            reason=f"the log's head says {_shown(size)} leaves but {frontier.size} are stored",
        )
    if not isinstance(stored, bytes | memoryview) or bytes(stored) != frontier.to_bytes():
        return LogReport(
            ok=False, size=frontier.size, reason="the log's stored frontier was edited"
        )
    return LogReport(ok=True, size=frontier.size)


# --- checks on single values ------------------------------------------------------------


def _need(condition: bool, reason: str) -> None:
    if not condition:
        raise _Bad(reason)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_hash(value: object) -> bool:
    return isinstance(value, str) and len(value) == 64 and _HEX.issuperset(value)


def _type(value: object) -> str:
    return "NULL" if value is None else type(value).__name__


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _timestamp(value: object, what: str) -> datetime:
    """A creation time as stored (PostgreSQL: a datetime; SQLite: SQLAlchemy's text)."""
    if isinstance(value, datetime):
        return value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    if isinstance(value, str) and len(value) <= 40:
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            pass
        else:
            return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)
    raise _Bad(f"{what} was edited: {_shown(value)} is not a time")


def _json_object(value: object, what: str) -> dict[str, Any]:
    """Stored metadata read back, refused rather than parsed when it could not have
    been written (too large or too deep to be metadata, not an object, NaN)."""
    if not isinstance(value, str):
        raise _Bad(f"{what} was edited: its stored type is now {_type(value)}, not text")
    if len(value) > 4 * MAX_METADATA_BYTES:
        raise _Bad(f"{what} was edited: {len(value)} characters, larger than metadata can be")
    if _nesting(value) > MAX_JSON_DEPTH + 1:
        raise _Bad(f"{what} was edited: nested deeper than metadata can be")
    try:
        parsed = json.loads(value, parse_constant=_refuse_constant)
    except (ValueError, RecursionError) as exc:
        raise _Bad(f"{what} was edited: it is no longer valid JSON ({exc})") from None
    if not isinstance(parsed, dict):
        raise _Bad(f"{what} was edited: it is no longer a JSON object")
    if any(isinstance(v, float) and not math.isfinite(v) for v in _leaves(parsed)):
        raise _Bad(f"{what} was edited: it holds a number JSON cannot write")
    return parsed


def _refuse_constant(name: str) -> float:
    raise ValueError(f"{name} is not JSON")


def _nesting(text: str) -> int:
    """The deepest bracket nesting of a JSON text (strings skipped), without parsing."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def _leaves(value: Any) -> Iterator[Any]:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())  # pyright: ignore[reportUnknownArgumentType,reportUnknownMemberType]
        elif isinstance(item, list):
            stack.extend(item)  # pyright: ignore[reportUnknownArgumentType]
        else:
            yield item
