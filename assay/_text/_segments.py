"""Sentences and clauses: where the checks cut a text before they read it.

Every cut works on character offsets into the text it is given, so that a span that
decided a verdict can be pointed at in the document the caller (or the ledger) holds.
The cuts are rule-based on purpose: they behave the same on every machine, need no
model download and cost nothing next to the cross-encoder. Each reads its text in one
pass (a long run of blanks or of marks is not read again from each of its characters).

Checks need different cuts, so each cut is a named mode, and every check uses one of
these, never a pattern of its own. Unifying two modes would move verdicts (a span a
check reports, or a clause it reads), which is why each stays apart.

Sentences (:func:`sentence_spans`; :func:`sentences` gives the ``prose`` ones with
their text):

* ``prose``: what a reader calls a sentence. It ends at ``.``, ``!`` or ``?`` (and the
  quotes and brackets that close after it) before a blank, unless the full stop ends
  an abbreviation (``words/abbreviations.txt``), an initial or a dotted word
  (``U.S.``); and at every line break. Spans are trimmed, empty ones dropped. Claims
  are split into these, evidence is ranked by them, and the lexical stand-in, the
  action check and the expected-as-done check read them.
* ``statements``: what the arithmetic reads a cue word in. Every ``.``, ``!``, ``?``
  or ``;`` that no digit follows ends one, blank or not, and abbreviations are not
  spared. A semicolon joins two statements, and "in total" after it is no cue for a
  number before it; a cue missed after an abbreviation only leaves a number
  unexplained. Spans run from mark to mark, untrimmed (an empty one stands where two
  marks meet, or after the last). A statement starts only after a mark that ends
  one, so the stretch before a decimal point ("1" of "1.5" after "Approx.") is in
  none, and a value there is read against the whole claim.
* ``records``: where a long line of evidence is cut into records: ``.``, ``!`` or
  ``?``, blanks, then a capital, a digit, a quote or an opening bracket. A record
  starts where a new sentence visibly does, so "e.g. a lease" and "see p. iv" stay
  in one record. Spans leave out the blanks between sentences.

:func:`sentence_around` is the ``pointer`` reading: the sentence or line of a text
that holds a span, by ``.``, ``!`` or ``?`` before a blank and by line breaks, what
a reader is pointed at when a direction of change is contradicted.

Clauses:

* ``claim`` (:func:`split_clauses`): the statements a claim sentence joins, each to be
  supported on its own, at a semicolon, a dash, or a comma before "but", "whereas",
  "although", "though", "yet" or "and" (not the "and" that ends a short list).
  "while" and "so" are not cut: "the loss happened while the policy was in force"
  dates one clause by the other, and cut apart the two no longer say that.
* ``subordinate`` (:func:`clause_spans`): the clause a negation belongs to, cut before
  a word that starts a clause of its own ("because", "since", "while", "so", "if",
  ... with or without a comma), at a semicolon, and at a comma before "which", "who"
  or "whose". In "the claim was not paid because the policy had lapsed", "the policy
  had lapsed" is not negated. Here "while" and "so" must cut.
* ``contrast`` (:func:`clause_spans`): two actions about two things in one ``prose``
  sentence, at a semicolon and a blank, or a comma and a blank before "but", "and",
  "whereas" or "while" ("unit tests passed; integration tests failed").
* ``value`` (:func:`clause_around`): the clause around a value within a window, which
  its word of direction must stand in: ended by ``.;!?`` or a line break, or a comma
  before "and", "but", "while" or "whereas".
* ``stop`` (:func:`clause_stop`): the next ``.;:!?``, which ends the clause a double
  negative ("not ... without") must stay inside.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Literal

from assay._text._tokens import token_pattern
from assay._text._words import word_set

__all__ = [
    "SentenceMode",
    "Span",
    "clause_around",
    "clause_spans",
    "clause_stop",
    "sentence_around",
    "sentence_spans",
    "sentences",
    "split_clauses",
    "word_count",
]

SentenceMode = Literal["prose", "statements", "records"]


@dataclass(frozen=True, kw_only=True)
class Span:
    """A stretch ``text[start:end]`` of a larger string."""

    start: int
    end: int
    text: str


_CHUNK = token_pattern("chunks")


def word_count(text: str) -> int:
    """How many blank-separated words (``chunks``) ``text`` holds."""
    return len(_CHUNK.findall(text))


# --- sentences ------------------------------------------------------------------------

_PROSE_BOUNDARY = re.compile(r"[.!?]+[\"')\]]*\s+|\n\s*")
#: A statement starts only at the start or after a mark: a match tried anywhere else
#: would fail after scanning to the next mark, for every character of a long one.
_STATEMENT = re.compile(r"(?:\A|(?<=[.!?;]))[^.!?;]*(?:[.!?;](?!\d)|$)")
_RECORD_BREAK = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])")
_POINTER_END = re.compile(r"[.!?](?=\s)|\n")


def sentences(text: str) -> list[Span]:
    """The ``prose`` sentences of ``text`` (whitespace trimmed, empty ones dropped)."""
    spans: list[Span] = []
    start = 0
    for match in _PROSE_BOUNDARY.finditer(text):
        if "\n" not in match.group(0) and not _ends_sentence(text, match.end()):
            continue
        _append_trimmed(spans, text, start, match.end())
        start = match.end()
    _append_trimmed(spans, text, start, len(text))
    return spans


def sentence_spans(text: str, mode: SentenceMode = "prose") -> list[tuple[int, int]]:
    """The ``(start, end)`` of each sentence of ``text`` in ``mode`` (see the module)."""
    if mode == "prose":
        return [(s.start, s.end) for s in sentences(text)]
    if mode == "statements":
        return [m.span() for m in _STATEMENT.finditer(text)]
    spans: list[tuple[int, int]] = []
    start = 0
    for match in _RECORD_BREAK.finditer(text):
        spans.append((start, match.start()))
        start = match.end()
    spans.append((start, len(text)))
    return spans


def _ends_sentence(text: str, stop: int) -> bool:
    """Whether the punctuation ending just before ``stop`` closes a sentence.

    Only the last word before ``stop`` is read (not all the text before it, once for
    every full stop of a long text)."""
    end = stop
    while end > 0 and text[end - 1].isspace():
        end -= 1
    if end == 0 or text[end - 1] != ".":
        return True
    start = end
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    last = text[start:end].rstrip(".").lower()
    single_initial = len(last) == 1 and last.isalpha()
    dotted = "." in last and not last.replace(".", "").isdigit()  # "u.s", "e.g"
    return last not in word_set("abbreviations") and not single_initial and not dotted


def _append_trimmed(spans: list[Span], text: str, start: int, end: int) -> None:
    piece = text[start:end]
    stripped = piece.strip()
    if not stripped:
        return
    lead = len(piece) - len(piece.lstrip())
    begin = start + lead
    spans.append(Span(start=begin, end=begin + len(stripped), text=stripped))


def sentence_around(text: str, start: int, end: int) -> tuple[int, int]:
    """The sentence (or line) of ``text`` that holds ``start:end`` (the ``pointer``
    reading): from the last ``.``, ``!`` or ``?`` before a blank, or line break,
    before ``start`` (blanks skipped) to the first at or after ``end`` (a mark
    included, a line break not)."""
    ends = [m.end() for m in _POINTER_END.finditer(text, 0, start)]
    first = ends[-1] if ends else 0
    while first < start and text[first].isspace():
        first += 1
    after = _POINTER_END.search(text, end)
    if after is None:
        return first, len(text)
    return first, after.start() + (0 if after.group() == "\n" else 1)


# --- clauses --------------------------------------------------------------------------

#: ``claim``: a comma before one of these joins two clauses.
_JOINING = r"(?:but|whereas|although|though|yet|and)"
#: A dash's blanks are matched from the first of them only (``(?<!\s)``): tried from
#: every blank of a long run, each try would read the rest of the run.
_CLAIM_CUT = re.compile(
    rf";\s+|(?<!\s)\s+(?:\u2014|\u2013|--)\s+|,\s+(?={_JOINING}\s)", re.IGNORECASE
)
_CLAIM_LEAD = re.compile(rf"^{_JOINING}\s+", re.IGNORECASE)
_CONCESSIVE_STILL = re.compile(r"\bstill\s+", re.IGNORECASE)
#: ", and" after a comma and at most this many words ends a list ("printing,
#: binding, and delivery"; "a charger, two spare batteries, and a case").
_LIST_ITEM_WORDS = 3
#: A piece shorter than this many words is not a clause of its own ("sometimes
#: more" after a dash) and stays with its neighbour.
_CLAUSE_WORDS = 3

#: ``subordinate``: blanks are matched from the first of a run only (``(?<!\s)``).
_SUBORDINATE_CUT = re.compile(
    r";|,?(?<!\s)\s+(?=(?:because|since|as|although|though|while|whereas|but|so|after|before"
    r"|until|unless|when|if)\b)|,\s+(?=(?:which|who|whose)\b)",
    re.IGNORECASE,
)
#: ``contrast`` and ``value``: a comma before one of these joins two clauses.
_CONTRASTING = r"(?:but|and|whereas|while)"
_CONTRAST_CUT = re.compile(rf";\s+|,\s+(?={_CONTRASTING}\s)", re.IGNORECASE)
_VALUE_CLAUSE_END = re.compile(r"[.;!?\n]|,\s+(?:and|but|while|whereas)\b")
_STOP = re.compile(r"[.;:!?]")


def split_clauses(sentence: str) -> list[str]:
    """The ``claim`` clauses a sentence joins, each to be supported on its own: "The
    only copy is on the shelf, but the account is at its limit" gives "The only copy
    is on the shelf" and "the account is at its limit". Empty for a sentence of one
    clause.

    ", and" after a short item of a list ("printing, binding, and delivery") ends
    the list and joins no clause. The conjunction that joins a
    clause is dropped; a piece of fewer than three words stays with its neighbour.
    """
    spans: list[tuple[int, int]] = []  # each piece: (its start, where the next cut starts)
    start = 0
    for cut in _CLAIM_CUT.finditer(sentence):
        comma = sentence.rfind(",", start, cut.start())  # the last item of a list ends there
        item = sentence[comma + 1 : cut.start()] if comma >= 0 else ""
        ends_list = word_count(item) <= _LIST_ITEM_WORDS and cut.group(0).startswith(",")
        if item and ends_list and sentence[cut.end() : cut.end() + 4].lower() == "and ":
            continue
        spans.append((start, cut.start()))
        start = cut.end()
    spans.append((start, len(sentence)))
    clauses = [_clause(sentence[a:b].strip()) for a, b in _merged(sentence, spans)]
    return clauses if len(clauses) > 1 else []


def _merged(sentence: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The pieces at ``spans``, each of fewer than three words joined to the one
    before it (with the cut between them). The words of a joined piece are counted
    as it grows, not again from its start for each piece joined to it."""
    merged: list[tuple[int, int]] = []
    words: list[int] = []  # of each merged piece: word_count(sentence[a:b])
    for a, b in spans:
        count = word_count(sentence[a:b])
        if merged and (count < _CLAUSE_WORDS or words[-1] < _CLAUSE_WORDS):
            first, last = merged[-1]
            added = sentence[last:b]
            glued = last > first and added[:1].strip() and not sentence[last - 1].isspace()
            words[-1] += word_count(added) - (1 if glued else 0)
            merged[-1] = (first, b)
        else:
            merged.append((a, b))
            words.append(count)
    return merged


