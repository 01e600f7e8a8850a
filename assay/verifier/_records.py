"""The verifier's records: labels and the result of one check."""

from __future__ import annotations

from dataclasses import dataclass

from assay.contract import NLILabel as Label


@dataclass(frozen=True, kw_only=True)
class Entailment:
    """Whether ``document`` supports ``claim``, and which part of it decided.

    ``score`` is the calibrated probability that the claim is supported; compare it
    with :attr:`Verifier.threshold` rather than with 0.5. ``label`` is the decision:
    ``contradiction`` when the model's top label for the deciding premise is
    contradiction (whatever the score), else ``entailment`` when the score reaches
    the threshold, else ``neutral``. ``probs`` is the model's
    own distribution over the three labels for the deciding premise
    and claim sentence. ``evidence_span`` is ``(start, end)`` in characters of
    ``document``, covering the sentences that premise was built from; for a claim of
    several sentences, its weakest sentence decides.
    """

    label: Label
    score: float
    probs: dict[str, float]
    evidence_span: tuple[int, int]
    model: str

    @property
    def supported(self) -> bool:
        """Whether the claim counts as supported (the label is entailment)."""
        return self.label == "entailment"
