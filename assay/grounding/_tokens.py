"""Quantities written as one token, whose digits read as parts of a name otherwise:
durations as Go and many CI tools print them (``7m42s``, ``1h30m``), and packs as
packing lists and baggage allowances print them (``24x500ml``: 24 items of 500
millilitres each, read as a count and a measure)."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from decimal import Decimal

from assay.grounding._quantity import Quantity
from assay.grounding._units import is_currency, unit_of

__all__ = ["with_compact_durations", "with_packs"]

_COMPACT_DURATION = re.compile(
    r"(?<![\w.-])(?=\d{1,4}(?:\.\d{1,3})?[hms]\d)(?:(?P<h>\d{1,4})h)?(?:(?P<m>\d{1,4})m)?(?:(?P<s>\d{1,4}(?:\.\d{1,3})?)s)?(?![\w.])"
)
_SECONDS = {"h": Decimal(3600), "m": Decimal(60), "s": Decimal(1)}
#: A pack written as one token, ``24x500ml`` or ``12 x 1L``: so many items of so
#: much each, read as a count and a measure.
_PACK = re.compile(
    r"(?<![\w.])(?P<n>\d{1,4})\x20?[x\u00d7]\x20?(?P<v>\d{1,6}(?:\.\d{1,3})?)\x20?"
    r"(?P<u>[A-Za-z]{1,3})(?![\w.])"
)


def with_packs(text: str, found: list[Quantity], skip: Sequence[tuple[int, int]]) -> list[Quantity]:
    """``found`` with the packs written as one token (``24x500ml``: 24 items of 500
    millilitres), whose digits read as parts of a name otherwise: the count and the
    measure, each its own quantity."""
    extra: list[Quantity] = []
    skip_starts = [a for a, _ in skip]
    for match in _PACK.finditer(text):
        unit = unit_of(match.group("u"))
        start, end = match.span()
        if unit is None or is_currency(unit) or _overlaps(skip, skip_starts, start, end):
            continue
        count, size = match.span("n"), (match.start("v"), end)
        value = match.group("v")
        extra += [
            Quantity(
                start=count[0],
                end=count[1],
                text=match.group("n"),
                values=frozenset({Decimal(match.group("n"))}),
                decimals=0,
                kind="count",
            ),
            Quantity(
                start=size[0],
                end=size[1],
                text=text[size[0] : size[1]],
                values=frozenset({Decimal(value)}),
                decimals=len(value.partition(".")[2]),
                kind="measure",
                unit=unit,
            ),
        ]
    if not extra:
        return found
    spans = [(e.start, e.end) for e in extra]
    starts = [e.start for e in extra]
    kept = [q for q in found if not _overlaps(spans, starts, q.start, q.end)]
    return sorted([*kept, *extra], key=lambda q: q.start)


def with_compact_durations(
    text: str, found: list[Quantity], skip: Sequence[tuple[int, int]]
) -> list[Quantity]:
    """``found`` with the durations written as one token (``7m42s``, ``1h30m``, as Go
    and many CI tools print them), whose digits read as parts of a name otherwise."""
    extra: list[Quantity] = []
    skip_starts = [a for a, _ in skip]
    for match in _COMPACT_DURATION.finditer(text):
        parts = [(match.group(u), u) for u in ("h", "m", "s") if match.group(u) is not None]
        start, end = match.span()
        if len(parts) < 2 or _overlaps(skip, skip_starts, start, end):
            continue
        unit = {"h": "hour", "m": "minute", "s": "second"}[parts[-1][1]]
        seconds = sum(Decimal(v) * _SECONDS[u] for v, u in parts)
        decimals = len(parts[-1][0].partition(".")[2])
        extra.append(
            Quantity(
                start=start,
                end=end,
                text=match.group(0),
                values=frozenset({seconds / _SECONDS[parts[-1][1]]}),
                decimals=decimals,
                kind="measure",
                unit=unit,
            )
        )
    if not extra:
        return found
    spans = [(e.start, e.end) for e in extra]
    starts = [e.start for e in extra]
    kept = [q for q in found if not _overlaps(spans, starts, q.start, q.end)]
    return sorted([*kept, *extra], key=lambda q: q.start)


def _overlaps(
    spans: Sequence[tuple[int, int]], starts: Sequence[int], start: int, end: int
) -> bool:
    """Whether ``start:end`` overlaps one of ``spans`` (sorted, not overlapping each
    other; ``starts`` their starts)."""
    k = bisect_right(starts, start) - 1
    return (k >= 0 and start < spans[k][1]) or (k + 1 < len(spans) and spans[k + 1][0] < end)
