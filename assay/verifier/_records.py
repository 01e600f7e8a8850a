"""The verifier's records: labels and the result of one check."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

Label = Literal["entailment", "neutral", "contradiction"]
#: The three NLI labels in the order the shipped model emits them.
LABELS: tuple[Label, ...] = get_args(Label)


@dataclass(frozen=True, kw_only=True)
class Entailment:
    """Whether ``document`` supports ``claim``, and which part of it decided.

    ``score`` is the calibrated probability that the claim is supported; compare it
    with :attr:`Verifier.threshold` rather than with 0.5. ``probs`` is the model's
    (temperature-scaled) distribution over the three labels for the deciding window
    and claim sentence. ``evidence_span`` is ``(start, end)`` in characters of
    ``document``; for a claim of several sentences, its weakest sentence decides.
    """

    label: Label
    score: float
    probs: dict[str, float]
    evidence_span: tuple[int, int]
    model: str

    @property
    def supported(self) -> bool:
        """Whether the model's top label is entailment."""
        return self.label == "entailment"
