"""A pluggable cache of raw premise scores, keyed by model and content hashes.

Caching sits under the claim splitting and premise building: one entry per (premise,
claim sentence) pair, so re-checking a claim against the same evidence runs no model.
Keys hold only hashes, so a shared (database-backed) cache never stores the evidence
text twice.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

__all__ = ["CacheKey", "EntailmentCache", "InMemoryEntailmentCache", "cache_key"]


@dataclass(frozen=True, kw_only=True)
class CacheKey:
    """(model id, premise sha256, hypothesis sha256)."""

    model: str
    premise_sha256: str
    hypothesis_sha256: str


def cache_key(model: str, premise: str, hypothesis: str) -> CacheKey:
    """The key for one premise and one hypothesis sentence."""
    return CacheKey(
        model=model,
        premise_sha256=hashlib.sha256(premise.encode("utf-8")).hexdigest(),
        hypothesis_sha256=hashlib.sha256(hypothesis.encode("utf-8")).hexdigest(),
    )


@runtime_checkable
class EntailmentCache(Protocol):
    """Stores the model's raw logits for a pair; ``get`` returns None on a miss."""

    def get(self, key: CacheKey) -> tuple[float, ...] | None: ...

    def put(self, key: CacheKey, logits: tuple[float, ...]) -> None: ...


class InMemoryEntailmentCache:
    """A dict-backed :class:`EntailmentCache` for one process."""

    def __init__(self) -> None:
        self._items: dict[CacheKey, tuple[float, ...]] = {}

    def get(self, key: CacheKey) -> tuple[float, ...] | None:
        return self._items.get(key)

    def put(self, key: CacheKey, logits: tuple[float, ...]) -> None:
        self._items[key] = tuple(logits)

    def __len__(self) -> int:
        return len(self._items)
