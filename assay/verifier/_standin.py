"""A deterministic stand-in for the NLI model, for tests where the model is not the
subject (the fence's control flow, grants, the service API) and for trying assay
without loading torch weights. It is not a verifier: it reads content-word coverage
and negation, nothing more, and says so in its model id.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from assay._text import clause_spans
from assay.verifier._cache import EntailmentCache
from assay.verifier._polarity import (
    NEGATION_STEMS,
    negation_about_shared_words,
    opposite_polarity,
)
from assay.verifier._records import Entailment
from assay.verifier._text import STOP_WORDS, split_sentences, word_stems


class LexicalNLI:
    """Entailment from word coverage: ``entailment`` when at least ``threshold`` of
    the claim's content words occur in a sentence of the premise, ``contradiction``
    when they mostly do but exactly one side is negated, ``neutral`` otherwise."""

    model_id = "assay:lexical-stand-in"

    def __init__(self, *, threshold: float = 0.6) -> None:
        self.threshold = threshold
        #: Number of pairs judged so far.
        self.forward_passes = 0

    def check_many(
        self, pairs: Iterable[tuple[str, str]], *, cache: EntailmentCache | None = None
    ) -> list[Entailment]:
        del cache  # nothing to save: judging is cheaper than a lookup
        return [self._check(document, claim) for document, claim in pairs]

    def check(self, document: str, claim: str) -> Entailment:
        return self._check(document, claim)

    def _check(self, document: str, claim: str) -> Entailment:
        self.forward_passes += 1
        span, best = best_sentence(document, claim)
        if best >= 0.5 and opposite_polarity(claim, document[span[0] : span[1]]):
            label, score = "contradiction", 0.02
        elif best >= self.threshold:
            label, score = "entailment", best
        else:
            label, score = "neutral", best / 2
        probs = {"entailment": score, "neutral": 0.0, "contradiction": 0.0}
        probs[label] = max(probs[label], 0.9) if label != "entailment" else score
        return Entailment(
            label=label,  # type: ignore[arg-type]
            score=score,
            probs=probs,
            evidence_span=span,
            model=self.model_id,
        )


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
