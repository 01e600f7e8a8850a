"""The verifier's deterministic checks: what settles a proposition without the model.

A proposition stated word for word in its cited evidence is entailed; one whose
numbers, dates, amounts, identifiers, quoted spans or proper names occur in none of
its cited evidence is missing evidence. Both are plain string work, run before any
model is asked.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from assay.gate import extract_identifiers, identifier_in_evidence
from assay.ledger import LedgerEntry

_QUOTED = re.compile(r"[\"“«]([^\"”»]{3,})[\"”»]")
_CAPITALISED = re.compile(r"(?<![\w-])[A-Z][a-z]+(?:-[A-Z]?[a-z]+)*(?![\w-])")
_WORDS = re.compile(r"[A-Za-z]+(?:-[A-Za-z]+)*")


def verbatim(text: str, cited: Sequence[LedgerEntry]) -> tuple[LedgerEntry, tuple[int, int]] | None:
    """The cited entry and span that contain the proposition word for word (a final
    full stop aside): what evidence states verbatim needs no model to entail it."""
    needle = text.strip().rstrip(".").strip()
    if len(needle) < 8:
        return None
    for entry in cited:
        start = entry.text.find(needle)
        if start >= 0:
            return entry, (start, start + len(needle))
    return None


def deterministic_gaps(text: str, cited: Sequence[LedgerEntry]) -> list[str]:
    """Identifiers, numbers and quoted spans of ``text`` that no cited entry contains."""
    gaps = [
        ident.value
        for ident in extract_identifiers(text)
        if not any(identifier_in_evidence(ident, e.text) for e in cited)
    ]
    gaps += [quote for quote in _QUOTED.findall(text) if not any(quote in e.text for e in cited)]
    words = {w.lower() for e in cited for w in _WORDS.findall(e.text)}
    gaps += [name for name in proper_names(text) if name.lower() not in words]
    return list(dict.fromkeys(gaps))


def proper_names(text: str) -> list[str]:
    """Capitalised words that are not the first word of a sentence: the names a
    narrative confabulation invents (people, places, products). Matching them against
    the evidence is case-insensitive and word by word, so "the Engagement Letter"
    still matches "the engagement letter"."""
    names: list[str] = []
    for match in _CAPITALISED.finditer(text):
        before = text[: match.start()].rstrip()
        if not before or before[-1] in '.!?:;\n"“(':
            continue
        names.append(match.group(0))
    return names


def describe_gaps(
    gaps: Sequence[str], cited: Sequence[LedgerEntry], run_evidence: Sequence[LedgerEntry]
) -> str:
    cited_ids = {e.id for e in cited}
    parts: list[str] = []
    for gap in gaps:
        elsewhere = [e.id for e in run_evidence if e.id not in cited_ids and gap in e.text]
        where = (
            f" (it appears in {', '.join(elsewhere[:3])}, which is not cited)" if elsewhere else ""
        )
        parts.append(f"“{gap}” occurs in none of its cited evidence{where}")
    return "; ".join(parts)


def clip(text: str, width: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"
