"""Fit the score calibration and threshold of a saved model on grounding dev data."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from assay.verifier._calibration import Calibration, fit_platt, sigmoid
from assay.verifier._evaluate import (
    Item,
    balanced_accuracy,
    best_threshold,
    grounding_sets,
    roc_auc,
)
from assay.verifier._verifier import Verifier


def score_sets(
    verifier: Verifier, sets: dict[str, list[Item]], log: Callable[[str], None] = print
) -> dict[str, list[float]]:
    """Raw log-odds of support for every item of every set."""
    out: dict[str, list[float]] = {}
    for name, items in sets.items():
        started = time.monotonic()
        out[name] = verifier.log_odds_many([(i.document, i.claim) for i in items])
        log(f"scored {name}: {len(items)} items in {time.monotonic() - started:.0f}s")
    return out


def metrics(
    sets: dict[str, list[Item]], odds: dict[str, list[float]], calibration: Calibration
) -> dict[str, dict[str, float]]:
    """ROC AUC and balanced accuracy (at the calibrated threshold) per set."""
    result: dict[str, dict[str, float]] = {}
    for name, items in sets.items():
        labels = [i.supported for i in items]
        scores = [calibration.score(x) for x in odds[name]]
        result[name] = {
            "n": len(items),
            "positives": sum(labels),
            "roc_auc": round(roc_auc(scores, labels), 4),
            "balanced_accuracy": round(balanced_accuracy(scores, labels, calibration.threshold), 4),
        }
    return result


def calibrate(
    model_dir: Path,
    data_root: Path,
    *,
    limit: int | None = None,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Fit Platt scaling and the threshold on all grounding dev sets pooled; save them."""
    verifier = Verifier.from_pretrained(model_dir)
    verifier.calibration = Calibration()
    sets = grounding_sets(data_root, limit=limit)
    odds = score_sets(verifier, sets, log)
    pooled_x = [x for name in sets for x in odds[name]]
    pooled_y = [i.supported for name in sets for i in sets[name]]
    a, b = fit_platt(pooled_x, pooled_y)
    threshold = best_threshold([sigmoid(a * x + b) for x in pooled_x], pooled_y)
    calibration = Calibration(a=a, b=b, threshold=threshold, fitted_on=sorted(sets))
    calibration.save(model_dir / "calibration.json")
    report = {"a": a, "b": b, "threshold": threshold, "dev": metrics(sets, odds, calibration)}
    log(f"calibration: {report}")
    return report
