"""Sentence spans, premise windows and claim splitting.

Everything here works on character offsets into the original text, so the span that
decided a verdict can be pointed at in the document the caller (or the ledger) holds.
The splitter is a rule-based one on purpose: it must behave the same on every machine,
need no model download and cost nothing next to the cross-encoder.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

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
    """Whether the punctuation ending just before ``stop`` closes a sentence."""
    head = text[:stop].rstrip()
    if not head.endswith("."):
        return True
    last = head.rsplit(None, 1)[-1].rstrip(".").lower()
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
