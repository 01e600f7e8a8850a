"""Identifiers of claim texts are worked out once per text (the gate and then the
verifier read the same claims), kept by digest within a byte bound, and handed out
as fresh lists that a caller may change without changing what the next one gets."""

from __future__ import annotations

from assay.grounding import extract_identifiers
from assay.grounding._digest_cache import digest
from assay.grounding._identifiers import CLAIM_CACHE, identifiers_of
from assay.grounding._unicode import normalise


def test_cached_identifiers_are_those_worked_out_afresh() -> None:
    text = "Invoice INV-4421 of 2024-03-05 bills EUR 1,250.00 for commit 3f9a2c1b7e."
    first = extract_identifiers(text)
    assert first == identifiers_of(normalise(text))
    cached = CLAIM_CACHE.keys()
    assert digest(text) in cached
    first.clear()
    assert extract_identifiers(text) == identifiers_of(normalise(text)) != []


def test_the_cache_stays_within_its_bound() -> None:
    for i in range(40):
        text = f"INV-{i} " + " ".join(f"#{n}" for n in range(i * 5_000, i * 5_000 + 5_000))
        assert len(extract_identifiers(text)) == 5_001
    assert CLAIM_CACHE.nbytes <= CLAIM_CACHE.max_bytes
