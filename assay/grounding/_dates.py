"""Dates and times in the forms people and tools write them, and when two are one.

``2024-10-31``, ``31 October 2024``, ``Oct 31, 2024``, ``Thursday 31st of October
2024`` and ``31/10/2024`` are one day; ``2025-01`` and ``January 2025`` one month;
``14:00``, ``2 p.m.`` and the time of ``2024-12-03T14:00:00Z`` one time. A scan
finds the candidates (month and weekday names are ``dateutil``'s own lists) and
``dateutil`` reads each. A field a text leaves out is found by reading the
candidate twice against two different defaults: what differs was not written.

A numeric date whose day and month could be swapped (``03/01/2024`` is 1 March in
the US and 3 January elsewhere) matches only the same spelling; ``31/10/2024`` is
not ambiguous (there is no month 31) and matches the ISO date. A date written with
dots (``01.03.2025``) is day first, as everywhere dates are written that way.

Two dates are the same when every field the claim gives equals the evidence's; a
year the evidence leaves out (``closes at 14:00 on 24 December``) is taken from the
evidence text when that text writes the claim's year somewhere. Two times are the
same when their hours and minutes are (seconds too where both give them) and they
are not in different stated zones (``Z``, ``UTC`` and ``+00:00`` are one zone).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any, Literal

__all__ = [
    "DateMention",
    "find_dates",
    "same_date",
    "years_in",
]

DateKind = Literal["date", "time", "datetime"]

_DEFAULTS = (datetime(2000, 1, 1, 0, 0, 0), datetime(2001, 2, 2, 1, 1, 1))
_ISO = (
    r"(?<![\w-])\d{4}-\d{2}-\d{2}"
    r"(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2}|\x20?UTC)?)?(?![\w-])"
)
_ISO_MONTH = r"(?<![\w-])\d{4}-(?:0[1-9]|1[0-2])(?![\w-])"
_NUMERIC = (
    r"(?<![\w/.-])(?:\d{1,2}/\d{1,2}/(?:\d{4}|\d{2})|\d{1,2}\.\d{1,2}\.\d{4}|\d{4}/\d{2}/\d{2})"
    r"(?![\w/-]|\.\w)"
)
_CLOCK = (
    r"(?<![\w:.])(?:\d{1,2}:\d{2}(?::\d{2})?(?:\x20?(?:[ap]\.m\.|[AaPp][Mm]))?"
    r"|\d{1,2}(?:\.\d{2})?\x20?(?:[ap]\.m\.|[AaPp][Mm])(?![\w]))(?:Z|\x20(?:UTC|GMT))?(?![\w:])"
)
_DAY = r"\d{1,2}(?:st|nd|rd|th)?"
_YEAR = re.compile(r"(?<!\d)(?:19|20)\d{2}(?!\d)")
_DAY_LIST = re.compile(r"(?<!\d)\d{1,2}(?!\d)")
_MORE_DAYS = re.compile(r"\d{1,2}(?:st|nd|rd|th)?(?:,\s*|\s+and\s+|\s*[-\u2013]\s*)\d")


@dataclass(frozen=True, kw_only=True, slots=True)
class DateMention:
    """A date, month, time or date-time written in a text: ``text[start:end]``.

    A field the text does not write is ``None``. ``ambiguous`` marks a numeric
    date whose day and month could be swapped; it matches only its own spelling.
    ``zone`` is the UTC offset in minutes where one is written.
    """

    start: int
    end: int
    text: str
    kind: DateKind
    year: int | None = None
    month: int | None = None
    day: int | None = None
    hour: int | None = None
    minute: int | None = None
    second: int | None = None
    zone: int | None = None
    ambiguous: bool = False

    def moment(self) -> datetime | None:
        """The point in time, where year, month and day are all written."""
        if self.year is None or self.month is None or self.day is None:
            return None
        moment = datetime(self.year, self.month, self.day, self.hour or 0, self.minute or 0)
        if self.zone is not None:
            moment -= timedelta(minutes=self.zone)
        return moment.replace(second=self.second or 0)

    def clock_minutes(self) -> int | None:
        """Minutes since midnight (in UTC where a zone is written)."""
        if self.hour is None or self.minute is None:
            return None
        return (self.hour * 60 + self.minute - (self.zone or 0)) % (24 * 60)


def find_dates(text: str) -> list[DateMention]:
    """Every date, month and time of ``text``, in order of position, none
    overlapping. A list of days before one month (``24 and 31 December``) gives one
    mention per day."""
    found: list[DateMention] = []
    taken = _Taken()
    for index, pattern in enumerate(_patterns()):
        for match in pattern.finditer(text):
            start, end = match.span()
            end = _without_full_stop(text, start, end)
            if taken.overlaps(start, end):
                continue
            mentions = list(_read(text, start, end, written=index == 1))
            if mentions:
                taken.add(start, end)
                found.extend(mentions)
    found.sort(key=lambda d: (d.start, d.end))
    return found


class _Taken:
    """Spans already taken, sorted, for overlap tests in logarithmic time."""

    def __init__(self) -> None:
        self._starts: list[int] = []
        self._ends: list[int] = []

    def overlaps(self, start: int, end: int) -> bool:
        k = bisect_left(self._starts, end)  # spans that start before ``end``
        return k > 0 and self._ends[k - 1] > start

    def add(self, start: int, end: int) -> None:
        k = bisect_left(self._starts, start)
        self._starts.insert(k, start)
        self._ends.insert(k, end)


def _without_full_stop(text: str, start: int, end: int) -> int:
    """``31 December.`` ends a sentence: a full stop after a digit or a full month
    name is not part of the date (after ``Dec`` it may be, after ``p.m`` it is)."""
    if text[max(start, end - 4) : end].lower() in ("a.m.", "p.m."):
        return end
    if end - start > 4 and text[end - 1] == "." and not text[end - 4 : end - 1].isalpha():
        return end - 1
    if end - start > 5 and text[end - 1] == "." and text[end - 5 : end - 1].isalpha():
        return end - 1
    return end


@lru_cache(maxsize=1)
def _patterns() -> tuple[re.Pattern[str], ...]:
    """The candidate scans, most specific first; month names from ``dateutil``."""
    from dateutil import parser

    info = parser.parserinfo()
    months = sorted({n for names in info.MONTHS for n in names}, key=len, reverse=True)
    weekdays = sorted({n for names in info.WEEKDAYS for n in names}, key=len, reverse=True)
    month = r"(?:" + "|".join(months) + r")\.?"
    weekday = r"(?:(?:" + "|".join(weekdays) + r")\.?,?\s+)?"
    days = _DAY + r"(?:(?:,\s*|\s+and\s+|\s*[-\u2013]\s*)" + _DAY + r"){0,6}"
    written = (
        r"(?<![\w])"
        + weekday
        + r"(?:"
        + days
        + r"\s+(?:of\s+)?"
        + month
        + r"(?:,?\s+\d{4})?"
        + r"|"
        + month
        + r"\s+"
        + _DAY
        + r"(?:,?\s+\d{4})?"
        + r"|"
        + month
        + r"\s+\d{4}"
        + r")(?![\w])"
    )
    return tuple(re.compile(p) for p in (_ISO, written, _NUMERIC, _ISO_MONTH, _CLOCK))


def _read(text: str, start: int, end: int, *, written: bool) -> Iterator[DateMention]:
    raw = text[start:end]
    if written and _MORE_DAYS.match(raw):
        yield from _day_list(raw, start)
        return
    mention = _parse(raw, start)
    if mention is not None:
        yield mention


def _day_list(raw: str, start: int) -> Iterator[DateMention]:
    """``24 and 31 December 2024``: each day with the month (and year) after the last."""
    days = list(_DAY_LIST.finditer(raw))
    month_at = re.search(r"[A-Za-z]{3}", raw[days[-1].end() :]) if days else None
    if month_at is None:
        return
    tail = raw[days[-1].end() + month_at.start() :]
    for m in days:
        if m.start() >= days[-1].end() + month_at.start():
            break
        mention = _parse(f"{m.group()} {tail}", start + m.start())
        if mention is not None:
            last = m is days[-1]
            stop = start + len(raw) if last else start + m.end()
            yield _replace_span(mention, start + m.start(), stop, raw[m.start() : stop - start])


def _replace_span(mention: DateMention, start: int, end: int, text: str) -> DateMention:
    fields = {f: getattr(mention, f) for f in DateMention.__dataclass_fields__}
    fields.update(start=start, end=end, text=text)
    return DateMention(**fields)


def _parse(raw: str, start: int) -> DateMention | None:
    """``raw`` as a mention at ``start``; ``None`` where it is not a date
    (``31/02/2024``, ``25:00``)."""
    fields = _fields(raw)
    if fields is None:
        return None
    return DateMention(start=start, end=start + len(raw), text=raw, **fields)


@lru_cache(maxsize=4096)
def _fields(raw: str) -> dict[str, Any] | None:
    """What ``raw`` writes, read by ``dateutil`` twice against two defaults."""
    a, b = (_dateutil(raw, default) for default in _DEFAULTS)
    if a is None or b is None:
        return None
    given: dict[str, Any] = {
        name: getattr(a, name) if getattr(a, name) == getattr(b, name) else None
        for name in ("year", "month", "day", "hour", "minute", "second")
    }
    clock = ":" in raw or _MERIDIEM.search(raw) is not None
    if not clock:
        given.update(hour=None, minute=None, second=None)
    elif given["minute"] is None and given["hour"] is not None:
        given["minute"] = 0  # 2 p.m. is 14:00
    kind: DateKind = "time" if clock else "date"
    if clock and given["month"] is not None:
        kind = "datetime"
    given.update(kind=kind, zone=_zone(a.utcoffset()), ambiguous=_ambiguous(raw))
    return given


_MERIDIEM = re.compile(r"[ap]\.?m\.?$|[AP]M$", re.I)


def _dateutil(raw: str, default: datetime) -> datetime | None:
    from dateutil import parser

    try:
        return parser.parse(
            _DOTTED_CLOCK.sub(r"\1:\2", raw),
            default=default,
            dayfirst=_DOTTED_DATE.fullmatch(raw) is not None,
        )
    except (ValueError, OverflowError):
        return None


#: ``01.03.2025``: every convention that writes a date with dots puts the day first.
_DOTTED_DATE = re.compile(r"\d{1,2}\.\d{1,2}\.\d{4}")


_DOTTED_CLOCK = re.compile(r"^(\d{1,2})\.(\d{2})(?=\s?[AaPp])")


def _zone(offset: timedelta | None) -> int | None:
    return None if offset is None else int(offset.total_seconds() // 60)


def _ambiguous(raw: str) -> bool:
    """A numeric date with slashes whose first two fields could each be the month
    (a dotted date is day first)."""
    parts = raw.split("/")
    if len(parts) != 3 or len(parts[0]) == 4 or not all(p.isdigit() for p in parts):
        return False
    a, b = int(parts[0]), int(parts[1])
    return a != b and a <= 12 and b <= 12


def years_in(text: str) -> frozenset[int]:
    """Every year (1900-2099) written in ``text``: where a yearless date's year may
    come from."""
    return frozenset(int(m.group()) for m in _YEAR.finditer(text))


def same_date(claim: DateMention, evidence: DateMention, evidence_years: frozenset[int]) -> bool:
    """Whether the evidence mention states what the claim mention states: every
    field the claim writes, equal (a year the evidence leaves out may come from
    ``evidence_years``, the years its text writes)."""
    if claim.ambiguous or evidence.ambiguous:
        return " ".join(claim.text.split()) == " ".join(evidence.text.split())
    if claim.month is None and claim.year is None and claim.hour is None:
        return False
    if claim.month is not None and claim.month != evidence.month:
        return False
    if claim.day is not None and claim.day != evidence.day:
        return False
    if claim.year is not None and claim.year != evidence.year:
        if evidence.year is not None or claim.year not in evidence_years:
            return False
        if evidence.month is None:
            return False
    if claim.hour is not None:
        return _same_clock(claim, evidence)
    return True


def _same_clock(claim: DateMention, evidence: DateMention) -> bool:
    if evidence.hour is None or evidence.minute is None or claim.minute is None:
        return False
    if claim.second is not None and evidence.second is not None and claim.second != evidence.second:
        return False
    if claim.zone is not None and evidence.zone is not None:
        return claim.clock_minutes() == evidence.clock_minutes()
    return (claim.hour, claim.minute) == (evidence.hour, evidence.minute)
