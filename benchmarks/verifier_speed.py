"""Speed of the shipped NLI verifier on CPU, fp32 and dynamic int8.

Prints JSON and writes ``benchmarks/results/verifier_speed.json``: claims/s for
batched short pairs (evidence of at most 128 word pieces, SNLI test), p50/p95
latency of single short checks, and p50/p95 per claim against 2,000-word documents
(held-out SummEdits documents joined). The int8 model (dynamic quantisation of the
linear layers) is kept only if its ROC AUC on the grounding dev sets holds (within
0.01 of fp32 on every set).

Usage: ``python benchmarks/verifier_speed.py [--threads 2] [--data ../shared/data]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from assay._db import create_engine, upgrade
from assay.training import _data as data
from assay.training._calibrate import metrics, score_sets
from assay.training._evaluate import grounding_sets
from assay.verifier import DEFAULT_MODEL_DIR, SqlEntailmentCache, Verifier
from assay.verifier._text import clear_caches
from benchmarks._common import write_result

ROOT = Path(__file__).resolve().parents[1]


def short_pairs(verifier: Verifier, root: Path, n: int) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    for p in data.snli(root, "test"):
        if len(verifier.tokenizer(p.premise, p.hypothesis)["input_ids"]) <= 128:
            pairs.append((p.premise, p.hypothesis))
        if len(pairs) == n:
            break
    return pairs


def long_pairs(root: Path, n: int, words: int = 2000) -> list[tuple[str, str]]:
    """``n`` documents of ``words`` words (SummEdits documents joined) with a summary each."""
    items = [
        i for rows in grounding_sets(root).values() for i in rows if len(i.document.split()) > 300
    ]
    pairs: list[tuple[str, str]] = []
    k = 0
    while len(pairs) < n and k < len(items):
        doc_words: list[str] = []
        claim = items[k].claim
        while len(doc_words) < words and k < len(items):
            doc_words += items[k].document.split()
            k += 1
        pairs.append((" ".join(doc_words[:words]), claim))
    return pairs


def percentiles(samples: list[float]) -> dict[str, float]:
    q = statistics.quantiles(samples, n=20)
    return {"p50_ms": round(statistics.median(samples) * 1000, 1), "p95_ms": round(q[18] * 1000, 1)}


def measure(
    verifier: Verifier, short: list[tuple[str, str]], long: list[tuple[str, str]]
) -> dict[str, Any]:
    verifier.check_many(short[:64])  # warm-up
    clear_caches()  # each variant reads the documents for the first time
    rates: list[float] = []
    for _ in range(3):  # the median of three passes: one pass is at the mercy of the OS
        started = time.perf_counter()
        verifier.check_many(short)
        rates.append(len(short) / (time.perf_counter() - started))
    batched = statistics.median(rates)
    single: list[float] = []
    for pair in short[:100]:
        t = time.perf_counter()
        verifier.check(*pair)
        single.append(time.perf_counter() - t)
    per_doc: list[float] = []
    for pair in long:
        t = time.perf_counter()
        verifier.check(*pair)
        per_doc.append(time.perf_counter() - t)
    return {
        "short_claims_per_s_batched": round(batched, 1),
        "short_single_check": percentiles(single),
        "long_2000_words_per_claim": percentiles(per_doc),
        "long_claims_per_s": round(len(long) / sum(per_doc), 2),
    }


def measure_cached(
    verifier: Verifier, short: list[tuple[str, str]], long: list[tuple[str, str]]
) -> dict[str, Any]:
    """The same checks again, through the database-backed cache the control plane
    uses (SQLite file), after a first pass filled it: what re-verification costs."""
    with tempfile.TemporaryDirectory() as tmp:
        engine = create_engine(f"sqlite:///{tmp}/cache.db")
        try:
            upgrade(engine)
            cache = SqlEntailmentCache(engine)
            verifier.check_many(short, cache=cache)
            verifier.check_many(long, cache=cache)
            passes = verifier.forward_passes
            started = time.perf_counter()
            verifier.check_many(short, cache=cache)
            batched = len(short) / (time.perf_counter() - started)
            per_doc: list[float] = []
            for pair in long:
                t = time.perf_counter()
                verifier.check(*pair, cache=cache)
                per_doc.append(time.perf_counter() - t)
            assert verifier.forward_passes == passes, "a cached pass ran the model"
        finally:
            engine.dispose()
    return {
        "short_claims_per_s_batched": round(batched, 1),
        "long_2000_words_per_claim": percentiles(per_doc),
        "model_forward_passes": 0,
    }


def auc_check(verifier: Verifier, root: Path, limit: int) -> dict[str, float]:
    sets = {
        k: v for k, v in grounding_sets(root, limit=limit).items() if not k.startswith("summedits")
    }
    found = metrics(sets, score_sets(verifier, sets, log=lambda _: None), verifier.calibration)
    return {name: m["roc_auc"] for name, m in found.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--short", type=int, default=512)
    parser.add_argument("--long", type=int, default=20)
    parser.add_argument("--auc-limit", type=int, default=300)
    args = parser.parse_args()
    fp32 = Verifier.from_pretrained(DEFAULT_MODEL_DIR, threads=args.threads)
    short = short_pairs(fp32, args.data, args.short)
    long = long_pairs(args.data, args.long)
    result: dict[str, Any] = {
        "threads": args.threads,
        "short_pairs": len(short),
        "long_documents": len(long),
        "cache": "none, except fp32_cached (SqlEntailmentCache on SQLite, second pass)",
    }
    result["fp32"] = measure(fp32, short, long)
    result["fp32_cached"] = measure_cached(fp32, short, long)
    result["fp32"]["roc_auc"] = auc_check(fp32, args.data, args.auc_limit)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        int8 = Verifier.from_pretrained(DEFAULT_MODEL_DIR, threads=args.threads, quantize=True)
    result["int8_dynamic"] = measure(int8, short, long)
    result["int8_dynamic"]["roc_auc"] = auc_check(int8, args.data, args.auc_limit)
    drops = [result["fp32"]["roc_auc"][k] - v for k, v in result["int8_dynamic"]["roc_auc"].items()]
    result["int8_kept"] = max(drops) <= 0.01
    result["auc_items_per_set"] = args.auc_limit
    write_result("verifier_speed", result)


if __name__ == "__main__":
    main()
