"""Canonical JSON (RFC 8785) and the hashes of the chain.

Two entry formats exist. Format 1 (entries written before migration 0006) hashes the
run id, seq, kind, source, content digest, metadata and previous hash. Format 2, what
every append writes now, also hashes the content's type (text or bytes), the entry's
creation time and the run record (:func:`run_hash`: the run's id, creation time and
metadata), so that nothing stored is outside a hash.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

import rfc8785

from assay.errors import InvalidMetadata

#: The standard library's string escaper for ``ensure_ascii=False`` (its C version).
_escape: Callable[[str], str] = json.encoder.encode_basestring  # pyright: ignore[reportUnknownMemberType]
#: The largest integer RFC 8785 writes (a JSON number is a double).
_MAX_SAFE_INTEGER = 2**53 - 1
#: The standard library's encoder as RFC 8785 writes (see ``canonical_json``), made
#: once: ``json.dumps`` with any non-default option builds a new encoder per call,
#: which costs more than encoding a small object.
_ENCODER = json.JSONEncoder(
    ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False
)


def canonical_json(value: Any) -> bytes:
    """RFC 8785 canonical JSON: sorted keys, no whitespace, fixed number format.

    Values that the standard library's encoder writes byte for byte as RFC 8785 does
    (see :func:`_json_writes_it_canonically`) are written by it, in C; anything else
    by ``rfc8785``, which also raises what it raises for values it refuses.
    """
    if _json_writes_it_canonically(value):
        return _ENCODER.encode(value).encode("utf-8")
    return rfc8785.dumps(value)


#: The walk gives up (and ``rfc8785`` decides) past this depth or this many values.
_FAST_MAX_DEPTH = 64
_FAST_MAX_VALUES = 100_000


def _json_writes_it_canonically(value: Any) -> bool:
    """Whether ``json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=False)``
    writes ``value`` exactly as RFC 8785 does.

    It does for None, booleans, integers within 2**53, strings without a lone
    surrogate (both escape ``"``, ``\\`` and control characters alike and leave
    everything else as it is), floats that are not whole numbers between 1e-4 and
    1e16 (both write the shortest round-trip digits, in plain notation), lists,
    tuples and dicts of those whose keys sort alike by code point and by UTF-16 code
    unit (no character from U+E000 on). Exact types only: a subclass may write
    itself differently.
    """
    stack: list[tuple[Any, int]] = [(value, 0)]
    seen = 0
    while stack:
        item, depth = stack.pop()
        seen += 1
        if depth > _FAST_MAX_DEPTH or seen > _FAST_MAX_VALUES:
            return False
        kind = type(item)
        if item is None or kind is bool:
            continue
        if kind is int:
            if not -_MAX_SAFE_INTEGER <= item <= _MAX_SAFE_INTEGER:
                return False
        elif kind is str:
            if not _utf8(item):
                return False
        elif kind is float:
            if item.is_integer() or not 1e-4 <= abs(item) < 1e16:
                return False
        elif kind is list or kind is tuple:
            stack.extend((child, depth + 1) for child in item)
        elif kind is dict:
            for key, child in item.items():
                if type(key) is not str or not _utf8(key) or (key and max(key) >= "\ue000"):
                    return False
                stack.append((child, depth + 1))
        else:
            return False
    return True


def plain_json_text(value: Any, *, max_depth: int) -> str | None:
    """``value``'s canonical JSON when one walk shows it plain enough for the fast
    path: what :func:`_json_writes_it_canonically` accepts, with no container at a
    depth of ``max_depth`` or more (the root at depth 0). ``None`` otherwise, and the
    caller takes the general path, with its checks and its messages."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    seen = 0
    while stack:
        item, depth = stack.pop()
        seen += 1
        if seen > _FAST_MAX_VALUES:
            return None
        kind = type(item)
        if item is None or kind is bool:
            continue
        if kind is int:
            if not -_MAX_SAFE_INTEGER <= item <= _MAX_SAFE_INTEGER:
                return None
        elif kind is str:
            if not _utf8(item):
                return None
        elif kind is float:
            if item.is_integer() or not 1e-4 <= abs(item) < 1e16:
                return None
        elif kind is list or kind is tuple or kind is dict:
            if depth >= max_depth:
                return None
            if kind is not dict:
                stack.extend((child, depth + 1) for child in item)
                continue
            for key, child in item.items():
                if type(key) is not str or not _utf8(key) or (key and max(key) >= "\ue000"):
                    return None
                stack.append((child, depth + 1))
        else:
            return None
    return _ENCODER.encode(value)


