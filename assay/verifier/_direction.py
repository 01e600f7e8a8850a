"""Whether a claim moves a value the way its evidence does: "rose to 11.2%" against
"11.2%, down from 12.0%", "brought forward 40 minutes" against "retimed 40 minutes
later".

The value checks compare the value itself and find it; which way it moved is the
word beside it, and a small model reads "rose" and "down" in one sentence as about
the same thing, not as opposites. So where a value of the claim and its occurrence
in the evidence each have a word of direction beside them in their clause, and the
two point opposite ways (up against down, later against earlier), the evidence says
the opposite. In the evidence, "from A to B" around the value gives the direction
by itself ("moves from 14 July to 21 July" is later). A value with no such word
or pair on either side decides nothing: "pressure fell from 322 kPa to 296 kPa"
against a table of readings is left to the arithmetic and the model.

The "from A to B" phrases of an evidence line are found once, however many values
of the claim occur on it. The words of direction are data
(``assay/_text/words/directions.toml``); a value's clause is the ``value`` clause of
:mod:`assay._text`, and the span reported its ``pointer`` sentence.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import Literal

from assay._text import alternation, clause_around, sentence_around, word_table
from assay.grounding import DateMention, check_values, find_dates, find_quantities

__all__ = ["direction_conflict"]

Direction = Literal["up", "down", "later", "earlier"]

_OPPOSITE: dict[Direction, Direction] = {
    "up": "down",
    "down": "up",
    "later": "earlier",
    "earlier": "later",
}
#: Words of direction that count only in context: "up" and "down" before "from",
#: "by", "to" or a number, "cut" before "from", "by" or "to" within three words. The
#: plain words are data (``words/directions.toml``).
_IN_CONTEXT: dict[Direction, str] = {
    "up": r"up(?=\s+(?:from|by|to|\d))",
    "down": r"cut(?=(?:\s+\w+){0,3}\s+(?:from|by|to)\b)|down(?=\s+(?:from|by|to|\d))",
}


def _pattern(name: Direction) -> str:
    """The words of one direction as a pattern: the plain ones, then those in context."""
    plain = alternation(word_table("directions")[name])
    context = _IN_CONTEXT.get(name)
    return f"{plain}|{context}" if context else plain


_WORDS: list[tuple[Direction, str]] = [(name, _pattern(name)) for name in _OPPOSITE]
_DIRECTION = re.compile(
    "|".join(rf"\b(?P<{name}>{pattern})\b" for name, pattern in _WORDS), re.IGNORECASE
)
#: How far from a value its word of direction may stand, within its clause.
_BEFORE, _AFTER = 32, 24
#: "from A to B", each side at most a few words ("from 14 July to 21 July", "from
#: EUR 4,000 to EUR 6,500").
_FROM_TO = re.compile(
    r"\bfrom\s+(?P<a>[^\s,;]+(?:\s+[^\s,;]+){0,3}?)\s+to\s+(?P<b>[^\s,;]+(?:\s+[^\s,;]+){0,3})",
    re.IGNORECASE,
)


def direction_conflict(evidence: str, claim: str) -> tuple[int, int] | None:
    """The span of ``evidence`` around a value of ``claim`` that it moves the other
    way, or None."""
    if _DIRECTION.search(claim) is None:
        return None  # most claims move nothing: no value to compare
    moves = _Moves(evidence)
    for check in check_values(claim, [evidence]):
        occurrence = check.occurrence
        if check.status != "found" or occurrence is None:
            continue
        claimed = _direction_near(claim, check.value.start, check.value.end)
        if claimed is None:
            continue
        found = _direction_near(evidence, occurrence.start, occurrence.end) or moves.moved(
            occurrence.start, occurrence.end
        )
        if found is not None and found[0] == _OPPOSITE[claimed[0]]:
            return sentence_around(
                evidence, min(found[1], occurrence.start), max(found[2], occurrence.end)
            )
    return None


def _direction_near(text: str, start: int, end: int) -> tuple[Direction, int, int] | None:
    """The word of direction nearest the value at ``start:end`` in its clause (the
    ``value`` clause of :mod:`assay._text`)."""
    lo, hi = clause_around(text, start, end, max(0, start - _BEFORE), min(len(text), end + _AFTER))
    best: tuple[int, Direction, int, int] | None = None
    for match in _DIRECTION.finditer(text, lo, hi):
        if match.start() < end and match.end() > start:
            continue
        distance = start - match.end() if match.end() <= start else match.start() - end
        name: Direction = next(n for n, _ in _WORDS if match.group(n) is not None)
        if best is None or distance < best[0]:
            best = (distance, name, match.start(), match.end())
    return None if best is None else (best[1], best[2], best[3])


class _Moves:
    """The "from A to B" phrases of an evidence text, found once per line."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._breaks: list[int] | None = None  # where its line breaks are
        self._lines: dict[tuple[int, int], list[re.Match[str]]] = {}

    def moved(self, start: int, end: int) -> tuple[Direction, int, int] | None:
        """The way "from A to B" moves, where the value at ``start:end`` (of the
        text's line from ``start`` to ``end``) is A or B (:func:`_moved`)."""
        if self._breaks is None:
            self._breaks = [m.start() for m in re.finditer("\n", self.text)]
        before = bisect_right(self._breaks, start - 1)  # line breaks before start
        line_start = self._breaks[before - 1] + 1 if before else 0
        after = bisect_right(self._breaks, end - 1)  # the first at or after end
        line_end = self._breaks[after] if after < len(self._breaks) else len(self.text)
        line = (line_start, line_end)
        if line not in self._lines:
            self._lines[line] = list(_FROM_TO.finditer(self.text, line_start, line_end))
        phrases = self._lines[line]
        # The phrases do not overlap: the last that starts its A by ``start`` is the
        # only one that can hold it.
        i = bisect_right(phrases, start, key=lambda m: m.start("a")) - 1
        if i < 0 or start >= phrases[i].end("b"):
            return None
        return _moved(phrases[i])


def _moved(match: re.Match[str]) -> tuple[Direction, int, int] | None:
    """The way "from A to B" moves: a date moved later or earlier ("moves from 14
    July to 21 July"), an amount in one unit up or down ("from 12.0% to 11.2%");
    None where the two cannot be compared."""
    a, b = match.group("a"), match.group("b")
    dates_a, dates_b = find_dates(a), find_dates(b)
    if dates_a and dates_b:
        order = _date_order(dates_a[0], dates_b[0])
        if order:
            return ("later" if order > 0 else "earlier"), match.start(), match.end()
        return None
    qa, qb = find_quantities(a), find_quantities(b)
    if qa and qb and qa[0].unit == qb[0].unit and len(qa[0].values) == len(qb[0].values) == 1:
        x, y = qa[0].value, qb[0].value
        if x != y:
            return ("up" if y > x else "down"), match.start(), match.end()
    return None


def _date_order(a: DateMention, b: DateMention) -> int:
    """1 where ``b`` is later than ``a``, -1 where earlier, 0 where unknown or equal:
    compared by the fields both write (a year only where both write one)."""
    fields = ["year", "month", "day", "hour", "minute"]
    if a.year is None or b.year is None:
        fields.remove("year")
    key_a = [getattr(a, f) for f in fields]
    key_b = [getattr(b, f) for f in fields]
    pairs = [(x, y) for x, y in zip(key_a, key_b, strict=True) if x is not None and y is not None]
    if len(pairs) < 2 and not (a.year and b.year):
        return 0  # "from 14 to 21" alone says too little
    for x, y in pairs:
        if x != y:
            return 1 if y > x else -1
    return 0
