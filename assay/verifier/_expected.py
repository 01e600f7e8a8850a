"""Whether a claim reports as done what its evidence gives only as expected: "the
disk array was replaced on 31 January" against an action item "due 2025-01-31",
"arrived in Felixstowe on 4 February" against "ETA Felixstowe 2025-02-04".

The value checks find the date, and a small model reads the rest of the sentence as
the same event: it does not weigh "due" or "ETA" against "was replaced". Where the
evidence labels the date as a plan (due, ETA, expected, scheduled, a deadline "by")
and the claim's sentence reports an event as done on it ("was replaced",
"arrived", "has been paid") without any word of expectation of its own ("due",
"is to", "will", "expected"), the evidence says something else: that it was to
happen then, not that it did.

The claim's sentences are found once and each is read once, however many dates it
holds; a label is looked for only in the few words before each date in evidence.
The words of each kind are data (``assay/_text/words/plan-labels.txt``,
``expectation-words.txt``, ``done-verbs.txt``).
"""

from __future__ import annotations

import re
from bisect import bisect_right

from assay._text import Span, alternation, sentences, word_list
from assay.grounding import check_values

__all__ = ["expected_as_done"]

#: Words that label a date in evidence as a plan, at most three words before it
#: ("ETA Felixstowe 2025-02-04", "due 2025-01-31", ``expected_delivery: ...``).
_PLANNED = re.compile(
    rf"\b(?:{alternation(word_list('plan-labels'))})\b(?P<gap>(?:\s+[^\s\d]+){{0,3}}?)"
    r"[\s:=]*(?:(?:on|for|around|about|of|at)\s+)?$",
    re.IGNORECASE,
)
#: A deadline written as "by" right before the date.
_BY = re.compile(r"\bby\s*$", re.IGNORECASE)
#: How far before a date its label may start.
_WINDOW = 48
#: A claim's own words of expectation: where it writes one, it does not report the
#: event as done.
_EXPECTATION = re.compile(rf"\b(?:{alternation(word_list('expectation-words'))})\b", re.IGNORECASE)
#: An event reported as done: a passive or perfect ("was replaced", "has been paid"),
#: or a past tense of the verbs that report deliveries, payments and releases.
_DONE = re.compile(
    r"\b(?:was|were|has\s+been|have\s+been|had\s+been)\s+(?:\w+\s+)?\w+(?:ed|en|wn|t)\b"
    rf"|\b(?:{alternation(word_list('done-verbs'))})\b",
    re.IGNORECASE,
)


def expected_as_done(evidence: str, claim: str) -> tuple[int, int] | None:
    """The span of ``evidence`` that gives a date of ``claim`` only as expected where
    the claim reports an event as done on it, or None."""
    claimed: list[Span] = []  # the claim's prose sentences, once a date asks for them
    reports_done: dict[int, bool] = {}  # by sentence: read once, however many dates
    for check in check_values(claim, [evidence]):
        occurrence = check.occurrence
        if check.value.date is None or check.status != "found" or occurrence is None:
            continue
        claimed = claimed or sentences(claim)
        number = _sentence_around(claimed, check.value.start)
        if number not in reports_done:
            sentence = claim if number < 0 else claimed[number].text
            done = _EXPECTATION.search(sentence) is None and _DONE.search(sentence) is not None
            reports_done[number] = done
        if not reports_done[number]:
            continue
        label = _plan_label(evidence, occurrence.start)
        if label is not None:
            return label, occurrence.end
    return None


def _plan_label(evidence: str, start: int) -> int | None:
    """Where the label that gives the date at ``start`` as a plan begins, or None:
    within its line, a few words before it."""
    lo = max(0, start - _WINDOW)
    lo = max(evidence.rfind("\n", lo, start) + 1, lo)  # the line's start, if nearer
    before = re.sub(r"[._]", " ", evidence[lo:start])
    match = _PLANNED.search(before) or _BY.search(before)
    return None if match is None else lo + match.start()


def _sentence_around(sentences: list[Span], position: int) -> int:
    """The number of the sentence that holds ``position`` (they follow one another
    without overlapping), or -1 where none does (between two of them)."""
    i = bisect_right(sentences, position, key=lambda s: s.start) - 1
    return i if i >= 0 and position < sentences[i].end else -1
