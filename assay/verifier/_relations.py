"""What a claim says of an act beside its values: whether it is certain, and whether
it is done.

Two relations the model reads poorly, since every value and name of the claim is
right: a claim that states as certain what its evidence gives only as possible
("will raise the rate" where the supplier "may raise" it, "has agreed" where the
client "would consider" it), and a claim that reports as done what its evidence
gives as still to come ("has been triaged" where the referral is
``awaiting_triage``; "approved a dividend" that was only proposed).

Both read the evidence clause about the claim's clause: of the clauses of what was
read of each cited entry, the one that writes most of the clause's content words,
and at least half of them. A clause that writes a hedge itself ("may", "could",
"if", "can") claims no certainty; one that writes an expectation ("will", "is
due", "pending") reports nothing as done. The cost is the claim's clauses times
the clauses read, both bounded.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache

from assay._text import alternation, clause_spans, split_clauses, word_list
from assay.verifier._text import coverage, stem_set

#: The share of a claim clause's content words an evidence clause must write to be
#: about it.
ABOUT_IT = 0.5


@dataclass(frozen=True, slots=True)
class RelationGap:
    """The evidence clause (``span`` of reading ``reading``) that gives the claim's
    clause as only possible or still to come, with the word that says so."""

    reading: int
    span: tuple[int, int]
    word: str
    clause: str


def _words(*names: str, leaving_out: frozenset[str] = frozenset()) -> re.Pattern[str]:
    """Any entry of the word lists ``names`` (but those ``leaving_out``), as a word."""
    entries = [e for name in names for e in word_list(name) if e not in leaving_out]
    return re.compile(rf"(?<![\w-])(?:{alternation(entries)})(?![\w-])", re.IGNORECASE)


@cache
def _hedge() -> re.Pattern[str]:
    return _words("hedge-words")


@cache
def _claim_hedge() -> re.Pattern[str]:
    """What makes a claim's clause hedged itself: a hedge word, or a modal of
    possibility or advice."""
    return re.compile(_hedge().pattern + r"|\b(?:can|cannot|can't|should)\b", re.IGNORECASE)


#: A claim clause that asserts: a future or obligation, a decision, a state.
_ASSERTS = re.compile(
    r"\b(?:will|must|shall|confirmed|agreed|decided|has|have|is|are)\b", re.IGNORECASE
)


@cache
def _pending() -> re.Pattern[str]:
    return _words("pending-words")


@cache
def _done() -> re.Pattern[str]:
    perfect = r"\b(?:has|have|had)\s+(?:already\s+)?(?:been\s+)?[a-z]+(?:ed|en|t)\b"
    return re.compile(_words("done-verbs", "completion-words").pattern + "|" + perfect, re.I)


@cache
def _expects() -> re.Pattern[str]:
    """A claim's words of expectation; "by" aside, which names a deadline before a
    date and an agent after a passive ("triaged by cardiology")."""
    return _words("expectation-words", leaving_out=frozenset({"by"}))


def hedged_as_certain(readings: Sequence[str], claim: str) -> RelationGap | None:
    """The evidence clause that gives only as possible what a clause of ``claim``
    states as certain, or ``None``."""
    for clause in _claim_clauses(claim):
        if _claim_hedge().search(clause) or not _ASSERTS.search(clause):
            continue
        found = _about(readings, clause)
        if found is not None:
            index, span = found
            word = _hedge_word(readings[index], span, clause)
            if word is not None:
                return RelationGap(reading=index, span=span, word=word.group(), clause=clause)
    return None


def planned_as_done(readings: Sequence[str], claim: str) -> RelationGap | None:
    """The evidence clause that gives as still to come what a clause of ``claim``
    reports as done, or ``None``."""
    for clause in _claim_clauses(claim):
        if not _done().search(clause) or _expects().search(clause):
            continue
        found = _about(readings, clause)
        if found is not None:
            index, span = found
            word = _pending_line(readings[index], span, clause)
            if word is not None:
                return RelationGap(reading=index, span=span, word=word.group(), clause=clause)
    return None


#: A line of a JSON entry's view: ``path: value``.
_FIELD = re.compile(r"([A-Za-z_][\w.\[\]-]*): ")


def _json_records(text: str) -> list[tuple[int, int]]:
    """The spans of a JSON view's records (runs of lines whose paths share their
    record: ``lines[3].rate`` and ``lines[3].hours``), or ``[]`` for a text that is not
    one (a line that is not ``path: value``)."""
    spans: list[tuple[str, int, int]] = []
    start = 0
    for line in text.split("\n"):
        end = start + len(line)
        field = _FIELD.match(line)
        if field is None:
            return []
        path = field.group(1)
        record = path[: max(path.rfind("."), path.rfind("["), 0)]
        if spans and spans[-1][0] == record:
            spans[-1] = (record, spans[-1][1], end)
        else:
            spans.append((record, start, end))
        start = end + 1
    return [(lo, hi) for _, lo, hi in spans]


def _hedge_word(text: str, span: tuple[int, int], clause: str) -> re.Match[str] | None:
    """The hedge in ``text[span]``: in a JSON record, on a field that is itself about
    ``clause`` (a ``note`` that an echocardiogram "might be needed" hedges "will need
    an echocardiogram", not "is awaiting triage")."""
    body = text[span[0] : span[1]]
    if not _json_records(body):
        return _hedge().search(body)
    for line in body.split("\n"):
        found = _hedge().search(line)
        if found is not None and coverage(clause, line) >= ABOUT_IT:
            return found
    return None


def _pending_line(text: str, span: tuple[int, int], clause: str) -> re.Match[str] | None:
    """The word of a pending act in ``text[span]``: in a JSON record, on a field that
    shares a content word with ``clause`` (``state: awaiting_triage`` for "has been
    triaged"; not ``refund_status: pending`` for "was delivered")."""
    body = text[span[0] : span[1]]
    if not _json_records(body):
        return _pending().search(body.replace("_", " "))
    wanted = stem_set(clause)
    for line in body.split("\n"):
        words = line.replace("_", " ")
        found = _pending().search(words)
        if found is not None and wanted & stem_set(words):
            return found
    return None


def _claim_clauses(claim: str) -> list[str]:
    return split_clauses(claim) or [claim]


def _about(readings: Sequence[str], clause: str) -> tuple[int, tuple[int, int]] | None:
    """The evidence clause (reading index, span) that writes most of ``clause``'s
    content words, if it writes at least :data:`ABOUT_IT` of them; of two that write
    as many, the shorter (the one that says less else)."""
    best: tuple[float, int, int, tuple[int, int]] | None = None
    for index, span in _evidence_clauses(readings):
        share = coverage(clause, readings[index][span[0] : span[1]])
        key = (share, -(span[1] - span[0]))
        if share >= ABOUT_IT and (best is None or key > (best[0], best[1])):
            best = (share, key[1], index, span)
    return None if best is None else (best[2], best[3])


def _evidence_clauses(readings: Sequence[str]) -> Iterator[tuple[int, tuple[int, int]]]:
    """Each clause of each reading: a JSON view's records (the fields of one object,
    which together say what a clause says), a text's sentences' clauses, cut at
    contrasts and then at conjunctions ("and she has signed the NDA" apart from what
    she "would consider")."""
    for index, text in enumerate(readings):
        records = _json_records(text)
        if records:
            yield from ((index, span) for span in records)
            continue
        start = 0
        for line in text.split("\n"):
            end = start + len(line)
            if line.strip():
                for lo, hi in clause_spans(text, "contrast", start, end):
                    for span in clause_spans(text, "subordinate", lo, hi):
                        if text[span[0] : span[1]].strip():
                            yield index, span
            start = end + 1
