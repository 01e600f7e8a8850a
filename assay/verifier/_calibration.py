"""Calibration of the entailment score: a logistic fit on two signals.

The score is the probability that a claim is supported, from

* the model's log-odds of entailment for the best premise of the weakest claim
  sentence, and
* a coverage penalty, ``log((coverage + floor) / (1 + floor))``: zero when every
  content word of the claim occurs in the document, strongly negative when the claim
  says things the document never writes.

``score = sigmoid(a * log_odds + c * penalty + b)``. The penalty can only lower a
score (``c >= 0`` and the penalty is never positive), so a claim that copies its
evidence's words but twists them is left to the model: word overlap never vouches
for a claim, missing words count against it. The three numbers and the decision
threshold are fitted on held-out grounding data; the raw model is trained on NLI
sets whose base rates differ from grounding use.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import NamedTuple

__all__ = [
    "COVERAGE_FLOOR",
    "Calibration",
    "Support",
    "coverage_penalty",
    "entailment_log_odds",
    "fit_logistic",
    "sigmoid",
]

#: Keeps the penalty finite for a claim none of whose words occur in the document.
COVERAGE_FLOOR = 0.05


def coverage_penalty(coverage: float) -> float:
    """``log((coverage + floor) / (1 + floor))``: 0 at full coverage, negative below."""
    return math.log((coverage + COVERAGE_FLOOR) / (1.0 + COVERAGE_FLOOR))


class Support(NamedTuple):
    """What the calibration of one (document, claim) pair is fitted on and decides."""

    #: The model's log-odds of entailment, weakest sentence's best premise.
    log_odds: float
    #: Share of the claim's content words that the document writes.
    coverage: float
    #: Whether the model's top label for that premise is contradiction (the veto).
    contradicted: bool


@dataclass(frozen=True, kw_only=True)
class Calibration:
    """``score = sigmoid(a * log_odds + c * coverage_penalty + b)``.

    The identity calibration (``a=1, b=0, c=0``) is what a model without a
    ``calibration.json`` gets: the plain entailment probability. Only the support
    score is calibrated; the label probabilities stay the model's own softmax, so a
    refutation threshold on p(contradiction) means the same for every calibration.
    """

    a: float = 1.0
    b: float = 0.0
    c: float = 0.0
    threshold: float = 0.5
    fitted_on: list[str] = field(default_factory=list[str])

    def score(self, log_odds: float, coverage: float = 1.0) -> float:
        return sigmoid(self.a * log_odds + self.c * coverage_penalty(coverage) + self.b)

    def supports(self, support: Support) -> bool:
        """The verifier's decision: the score reaches the threshold and the model does
        not read a contradiction (its veto holds whatever the score)."""
        score = self.score(support.log_odds, support.coverage)
        return not support.contradicted and score >= self.threshold

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(asdict(self), indent=2) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> Calibration:
        """Read ``calibration.json``; a model without one gets the identity calibration."""
        if not path.is_file():
            return cls()
        raw = json.loads(path.read_text(encoding="utf-8"))
        return cls(
            a=float(raw.get("a", 1.0)),
            b=float(raw.get("b", 0.0)),
            c=float(raw.get("c", 0.0)),
            threshold=float(raw.get("threshold", 0.5)),
            fitted_on=[str(x) for x in raw.get("fitted_on", [])],
        )


def sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)


def entailment_log_odds(logits: Sequence[float], entail_index: int) -> float:
    """log p(entailment) - log p(not entailment), from raw logits."""
    others = [v for i, v in enumerate(logits) if i != entail_index]
    top = max(others)
    rest = top + math.log(sum(math.exp(v - top) for v in others))
    return logits[entail_index] - rest


def fit_logistic(
    features: Sequence[Sequence[float]], labels: Sequence[int], *, l2: float = 1e-4
) -> tuple[list[float], float]:
    """Weights and bias of a logistic regression (labels 1 = supported).

    Newton's method on the (lightly L2-regularised, so separable data stays finite)
    log-loss, with torch's linear solver; a handful of features and a few thousand
    rows converge in a few steps.
    """
    import torch

    x = torch.tensor([[*row, 1.0] for row in features], dtype=torch.float64)
    y = torch.tensor(list(labels), dtype=torch.float64)
    if x.shape[0] == 0:
        raise ValueError("no calibration data")
    ridge = torch.eye(x.shape[1], dtype=torch.float64) * l2 * x.shape[0]
    ridge[-1, -1] = 0.0  # the bias is not shrunk
    w = torch.zeros(x.shape[1], dtype=torch.float64)
    for _ in range(100):
        p = torch.sigmoid(x @ w)
        grad = x.T @ (p - y) + ridge @ w
        hess = (x * (p * (1 - p)).clamp_min(1e-9).unsqueeze(1)).T @ x + ridge
        step = torch.linalg.solve(hess, grad)
        w = w - step
        if float(step.abs().sum()) < 1e-10:
            break
    weights = [float(v) for v in w[:-1]]
    return weights, float(w[-1])
