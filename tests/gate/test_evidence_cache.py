"""The evidence cache holds digests and what was derived, never the texts, and stays
within its byte bound however many large texts pass through it."""

from __future__ import annotations

import sys

from assay.grounding import identifier_in_evidence
from assay.grounding._digest_cache import DigestCache, digest
from assay.grounding._identifiers import EVIDENCE_CACHE, Evidence, prepare_evidence


def _large(i: int, size: int, *, wide: bool) -> str:
    """About ``size`` characters; a no-break space makes its matching form a new string."""
    head = f"entry {i}: Invoice INV-{4400 + i} for EUR {875 + i}.00, commit 3f9a2c1b7e{i:02d}. "
    return head + ("\u00a0" if wide else " ") + "x" * size


def test_a_call_leaves_no_reference_to_the_evidence_text() -> None:
    texts = [_large(i, 200_000, wide=i % 2 == 0) for i in range(8)]
    before = [sys.getrefcount(t) for t in texts]
    for i in range(len(texts)):
        assert identifier_in_evidence(f"EUR {875 + i}.00", texts[i])
        assert identifier_in_evidence(f"3f9a2c1b7e{i:02d}", texts[i])
    assert [sys.getrefcount(t) for t in texts] == before
    keys = EVIDENCE_CACHE.keys()
    assert all(isinstance(k, bytes) and len(k) == 32 for k in keys)
    assert digest(texts[0]) in keys
    assert all(
        v.text is None or all(v.text is not t for t in texts) for v in EVIDENCE_CACHE.values()
    )
    assert EVIDENCE_CACHE.nbytes <= EVIDENCE_CACHE.max_bytes


def test_many_large_texts_stay_within_the_byte_bound() -> None:
    cache: DigestCache[Evidence] = DigestCache(
        prepare_evidence, lambda e: e.nbytes, max_bytes=600_000
    )
    for i in range(30):
        text = _large(i, 100_000, wide=True)
        derived = cache.get(text)
        assert derived.text is not None and derived.text is not text
        assert cache.nbytes <= cache.max_bytes
    assert 1 <= len(cache.keys()) < 30  # the oldest were evicted
    assert cache.get(_large(29, 100_000, wide=True)) is cache.values()[-1]  # the newest hit


def test_a_value_larger_than_the_bound_is_not_kept() -> None:
    cache: DigestCache[str] = DigestCache(str.upper, len, max_bytes=1_000)
    assert cache.get("a" * 5_000) == "A" * 5_000
    assert cache.keys() == [] and cache.nbytes == 0
    assert cache.get("small") == "SMALL"
    assert cache.keys() == [digest("small")]


def test_least_recently_used_goes_first() -> None:
    cache: DigestCache[str] = DigestCache(lambda t: t * 2, lambda v: 50, max_bytes=500)
    for text in ("a", "b", "c"):
        cache.get(text)
    cache.get("a")  # used again: now the most recent
    cache.get("d")
    assert cache.keys() == [digest("c"), digest("a"), digest("d")]
