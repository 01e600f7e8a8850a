"""Verbs of action that say the opposite of one another ("added" against "dropped",
"fixed" against "introduced", "approved" against "denied"), and the same action in
other words ("removed" for "dropped", "rejected" for "denied").

A small model reads a changelog line "Dropped support for Python 3.8" as support
for "4.2.0 added support for Python 3.8": every word but the verb is shared, and
the verb is the whole claim. It also reads "removed support" as contradicting
"Dropped support". So where a claim's action word and its evidence's are opposites
and the rest of the statement is the same, the evidence says the opposite, without
the model; and where they are the same action in other words, the model is handed
the claim in the evidence's word.

The lists are short and are data (``assay/_text/words/antonyms.toml``): each pair is
an opposition that release notes, tickets, claims decisions and ledgers state with
one verb. A sentence of evidence is read clause by clause (the ``contrast`` clauses
of :mod:`assay._text`): "unit tests passed; integration tests failed" states two
actions about two things. A lexical database (WordNet) would give more pairs, but
its data is a separate download that the library cannot make at run time, and most
of its antonyms are adjectives the polarity check already reads by prefix
("unpaid", "inactive").
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from assay._text import clause_spans, token_pattern, word_table
from assay.verifier._polarity import opposite_polarity
from assay.verifier._text import content_words, word_stems

__all__ = ["action_conflict", "in_evidence_words", "opposite_actions"]


def _stems(words: Sequence[str]) -> frozenset[str]:
    return frozenset(stem for word in words for stem in word_stems(word))


#: Pairs of opposite actions (``words/antonyms.toml``), each side the word stems
#: (``word_stems``) that write it, in the file's order.
_OPPOSITES: tuple[tuple[frozenset[str], frozenset[str]], ...] = tuple(
    (_stems(pair["one"]), _stems(pair["other"])) for pair in word_table("antonyms")["opposites"]
)
#: The same action in other words (``words/antonyms.toml``): a claim's word of one of
#: these is written as the evidence writes it before the model reads the claim.
_SAME_ACTION: tuple[frozenset[str], ...] = tuple(
    _stems(group) for group in word_table("antonyms")["same"]
)
_ACTION_STEMS = frozenset().union(*(a | b for a, b in _OPPOSITES))
_WORD = token_pattern("letters")
#: The share of the claim's other content words that the opposing sentence must
#: write: the same bar as the polarity check's.
_MIN_COVERAGE = 0.6


def opposite_actions(stem: str) -> tuple[frozenset[str], frozenset[str]] | None:
    """The action word stem ``stem`` writes and its opposites, as word stems, or
    None where it writes no action of these pairs ("approv": the approvals, and the
    denials). A stem on two sides ("introduc") writes no one action."""
    sides = [(a, b) for a, b in _OPPOSITES if stem in a] + [
        (b, a) for a, b in _OPPOSITES if stem in b
    ]
    return sides[0] if len(sides) == 1 else None


def action_conflict(evidence: str, claim: str) -> tuple[int, int] | None:
    """The span of the sentence of ``evidence`` that states the opposite action of
    ``claim`` about the same thing ("Dropped support for Python 3.8" against "added
    support for Python 3.8"), or None.

    The sentence must write an opposite of the claim's action word and none of its
    own words for it, at least 60% of the claim's other content words, and the same
    polarity: "did not add support" agrees with "dropped support", and is left to
    the model."""
    stems = set(word_stems(claim))
    if not stems & _ACTION_STEMS:
        return None  # most claims name no such action: nothing to compare
    for ours, theirs in (*_OPPOSITES, *((b, a) for a, b in _OPPOSITES)):
        if not stems & ours or stems & theirs:
            continue  # no such action, or both ("opened at 14:30 and closed at 16:00")
        rest = [w for w in content_words(claim) if w not in ours]
        if not rest:
            continue
        for start, end in clause_spans(evidence, "contrast"):
            sentence = evidence[start:end]
            written = set(word_stems(sentence))
            if not written & theirs or written & ours:
                continue
            if sum(w in written for w in rest) < _MIN_COVERAGE * len(rest):
                continue
            if opposite_polarity(claim, sentence):
                continue
            return start, end
    return None


def in_evidence_words(claim: str, evidence: Sequence[str]) -> str:
    """``claim`` with each action word that no evidence text writes, but whose same
    action the evidence writes in another word, written as the evidence writes it:
    "the claim was rejected" becomes "the claim was denied" beside "Warranty claim
    denied". What the model reads; the verdict keeps the claim as written."""
    written: dict[str, str] = {}
    for text in evidence:
        for match in _WORD.finditer(text):
            word = match.group(0)
            stem = word_stems(word)
            if stem and stem[0] in _ACTION_STEMS:
                written.setdefault(stem[0], word.lower())
    if not written:
        return claim

    def restate(match: re.Match[str]) -> str:
        word = match.group(0)
        stem = word_stems(word)
        if not stem or stem[0] in written:
            return word
        for same in _SAME_ACTION:
            if stem[0] in same:
                other = next((written[s] for s in sorted(same) if s in written), None)
                if other is not None:
                    return other
        return word

    return _WORD.sub(restate, claim)
