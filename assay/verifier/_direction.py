"""Whether a claim moves a value the way its evidence does: "rose to 11.2%" against
"11.2%, down from 12.0%", "brought forward 40 minutes" against "retimed 40 minutes
later".

The value checks compare the value itself and find it; which way it moved is the
word beside it, and a small model reads "rose" and "down" in one sentence as about
the same thing, not as opposites. So where a value of the claim and its occurrence
in the evidence each have a word of direction beside them in their clause, and the
two point opposite ways (up against down, later against earlier), the evidence says
the opposite. A value with no such word on either side decides nothing: "pressure
fell from 322 kPa to 296 kPa" against a table of readings is left to the
arithmetic and the model.
"""

from __future__ import annotations

import re
from typing import Literal

from assay.grounding import check_values

__all__ = ["direction_conflict"]

Direction = Literal["up", "down", "later", "earlier"]

_OPPOSITE: dict[Direction, Direction] = {
    "up": "down",
    "down": "up",
    "later": "earlier",
    "earlier": "later",
}
_WORDS: list[tuple[Direction, str]] = [
    (
        "up",
        r"ros[ei]n?|rises?|rising|gr[eo]wn?|grows?|growing|increas(?:ed?|es|ing)|climb(?:ed|s)?"
        r"|jump(?:ed|s)?|rais(?:ed?|es|ing)|doubled|tripled|higher|up(?=\s+(?:from|by|to|\d))",
    ),
    (
        "down",
        r"f[ae]ll(?:en|s)?|falling|dropp(?:ed|ing)|drops?|declin(?:ed?|es|ing)"
        r"|decreas(?:ed?|es|ing)|shr[aiu]nk|shrinks?|lower(?:ed|s|ing)?|reduc(?:ed?|es|ing)"
        r"|halved|cut(?=(?:\s+\w+){0,3}\s+(?:from|by|to)\b)|down(?=\s+(?:from|by|to|\d))",
    ),
    (
        "later",
        r"later|pushed\s+back|put\s+back|moved\s+back|postponed|delayed",
    ),
    ("earlier", r"earlier|sooner|brought\s+forward|moved\s+forward|moved\s+up"),
]
_DIRECTION = re.compile(
    "|".join(rf"\b(?P<{name}>{pattern})\b" for name, pattern in _WORDS), re.IGNORECASE
)
#: How far from a value its word of direction may stand, within its clause.
_BEFORE, _AFTER = 32, 24
_SENTENCE_END = re.compile(r"[.!?](?=\s)|\n")
_CLAUSE_END = re.compile(r"[.;!?\n]|,\s+(?:and|but|while|whereas)\b")


def direction_conflict(evidence: str, claim: str) -> tuple[int, int] | None:
    """The span of ``evidence`` around a value of ``claim`` that it moves the other
    way, or None."""
    if _DIRECTION.search(claim) is None:
        return None  # most claims move nothing: no value to compare
    for check in check_values(claim, [evidence]):
        occurrence = check.occurrence
        if check.status != "found" or occurrence is None:
            continue
        claimed = _direction_near(claim, check.value.start, check.value.end)
        if claimed is None:
            continue
        found = _direction_near(evidence, occurrence.start, occurrence.end)
        if found is not None and found[0] == _OPPOSITE[claimed[0]]:
            return _sentence(
                evidence, min(found[1], occurrence.start), max(found[2], occurrence.end)
            )
    return None


def _sentence(text: str, start: int, end: int) -> tuple[int, int]:
    """The sentence (or line) of ``text`` that holds ``start:end``: what a reader is
    pointed at."""
    ends = [m.end() for m in _SENTENCE_END.finditer(text, 0, start)]
    first = ends[-1] if ends else 0
    while first < start and text[first].isspace():
        first += 1
    after = _SENTENCE_END.search(text, end)
    return first, after.start() + 1 if after is not None else len(text)


def _direction_near(text: str, start: int, end: int) -> tuple[Direction, int, int] | None:
    """The word of direction nearest the value at ``start:end`` in its clause."""
    lo, hi = max(0, start - _BEFORE), min(len(text), end + _AFTER)
    before = [m.end() for m in _CLAUSE_END.finditer(text, lo, start)]
    lo = before[-1] if before else lo
    after = _CLAUSE_END.search(text, end, hi)
    hi = after.start() if after is not None else hi
    best: tuple[int, Direction, int, int] | None = None
    for match in _DIRECTION.finditer(text, lo, hi):
        if match.start() < end and match.end() > start:
            continue
        distance = start - match.end() if match.end() <= start else match.start() - end
        name: Direction = next(n for n, _ in _WORDS if match.group(n) is not None)
        if best is None or distance < best[0]:
            best = (distance, name, match.start(), match.end())
    return None if best is None else (best[1], best[2], best[3])
