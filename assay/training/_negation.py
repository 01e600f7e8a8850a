"""Negation pairs made from the mix's own NLI pairs: the polarity lesson SICK taught.

Why: a model trained without SICK read "The deployment was not rolled back." as
entailed by "The deployment was rolled back." (SICK test accuracy 0.387). SICK's
licence forbids commercial use, so the lesson is rebuilt from pairs the commercial
mix already holds, by one edit whose effect on the label is known:

* ``P ⊨ H`` gives ``(P, not-H)`` contradiction;
* ``P`` neutral to ``H`` gives ``(P, not-H)`` neutral: a "not" alone is no
  contradiction;
* ``P`` contradicting ``H`` gives ``(P, not-H)`` entailment (in these sets a
  contradiction means both cannot hold of one scene), and ``P ⊨ H`` gives
  ``(not-H, not-P)`` entailment (contraposition): a negated hypothesis can be
  entailed, so the model cannot learn "not means contradiction";
* a sentence and its negation contradict each other both ways.

A sentence is negated only at its first auxiliary ("is", "was", "has", "can", …):
"not" is inserted after it, or removed where it already follows. A sentence with no
auxiliary is left out rather than guessed at.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

from assay.training._data import CONTRA, ENTAIL, NEUTRAL, Pair

__all__ = ["negate", "negations"]

_AUXILIARY = re.compile(
    r"\b(is|are|was|were|has|have|had|will|can|could|should|would|must|does|do|did)"
    r"(?:(n't)\b|\b(\s+not\b)?)",
    re.IGNORECASE,
)
_DO = frozenset({"do", "does", "did"})
#: Sentences longer than this are not negated: the first auxiliary of a long
#: sentence is often inside a clause, where "not" changes less than the whole.
_MAX_WORDS = 30


def negate(sentence: str) -> str | None:
    """``sentence`` with the polarity of its first auxiliary flipped, or ``None``."""
    if len(sentence.split()) > _MAX_WORDS:
        return None
    match = _AUXILIARY.search(sentence)
    if match is None:
        return None
    verb, negation = match.group(1), match.group(2) or match.group(3)
    if negation:
        return sentence[: match.start()] + verb + sentence[match.end() :]
    if verb.lower() in _DO:
        return None  # "did her homework" has no auxiliary to negate
    return sentence[: match.end()] + " not" + sentence[match.end() :]


def negations(pool: Sequence[Pair], n: int, rng: random.Random) -> list[Pair]:
    """Up to ``n`` negation pairs drawn from the three-way pairs of ``pool``."""
    candidates = [p for p in pool if p.label in (ENTAIL, NEUTRAL, CONTRA)]
    rng.shuffle(candidates)
    out: list[Pair] = []
    for pair in candidates:
        if len(out) >= n:
            break
        negated = negate(pair.hypothesis)
        if negated is None:
            continue
        if pair.label != ENTAIL:
            out.append(_pair(pair.premise, negated, NEUTRAL if pair.label == NEUTRAL else ENTAIL))
            continue
        out.append(_pair(pair.premise, negated, CONTRA))
        negated_premise = negate(pair.premise)
        kind = rng.randrange(3)
        if kind == 0 and negated_premise is not None:
            out.append(_pair(negated, negated_premise, ENTAIL))
        elif kind == 1:
            out.append(_pair(pair.hypothesis, negated, CONTRA))
        else:
            out.append(_pair(negated, pair.hypothesis, CONTRA))
    return out[:n]


def _pair(premise: str, hypothesis: str, label: int) -> Pair:
    return Pair(premise=premise, hypothesis=hypothesis, label=label, source="negation")
