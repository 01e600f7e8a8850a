"""Accuracy of the shipped NLI verifier on data it was not trained on.

Prints JSON and writes ``benchmarks/results/verifier_accuracy.json``:

* 3-way accuracy on NLI test splits kept out of training (SNLI test, the held-out
  fifth of MNLI dev-matched, ANLI R1-R3 test, SICK test);
* ROC AUC and balanced accuracy per grounding set (BEGIN dev wow/cmu/tc, WiCE claim
  dev, SummEdits news/podcast held out from training) at the shipped threshold, which
  was chosen on these same dev sets: they are dev figures, not test figures.

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

from assay.verifier import Verifier
from assay.verifier import _data as data
from assay.verifier._calibrate import metrics, score_sets
from assay.verifier._evaluate import (
    balanced_accuracy,
    best_threshold,
    grounding_sets,
)
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
    odds = score_sets(verifier, sets, log=lambda line: print(line, flush=True))
    grounding = metrics(sets, odds, verifier.calibration)
    for name, items in sets.items():
        labels = [i.supported for i in items]
        scores = [verifier.calibration.score(x) for x in odds[name]]
        own = best_threshold(scores, labels)
        grounding[name]["balanced_accuracy_own_threshold"] = round(
            balanced_accuracy(scores, labels, own), 4
        )
    result = {
        "model": verifier.model_id,
        "threshold": verifier.threshold,
        "grounding_dev": grounding,
        "nli_test": nli_accuracy(verifier, args.data, args.limit),
        "published_for_context": PUBLISHED,
        "limit": args.limit,
        "threads": args.threads,
        "seconds": round(time.monotonic() - started, 1),
    }
    write_result("verifier_accuracy", result)


if __name__ == "__main__":
    main()
