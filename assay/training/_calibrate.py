"""Fit the score calibration and threshold of a saved model on grounding dev data."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from assay.training._evaluate import (
    Item,
    balanced_accuracy,
    best_threshold,
    grounding_sets,
    roc_auc,
)
from assay.verifier import Calibration, Support, Verifier, coverage_penalty, fit_logistic

#: Per set, per item: the model's log-odds, the claim's word coverage, the veto.
Features = dict[str, list[Support]]


#: Items scored at once: small enough for a progress bar to move, large enough for
#: the model's batches to stay full.
_CHUNK = 64


def score_sets(
    verifier: Verifier,
    sets: dict[str, list[Item]],
    log: Callable[[str], None] = print,
    progress: Callable[[int, int, str], None] | None = None,
) -> Features:
    """The two calibration inputs for every item of every set; ``progress`` is told
    ``(items done, items in all, "calibration items")`` after each chunk."""
    out: Features = {}
    total, done = sum(len(items) for items in sets.values()), 0
    for name, items in sets.items():
        started = time.monotonic()
        out[name] = []
        for first in range(0, len(items), _CHUNK):
            chunk = items[first : first + _CHUNK]
            out[name] += verifier.support_features([(i.document, i.claim) for i in chunk])
            done += len(chunk)
            if progress is not None:
                progress(done, total, "calibration items")
        log(f"scored {name}: {len(items)} items in {time.monotonic() - started:.0f}s")
    return out


def fit(sets: dict[str, list[Item]], features: Features, names: list[str]) -> Calibration:
    """Fit ``a, b, c`` and the threshold on the pooled items of ``names``.

    A coverage weight that comes out negative (coverage *raising* doubt) would turn the
    penalty into a bonus; the fit is then redone on the model's log-odds alone.
    """
    rows = [f for name in names for f in features[name]]
    labels = [i.supported for name in names for i in sets[name]]
    (a, c), b = fit_logistic([(f.log_odds, coverage_penalty(f.coverage)) for f in rows], labels)
    if c < 0:
        (a,), b = fit_logistic([(f.log_odds,) for f in rows], labels)
        c = 0.0
    draft = Calibration(a=a, b=b, c=c, fitted_on=sorted(names))
    threshold = best_threshold([draft.score(f.log_odds, f.coverage) for f in rows], labels)
    return Calibration(a=a, b=b, c=c, threshold=threshold, fitted_on=sorted(names))


def metrics(
    sets: dict[str, list[Item]], features: Features, calibration: Calibration
) -> dict[str, dict[str, float]]:
    """Per set: ROC AUC of the score, balanced accuracy of ``score >= threshold`` and
    of the verifier's decision (the same, with the contradiction veto)."""
    result: dict[str, dict[str, float]] = {}
    for name, items in sets.items():
        labels = [i.supported for i in items]
        scores = [calibration.score(f.log_odds, f.coverage) for f in features[name]]
        decided = [float(calibration.supports(f)) for f in features[name]]
        result[name] = {
            "n": len(items),
            "positives": sum(labels),
            "roc_auc": round(roc_auc(scores, labels), 4),
            "balanced_accuracy": round(balanced_accuracy(scores, labels, calibration.threshold), 4),
            "balanced_accuracy_decision": round(balanced_accuracy(decided, labels, 0.5), 4),
        }
    return result


def calibrate(
    model_dir: Path,
    data_root: Path,
    *,
    limit: int | None = None,
    log: Callable[[str], None] = print,
    progress: Callable[[int, int, str], None] | None = None,
) -> dict[str, Any]:
    """Fit the calibration on all grounding dev sets pooled and save it."""
    verifier = Verifier.from_pretrained(model_dir)
    sets = grounding_sets(data_root, limit=limit)
    features = score_sets(verifier, sets, log, progress)
    calibration = fit(sets, features, list(sets))
    calibration.save(model_dir / "calibration.json")
    report = {
        "a": calibration.a,
        "b": calibration.b,
        "c": calibration.c,
        "threshold": calibration.threshold,
        "dev": metrics(sets, features, calibration),
    }
    log(f"calibration: {report}")
    return report
