"""Whether two statements about the same thing differ in polarity ("sets no cap"
against "is capped"): the word-level reading behind the verifier's deterministic
``says the opposite`` and the lexical stand-in's contradictions.

A negation word does not always negate what its sentence says, and contracts,
policies and terms are written in exactly those forms:

- a bound: "no more than 6 credits", "no later than 21 days", "shall not exceed
  EUR 250,000" state a limit, the same as "at most", "within" or "capped at". A bound
  is read as a negation only when the other statement uses its word ("may exceed",
  "more than 6"), where the two are about that very comparison. A comparative that
  follows an amount states a difference, not the comparison ("9 credits, 3 more
  than the 6 that may count" measures the excess over the bound; it does not
  deny it);
- "not only ... but also" adds, it does not deny;
- a double negative within one clause ("may not assign without consent") is a
  requirement: it agrees with "needs consent to assign" and contradicts "may
  assign without consent".

Contractions ("wasn't", "can't") and "cannot", "nothing", "nobody", "nowhere"
negate as "not" and "no" do. A negated phrase both statements write ("without
director approval") says the same in both, so it decides nothing between them:
"may last longer than 21 days without director approval" is the opposite of "may
last no longer than 21 days without director approval", whatever "without" does.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from assay.grounding import find_numbers
from assay.verifier._text import word_stems

__all__ = ["NEGATION_STEMS", "negated", "opposite_polarity"]

#: Word stems (``word_stems``) that negate the statement they stand in.
NEGATION_STEMS = frozenset(
    ["no", "not", "never", "none", "without", "neither", "nor", "noth", "nobodi", "nowher"]
)

_CONTRACTED = re.compile(r"\b(?:can(?:not|['\u2019]t)|(\w+)n['\u2019]t)\b", re.IGNORECASE)
_BOUND = re.compile(
    r"\b(?:no|not)\s+(?P<comparative>more|less|fewer|later|earlier|sooner|greater|higher"
    r"|lower|longer|shorter)\s+than\b"
    r"|\bnot\s+(?:to\s+)?(?P<verb>exceed(?:s|ing|ed)?)\b",
    re.IGNORECASE,
)
_COMPARATIVE = re.compile(
    r"\b(?:more|less|fewer|later|earlier|sooner|greater|higher|lower|longer|shorter)\s+than\b",
    re.IGNORECASE,
)
#: How far before a comparative an amount may end and still be the difference it
#: states: one word between them at most ("3 more than", "two days later than",
#: "EUR 20,000 less than").
_DIFFERENCE_GAP = re.compile(r"^[\s%]*(?:[^\W\d]+\s+)?$")
_NEGATED_PHRASE = re.compile(
    r"\b(?:no|not|never|none|without|neither|nor|nothing|nobody|nowhere)\s+(?P<rest>\w+)",
    re.IGNORECASE,
)
_NOT_ONLY = re.compile(r"\bnot\s+only\b", re.IGNORECASE)
_DOUBLE_NEGATIVE = re.compile(r"\b(?:not|never)\b(?P<between>[^.;:!?]*?)\bwithout\b", re.IGNORECASE)


def negated(text: str, *, other: str = "") -> bool:
    """Whether ``text`` is negated, read beside ``other`` (the statement it is
    compared with, whose words decide whether a bound in ``text`` counts)."""
    a, b = _unshared(_plain(text), _plain(other))
    return _negated(a, _compared(b))


def opposite_polarity(first: str, second: str) -> bool:
    """Whether exactly one of two statements is negated."""
    a, b = _unshared(_plain(first), _plain(second))
    return _negated(a, _compared(b)) != _negated(b, _compared(a))


def _unshared(first: str, second: str) -> tuple[str, str]:
    """Both statements, each negation word of a phrase that both write ("without
    director", "not exceed") taken out of both."""

    def phrases(text: str) -> set[str]:
        return {_phrase(m) for m in _NEGATED_PHRASE.finditer(text)}

    shared = phrases(first) & phrases(second)
    if not shared:
        return first, second

    def drop(match: re.Match[str]) -> str:
        return match.group("rest") if _phrase(match) in shared else match.group(0)

    return _NEGATED_PHRASE.sub(drop, first), _NEGATED_PHRASE.sub(drop, second)


def _phrase(match: re.Match[str]) -> str:
    return " ".join(match.group(0).lower().split())


def _compared(plain: str) -> set[str]:
    """The word stems of a statement that a bound in the other one is read beside:
    all of them, less each comparative that states a difference ("3 more than")."""
    return set(word_stems(_COMPARATIVE.sub(_unless_difference(plain), plain)))


def _unless_difference(plain: str) -> Callable[[re.Match[str]], str]:
    """A substitution that blanks a comparative an amount stands right before."""
    ends = [number.end for number in find_numbers(plain)]

    def blank(match: re.Match[str]) -> str:
        start = match.start()
        stated = any(end <= start and _DIFFERENCE_GAP.match(plain[end:start]) for end in ends)
        return " " if stated else match.group(0)

    return blank


def _plain(text: str) -> str:
    """``text`` with its contractions written out (``wasn't`` as ``was not``)."""
    return _CONTRACTED.sub(_expand, text)


def _negated(plain: str, compared: set[str]) -> bool:
    """:func:`negated` of a text already written out, beside the word stems of the
    other statement."""

    def bound(match: re.Match[str]) -> str:
        head = match.group("comparative") or match.group("verb")
        return match.group(0) if set(word_stems(head)) & compared else " "

    kept = _BOUND.sub(bound, plain)
    kept = _NOT_ONLY.sub(" ", kept)
    kept = _DOUBLE_NEGATIVE.sub(lambda m: f" {m.group('between')} ", kept)
    return any(w in NEGATION_STEMS for w in word_stems(kept))


def _expand(match: re.Match[str]) -> str:
    stem = match.group(1)
    if stem is None:
        return "can not"
    # "won't" and "shan't" contract "will" and "shall".
    verb = {"wo": "will", "sha": "shall"}.get(stem.lower(), stem)
    return f"{verb} not"
