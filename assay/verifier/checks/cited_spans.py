"""``cited_spans``: what a proposition's citations (``cites``) settle by themselves.

A citation that names nothing in its entry (a quote it does not hold, a pointer that
does not resolve) is missing evidence: the gate refuses it, and a hand-over verified
without the gate gets the same answer. A proposition that is one of its own quotes
word for word (a final full stop aside) is entailed, and the verdict points at the
quoted bytes, where the quote is whole sentences of its entry (or a whole JSON
string): "the late fee is waived" cut out of "it is not true that the late fee is
waived" is not. A value of the proposition (an identifier, amount or date; not a
quantity, which may be a count of rows) that the cited entry writes, but outside
everything the proposition cites there, is missing evidence naming the value: the
citation must cover what the proposition says. A value computed from the entry is
not one. Everything else is read, by the later checks and the model, in what the
citations name (:func:`assay.verifier._citations.cited_reading`)."""

from __future__ import annotations

import json

from assay.contract import QuoteCitation
from assay.gate import CitedSpan, nfkc
from assay.grounding import extract_identifiers, identifier_in_evidence
from assay.verifier._context import PropositionContext
from assay.verifier._deterministic import deterministic_gaps
from assay.verifier._pipeline import CheckSpec, Cite, Example, Finding


def _cites(context: PropositionContext) -> bool:
    """a proposition with ``cites``"""
    return bool(context.proposition.cites)


def _find(context: PropositionContext) -> Finding | None:
    return _names_nothing(context) or _is_a_quote(context) or _outside(context)


def _names_nothing(context: PropositionContext) -> Finding | None:
    for entry in context.cited:
        for cited in context.citations.get(entry.id, ()):
            if isinstance(cited.found, str):
                return Finding(
                    label="missing_evidence",
                    reason=f"cites[{cited.index}] names nothing in {entry.id}: {cited.found}",
                    check=CHECK.id,
                    ledger_id=entry.id,
                )
    return None


def _is_a_quote(context: PropositionContext) -> Finding | None:
    said = _plain(context.text)
    if len(said) < 8:
        return None
    for entry in context.cited:
        for cited in context.citations.get(entry.id, ()):
            found = cited.found
            if (
                isinstance(cited.cite, QuoteCitation)
                and isinstance(found, CitedSpan)
                and _plain(cited.cite.quote) == said
                and _whole_sentences(entry.text, cited.cite.quote, found)
            ):
                return Finding(
                    label="entailment",
                    reason=f"stated word for word by its cites[{cited.index}]",
                    check=CHECK.id,
                    ledger_id=entry.id,
                    span=found.stored,
                )
    return None


def _whole_sentences(stored: str, quote: str, found: CitedSpan) -> bool:
    """Whether a quote stands as whole sentences: in the text it was found in (the
    stored text, or the one JSON string it lies in), what comes before it ends a
    sentence or a line, and it ends one itself, or a line or the text does."""
    if len(found.lines) > 1:
        return False
    text = nfkc(found.lines[0].value if found.lines else stored)
    needle = nfkc(quote)
    start = text.find(needle)
    if start < 0:
        return False
    before = text[:start].rstrip(" \t")
    after = text[start + len(needle) :].lstrip(" \t")
    opens = not before or before[-1] in ".!?\n\r"
    closes = needle.rstrip()[-1:] in (".", "!", "?") or after[:1] in ("", "\n", "\r", ".", "!", "?")
    return opens and closes


def _plain(text: str) -> str:
    return " ".join(nfkc(text).split()).rstrip(".").strip()


def _outside(context: PropositionContext) -> Finding | None:
    """A value the cited entry writes, but only outside what the proposition cites of
    it. A value computed from the entry (a sum, a difference) is not one, nor is a
    quantity ("five patrons" is a count of rows as often as a written value): their
    operands may stand anywhere in what was read."""
    narrowed = [
        reading.text if context.cited_spans(entry) else view
        for entry, reading, view in zip(context.cited, context.readings, context.views, strict=True)
    ]
    written = {
        ident.value
        for ident in extract_identifiers(context.text)
        if ident.kind != "quantity"
        and any(identifier_in_evidence(ident, view) for view in context.views)
    }
    outside = [gap for gap in deterministic_gaps(context.text, narrowed).gaps if gap in written]
    if not outside:
        return None
    shown = "; ".join(
        f"{entry.id} {span.shown!r}"
        for entry in context.cited
        for span in context.cited_spans(entry)
    )
    return Finding(
        label="missing_evidence",
        reason=f"“{outside[0]}” is in its cited evidence but not in what it cites ({shown}); "
        "cite where it is stated",
        check=CHECK.id,
    )


_ORDER = json.dumps(
    {
        "order": {"id": "A-1093", "total": 84.5, "currency": "USD", "delivered_on": "2025-03-14"},
        "customer": {"name": "R. Okafor", "since": "2019-06-01"},
    }
)
_NOTICE = (
    "Maintenance notice. It is not true that the late fee is waived for March. "
    "The late fee is EUR 15."
)

CHECK = CheckSpec(
    id="cited_spans",
    summary="a citation that names nothing, a proposition that is its own quote, "
    "a value outside what it cites",
    finder=_find,
    condition=_cites,
    examples=(
        Example(
            proposition="Order A-1093 was delivered on 14 March 2025.",
            evidence=(_ORDER,),
            cites=(Cite(entry=0, pointer="/order/shipped_on"),),
            finds="missing_evidence",
            why="the pointer does not resolve",
        ),
        Example(
            proposition="Order A-1093 was delivered on 14 March 2025.",
            evidence=(_ORDER,),
            cites=(Cite(entry=0, pointer="/order/total"),),
            finds=None,
            why="the date is a field of the same record: read with it, left to the next checks",
        ),
        Example(
            proposition="Order A-1093 was delivered on 1 June 2019.",
            evidence=(_ORDER,),
            cites=(Cite(entry=0, pointer="/order/delivered_on"),),
            finds="missing_evidence",
            why="a date of another record of the entry, not of what it cites",
        ),
        Example(
            proposition="The two lines come to 7.5 hours in total.",
            evidence=("line 1: 3.0 hours\nline 2: 4.5 hours",),
            cites=(Cite(entry=0, quote="line 1: 3.0 hours"),),
            finds=None,
            why="a value computed from the entry is not a value written outside the cites",
        ),
        Example(
            proposition="The late fee is EUR 15.",
            evidence=(_NOTICE,),
            cites=(Cite(entry=0, quote="The late fee is EUR 15."),),
            finds="entailment",
        ),
        Example(
            proposition="The late fee is waived for March.",
            evidence=(_NOTICE,),
            cites=(Cite(entry=0, quote="the late fee is waived for March"),),
            finds=None,
            why="a quote is its sentence's words, not the whole sentence: left to what reads it",
        ),
    ),
)
