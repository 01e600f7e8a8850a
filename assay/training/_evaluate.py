"""Grounding evaluation sets and the metrics reported for the verifier.

BEGIN counts only "Fully attributable" as supported ("Generic" and "Not fully
attributable" are not); WiCE counts only "supported" ("partially_supported" is not:
one unsupported fact makes the claim unsupported); SummEdits 1 = consistent.
"""

from __future__ import annotations

import csv
import itertools
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from assay.training._data import HELD_OUT_SUMMEDITS
from assay.verifier import join_sentences

BEGIN_SETS = ("wow", "cmu", "tc")


@dataclass(frozen=True, kw_only=True)
class Item:
    document: str
    claim: str
    supported: int


def begin(root: Path, name: str) -> list[Item]:
    path = root / "grounding-dev" / f"begin_dev_{name}.tsv"
    with path.open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))
    return [
        Item(
            document=r["knowledge"],
            claim=r["response"],
            supported=int(r["begin_label"].strip() == "Fully attributable"),
        )
        for r in rows
        if r["knowledge"].strip() and r["response"].strip()
    ]


def wice(root: Path) -> list[Item]:
    path = root / "grounding-dev" / "wice_oracle_claim_dev.jsonl"
    with path.open(encoding="utf-8") as lines:
        rows = [json.loads(line) for line in lines]
    return [
        Item(
            document=join_sentences(row["evidence"]),
            claim=row["claim"],
            supported=int(row["label"] == "supported"),
        )
        for row in rows
    ]


def summedits_held_out(root: Path) -> dict[str, list[Item]]:
    out: dict[str, list[Item]] = {}
    for domain in HELD_OUT_SUMMEDITS:
        path = root / "nli-extra" / "summedits" / f"summedits_{domain}.json"
        rows = json.loads(path.read_text(encoding="utf-8"))
        out[f"summedits_{domain}"] = [
            Item(document=r["doc"], claim=r["summary"], supported=int(str(r["label"]) == "1"))
            for r in rows
        ]
    return out


def grounding_sets(root: Path, *, limit: int | None = None, seed: int = 0) -> dict[str, list[Item]]:
    """Every grounding dev set by name, each optionally subsampled to ``limit`` items."""
    sets = {f"begin_{n}": begin(root, n) for n in BEGIN_SETS}
    sets["wice_claim"] = wice(root)
    sets.update(summedits_held_out(root))
    if limit is not None:
        rng = random.Random(seed)
        sets = {k: rng.sample(v, min(limit, len(v))) for k, v in sets.items()}
    return sets


def roc_auc(scores: Sequence[float], labels: Sequence[int]) -> float:
    """Area under the ROC curve (probability a positive outranks a negative; ties 1/2)."""
    ranked = sorted(zip(scores, labels, strict=True), key=lambda t: t[0])
    pos = sum(labels)
    neg = len(labels) - pos
    if pos == 0 or neg == 0:
        return float("nan")
    rank_sum, i = 0.0, 0
    while i < len(ranked):
        j = i
        while j + 1 < len(ranked) and ranked[j + 1][0] == ranked[i][0]:
            j += 1
        mean_rank = (i + j) / 2 + 1
        rank_sum += mean_rank * sum(lab for _, lab in ranked[i : j + 1])
        i = j + 1
    return (rank_sum - pos * (pos + 1) / 2) / (pos * neg)


def balanced_accuracy(scores: Sequence[float], labels: Sequence[int], threshold: float) -> float:
    tp = sum(1 for s, y in zip(scores, labels, strict=True) if y and s >= threshold)
    tn = sum(1 for s, y in zip(scores, labels, strict=True) if not y and s < threshold)
    pos = sum(labels)
    neg = len(labels) - pos
    return 0.5 * (tp / max(pos, 1) + tn / max(neg, 1))


def best_threshold(scores: Sequence[float], labels: Sequence[int]) -> float:
    """The threshold that maximises balanced accuracy (midpoint between scores)."""
    ordered = sorted(set(scores))
    if len(ordered) > 400:
        ordered = [ordered[int(k * (len(ordered) - 1) / 399)] for k in range(400)]
    candidates = [(a + b) / 2 for a, b in itertools.pairwise(ordered)] or [0.5]
    return max(candidates, key=lambda t: balanced_accuracy(scores, labels, t))
