"""A pluggable cache of raw premise scores, keyed by model and content hashes.

Caching sits under the claim splitting and premise building: one entry per (premise,
claim sentence) pair, so re-checking a claim against the same evidence runs no model.
Keys hold only hashes, so a shared (database-backed) cache never stores the evidence
text twice. A cache that can also look up and store many pairs at once (``get_many``,
``put_many``) is asked that way, once per check: a database-backed cache then costs
one read and one write per check rather than one of each per pair.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

__all__ = [
    "CacheKey",
    "EntailmentCache",
    "InMemoryEntailmentCache",
    "cache_key",
    "lookup_many",
    "store_many",
]


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


@runtime_checkable
class _BulkCache(Protocol):
    def get_many(self, keys: Sequence[CacheKey]) -> Mapping[CacheKey, tuple[float, ...]]: ...

    def put_many(self, items: Sequence[tuple[CacheKey, tuple[float, ...]]]) -> None: ...


def lookup_many(cache: EntailmentCache, keys: Sequence[CacheKey]) -> list[tuple[float, ...] | None]:
    """Each key's logits, or None: in one ``get_many`` where the cache has one."""
    if isinstance(cache, _BulkCache):
        found = cache.get_many(keys)
        return [found.get(key) for key in keys]
    return [cache.get(key) for key in keys]


def store_many(cache: EntailmentCache, items: Sequence[tuple[CacheKey, tuple[float, ...]]]) -> None:
    """Store every (key, logits): in one ``put_many`` where the cache has one."""
    if not items:
        return
    if isinstance(cache, _BulkCache):
        cache.put_many(items)
        return
    for key, logits in items:
        cache.put(key, logits)


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