def _clause(piece: str) -> str:
    """A piece without the conjunction that joins it, and without the "still" of a
    concession ("but the vessel still sailed" says that it sailed: a small model
    reads the concessive "still" as a contradiction of "the vessel sailed")."""
    lead = _CLAIM_LEAD.match(piece)
    if lead is None:
        return piece
    rest = piece[lead.end() :]
    if lead.group(0).strip().lower() != "and":
        rest = _CONCESSIVE_STILL.sub("", rest, count=1)
    return rest


def clause_spans(
    text: str, mode: Literal["subordinate", "contrast"], start: int = 0, end: int | None = None
) -> list[tuple[int, int]]:
    """The clauses of ``text[start:end]`` in ``mode``, as spans of ``text``.

    ``subordinate``: the pieces between cuts, each cut (a conjunction, the comma and
    blanks before it) kept with the clause it starts, so the pieces cover the span
    (an empty one where a cut starts it). ``contrast``: the clauses of each ``prose``
    sentence, the cuts between them left out."""
    end = len(text) if end is None else end
    if mode == "subordinate":
        piece = text[start:end]
        cuts = [start, *(start + m.start() for m in _SUBORDINATE_CUT.finditer(piece)), end]
        return list(itertools.pairwise(cuts))
    spans: list[tuple[int, int]] = []
    for sentence in sentences(text[start:end]):
        at = start + sentence.start
        for cut in _CONTRAST_CUT.finditer(sentence.text):
            spans.append((at, start + sentence.start + cut.start()))
            at = start + sentence.start + cut.end()
        spans.append((at, start + sentence.end))
    return spans


def clause_around(text: str, start: int, end: int, lo: int, hi: int) -> tuple[int, int]:
    """The ``value`` clause around ``text[start:end]``, within ``lo:hi``: from the last
    clause end between ``lo`` and ``start`` (else ``lo``) to the first between
    ``end`` and ``hi`` (else ``hi``)."""
    before = [m.end() for m in _VALUE_CLAUSE_END.finditer(text, lo, start)]
    lo = before[-1] if before else lo
    after = _VALUE_CLAUSE_END.search(text, end, hi)
    return lo, after.start() if after is not None else hi


def clause_stop(text: str, start: int) -> int | None:
    """Where the next ``stop`` (``.;:!?``) at or after ``start`` is, or None."""
    found = _STOP.search(text, start)
    return None if found is None else found.start()
