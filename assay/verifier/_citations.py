"""What the verifier reads of an entry a proposition cites by quote or pointer.

Where a proposition points at its evidence (``cites``), what the checks and the
model read of that entry is what the citations name, not the whole entry: a JSON
field or record with the scalar fields of the records that hold it (an invoice
line with the invoice's number, as a typed proposition's record is read), a quote
with the line or sentence it stands in. The context is read with it on purpose: a
quote cut out of "it is not true that the fee is waived" must not read as "the fee
is waived", and a bare ``84.5`` says nothing of what it is the total of.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from assay.contract import PointerCitation, QuoteCitation
from assay.gate import CitedSpan, locate_citation
from assay.grounding import view_of
from assay.verifier._premises import Reading, reading_of
from assay.verifier._slots import ancestors


@dataclass(frozen=True, kw_only=True)
class Cited:
    """One citation of a proposition: its index in ``cites``, the entry it names, and
    what it names there (a :class:`CitedSpan`), or why nothing (a reason)."""

    index: int
    cite: QuoteCitation | PointerCitation
    found: CitedSpan | str


def cited_reading(text: str, spans: Sequence[CitedSpan]) -> Reading:
    """What is read of the stored entry ``text`` for citations ``spans`` (each found in
    it): the records that hold what they name, in document order, each once."""
    view = view_of(text)
    records = view.records()
    wanted: list[tuple[int, int]] = []
    for span in spans:
        wanted += _context(records, span)
    return reading_of(view, _merged(wanted))


def stored_span(spans: Sequence[CitedSpan]) -> tuple[int, int]:
    """The stored span from the first cited byte to the last (one entry's citations)."""
    return (min(s.stored[0] for s in spans), max(s.stored[1] for s in spans))


def _context(
    records: Sequence[tuple[str, tuple[int, int]]], span: CitedSpan
) -> list[tuple[int, int]]:
    if not span.lines:  # a quote in a text entry: the lines or sentences it touches
        start, end = span.view
        touched = [(a, b) for _, (a, b) in records if a < max(end, start + 1) and start < b]
        return touched or [span.view]
    by_name = dict(records)
    names: dict[str, None] = {}
    for line in span.lines:
        for name in (*ancestors(line.record), line.record):
            names.setdefault(name)
    return [by_name[name] for name in names if name in by_name]


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for start, end in sorted(set(spans)):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def located(text: str, cites: Sequence[tuple[int, QuoteCitation | PointerCitation]]) -> list[Cited]:
    """Each of an entry's citations with what it names in the stored ``text``."""
    return [Cited(index=k, cite=cite, found=locate_citation(text, cite)) for k, cite in cites]


def cite_records(
    cites: Sequence[QuoteCitation | PointerCitation], citations: Mapping[str, Sequence[Cited]]
) -> list[dict[str, object]]:
    """The citations as a verdict records them, in the order of ``cites``: each with
    its stored span and what it names (the quote, or ``pointer: value``); ``None``
    for both where it names nothing, or its entry is not cited evidence of the run."""
    found = {cited.index: cited.found for group in citations.values() for cited in group}
    records: list[dict[str, object]] = []
    for k, cite in enumerate(cites):
        span = found.get(k)
        named = span if isinstance(span, CitedSpan) else None
        records.append(
            {
                "ledger_id": cite.ledger_id,
                **(
                    {"quote": cite.quote}
                    if isinstance(cite, QuoteCitation)
                    else {"pointer": cite.pointer}
                ),
                "span": list(named.stored) if named is not None else None,
                "text": named.shown if named is not None else None,
            }
        )
    return records
