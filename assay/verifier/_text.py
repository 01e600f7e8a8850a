"""Claim splitting, focused premises, word stems and word coverage.

The verifier reads a claim sentence against :func:`focused_premises` (the document
sentences that share most of its words) and weighs :func:`coverage` (how many of the
claim's words the document writes); :func:`premise_windows` and :func:`best_window`
remain for cutting long training documents.

Sentences, clauses and tokens are cut by :mod:`assay._text`, as every check cuts
them: a claim's sentences are its ``prose`` sentences, its clauses the ``claim``
mode (:func:`split_clauses`). Everything works on character offsets into the original
text, so the span that decided a verdict can be pointed at in the document the
caller (or the ledger) holds.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from assay._text import (
    Span,
    numbers_in,
    sentences,
    split_clauses,
    token_pattern,
    word_count,
    word_set,
    word_table,
)

__all__ = [
    "DEFAULT_FOCUS",
    "DEFAULT_UNIT_WORDS",
    "DEFAULT_WINDOW_WORDS",
    "STOP_WORDS",
    "Premise",
    "Span",
    "best_window",
    "clear_caches",
    "content_words",
    "coverage",
    "evidence_units",
    "focused_premises",
    "join_sentences",
    "missing_numbers",
    "numbers_in",
    "premise_windows",
    "split_claim",
    "split_clauses",
    "split_sentences",
    "stem_set",
    "word_stems",
]

_WORD = token_pattern("chunks")
_STEM_WORD = token_pattern("stem_words")
#: Function words left out when comparing what two texts say (``words/stop-words.txt``).
STOP_WORDS = word_set("stop-words")

#: A sentence longer than this many words is cut into pieces before premises are built.
DEFAULT_UNIT_WORDS = 60
#: Premises per claim sentence: its best evidence unit, the best two, the best three.
DEFAULT_FOCUS = 3

#: Premise windows are cut at about this many words: ~200 word pieces, inside the
#: 256-token input the shipped model was trained with (the claim takes the rest).
DEFAULT_WINDOW_WORDS = 150


def split_sentences(text: str) -> list[Span]:
    """Split ``text`` into sentence spans (whitespace trimmed, empty ones dropped): its
    ``prose`` sentences (:func:`assay._text.sentences`)."""
    return sentences(text)


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
    counts = [word_count(s.text) for s in sentences]
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


#: A Snowball stemmer keeps the word it works on in the object itself, so two threads
#: sharing one corrupt each other's word (an ``IndexError`` under a served load): each
#: thread has its own.
_PER_THREAD = threading.local()


def _stemmer() -> Any:
    stemmer = getattr(_PER_THREAD, "stemmer", None)
    if stemmer is None:
        import snowballstemmer  # pyright: ignore[reportMissingTypeStubs]

        stemmer = _PER_THREAD.stemmer = snowballstemmer.stemmer("english")
    return stemmer


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


#: Clipped words and the word they clip, so that "exam" meets "examination"
#: (``words/clipped-words.toml``).
_CLIPPED: dict[str, str] = dict(word_table("clipped-words"))


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
