"""Sentence spans, claim splitting, focused premises and word coverage.

The verifier reads a claim sentence against :func:`focused_premises` (the document
sentences that share most of its words) and weighs :func:`coverage` (how many of the
claim's words the document writes); :func:`premise_windows` and :func:`best_window`
remain for cutting long training documents.

Everything here works on character offsets into the original text, so the span that
decided a verdict can be pointed at in the document the caller (or the ledger) holds.
The splitter is a rule-based one on purpose: it must behave the same on every machine,
need no model download and cost nothing next to the cross-encoder.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

#: Words after which a period does not end a sentence.
_ABBREVIATIONS = frozenset(
    [
        "mr",
        "mrs",
        "ms",
        "dr",
        "prof",
        "st",
        "jr",
        "sr",
        "vs",
        "etc",
        "e.g",
        "i.e",
        "inc",
        "ltd",
        "co",
        "corp",
        "no",
        "fig",
        "al",
        "approx",
        "est",
        "dept",
    ]
)
_BOUNDARY = re.compile(r"[.!?]+[\"')\]]*\s+|\n\s*")
_WORD = re.compile(r"\S+")
_NUMBER = re.compile(r"(?<![\w.])[-+]?\d[\d,]*(?:\.\d+)?(?![\w])")
_STEM_WORD = re.compile(r"[a-z0-9]+(?:[.,/][a-z0-9]+)*")
#: Function words left out when comparing what two texts say.
_FUNCTION_WORDS = (
    "a an the of to in on at for by with and or is are was were be been it its this that "
    "as from has have had per which who"
)
STOP_WORDS = frozenset(_FUNCTION_WORDS.split())

#: A sentence longer than this many words is cut into pieces before premises are built.
DEFAULT_UNIT_WORDS = 60
#: Premises per claim sentence: its best evidence unit, the best two, the best three.
DEFAULT_FOCUS = 3

#: Premise windows are cut at about this many words: ~200 word pieces, inside the
#: 256-token input the shipped model was trained with (the claim takes the rest).
DEFAULT_WINDOW_WORDS = 150


@dataclass(frozen=True, kw_only=True)
class Span:
    """A stretch ``text[start:end]`` of a larger string."""

    start: int
    end: int
    text: str


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
    return last not in _ABBREVIATIONS and not single_initial and not dotted


def split_sentences(text: str) -> list[Span]:
    """Split ``text`` into sentence spans (whitespace trimmed, empty ones dropped)."""
    spans: list[Span] = []
    start = 0
    for match in _BOUNDARY.finditer(text):
        if "\n" not in match.group(0) and not _ends_sentence(text, match.end()):
            continue
        _append_trimmed(spans, text, start, match.end())
        start = match.end()
    _append_trimmed(spans, text, start, len(text))
    return spans


def _append_trimmed(spans: list[Span], text: str, start: int, end: int) -> None:
    piece = text[start:end]
    stripped = piece.strip()
    if not stripped:
        return
    lead = len(piece) - len(piece.lstrip())
    begin = start + lead
    spans.append(Span(start=begin, end=begin + len(stripped), text=stripped))


def _word_count(text: str) -> int:
    return len(_WORD.findall(text))


def premise_windows(text: str, *, window_words: int = DEFAULT_WINDOW_WORDS) -> list[Span]:
    """Cut a document into overlapping windows of whole sentences.

    Each window holds as many consecutive sentences as fit in ``window_words`` (at
    least one); the next window starts at the previous window's last sentence, so a
    fact stated across a sentence boundary is seen whole by some window. A document
    that fits in one window is returned as a single span covering all of it.
    """
    sentences = split_sentences(text)
    if not sentences:
        return [Span(start=0, end=len(text), text=text)]
    counts = [_word_count(s.text) for s in sentences]
    if sum(counts) <= window_words:
        first, last = sentences[0], sentences[-1]
        return [Span(start=first.start, end=last.end, text=text[first.start : last.end])]
    windows: list[Span] = []
    i = 0
    while i < len(sentences):
        j, words = i, counts[i]
        while j + 1 < len(sentences) and words + counts[j + 1] <= window_words:
            j += 1
            words += counts[j]
        start, end = sentences[i].start, sentences[j].end
        windows.append(Span(start=start, end=end, text=text[start:end]))
        if j + 1 >= len(sentences):
            break
        i = j if j > i else j + 1
    return windows


def split_claim(claim: str) -> list[str]:
    """The sentences of a claim; each must be supported for the claim to be."""
    parts = [s.text for s in split_sentences(claim)]
    return parts or [claim.strip()]


#: Where a sentence joins clauses that each state something: a semicolon, a dash,
#: or a comma before a coordinating or concessive conjunction. "while" and "so" are
#: left alone: "the loss happened while the policy was in force" dates one clause by
#: the other, and cut apart the two clauses no longer say that.
_JOINING = r"(?:but|whereas|although|though|yet|and)"
#: A dash's blanks are matched from the first of them only (``(?<!\s)``): tried from
#: every blank of a long run, each try would read the rest of the run.
_CLAUSE_CUT = re.compile(
    rf";\s+|(?<!\s)\s+(?:\u2014|\u2013|--)\s+|,\s+(?={_JOINING}\s)", re.IGNORECASE
)
_CLAUSE_LEAD = re.compile(rf"^{_JOINING}\s+", re.IGNORECASE)
_CONCESSIVE_STILL = re.compile(r"\bstill\s+", re.IGNORECASE)
#: ", and" after a comma and at most this many words ends a list ("printing,
#: binding, and delivery"; "a charger, two spare batteries, and a case").
_LIST_ITEM_WORDS = 3
#: A piece shorter than this many words is not a clause of its own ("sometimes
#: more" after a dash) and stays with its neighbour.
_CLAUSE_WORDS = 3


def split_clauses(sentence: str) -> list[str]:
    """The clauses a claim sentence joins, each to be supported on its own: "The
    only copy is on the shelf, but the account is at its limit" gives "The only copy
    is on the shelf" and "the account is at its limit". Empty for a sentence of one
    clause.

    ", and" after a short item of a list ("printing, binding, and delivery") ends
    the list and joins no clause. The conjunction that joins a
    clause is dropped; a piece of fewer than three words stays with its neighbour.
    """
    spans: list[tuple[int, int]] = []  # each piece: (its start, where the next cut starts)
    start = 0
    for cut in _CLAUSE_CUT.finditer(sentence):
        comma = sentence.rfind(",", start, cut.start())  # the last item of a list ends there
        item = sentence[comma + 1 : cut.start()] if comma >= 0 else ""
        ends_list = _word_count(item) <= _LIST_ITEM_WORDS and cut.group(0).startswith(",")
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
    words: list[int] = []  # of each merged piece: _word_count(sentence[a:b])
    for a, b in spans:
        count = _word_count(sentence[a:b])
        if merged and (count < _CLAUSE_WORDS or words[-1] < _CLAUSE_WORDS):
            first, last = merged[-1]
            added = sentence[last:b]
            glued = last > first and added[:1].strip() and not sentence[last - 1].isspace()
            words[-1] += _word_count(added) - (1 if glued else 0)
            merged[-1] = (first, b)
        else:
            merged.append((a, b))
            words.append(count)
    return merged


def _clause(piece: str) -> str:
    """A piece without the conjunction that joins it, and without the "still" of a
    concession ("but the vessel still sailed" says that it sailed: a small model
    reads the concessive "still" as a contradiction of "the vessel sailed")."""
    lead = _CLAUSE_LEAD.match(piece)
    if lead is None:
        return piece
    rest = piece[lead.end() :]
    if lead.group(0).strip().lower() != "and":
        rest = _CONCESSIVE_STILL.sub("", rest, count=1)
    return rest


def numbers_in(text: str) -> list[str]:
    """The numbers written in ``text``, normalised (thousands separators dropped)."""
    return [m.group(0).replace(",", "").lstrip("+") for m in _NUMBER.finditer(text)]


def missing_numbers(claim: str, premise: str) -> list[str]:
    """Numbers the claim states that the premise never writes (a cheap contradiction hint)."""
    present = set(numbers_in(premise))
    return [n for n in numbers_in(claim) if n not in present]


def best_window(text: str, hypothesis: str, *, window_words: int = DEFAULT_WINDOW_WORDS) -> Span:
    """The window sharing most words with ``hypothesis`` (used to cut long training pairs)."""
    wanted = {w.lower().strip(".,;:!?\"'()") for w in _WORD.findall(hypothesis)}
    windows = premise_windows(text, window_words=window_words)

    def overlap(span: Span) -> int:
        return len(wanted & {w.lower().strip(".,;:!?\"'()") for w in _WORD.findall(span.text)})

    return max(windows, key=overlap)


def join_sentences(sentences: Sequence[str]) -> str:
    """Join evidence sentences into one premise string."""
    return " ".join(s.strip() for s in sentences if s.strip())


@cache
def _stemmer() -> Any:
    import snowballstemmer  # pyright: ignore[reportMissingTypeStubs]

    return snowballstemmer.stemmer("english")


def word_stems(text: str) -> list[str]:
    """Lower-cased words of ``text``, Snowball (Porter 2) stemmed.

    Enough to make "invoices", "invoiced" and "invoice" meet when two texts are
    compared word by word; numbers keep their decimal and thousands separators.
    """
    words = _STEM_WORD.findall(text.lower().replace("'s", ""))
    return [_stem(w) if len(w) <= _MEMO_WORD_CHARS else _stem_word(w) for w in words]


#: Words up to this long have their stems memoised (longer ones are rare, and a memo
#: of them could hold any amount of text).
_MEMO_WORD_CHARS = 40


def _stem_word(word: str) -> str:
    return str(_stemmer().stemWord(word))


@lru_cache(maxsize=65_536)
def _stem(word: str) -> str:
    """One word's stem, memoised: a handful of words make up most of every text, and
    the stemmer is pure Python (a few microseconds a word, a dict lookup once seen)."""
    return _stem_word(_CLIPPED.get(word, word))


#: Clipped words and the word they clip, so that "exam" meets "examination".
_CLIPPED = {
    "exam": "examination",
    "exams": "examinations",
    "lab": "laboratory",
    "labs": "laboratories",
    "info": "information",
    "repo": "repository",
    "repos": "repositories",
    "config": "configuration",
    "auto": "automatic",
    "configs": "configurations",
    "admin": "administrator",
    "admins": "administrators",
    "app": "application",
    "apps": "applications",
    "doc": "document",
    "docs": "documents",
    "spec": "specification",
    "specs": "specifications",
    "stats": "statistics",
    "approx": "approximately",
    "dept": "department",
    "govt": "government",
    "mgmt": "management",
    "qty": "quantity",
    "amt": "amount",
    "acct": "account",
    "max": "maximum",
    "temp": "temperature",
    "env": "environment",
    "auth": "authentication",
}


@lru_cache(maxsize=8192)
def stem_set(text: str) -> frozenset[str]:
    """The distinct word stems of ``text`` (an evidence unit), memoised: the same
    evidence sentences are ranked against every claim sentence checked against them."""
    return frozenset(word_stems(text))


def clear_caches() -> None:
    """Forget memoised stems and units (benchmarks measure a first reading)."""
    stem_set.cache_clear()
    _stem.cache_clear()
    _evidence_units.cache_clear()


def content_words(text: str) -> list[str]:
    """The word stems of ``text`` that carry content (function words left out)."""
    return [w for w in word_stems(text) if w not in STOP_WORDS]


def coverage(claim: str, document: str) -> float:
    """The share of the claim's content words that the document writes anywhere.

    A claim that adds words its evidence never uses (a name, a detail, an opinion)
    says more than the evidence does; this is the signal the calibration combines
    with the model's log-odds. A claim without content words is fully covered.
    """
    wanted = content_words(claim)
    if not wanted:
        return 1.0
    # The union of the document's memoised unit stems: the same words as stemming the
    # whole document, without keeping whole documents as cache keys.
    have = frozenset().union(*(stem_set(u.text) for u in evidence_units(document)))
    return sum(w in have for w in wanted) / len(wanted)


@dataclass(frozen=True, kw_only=True)
class Premise:
    """Evidence put before the model: ``text`` joins whole units of a document, in
    document order; ``span`` is ``(start, end)`` in the document: all of them when
    they are consecutive, else the unit that shares most words with the claim."""

    text: str
    span: tuple[int, int]


def evidence_units(text: str, *, unit_words: int = DEFAULT_UNIT_WORDS) -> list[Span]:
    """The sentences of ``text``, a sentence longer than ``unit_words`` cut into
    consecutive pieces of that many words (tables and run-on lines stay usable)."""
    return list(_evidence_units(text, unit_words))


@lru_cache(maxsize=1024)
def _evidence_units(text: str, unit_words: int) -> tuple[Span, ...]:
    units: list[Span] = []
    for sentence in split_sentences(text) or [Span(start=0, end=len(text), text=text)]:
        words = list(_WORD.finditer(sentence.text))
        if len(words) <= unit_words:
            units.append(sentence)
            continue
        for first in range(0, len(words), unit_words):
            piece = words[first : first + unit_words]
            start = sentence.start + piece[0].start()
            end = sentence.start + piece[-1].end()
            units.append(Span(start=start, end=end, text=text[start:end]))
    return tuple(units)


def focused_premises(
    document: str,
    claim_sentence: str,
    *,
    focus: int = DEFAULT_FOCUS,
    unit_words: int = DEFAULT_UNIT_WORDS,
) -> list[Premise]:
    """Premises built from the units of ``document`` that share most content words
    with ``claim_sentence``: the best unit alone, the best two, ... up to ``focus``.

    Why not the whole document or long windows: a small cross-encoder reads a short,
    relevant premise far better than a long one in which the supporting sentence is
    diluted, and a fact spread over two or three sentences is still seen whole. Ties
    keep document order; identical premises are returned once.
    """
    units = evidence_units(document, unit_words=unit_words)
    if not units:
        return [Premise(text=document, span=(0, len(document)))]
    wanted = set(content_words(claim_sentence))
    shared = [len(wanted & stem_set(u.text)) for u in units]
    ranked = sorted(range(len(units)), key=lambda i: (-shared[i], i))
    premises: list[Premise] = []
    for size in range(1, min(focus, len(units)) + 1):
        chosen = sorted(ranked[:size])
        text = " ".join(units[i].text for i in chosen)
        if premises and premises[-1].text == text:
            continue
        premises.append(Premise(text=text, span=_premise_span(units, chosen, ranked[0])))
    return premises


def _premise_span(units: Sequence[Span], chosen: Sequence[int], best: int) -> tuple[int, int]:
    """Where a premise is in the document: all of it when its units are consecutive;
    else its best unit alone, so that a premise joining the first sentence and the
    twenty-fifth does not point a reader at everything between them."""
    if chosen[-1] - chosen[0] == len(chosen) - 1:
        return units[chosen[0]].start, units[chosen[-1]].end
    return units[best].start, units[best].end
