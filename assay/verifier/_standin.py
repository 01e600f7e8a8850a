"""A deterministic stand-in for the NLI model, for tests where the model is not the
subject (the fence's control flow, grants, the service API) and for trying assay
without loading torch weights. It is not a verifier: it reads content-word coverage
and negation, nothing more, and says so in its model id.
"""

from __future__ import annotations

from collections.abc import Iterable

from assay.verifier._cache import EntailmentCache
from assay.verifier._polarity import (
    best_sentence,
    opposite_polarity,
)
from assay.verifier._records import Entailment


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
