"""A claim's date that is a date of its evidence plus a number of days it states.

A manifest writes ``ship_date: 2025-07-02`` and ``transit_days: 9``; a loan
``issued: 2025-05-20`` and ``loan_period_days: 21``. An honest report says the
shipment "should arrive on 11 July 2025, 9 days after it ships", a date no evidence
writes. Such a date is accepted when, as for every computation
(:mod:`assay.grounding._arithmetic`), the claim says it is one (a cue of time
elapsed or of a difference in its sentence: ``after``, ``later``, ``before``,
``from``, ``within``, …) and it is exactly a calendar date of the evidence shifted
by a whole number of days (or weeks) the evidence states, the two of one record, or
one of them named by the claim, or any two where the evidence holds few dates.

Where the claim names the number of days it counts ("9 days after") and no shift
gives its date, it is a miscalculation that names the date the shift gives. The
search is bounded: :data:`~assay.grounding._arithmetic.MAX_DATES` dates of each
evidence text and :data:`~assay.grounding._arithmetic.MAX_OPERANDS` numbers of days.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal

from assay.grounding._arithmetic import (
    MAX_DATES,
    MAX_OPERANDS,
    Computation,
    Miscalculation,
    Operand,
    cues_on,
)
from assay.grounding._dates import DateMention
from assay.grounding._worksheet import Worksheet

__all__ = ["shifted_date"]

#: Days in each unit a shift may be stated in.
_DAYS = {"day": 1, "week": 7}
#: Words that say the shift goes back in time.
_BACK = ("before", "earlier", "ago")
#: "Few" dates: any two of them may be related, as for time elapsed.
_FEW = 8


@dataclass(frozen=True, kw_only=True, slots=True)
class _Shift:
    """A whole number of days an evidence text states, with where it sits."""

    days: int
    operand: Operand
    record: tuple[int, int]
    named: bool


def shifted_date(claim: DateMention, sheet: Worksheet) -> Computation | Miscalculation | None:
    """The shift of an evidence date by a number of days the evidence states that
    gives the claim's date, where a cue of the claim says it is one; else the shift
    the claim describes with the number of days it names, as a miscalculation; else
    ``None``."""
    wanted = _day_of(claim)
    cues = cues_on(sheet, claim.start, claim.end)
    cue = cues.get("elapsed") or cues.get("difference")
    if wanted is None or cue is None:
        return None
    back = cue.lower() in _BACK
    named: list[Computation] = []
    for computation, shifted, is_named in _candidates(sheet, cue, back=back):
        if shifted == wanted:
            return computation
        if is_named:
            named.append(computation)
    if len(named) == 1:
        return Miscalculation(claimed=_number(wanted), expected=named[0])
    return None


def _candidates(
    sheet: Worksheet, cue: str, *, back: bool
) -> Iterator[tuple[Computation, date, bool]]:
    """Each related (date, shift) pair of the evidence as a computation, the date it
    gives, and whether the claim names the shift's number of days."""
    dated = [
        (doc, mention, record)
        for doc, index in enumerate(sheet.indexes)
        for mention, record in index.dates[:MAX_DATES]
        if _day_of(mention) is not None
    ]
    few = len(dated) <= _FEW
    for doc, mention, record in dated:
        start = _day_of(mention)
        assert start is not None
        for shift in _shifts(sheet):
            if not (few or shift.named or shift.record == (doc, record)):
                continue
            moved = start - timedelta(days=shift.days) if back else start + timedelta(shift.days)
            yield _computation(doc, mention, shift, moved, cue), moved, shift.named


def _shifts(sheet: Worksheet) -> list[_Shift]:
    """The first :data:`MAX_OPERANDS` whole numbers of days or weeks of the evidence
    (read once per claim)."""

    def read() -> list[_Shift]:
        found: list[_Shift] = []
        for doc, index in enumerate(sheet.indexes):
            for value in index.values:
                q = value.quantity
                unit = q.unit if q.unit else next(iter(value.units), None)
                if unit not in _DAYS or len(q.values) != 1:
                    continue
                amount = next(iter(q.values)) * _DAYS[unit]
                if amount != amount.to_integral_value() or not 0 < amount <= 3660:
                    continue
                found.append(
                    _Shift(
                        days=int(amount),
                        operand=Operand(
                            value=amount, text=q.text, document=doc, start=q.start, end=q.end
                        ),
                        record=(doc, value.record),
                        named=(doc, q.start, q.end) in sheet.mentioned,
                    )
                )
                if len(found) == MAX_OPERANDS:
                    return found
        return found

    return sheet.cached("day shifts", read)


def _computation(
    doc: int, mention: DateMention, shift: _Shift, moved: date, cue: str
) -> Computation:
    start = Operand(
        value=_number(_day_of(mention) or moved),
        text=mention.text,
        document=doc,
        start=mention.start,
        end=mention.end,
    )
    return Computation(
        operation="date_shift",
        operands=(start, shift.operand),
        result=_number(moved),
        unit="date",
        cue=cue,
        detail=moved.isoformat(),
    )


def _day_of(mention: DateMention) -> date | None:
    """The calendar day a mention writes (year, month and day all written, as
    written, in its own zone), else ``None``."""
    if mention.year is None or mention.month is None or mention.day is None:
        return None
    if mention.ambiguous:
        return None
    return date(mention.year, mention.month, mention.day)


def _number(day: date) -> Decimal:
    """A day as the number ``YYYYMMDD``, how a computation records its result."""
    return Decimal(day.year * 10_000 + day.month * 100 + day.day)
