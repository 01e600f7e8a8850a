"""Canonical JSON (RFC 8785) and the hashes of the chain."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

import rfc8785

from assay.errors import InvalidMetadata


def canonical_json(value: Any) -> bytes:
    """RFC 8785 canonical JSON: sorted keys, no whitespace, fixed number format."""
    return rfc8785.dumps(value)


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
    return json.loads(text), text


def entry_hash(
    *,
    run_id: str,
    seq: int,
    kind: str,
    source: str,
    content_sha256: str,
    metadata: Mapping[str, Any],
    prev_hash: str,
) -> str:
    """sha256 of the canonical JSON of the fields that an entry's identity rests on."""
    payload = {
        "run_id": run_id,
        "seq": seq,
        "kind": kind,
        "source": source,
        "sha256": content_sha256,
        "metadata": dict(metadata),
        "prev_hash": prev_hash,
    }
    return sha256_hex(canonical_json(payload))


def dedup_key(
    *, run_id: str, kind: str, source: str, content_sha256: str, metadata: Mapping[str, Any]
) -> str:
    """Identity of an append request: identical requests map to the same entry."""
    payload = {
        "run_id": run_id,
        "kind": kind,
        "source": source,
        "sha256": content_sha256,
        "metadata": dict(metadata),
    }
    return sha256_hex(canonical_json(payload))


def entry_id_for(hash_hex: str) -> str:
    return "led_" + hash_hex[:16]
