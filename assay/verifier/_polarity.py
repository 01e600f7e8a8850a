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

Each reading takes one pass over the statement: a negation is not read again to the
end of its clause for each one ("not not not ..."), a comparison finds the amount
before and after it by bisection, and bounds meet what goes past them by direction
and value, not pair by pair.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from assay._text import alternation, clause_spans, clause_stop, word_list, word_table
from assay.grounding import Number, find_numbers
from assay.verifier._text import STOP_WORDS, split_sentences, word_stems

__all__ = [
    "NEGATION_STEMS",
    "best_sentence",
    "negated",
    "negation_about_shared_words",
    "opposite_polarity",
    "polarity_conflict",
]

#: The words that negate the statement they stand in (``words/negations.txt``).
_NEGATIONS = word_list("negations")
#: Their word stems (``word_stems``: "noth" for "nothing").
NEGATION_STEMS = frozenset(stem for word in _NEGATIONS for stem in word_stems(word))
#: The comparative words, and the direction each limits or goes past
#: (``words/comparatives.toml``; "exceed" is read here).
_DIRECTION: dict[str, str] = {**word_table("comparatives"), "exceed": "up"}

_CONTRACTED = re.compile(r"\b(?:can(?:not|['\u2019]t)|(\w+)n['\u2019]t)\b", re.IGNORECASE)
#: A comparison: a bound ("no more than", "not to exceed", "capped at", "at least") or
#: a statement that goes past one ("more than", "exceeds").
_COMPARISON = re.compile(
    r"\b(?P<negation>(?:no|not)\s+(?:to\s+)?)?"
    rf"(?:(?P<comparative>{alternation(word_table('comparatives'))})\s+than"
    r"|(?P<exceed>exceed(?:s|ed|ing)?))\b"
    r"|\b(?P<upper>capped\s+at|at\s+most|(?:a\s+)?maximum\s+of|limited\s+to)\b"
    r"|\b(?P<lower>at\s+least|(?:a\s+)?minimum\s+of)\b",
    re.IGNORECASE,
)
#: How far before a comparative an amount may end and still be the difference it
#: states: one word between them at most ("3 more than", "two days later than",
#: "EUR 20,000 less than"); between them only blanks and ``%``, then at most one
#: word and blanks. What follows an amount, each part as long as it runs: the
#: comparative must start within it (:class:`_Differences`).
_AFTER_AMOUNT = re.compile(r"(?P<space>[\s%]*)(?P<word>[^\W\d]*)(?P<after>\s*)")
#: How far after a comparison its value may start ("more than EUR 250,000", "at most
#: the 6 credits").
_VALUE_WITHIN = 24
#: The words that negate what follows them (as written, before stemming).
_NEGATION_WORDS = rf"(?:{alternation(_NEGATIONS)})"
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
#: A double negative is "not" or "never", then "without" later in its clause
#: (:func:`_without_double_negatives`).
_NOT_OR_NEVER = re.compile(r"\b(?:not|never)\b", re.IGNORECASE)
_WITHOUT = re.compile(r"\bwithout\b", re.IGNORECASE)


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
    differences = _Differences(plain, numbers)
    starts = [n.start for n in numbers]  # in order, as numbers never overlap
    found: list[_Comparison] = []
    for match in _COMPARISON.finditer(plain):
        word = match.group("comparative") or match.group("exceed")
        if word is not None:
            direction = _DIRECTION["exceed" if word.lower().startswith("exceed") else word.lower()]
            bound = match.group("negation") is not None
            if not bound and differences.before(match.start()):
                continue  # a difference, not a comparison
        else:
            direction, bound = ("up" if match.group("upper") else "down"), True
        after = bisect_left(starts, match.end())  # the first number after the comparison
        value = numbers[after] if after < len(numbers) else None
        if value is not None and value.start <= match.end() + _VALUE_WITHIN:
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


class _Differences:
    """Where an amount of a statement ends close enough before a comparison for the
    comparison to state a difference ("3 more than"): only blanks and ``%``, then at
    most one word and blanks, between the two (:data:`_AFTER_AMOUNT`)."""

    def __init__(self, plain: str, numbers: Sequence[Number]) -> None:
        self.plain = plain
        self.ends = [n.end for n in numbers]  # in order, as numbers never overlap
        self._reach: dict[int, tuple[int, int, int]] = {}

    def before(self, position: int) -> bool:
        """Whether an amount ends before ``position`` with only such a gap between.

        The end of a gap is a gap too, so if the amount that ends nearest before
        ``position`` is too far from it, every other one is. A gap is the blanks and
        ``%`` that follow the amount, up to any point of them; or all of them, then
        the word after them, then any part of the blanks after that."""
        i = bisect_right(self.ends, position) - 1
        if i < 0:
            return False
        if i not in self._reach:
            m = _AFTER_AMOUNT.match(self.plain, self.ends[i])
            assert m is not None  # every part of the pattern may be empty
            self._reach[i] = (m.end("space"), m.end("word"), m.end("after"))
        space, word, after = self._reach[i]
        return position <= space or (word > space and word < position <= after)


