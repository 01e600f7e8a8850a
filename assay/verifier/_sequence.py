"""Order in time: a proposition that puts one event after another ("the p99 spike
at 10:40 followed deploy D-2291") where the cited evidence dates the two the other
way round (the deploy at 10:52).

Each side of the sequence word (``words/sequence-words.toml``) is dated by what it
writes: a date-time or time of day of its own, or else the one timestamp of the one
record of the cited evidence that holds its identifier (a deploy id, a job, a
host). A side with neither, or with more than one timestamp to choose from, is not
dated, and nothing is found: the check reads only an order the evidence fixes.
Times of day without a date are compared only where every timestamp read is of one
day.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import partial

from assay._text import alternation, word_table
from assay.grounding import DateMention, extract_identifiers, find_dates, identifier_in_evidence

__all__ = ["OutOfOrder", "anchors", "out_of_order"]

_WORDS = word_table("sequence-words")
_CUE = re.compile(
    rf"\b(?P<later>{alternation(_WORDS['later'])})\b|\b(?P<earlier>{alternation(_WORDS['earlier'])})\b",
    re.IGNORECASE,
)
#: Where the side after the sequence word ends: the end of its clause.
_CLAUSE_END = re.compile(r"[;.!?]|,\s|\s(?:and|but|while|whereas)\s")


@dataclass(frozen=True, slots=True)
class _Dated:
    """One side of the sequence, dated: its moment, or its minutes since midnight
    where no date is written; ``where`` the record that dates it (``None``: the
    proposition's own words) and ``span`` the timestamp in that record."""

    text: str
    moment: datetime | None
    minutes: int | None
    where: int | None = None
    span: tuple[int, int] | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class OutOfOrder:
    """A sequence the evidence contradicts: ``first`` is said to come after
    ``second`` (or before, ``word``) and the evidence dates them the other way;
    ``reading`` and ``span`` point at the timestamp of a record that dates one."""

    word: str
    first: str
    second: str
    first_at: str
    second_at: str
    reading: int
    span: tuple[int, int]


def out_of_order(proposition: str, readings: Sequence[str]) -> OutOfOrder | None:
    """The sequence of ``proposition`` that ``readings`` (what is read of each cited
    entry, as ``path: value`` lines or text) date the other way, if there is one."""
    for match in _CUE.finditer(proposition):
        left = proposition[: match.start()]
        rest = proposition[match.end() :]
        end = _CLAUSE_END.search(rest)
        right = rest[: end.start()] if end else rest
        a, b = _date(left, readings, last=True), _date(right, readings, last=False)
        if a is None or b is None or (a.where is None and b.where is None):
            continue
        later = match.group("later") is not None
        order = _compare(a, b)
        if order is None or order == 0 or (order > 0) == later:
            continue
        pointing = a if a.where is not None else b
        assert pointing.where is not None and pointing.span is not None
        return OutOfOrder(
            word=match.group(),
            first=left.strip(),
            second=right.strip(),
            first_at=a.text,
            second_at=b.text,
            reading=pointing.where,
            span=pointing.span,
        )
    return None


def _compare(a: _Dated, b: _Dated) -> int | None:
    """-1, 0 or 1 as ``a`` is before, with or after ``b``; ``None`` where they cannot
    be compared (a time of day against a moment of another day)."""
    if a.moment is not None and b.moment is not None:
        return (a.moment > b.moment) - (a.moment < b.moment)
    days = {d.moment.date() for d in (a, b) if d.moment is not None}
    if len(days) > 1 or a.minutes is None or b.minutes is None:
        return None
    return (a.minutes > b.minutes) - (a.minutes < b.minutes)


def _date(side: str, readings: Sequence[str], *, last: bool) -> _Dated | None:
    """When one side of the sequence happened: the time it writes (the one nearest
    the sequence word), or the one timestamp of the one record holding its
    identifier."""
    times = [m for m in find_dates(side) if m.hour is not None]
    if times:
        mention = times[-1] if last else times[0]
        return _Dated(text=mention.text, moment=mention.moment(), minutes=mention.clock_minutes())
    found_anchors = anchors(side)
    if not found_anchors:
        return None
    anchor = found_anchors[-1] if last else found_anchors[0]
    found: list[_Dated] = []
    for index, reading in enumerate(readings):
        for start, end in _records(reading):
            record = reading[start:end]
            if not anchor(record):
                continue
            stamps = [m for m in find_dates(record) if m.hour is not None]
            if len(stamps) != 1:
                return None  # no timestamp, or more than one to choose from
            found.append(_stamped(stamps[0], index, start))
    return found[0] if len(found) == 1 else None


def anchors(side: str) -> list[Callable[[str], bool]]:
    """What names the event of one side, in order, each as a test of a record: its
    identifiers (:func:`extract_identifiers`), and its codes of letters and digits
    joined by a hyphen (``D-2291``, ``web-7``), matched whole."""
    found: list[tuple[int, Callable[[str], bool]]] = []
    for ident in extract_identifiers(side):
        if ident.kind not in ("amount", "quantity", "date"):
            found.append((ident.start, partial(identifier_in_evidence, ident)))
    for match in _CODE.finditer(side):
        if not any(start == match.start() for start, _ in found):
            whole = re.compile(rf"(?<![\w-]){re.escape(match.group())}(?![\w-])")
            found.append((match.start(), partial(_has, whole)))
    return [test for _, test in sorted(found, key=lambda pair: pair[0])]


def _has(pattern: re.Pattern[str], record: str) -> bool:
    return pattern.search(record) is not None


#: A code of letters and digits joined by a hyphen or underscore: ``D-2291``.
_CODE = re.compile(
    r"(?<![\w-])[A-Za-z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)*[-_][0-9][A-Za-z0-9]*(?![\w-])"
)


def _stamped(mention: DateMention, reading: int, offset: int) -> _Dated:
    return _Dated(
        text=mention.text,
        moment=mention.moment(),
        minutes=mention.clock_minutes(),
        where=reading,
        span=(offset + mention.start, offset + mention.end),
    )


def _records(reading: str) -> list[tuple[int, int]]:
    """The records of a reading: runs of ``path: value`` lines of one JSON object
    (by the path before its last field), or the lines of a text."""
    spans: list[tuple[int, int]] = []
    position = 0
    owner: str | None = None
    for line in reading.split("\n"):
        end = position + len(line)
        path = line.partition(": ")[0] if ": " in line else None
        parent = path.rpartition(".")[0] if path and " " not in path else None
        if spans and parent is not None and parent == owner:
            spans[-1] = (spans[-1][0], end)
        else:
            spans.append((position, end))
        owner = parent
        position = end + 1
    return spans
