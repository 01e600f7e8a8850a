"""Where an evidence entry states each value of a statement, for showing it.

The verifier's span is the chunk its model read, which may be the sentence or the
JSON record around the value, or another value of the record (the order's id where
the statement is about its total). A person checking "The total of order D-4410 was
$29.97." wants to see where ``29.97`` and ``D-4410`` are written: :func:`value_spans`
gives, for each identifier and value of the statement (:func:`extract_identifiers`,
:func:`claim_values`), the span of the stored entry that states it, in any written
form the matching rules accept (``$29.97`` is ``"total": 29.97``, ``2 March 2025``
is ``2025-03-02``), in order of position in the entry.
"""

from __future__ import annotations

from assay.grounding._check import check_values
from assay.grounding._identifiers import extract_identifiers, identifier_in_evidence
from assay.grounding._views import EvidenceView, view_of

__all__ = ["ELLIPSIS", "marked_excerpt", "value_spans"]

_VALUE_KINDS = frozenset({"amount", "date", "quantity"})
#: What stands for text left out of an excerpt.
ELLIPSIS = "…"


def value_spans(statement: str, stored: str) -> list[tuple[int, int]]:
    """The spans of ``stored`` (an entry's stored text) that state a value of
    ``statement``: one per value found, merged where they overlap, in order. Empty
    when the entry states none of them (a statement with no value, say)."""
    view = view_of(stored)
    spans: list[tuple[int, int]] = []
    for check in check_values(statement, [view.text]):
        if check.occurrence is not None:
            spans.append(view.to_stored(check.occurrence.start, check.occurrence.end))
    for ident in extract_identifiers(statement):
        if ident.kind in _VALUE_KINDS or not identifier_in_evidence(ident, view.text):
            continue
        found = _verbatim(view, ident.value)
        if found is not None:
            spans.append(found)
    return _merged(spans, len(stored))


def _verbatim(view: EvidenceView, value: str) -> tuple[int, int] | None:
    """The first place ``value`` is written as it is (case aside) in the view."""
    at = view.text.find(value)
    if at < 0:
        folded = view.text.casefold()
        at = folded.find(value.casefold()) if len(folded) == len(view.text) else -1
    if at < 0:
        return None
    return view.to_stored(at, at + len(value))


def _merged(spans: list[tuple[int, int]], size: int) -> list[tuple[int, int]]:
    ordered = sorted((s, e) for s, e in spans if 0 <= s < e <= size)
    merged: list[tuple[int, int]] = []
    for start, end in ordered:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def marked_excerpt(
    text: str, marks: list[tuple[int, int]], *, context: int
) -> list[tuple[str, bool]]:
    """``text`` around ``marks`` (sorted spans that do not overlap) as pieces, each
    ``(piece, marked)``: every mark with ``context`` characters either side, windows
    that touch joined, and :data:`ELLIPSIS` where text is left out."""
    windows: list[list[int]] = []
    for start, end in marks:
        lo, hi = max(0, start - context), min(len(text), end + context)
        if windows and lo <= windows[-1][1]:
            windows[-1][1] = max(windows[-1][1], hi)
        else:
            windows.append([lo, hi])
    pieces: list[tuple[str, bool]] = []
    marks_left = list(marks)
    for lo, hi in windows:
        if lo > 0:
            pieces.append((ELLIPSIS, False))
        at = lo
        while marks_left and marks_left[0][1] <= hi:
            start, end = marks_left.pop(0)
            pieces += [(text[at:start], False), (text[start:end], True)]
            at = end
        pieces.append((text[at:hi], False))
    if windows and windows[-1][1] < len(text):
        pieces.append((ELLIPSIS, False))
    return [(piece, marked) for piece, marked in pieces if piece]