def _utf8(text: str) -> bool:
    """Whether ``text`` is valid Unicode (no lone surrogate)."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def normalise_metadata(metadata: Mapping[str, Any] | None) -> tuple[dict[str, Any], str]:
    """Validate metadata and return it with its canonical JSON text.

    The returned dict is the canonical JSON parsed back, so what the caller gets from
    the ledger is exactly what was hashed (tuples become lists, and so on, visibly).
    """
    if metadata is None:
        return {}, "{}"
    if not isinstance(metadata, Mapping):
        raise InvalidMetadata(
            f"metadata must be a JSON object (a mapping), not {type(metadata).__name__}"
        )
    try:
        text = canonical_json(dict(metadata)).decode("utf-8")
    except (rfc8785.CanonicalizationError, TypeError, ValueError) as exc:
        raise InvalidMetadata(f"metadata is not expressible as canonical JSON: {exc}") from exc
    try:
        return json.loads(text, parse_int=_safe_int), text
    except ValueError as exc:
        raise InvalidMetadata(f"metadata is not expressible as canonical JSON: {exc}") from None


def _safe_int(literal: str) -> int:
    """An integer of canonical JSON, refused beyond 2**53: RFC 8785 writes a float such
    as 2.0**53 with integer digits, which read back is an integer it cannot write."""
    value = int(literal)
    if not -_MAX_SAFE_INTEGER <= value <= _MAX_SAFE_INTEGER:
        raise ValueError(f"{literal} is beyond the integers JSON numbers hold exactly (2**53)")
    return value


#: The entry format every append writes (see the module's docstring).
ENTRY_FORMAT = 2


def timestamp_text(value: datetime) -> str:
    """A creation time as it is hashed: UTC, microseconds, ``Z`` (both engines store
    microseconds exactly, so the text read back is the text hashed)."""
    if value.tzinfo is not UTC:
        value = value.astimezone(UTC) if value.tzinfo is not None else value.replace(tzinfo=UTC)
    # isoformat (C, no locale) writes the same text as strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    # for years 1000-9999, in a fifth of the time; "+00:00" becomes "Z".
    return value.replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


def run_hash(
    *, run_id: str, created_at: datetime, metadata: Mapping[str, Any], metadata_text: str
) -> str:
    """sha256 of a run record: its id, creation time and metadata (``metadata_text``
    is its canonical JSON, spliced in as :func:`entry_hash` does)."""
    fields: dict[str, str | int] = {
        "format": ENTRY_FORMAT,
        "run_id": run_id,
        "created_at": timestamp_text(created_at),
    }
    return sha256_hex(_payload(fields, metadata, metadata_text))


def format_fields(
    entry_format: int, *, is_text: bool, created_at: datetime, run_record: str
) -> dict[str, str | int] | None:
    """What an entry of ``entry_format`` hashes beyond format 1's fields, as
    :func:`entry_hash` takes it in ``extra``: nothing for format 1; for format 2 the
    content's type, the creation time and the run record (``run_record`` is the run's
    :func:`run_hash`)."""
    if entry_format != ENTRY_FORMAT:
        return None
    return {
        "format": ENTRY_FORMAT,
        "content_type": "text" if is_text else "bytes",
        "created_at": timestamp_text(created_at),
        "run": run_record,
    }


def entry_hash(
    *,
    run_id: str,
    seq: int,
    kind: str,
    source: str,
    content_sha256: str,
    metadata: Mapping[str, Any],
    prev_hash: str,
    metadata_text: str | None = None,
    extra: Mapping[str, str | int] | None = None,
) -> str:
    """sha256 of the canonical JSON of the fields that an entry's identity rests on.

    ``metadata_text``, when given, is ``metadata``'s canonical JSON already made (the
    append path has it): it is spliced in rather than made again. ``extra`` holds
    the fields of format 2 (:func:`format_fields`); without it the hash is format 1's.
    """
    fields: dict[str, str | int] = {
        "run_id": run_id,
        "seq": seq,
        "kind": kind,
        "source": source,
        "sha256": content_sha256,
        "prev_hash": prev_hash,
    }
    if extra:
        fields.update(extra)
    return sha256_hex(_payload(fields, metadata, metadata_text))


def dedup_key(
    *,
    run_id: str,
    kind: str,
    source: str,
    content_sha256: str,
    metadata: Mapping[str, Any],
    metadata_text: str | None = None,
    is_text: bool | None = None,
) -> str:
    """Identity of an append request: identical requests map to the same entry.
    ``metadata_text`` as for :func:`entry_hash`. With ``is_text`` (format 2) the
    content's type is part of the identity: ``b"x"`` and ``"x"`` are two entries."""
    fields: dict[str, str | int] = {
        "run_id": run_id,
        "kind": kind,
        "source": source,
        "sha256": content_sha256,
    }
    if is_text is not None:
        fields["format"] = ENTRY_FORMAT
        fields["content_type"] = "text" if is_text else "bytes"
    return sha256_hex(_payload(fields, metadata, metadata_text))


def _payload(
    fields: Mapping[str, str | int], metadata: Mapping[str, Any], metadata_text: str | None
) -> bytes:
    """The canonical JSON of ``{**fields, "metadata": metadata}``.

    RFC 8785 writes an object as its members sorted by key, so with the metadata's
    canonical text in hand the envelope can be joined around it: its keys are ASCII
    (code-point order is UTF-16 order) and its values are strings, which JSON escapes
    exactly as RFC 8785 does when they hold no lone surrogate, and small integers.
    Anything else takes the full canonicalisation.
    """
    if metadata_text is None:
        return canonical_json({**fields, "metadata": dict(metadata)})
    members: list[tuple[str, str]] = [("metadata", metadata_text)]
    for key, value in fields.items():
        written = _member_value(value)
        if written is None:
            return canonical_json({**fields, "metadata": dict(metadata)})
        members.append((key, written))
    members.sort()
    return ("{" + ",".join(f'"{key}":{value}' for key, value in members) + "}").encode("utf-8")


def _member_value(value: str | int) -> str | None:
    """A plain value written as RFC 8785 writes it (``None`` for anything else): a
    string by the standard library's C escaper, which escapes exactly what RFC 8785
    does when the text holds no lone surrogate; an integer within 2**53 in digits."""
    kind = type(value)
    if kind is str:
        return _escape(value) if _utf8(value) else None  # type: ignore[arg-type]
    if kind is int and -_MAX_SAFE_INTEGER <= value <= _MAX_SAFE_INTEGER:  # type: ignore[operator]
        return str(value)
    return None


def entry_id_for(hash_hex: str) -> str:
    return "led_" + hash_hex[:16]
