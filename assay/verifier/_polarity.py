"""Whether two statements about the same thing differ in polarity ("sets no cap"
against "is capped"): the word-level reading behind the verifier's deterministic
``says the opposite`` and the lexical stand-in's contradictions.

A negation word does not always negate what its sentence says, and contracts,
policies and terms are written in exactly those forms:

- a bound: "no more than 6 credits", "no later than 21 days", "shall not exceed
  EUR 250,000" state a limit, the same as "at most", "capped at" or "a maximum of"
  (and "at least" or "a minimum of" from below). A bound is no negation: it is the
  opposite only of a statement that goes past it, in its direction and at its value
  ("may exceed EUR 250,000", "more than 6 credits", "later than 21 days"); past
  "capped at EUR 380" only what is allowed goes ("may exceed EUR 380"), since "line
  4 exceeds the EUR 380 cap" reports a breach, not a different cap. A
  comparative that follows an amount states a difference, not the comparison ("9
  credits, 3 more than the 6 that may count" measures the excess over the bound; it
  does not deny it);
- "not only ... but also" adds, it does not deny;
- a double negative within one clause ("may not assign without consent") is a
  requirement: it agrees with "needs consent to assign" and contradicts "may
  assign without consent".

Contractions ("wasn't", "can't") and "cannot", "nothing", "nobody", "nowhere"
negate as "not" and "no" do, and so does an exclusion ("accidental damage is
excluded" against "accidental damage is covered"). A negated phrase both statements write ("without
director approval") says the same in both, so it decides nothing between them:
"may last longer than 21 days without director approval" is the opposite of "may
last no longer than 21 days without director approval", whatever "without" does.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from assay.grounding import find_numbers
from assay.verifier._text import word_stems

__all__ = ["NEGATION_STEMS", "negated", "negation_about_shared_words", "opposite_polarity"]

#: Word stems (``word_stems``) that negate the statement they stand in.
NEGATION_STEMS = frozenset(
    ["no", "not", "never", "none", "without", "neither", "nor", "noth", "nobodi", "nowher"]
)

_CONTRACTED = re.compile(r"\b(?:can(?:not|['\u2019]t)|(\w+)n['\u2019]t)\b", re.IGNORECASE)
#: A comparison: a bound ("no more than", "not to exceed", "capped at", "at least") or
#: a statement that goes past one ("more than", "exceeds").
_COMPARISON = re.compile(
    r"\b(?P<negation>(?:no|not)\s+(?:to\s+)?)?"
    r"(?:(?P<comparative>more|greater|higher|larger|less|fewer|lower|smaller|later|earlier"
    r"|sooner|longer|shorter)\s+than|(?P<exceed>exceed(?:s|ed|ing)?))\b"
    r"|\b(?P<upper>capped\s+at|at\s+most|(?:a\s+)?maximum\s+of|limited\s+to)\b"
    r"|\b(?P<lower>at\s+least|(?:a\s+)?minimum\s+of)\b",
    re.IGNORECASE,
)
#: The direction each comparative word limits or goes past.
_DIRECTION = {
    "more": "up",
    "greater": "up",
    "higher": "up",
    "larger": "up",
    "exceed": "up",
    "less": "down",
    "fewer": "down",
    "lower": "down",
    "smaller": "down",
    "later": "later",
    "earlier": "earlier",
    "sooner": "earlier",
    "longer": "longer",
    "shorter": "shorter",
}
#: How far before a comparative an amount may end and still be the difference it
#: states: one word between them at most ("3 more than", "two days later than",
#: "EUR 20,000 less than").
_DIFFERENCE_GAP = re.compile(r"^[\s%]*(?:[^\W\d]+\s+)?$")
#: How far after a comparison its value may start ("more than EUR 250,000", "at most
#: the 6 credits").
_VALUE_WITHIN = 24
#: The words that negate what follows them (as written, before stemming).
_NEGATION_WORDS = r"(?:no|not|never|none|without|neither|nor|nothing|nobody|nowhere)"
_NEGATED_PHRASE = re.compile(rf"\b{_NEGATION_WORDS}\s+(?P<rest>\w+)", re.IGNORECASE)
#: A word negated by its prefix ("unaffected", "inactive", "non-refundable").
_PREFIXED = re.compile(
    r"\b(?:(?:un|non-?)(?P<rest>[a-z]{4,})|i[nm](?P<short>[a-z]{5,}))\b", re.IGNORECASE
)
#: A negation word and the two words after it, articles skipped: what it negates.
_NEGATION_SCOPE = re.compile(
    rf"\b{_NEGATION_WORDS}\s+(?:(?:a|an|the|any)\s+)?(?P<scope>[\w./-]+(?:\s+[\w./-]+)?)",
    re.IGNORECASE,
)
_NOT_ONLY = re.compile(r"\bnot\s+only\b", re.IGNORECASE)
#: An exclusion stated as what something is or does ("is excluded", "excludes
#: flood damage", "excluded from cover"), which negates as "not covered" does. The
#: preposition "excluding" ("EUR 100 excluding VAT") is left alone.
_EXCLUDED = re.compile(
    r"\b(?:is|are|was|were|be|been|remains?)\s+(?:\w+\s+)?excluded\b|\bexcludes\b"
    r"|\bexcluded\s+from\b",
    re.IGNORECASE,
)
_NOT_EXCLUDED = re.compile(
    r"\b(?:is|are|was|were|be|been)\s+not\s+(?:\w+\s+)?excluded\b|\bdoes\s+not\s+exclude\b",
    re.IGNORECASE,
)
_DOUBLE_NEGATIVE = re.compile(r"\b(?:not|never)\b(?P<between>[^.;:!?]*?)\bwithout\b", re.IGNORECASE)


#: Words that make going past a value a statement about what is allowed ("may
#: exceed"), as a bound is, rather than about what happened ("exceeds the cap").
_MODAL = re.compile(
    r"\b(?:may|can|could|might|allowed\s+to|permitted\s+to)(?:\s+\w+){0,2}\s*$", re.IGNORECASE
)


@dataclass(frozen=True, slots=True)
class _Comparison:
    direction: str
    bound: bool  # a limit ("no more than"), else going past one ("more than")
    values: frozenset[Decimal]  # of the value it compares with
    #: A bound without a negation word ("capped at"); going past a value with a
    #: modal before it ("may exceed").
    positive: bool = False
    modal: bool = False


def negated(text: str, *, other: str = "") -> bool:
    """Whether ``text`` is negated, read beside ``other`` (the statement it is
    compared with): a bound in ``text`` counts as a negation only where ``other``
    goes past it."""
    a, b = _unshared(*_prefixes_written_out(_plain(text), _plain(other)))
    return _negated(a) or _passed(_comparisons(a), _comparisons(b))


def opposite_polarity(first: str, second: str) -> bool:
    """Whether exactly one of two statements is negated, or one goes past a bound
    the other sets."""
    a, b = _unshared(*_prefixes_written_out(_plain(first), _plain(second)))
    ca, cb = _comparisons(a), _comparisons(b)
    return _passed(ca, cb) or _passed(cb, ca) or _negated(a) != _negated(b)


def negation_about_shared_words(first: str, second: str) -> bool:
    """Whether a negation of either statement bears on a word the other one writes:
    one of the two words after "no", "not", "without" ... ("no longer needed",
    "without an appointment"; articles skipped) is in the other statement.

    "The room has no whiteboard" denies something a line ``room: Lovelace`` never
    mentions, so it is not that line's opposite; "boosters need an appointment"
    is the opposite of "boosters are given without an appointment"."""
    a, b = _prefixes_written_out(_plain(first), _plain(second))
    return _bears_on(a, b) or _bears_on(b, a)


def _bears_on(text: str, other: str) -> bool:
    words = set(word_stems(other))
    for match in _NEGATION_SCOPE.finditer(text):
        if any(stem in words for stem in word_stems(match.group("scope"))):
            return True
    return False


def _prefixes_written_out(first: str, second: str) -> tuple[str, str]:
    """Both statements, a word negated by its prefix written as "not" and the word
    where the other statement writes the word itself: "unaffected" against
    "affected", "inactive" against "active", "non-refundable" against "refundable".
    A word is read so only beside its unprefixed form, so that "invoice" or
    "understand" stay as they are."""

    def rewrite(text: str, other: str) -> str:
        words = set(word_stems(other))

        def spell(match: re.Match[str]) -> str:
            rest = match.group("rest") or match.group("short")
            return f"not {rest}" if word_stems(rest)[0] in words else match.group(0)

        return _PREFIXED.sub(spell, text)

    return rewrite(first, second), rewrite(second, first)


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


def _comparisons(plain: str) -> list[_Comparison]:
    """The bounds of a statement and what goes past one, each with the value it
    compares with; a comparative that states a difference ("3 more than") is
    neither."""
    numbers = find_numbers(plain)
    found: list[_Comparison] = []
    for match in _COMPARISON.finditer(plain):
        word = match.group("comparative") or match.group("exceed")
        if word is not None:
            direction = _DIRECTION["exceed" if word.lower().startswith("exceed") else word.lower()]
            bound = match.group("negation") is not None
            if not bound and any(
                n.end <= match.start() and _DIFFERENCE_GAP.match(plain[n.end : match.start()])
                for n in numbers
            ):
                continue  # a difference, not a comparison
        else:
            direction, bound = ("up" if match.group("upper") else "down"), True
        value = next(
            (n for n in numbers if match.end() <= n.start <= match.end() + _VALUE_WITHIN), None
        )
        if value is not None:
            found.append(
                _Comparison(
                    direction=direction,
                    bound=bound,
                    values=value.values,
                    positive=word is None,
                    modal=_MODAL.search(plain, max(0, match.start() - 40), match.start())
                    is not None,
                )
            )
    return found


def _passed(bounds: Sequence[_Comparison], others: Sequence[_Comparison]) -> bool:
    """Whether one of ``others`` goes past one of the bounds, in its direction and
    at its value. Past a bound without a negation word ("capped at EUR 380") only
    a statement of what is allowed goes ("may exceed EUR 380"): "line 4 exceeds the
    EUR 380 cap" reports a breach of the cap, it does not deny it."""
    return any(
        b.bound
        and not o.bound
        and b.direction == o.direction
        and bool(b.values & o.values)
        and (o.modal or not b.positive)
        for b in bounds
        for o in others
    )


def _plain(text: str) -> str:
    """``text`` with its contractions written out (``wasn't`` as ``was not``)."""
    return _CONTRACTED.sub(_expand, text)


def _negated(plain: str) -> bool:
    """Whether a text already written out negates what it says: a negation word
    outside its comparisons, "not only" and double negatives, or an exclusion
    ("accidental damage is excluded" says it is not covered; "is not excluded"
    says it is)."""
    kept = _COMPARISON.sub(" ", plain)
    kept = _NOT_ONLY.sub(" ", kept)
    kept = _NOT_EXCLUDED.sub(" ", kept)
    kept = _DOUBLE_NEGATIVE.sub(lambda m: f" {m.group('between')} ", kept)
    return _EXCLUDED.search(kept) is not None or any(w in NEGATION_STEMS for w in word_stems(kept))


def _expand(match: re.Match[str]) -> str:
    stem = match.group(1)
    if stem is None:
        return "can not"
    # "won't" and "shan't" contract "will" and "shall".
    verb = {"wo": "will", "sha": "shall"}.get(stem.lower(), stem)
    return f"{verb} not"
