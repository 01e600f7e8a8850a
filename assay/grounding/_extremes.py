"""A claim's value that it says is the largest or smallest of a column or field.

"The heaviest pallet is PAL-03, at 401.5 kg" states a value the manifest writes,
so a check for occurrences alone accepts it; but the manifest's heaviest pallet
weighs 412.5 kg. Where the words just before a value say it is the largest
(``heaviest``, ``highest``, ``peaked``, …) or the smallest (``coldest``,
``cheapest``, …) of something (the ``highest`` and ``lowest`` cues of
:data:`~assay.grounding._arithmetic.CUES`), and every place the evidence writes it
is one value of a column or field of two or more values, it must be that column's
largest or smallest value; otherwise it is a miscalculation that names the right
one (:func:`extreme_miscalculation`).

Each column's extremes are read once per claim, so the check costs one look-up per
value of the claim.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable
from decimal import Decimal

from assay.grounding._arithmetic import CUES, Computation, Miscalculation, Operand
from assay.grounding._evidence import EvidenceIndex, Value
from assay.grounding._quantities import Quantity
from assay.grounding._worksheet import Worksheet

__all__ = ["extreme_miscalculation"]

#: How far before a value its superlative may stand (``the heaviest pallet of
#: SM-88410 is PAL-03, at``), in characters.
_WINDOW = 80
#: Places of one value looked at, at most.
_MAX_PLACES = 16
_Extremes = dict[tuple[int, str], tuple[Value, Value, int]]


def extreme_miscalculation(
    quantity: Quantity,
    places: Callable[[], Iterable[tuple[int, int]]],
    sheet: Worksheet,
    after: int,
) -> Miscalculation | None:
    """The miscalculation of a claim's ``quantity`` where the claim says it is the
    largest or smallest of its column and it is not; ``places`` gives the ``(document,
    start)`` of each evidence value that states it (asked only where the claim says
    so), and ``after`` is where the claim's previous value ends (a superlative before
    it speaks of that one)."""
    kind = _superlative(sheet.text, max(after, quantity.start - _WINDOW), quantity.start)
    if kind is None or not quantity.values:
        return None
    extremes = _extremes(sheet)
    wrong: list[tuple[Value, Value, int]] = []
    for doc, start in itertools.islice(places(), _MAX_PLACES):
        value = _value_at(sheet, doc, start)
        column = extremes.get((doc, value.series)) if value and value.series else None
        if value is None or column is None or column[2] < 2:
            continue
        best = column[0] if kind == "highest" else column[1]
        if best.quantity.value == value.quantity.value:
            return None
        wrong.append((value, best, doc))
    if not wrong:
        return None
    found, best, doc = wrong[0]
    return Miscalculation(
        claimed=quantity.value, expected=_computation(kind, quantity, found, best, doc)
    )


def _superlative(text: str, start: int, end: int) -> str | None:
    """``highest`` or ``lowest``, the one kind of superlative ``text[start:end]``
    writes, else ``None``."""
    kinds = [kind for kind in ("highest", "lowest") if CUES[kind].search(text, start, end)]
    return kinds[0] if len(kinds) == 1 else None


def _extremes(sheet: Worksheet) -> _Extremes:
    """Each column's largest and smallest value and its size, by (document, series):
    its single-valued numbers, read once per claim."""

    def read() -> _Extremes:
        found: _Extremes = {}
        for doc, index in enumerate(sheet.indexes):
            for value in index.values:
                if value.series is None or len(value.quantity.values) != 1:
                    continue
                key = (doc, value.series)
                if key not in found:
                    found[key] = (value, value, 1)
                    continue
                high, low, size = found[key]
                x = value.quantity.value
                high = value if x > high.quantity.value else high
                low = value if x < low.quantity.value else low
                found[key] = (high, low, size + 1)
        return found

    return sheet.cached("column extremes", read)


def _value_at(sheet: Worksheet, doc: int, start: int) -> Value | None:
    def read() -> dict[int, Value]:
        index: EvidenceIndex = sheet.indexes[doc]
        return {v.quantity.start: v for v in index.values}

    return sheet.cached(("values by start", doc), read).get(start)


def _computation(kind: str, claim: Quantity, found: Value, best: Value, doc: int) -> Computation:
    """The right extreme, in the claim's unit: scaled as the value it found is (a
    column in ms for a claim in seconds)."""
    written, claimed = found.quantity.value, claim.value
    result = best.quantity.value * claimed / written if written else best.quantity.value
    q = best.quantity
    return Computation(
        operation="maximum" if kind == "highest" else "minimum",
        operands=(Operand(value=q.value, text=q.text, document=doc, start=q.start, end=q.end),),
        result=_plain(result),
        unit=claim.unit,
        cue=kind,
        detail=re.sub(r"^table\d+:", "", found.series or ""),
    )


def _plain(value: Decimal) -> Decimal:
    return value.normalize() if value == value.to_integral_value() else value
