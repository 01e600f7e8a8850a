"""Whether each number and date of a claim is accounted for by its evidence.

A claim's value is accounted for when an evidence text states it, in whatever
form (:func:`~assay.grounding.same`, :func:`~assay.grounding.same_date`), or when
it is a checked computation over the evidence that the claim says it is
(:mod:`assay.grounding._arithmetic`). :func:`check_values` reports each value of a
claim with how it is accounted for, or why it is not: missing from the evidence,
or a miscalculation whose right value it names.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from assay.grounding._arithmetic import Computation, Miscalculation, compute
from assay.grounding._calendar import shifted_date
from assay.grounding._dates import DateMention, find_dates, same_date
from assay.grounding._evidence import EvidenceIndex, index_evidence
from assay.grounding._extremes import extreme_miscalculation
from assay.grounding._numbers import Convention, convention_of
from assay.grounding._quantities import Quantity, find_quantities, supports
from assay.grounding._worksheet import Worksheet

__all__ = [
    "ClaimValue",
    "Occurrence",
    "ValueCheck",
    "check_indexed",
    "check_values",
    "claim_values",
    "evidence_index",
    "occurrence_of",
    "read_as",
]

Status = Literal["found", "computed", "miscalculated", "missing"]


@dataclass(frozen=True, kw_only=True, slots=True)
class ClaimValue:
    """A number or date of a claim: ``quantity`` or ``date`` is set."""

    start: int
    end: int
    text: str
    quantity: Quantity | None = None
    date: DateMention | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class Occurrence:
    """Where evidence ``document`` states a value: ``start:end`` of its view's text."""

    document: int
    start: int
    end: int
    text: str


@dataclass(frozen=True, kw_only=True, slots=True)
class ValueCheck:
    """How one value of a claim is accounted for."""

    value: ClaimValue
    status: Status
    occurrence: Occurrence | None = None
    computation: Computation | None = None
    miscalculation: Miscalculation | None = None

    @property
    def ok(self) -> bool:
        return self.status in ("found", "computed")


def claim_values(text: str, convention: Convention | None = None) -> list[ClaimValue]:
    """Every date, time and quantity of a claim's text, in order of position; a
    number the claim writes ambiguously (``2,350``) is read in ``convention`` where
    the claim's own numbers do not say which mark is decimal (:func:`read_as`).

    Cached for short texts: the gate reads each identifier of a claim once per cited
    entry, and the verifier reads the same claim again."""
    if len(text) > _CACHED_CLAIM_CHARS:
        return list(_claim_values(text, convention))
    return list(_cached_claim_values(text, convention))


def read_as(indexes: Sequence[EvidenceIndex]) -> Convention | None:
    """How a claim checked against ``indexes`` reads a number its own text leaves
    ambiguous: with a decimal point where every evidence text writes one (``2,350
    g`` against ``weight_kg: 2.35`` is two thousand three hundred and fifty grams, not
    2.35 g), else each way it can be read."""
    if indexes and all(index.convention == "point" for index in indexes):
        return "point"
    return None


#: Texts up to this length (claims, propositions, the values found in them) have
#: their values cached, at most 4,096 of them: a bounded few MiB.
_CACHED_CLAIM_CHARS = 2_000


@lru_cache(maxsize=4096)
def _cached_claim_values(text: str, convention: Convention | None) -> tuple[ClaimValue, ...]:
    return _claim_values(text, convention)


def _claim_values(text: str, convention: Convention | None) -> tuple[ClaimValue, ...]:
    dates = find_dates(text)
    values = [ClaimValue(start=d.start, end=d.end, text=d.text, date=d) for d in dates]
    skip = [(d.start, d.end) for d in dates]
    own = convention_of(text) if convention is not None else None
    reading = convention if own == "unknown" else None
    for q in find_quantities(text, convention=reading, skip=skip):
        start = q.start if q.hedge_start is None else q.hedge_start
        values.append(ClaimValue(start=start, end=q.end, text=text[start : q.end], quantity=q))
    return tuple(sorted(values, key=lambda v: v.start))


@lru_cache(maxsize=256)
def evidence_index(text: str) -> EvidenceIndex:
    """:func:`~assay.grounding._evidence.index_evidence`, cached by text."""
    return index_evidence(text)


def check_values(claim: str, evidence: Sequence[str]) -> list[ValueCheck]:
    """Each value of ``claim`` with how ``evidence`` accounts for it (occurrences
    first; a computation only for a value no evidence states)."""
    return check_indexed(claim, [(text, evidence_index(text)) for text in evidence])


