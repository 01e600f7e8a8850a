"""Calibration of the entailment score: Platt scaling of the entailment log-odds.

The raw model is trained on a mix of NLI sets whose base rates differ from grounding
use; a two-parameter Platt fit on held-out grounding data maps its log-odds of
entailment to a probability of "supported", and the decision threshold is chosen on
the same data. Both are monotone, so ranking metrics (ROC AUC) are unchanged by them.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

__all__ = ["Calibration", "entailment_log_odds", "fit_platt", "sigmoid"]


@dataclass(frozen=True, kw_only=True)
class Calibration:
    """``score = sigmoid(a * log_odds + b)``; probs are softmax(logits / temperature)."""

    a: float = 1.0
    b: float = 0.0
    threshold: float = 0.5
    fitted_on: list[str] = field(default_factory=list[str])

    @property
    def temperature(self) -> float:
        return 1.0 / self.a if self.a > 0 else 1.0

    def score(self, log_odds: float) -> float:
        return sigmoid(self.a * log_odds + self.b)

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


def fit_platt(
    log_odds: Sequence[float], labels: Sequence[int], *, steps: int = 500
) -> tuple[float, float]:
    """Fit ``a, b`` by Newton steps on the logistic loss (labels 1 = supported)."""
    a, b = 1.0, 0.0
    for _ in range(steps):
        ga = gb = haa = hab = hbb = 0.0
        for x, y in zip(log_odds, labels, strict=True):
            p = sigmoid(a * x + b)
            w = max(p * (1.0 - p), 1e-9)
            ga += (p - y) * x
            gb += p - y
            haa += w * x * x
            hab += w * x
            hbb += w
        det = haa * hbb - hab * hab
        if abs(det) < 1e-12:
            break
        da = (hbb * ga - hab * gb) / det
        db = (haa * gb - hab * ga) / det
        a, b = a - da, b - db
        if abs(da) + abs(db) < 1e-9:
            break
    return a, b
