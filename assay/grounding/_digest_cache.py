"""A cache of what was worked out from a text, keyed by the text's digest and bounded
by bytes.

Evidence texts are looked at again and again (every identifier of every claim is
matched against every cited entry), so what is derived from one is kept. Keying on
the text itself would keep every text alive as long as its entry, and an entry
count says nothing about size: a thousand 5 MB tool outputs stay resident. Here the
key is a SHA-256 digest, so the cache never holds the text, and entries are evicted,
least recently used first, once their accounted bytes pass the bound.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["DEFAULT_MAX_BYTES", "DigestCache", "digest"]

T = TypeVar("T")

#: The bound of each evidence cache: what is derived from texts, plus the keys.
DEFAULT_MAX_BYTES = 32 * 1024 * 1024

_KEY_BYTES = 32 + 64  # a digest and its share of the table


def digest(text: str) -> bytes:
    """The SHA-256 of ``text`` as UTF-8 (lone surrogates included, not refused)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


class DigestCache(Generic[T]):
    """``compute(text)`` once per distinct text while it fits, at most ``max_bytes``
    (or, with no ``compute``, values its callers key with :meth:`get_keyed`).

    ``size_of(value)`` says how many bytes a value holds; a value larger than the
    bound on its own is returned without being kept.
    """

    def __init__(
        self,
        compute: Callable[[str], T] | None,
        size_of: Callable[[T], int],
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
    ) -> None:
        self._compute = compute
        self._size_of = size_of
        self.max_bytes = max_bytes
        self._entries: OrderedDict[bytes, tuple[T, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        #: Lookups answered from the cache, and computed.
        self.hits = 0
        self.misses = 0

    def get(self, text: str) -> T:
        """``compute(text)``, from the cache where it holds it."""
        compute = self._compute
        if compute is None:
            raise TypeError("this cache is keyed by its callers: use get_keyed")
        return self.get_keyed(digest(text), lambda: compute(text))

    def get_keyed(self, key: bytes, compute: Callable[[], T]) -> T:
        """The value kept under ``key`` (a digest of whatever it was computed from),
        else ``compute()``, kept while it fits."""
        with self._lock:
            hit = self._entries.get(key)
            if hit is not None:
                self._entries.move_to_end(key)
                self.hits += 1
                return hit[0]
            self.misses += 1
        value = compute()
        size = self._size_of(value) + _KEY_BYTES
        if size > self.max_bytes:
            return value
        with self._lock:
            if key not in self._entries:
                self._entries[key] = (value, size)
                self._bytes += size
            while self._bytes > self.max_bytes:
                _, (_, evicted) = self._entries.popitem(last=False)
                self._bytes -= evicted
        return value

    @property
    def nbytes(self) -> int:
        """The accounted size of every entry kept now, keys included."""
        return self._bytes

    def keys(self) -> list[bytes]:
        with self._lock:
            return list(self._entries)

    def values(self) -> list[T]:
        with self._lock:
            return [value for value, _ in self._entries.values()]

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0