def check_indexed(claim: str, evidence: Sequence[tuple[str, EvidenceIndex]]) -> list[ValueCheck]:
    """:func:`check_values` over evidence already indexed: ``(text, index)`` pairs,
    each index made by :func:`evidence_index` (or ``index_evidence``) of its text.

    The last answer is kept: the gate asks once for each amount of a claim
    (:func:`assay.gate.computed_in`), each time over the same indexes, and every
    answer costs as much as the whole claim."""
    pairs = tuple(evidence)
    last = _LAST[0]
    if last is not None and last[0] == claim and _same_evidence(last[1], pairs):
        return list(last[2])
    out = _check_indexed(claim, pairs)
    _LAST[0] = (claim, pairs, tuple(out))
    return out


#: The last claim :func:`check_indexed` checked, over what, and its answer.
_LAST: list[tuple[str, tuple[tuple[str, EvidenceIndex], ...], tuple[ValueCheck, ...]] | None] = [
    None
]


def _same_evidence(
    a: Sequence[tuple[str, EvidenceIndex]], b: Sequence[tuple[str, EvidenceIndex]]
) -> bool:
    """The same texts with the very same indexes (an index is not compared by value:
    that would cost as much as making it)."""
    return len(a) == len(b) and all(
        x[1] is y[1] and x[0] == y[0] for x, y in zip(a, b, strict=True)
    )


def _check_indexed(claim: str, evidence: Sequence[tuple[str, EvidenceIndex]]) -> list[ValueCheck]:
    indexes = [index.bound(text) for text, index in evidence]
    checks = [_occurrence(value, indexes) for value in claim_values(claim, read_as(indexes))]
    mentioned = {
        (c.occurrence.document, c.occurrence.start, c.occurrence.end)
        for c in checks
        if c.occurrence is not None
    }
    # What the computations of the claim's values all read, read once for them all.
    sheet = Worksheet(claim, indexes, mentioned)
    out: list[ValueCheck] = []
    after = 0
    for check in checks:
        quantity, day = check.value.quantity, check.value.date
        if check.status == "missing" and quantity is not None:
            out.append(_computed(check, quantity, sheet))
        elif check.status == "missing" and day is not None:
            out.append(_with(check, shifted_date(day, sheet)))
        elif quantity is not None:
            out.append(_extreme(check, quantity, sheet, after))
        else:
            out.append(check)
        after = check.value.end
    return out


def _extreme(check: ValueCheck, quantity: Quantity, sheet: Worksheet, after: int) -> ValueCheck:
    """A found value the claim says is the largest or smallest of its column, and
    that is not: a miscalculation (:mod:`assay.grounding._extremes`)."""

    def places() -> Iterator[tuple[int, int]]:
        for doc, index in enumerate(sheet.indexes):
            for start, _, _ in _places(check.value, index):
                yield doc, start

    wrong = extreme_miscalculation(quantity, places, sheet, after)
    if wrong is None:
        return check
    return ValueCheck(value=check.value, status="miscalculated", miscalculation=wrong)


def occurrence_of(value: ClaimValue, indexes: Sequence[EvidenceIndex]) -> Occurrence | None:
    """Where an evidence text states ``value`` in any written form, if one does."""
    return _occurrence(value, indexes).occurrence


def occurrences_of(value: ClaimValue, index: EvidenceIndex) -> list[Occurrence]:
    """Every place one evidence text states ``value``, in any written form (where
    :func:`occurrence_of` stops at the first)."""
    return [
        Occurrence(document=0, start=start, end=end, text=text)
        for start, end, text in _places(value, index)
    ]


def _occurrence(value: ClaimValue, indexes: Sequence[EvidenceIndex]) -> ValueCheck:
    for doc, index in enumerate(indexes):
        for start, end, text in _places(value, index):
            return _found(value, doc, start, end, text)
    return ValueCheck(value=value, status="missing")


def _places(value: ClaimValue, index: EvidenceIndex) -> Iterator[tuple[int, int, str]]:
    """Where one evidence text states ``value``, in order, lazily: the first costs
    no more than the search for it."""
    if value.date is not None:
        for mention, _ in index.dates:
            if same_date(value.date, mention, index.years):
                yield mention.start, mention.end, mention.text
    elif value.quantity is not None:
        for item in index.values:
            if supports(item.quantity, value.quantity, units=item.units):
                yield item.quantity.start, item.quantity.end, item.quantity.text


def _found(value: ClaimValue, doc: int, start: int, end: int, text: str) -> ValueCheck:
    occurrence = Occurrence(document=doc, start=start, end=end, text=text)
    return ValueCheck(value=value, status="found", occurrence=occurrence)


def _computed(check: ValueCheck, quantity: Quantity, sheet: Worksheet) -> ValueCheck:
    return _with(check, compute(quantity, sheet.text, sheet.indexes, sheet=sheet))


def _with(check: ValueCheck, result: Computation | Miscalculation | None) -> ValueCheck:
    if isinstance(result, Computation):
        return ValueCheck(value=check.value, status="computed", computation=result)
    if isinstance(result, Miscalculation):
        return ValueCheck(value=check.value, status="miscalculated", miscalculation=result)
    return check
