"""Accuracy of the shipped NLI verifier on data it was not trained on.

Prints JSON and writes ``benchmarks/results/verifier_accuracy.json``:

* 3-way accuracy on NLI test splits kept out of training (SNLI test, the held-out
  fifth of MNLI dev-matched, ANLI R1-R3 test, SICK test);
* ROC AUC and balanced accuracy per grounding set (BEGIN dev wow/cmu/tc, WiCE claim
  dev, SummEdits news/podcast held out from training) at the shipped threshold, which
  was chosen on these same dev sets: they are dev figures, not test figures;
* the same ROC AUC with the calibration refitted on the *other* sets only
  (``roc_auc_held_out``: the set itself never shapes how its two signals are weighed),
  and each signal alone: the model's log-odds and the claim's word coverage.

Usage: ``python benchmarks/verifier_accuracy.py [--data ../shared/data] [--limit N]``
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch

from assay.training import _data as data
from assay.training._calibrate import Features, fit, metrics, score_sets
from assay.training._evaluate import (
    Item,
    balanced_accuracy,
    best_threshold,
    grounding_sets,
    roc_auc,
)
from assay.verifier import Verifier
from benchmarks._common import write_result

ROOT = Path(__file__).resolve().parents[1]
#: Published figures of larger checkers, for context (different splits where noted).
PUBLISHED = {
    "begin": "TRUE benchmark (Honovich et al., 2022), BEGIN test ROC AUC: T5-11B ANLI "
    "about 0.83; dev split here, so indicative only",
    "wice": "355M-770M grounding checkers (e.g. AlignScore-large, MiniCheck) about 0.78 "
    "ROC AUC on WiCE",
    "summedits": "SummEdits paper (Laban et al., 2023): GPT-4 about 0.82 balanced "
    "accuracy, most non-LLM detectors far lower",
    "baseline": "plain MiniLM-L6 3-way cross-encoder on ~36k NLI pairs: BEGIN about 0.89, "
    "WiCE about 0.60 ROC AUC",
}


def nli_test_sets(root: Path) -> dict[str, Iterator[data.Pair]]:
    return {
        "snli_test": data.snli(root, "test"),
        "mnli_dev_matched_heldout": data.mnli(root, "test"),
        "anli_test": data.anli(root, "test"),
        "sick_test": data.sick(root, ("TEST",)),
    }


def nli_accuracy(verifier: Verifier, root: Path, limit: int | None) -> dict[str, Any]:
    """3-way accuracy of the raw model (argmax) on single premise/hypothesis pairs."""
    names = ("entailment", "neutral", "contradiction")
    out: dict[str, Any] = {}
    for name, pairs in nli_test_sets(root).items():
        items = list(pairs)
        if limit is not None:
            items = random.Random(0).sample(items, min(limit, len(items)))
        logits = verifier.score([(p.premise, p.hypothesis) for p in items])
        predicted = [verifier.labels[max(range(len(r)), key=r.__getitem__)] for r in logits]
        correct = sum(pred == names[p.label] for pred, p in zip(predicted, items, strict=True))
        out[name] = {"n": len(items), "accuracy": round(correct / len(items), 4)}
    return out


def grounding_figures(
    verifier: Verifier, sets: dict[str, list[Item]], features: Features
) -> dict[str, Any]:
    """Per set: shipped-calibration metrics, held-out-calibration AUC, each signal alone."""
    out = metrics(sets, features, verifier.calibration)
    for name, items in sets.items():
        labels = [i.supported for i in items]
        shipped = [verifier.calibration.score(f.log_odds, f.coverage) for f in features[name]]
        own = best_threshold(shipped, labels)
        others = fit(sets, features, [n for n in sets if n != name])
        held_out = [others.score(f.log_odds, f.coverage) for f in features[name]]
        out[name].update(
            balanced_accuracy_own_threshold=round(balanced_accuracy(shipped, labels, own), 4),
            roc_auc_held_out=round(roc_auc(held_out, labels), 4),
            roc_auc_model_only=round(roc_auc([f.log_odds for f in features[name]], labels), 4),
            roc_auc_coverage_only=round(roc_auc([f.coverage for f in features[name]], labels), 4),
        )
    begin = [n for n in sets if n.startswith("begin_")]
    pooled_labels = [i.supported for n in begin for i in sets[n]]
    pooled = [
        verifier.calibration.score(f.log_odds, f.coverage) for n in begin for f in features[n]
    ]
    out["begin_pooled"] = {
        "n": len(pooled_labels),
        "positives": sum(pooled_labels),
        "roc_auc": round(roc_auc(pooled, pooled_labels), 4),
    }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--model", default=None, help="model dir or id (default: shipped)")
    parser.add_argument("--limit", type=int, default=None, help="cap items per set")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.manual_seed(0)
    verifier = (
        Verifier.from_pretrained(args.model, threads=args.threads)
        if args.model
        else Verifier.default(threads=args.threads)
    )
    started = time.monotonic()
    sets = grounding_sets(args.data, limit=args.limit)
    features = score_sets(verifier, sets, log=lambda line: print(line, flush=True))
    result = {
        "model": verifier.model_id,
        "calibration": {
            "a": verifier.calibration.a,
            "b": verifier.calibration.b,
            "c": verifier.calibration.c,
        },
        "threshold": verifier.threshold,
        "grounding_dev": grounding_figures(verifier, sets, features),
        "nli_test": nli_accuracy(verifier, args.data, args.limit),
        "published_for_context": PUBLISHED,
        "limit": args.limit,
        "threads": args.threads,
        "seconds": round(time.monotonic() - started, 1),
    }
    write_result("verifier_accuracy", result)


if __name__ == "__main__":
    main()
