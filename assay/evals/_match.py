"""Whether a run's verified proposition states a gold statement: by value first, then
by meaning.

Deterministic checks decide first, in this order:

1. the same words: both texts normalised (Unicode NFKC, case, spacing, the final
   full stop) and the statement written inside the proposition (``text``);
2. the values: every number, amount, quantity and date of the statement must be
   stated by the proposition in some written form (``assay.grounding``); if one is
   not, they do not match, and no model is asked;
3. the words: with the values agreeing, every content word of the statement (by
   stem) occurs in the proposition and neither or both are negated (``words``).

Only where words differ is the meaning judge asked (``model``): any callable
``judge(premise, hypothesis) -> bool``, or :class:`NLIJudge` over the verifier's
model. Without a judge, a paraphrase that shares neither words nor form is not a
match.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from assay.grounding import check_values, claim_values
from assay.verifier import NLIModel, coverage

__all__ = ["MatchHow", "MeaningJudge", "NLIJudge", "match_statement", "supported_by_sources"]

MatchHow = Literal["text", "words", "model"]
_SPACE = re.compile(r"\s+")
_SENTENCE = re.compile(r"\n+|(?<=[.!?;])\s+")
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?", re.UNICODE)
_NEGATION_WORDS = (
    "no not never none nothing nobody neither nor without cannot can't isn't aren't wasn't "
    "weren't don't doesn't didn't won't hasn't haven't hadn't n't"
)
_NEGATIONS = frozenset(_NEGATION_WORDS.split(" "))


class MeaningJudge(Protocol):
    """Whether ``premise`` states what ``hypothesis`` says (an entailment judgement)."""

    def __call__(self, premise: str, hypothesis: str) -> bool: ...


@dataclass(frozen=True)
class NLIJudge:
    """A :class:`MeaningJudge` over an NLI model (``cp.verifier.model``, the shipped
    :class:`~assay.verifier.Verifier`, or the stand-in ``LexicalNLI`` in tests)."""

    model: NLIModel

    def __call__(self, premise: str, hypothesis: str) -> bool:
        [verdict] = self.model.check_many([(premise, hypothesis)])
        return verdict.label == "entailment"


def normalised(text: str) -> str:
    """NFKC, case-folded, spacing collapsed, a final full stop dropped."""
    folded = _SPACE.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()
    return folded.rstrip(" .")


def negated(text: str) -> bool:
    return any(w in _NEGATIONS for w in _WORD.findall(normalised(text)))


def match_statement(
    statement: str, proposition: str, *, judge: Callable[[str, str], bool] | None = None
) -> MatchHow | None:
    """How ``proposition`` states ``statement``, or ``None`` when it does not."""
    wanted, said = normalised(statement), normalised(proposition)
    same_polarity = negated(statement) == negated(proposition)
    if wanted and wanted in said and same_polarity:
        return "text"
    if not _values_agree(statement, [proposition]):
        return None
    if same_polarity and coverage(_without_values(statement), proposition) >= 1.0:
        return "words"
    if judge is not None and judge(proposition, statement):
        return "model"
    return None


def supported_by_sources(
    proposition: str,
    sources: Sequence[str],
    *,
    judge: Callable[[str, str], bool] | None = None,
) -> bool:
    """Whether the case's sources state ``proposition``: each of its values stated
    (or computed, where the proposition says it computed one) by the sources, and
    its words all in one source with the same polarity, or the judge says one
    source entails it."""
    if not sources or not _values_agree(proposition, sources, computed=True):
        return False
    wanted, polarity = normalised(proposition), negated(proposition)
    words = _without_values(proposition)
    for source in sources:
        if wanted in normalised(source):
            return True
        for sentence in _SENTENCE.split(source):
            if negated(sentence) == polarity and coverage(words, sentence) >= 1.0:
                return True
    return judge is not None and any(judge(source, proposition) for source in sources)


def _values_agree(statement: str, texts: Sequence[str], *, computed: bool = False) -> bool:
    accepted = ("found", "computed") if computed else ("found",)
    return all(check.status in accepted for check in check_values(statement, list(texts)))


def _without_values(text: str) -> str:
    """``text`` with its numbers, amounts and dates blanked (they are compared as
    values, in any written form, not as words)."""
    out = text
    for value in reversed(claim_values(text)):
        out = out[: value.start] + " " + out[value.end :]
    return out