def _passed(bounds: Sequence[_Comparison], others: Sequence[_Comparison]) -> bool:
    """Whether one of ``others`` goes past one of the bounds, in its direction and
    at its value. Past a bound without a negation word ("capped at EUR 380") only
    a statement of what is allowed goes ("may exceed EUR 380"): "line 4 exceeds the
    EUR 380 cap" reports a breach of the cap, it does not deny it.

    What goes past is looked up by direction and value (with whether it says what
    is allowed), so that many bounds against many statements are not read pair by
    pair."""
    going: dict[tuple[str, Decimal], bool] = {}  # direction, value: is one allowed?
    for other in others:
        if not other.bound:
            for value in other.values:
                key = (other.direction, value)
                going[key] = going.get(key, False) or other.modal
    return any(
        going.get((b.direction, value), False) or (not b.positive and (b.direction, value) in going)
        for b in bounds
        if b.bound
        for value in b.values
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
    kept = _without_double_negatives(kept)
    return _EXCLUDED.search(kept) is not None or any(w in NEGATION_STEMS for w in word_stems(kept))


def _without_double_negatives(text: str) -> str:
    """``text`` with each double negative written as what stands between its two
    words, in one pass: what ``re.sub`` of
    ``\b(?:not|never)\b(?P<between>[^.;:!?]*?)\bwithout\b`` (ignoring case) with
    ``f" {between} "`` gives.

    The next "without" and the next end of a clause are each found once and kept
    while the negations before them are read, so that "not not not ..." with no
    "without" is not read to the end of its clause for every "not"."""
    parts: list[str] = []
    kept = at = 0  # text[:kept] is in parts; negations are looked for from ``at``
    nowhere = len(text) + 1
    without = (-1, -1)  # the next "without": (start, end)
    stop = -1  # the next end of a clause (the ``stop`` clauses of assay._text)
    while (negation := _NOT_OR_NEVER.search(text, at)) is not None:
        between = negation.end()
        if without[0] < between:
            without = _next(_WITHOUT, text, between, nowhere)
        if stop < between:
            found = clause_stop(text, between)
            stop = nowhere if found is None else found
        if without[0] < stop:
            parts += [text[kept : negation.start()], f" {text[between : without[0]]} "]
            kept = at = without[1]
        else:
            at = negation.start() + 1
    return "".join([*parts, text[kept:]])


def _next(pattern: re.Pattern[str], text: str, start: int, nowhere: int) -> tuple[int, int]:
    """The span of the first match of ``pattern`` in ``text`` from ``start``, or
    ``(nowhere, nowhere)``."""
    found = pattern.search(text, start)
    return (nowhere, nowhere) if found is None else found.span()


def _expand(match: re.Match[str]) -> str:
    stem = match.group(1)
    if stem is None:
        return "can not"
    # "won't" and "shan't" contract "will" and "shall".
    verb = {"wo": "will", "sha": "shall"}.get(stem.lower(), stem)
    return f"{verb} not"


# --- a cited sentence with the other polarity (the verifier's ``opposite`` check) ---


def _content(text: str) -> list[str]:
    return [w for w in word_stems(text) if w not in STOP_WORDS and w not in NEGATION_STEMS]


def best_sentence(document: str, claim: str) -> tuple[tuple[int, int], float]:
    """The sentence of ``document`` holding most of the claim's content words, and
    the share it holds (word stems, stop and negation words left out). Each sentence
    is read word by word against the claim's words counted once, not the claim
    again for each sentence."""
    wanted = Counter(_content(claim))
    total = sum(wanted.values())
    best_span, best = (0, len(document)), 0.0
    for sentence in split_sentences(document):
        have = set(word_stems(sentence.text))
        coverage = sum(wanted[w] for w in have if w in wanted) / total if total else 0.0
        if coverage > best:
            best_span, best = (sentence.start, sentence.end), coverage
    return best_span, best


def polarity_conflict(
    document: str, claim: str, *, min_coverage: float = 0.6, shared_negation: bool = False
) -> tuple[int, int] | None:
    """The span of a sentence that says what the claim says, but with the opposite
    polarity ("sets no cap" against "is capped"), or None.

    Only a sentence holding at least ``min_coverage`` of the claim's content words
    counts, so that a negation elsewhere in a document decides nothing. With
    ``shared_negation``, only a negation that bears on a word both write counts
    (:func:`negation_about_shared_words`): a short clause ("the room has no
    whiteboard") then is not read against a line that only names its subject
    ("room: Lovelace"). It errs towards abstention: a true negated claim that shares
    most words with a positive sentence ("partners are not capped at EUR 380") is
    called a contradiction.
    """
    span, coverage = best_sentence(document, claim)
    if coverage < min_coverage:
        return None
    a, b = _covering_clause(document, span, claim, min_coverage)
    if not opposite_polarity(claim, document[a:b]):
        return None
    if shared_negation and not negation_about_shared_words(claim, document[a:b]):
        return None
    return span


def _covering_clause(
    document: str, span: tuple[int, int], claim: str, min_coverage: float
) -> tuple[int, int]:
    """The clause of the sentence at ``span`` that holds every content word the
    claim shares with the sentence (and at least ``min_coverage`` of them), or the
    whole sentence where no one clause does: in "the claim was not paid because the
    policy had lapsed", "the policy had lapsed" is not negated, while "the claim was
    paid because the policy had lapsed" is about the whole sentence. Its clauses are
    the ``subordinate`` ones (:mod:`assay._text`)."""
    wanted = set(_content(claim))
    start, end = span
    shared = wanted & set(word_stems(document[start:end]))
    if not wanted or len(shared) < min_coverage * len(wanted):
        return span
    for a, b in clause_spans(document, "subordinate", start, end):
        if shared <= set(word_stems(document[a:b])):
            return a, b
    return span
