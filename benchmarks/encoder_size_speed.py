"""What a larger NLI cross-encoder would cost on this CPU: short claims per second
for encoders of the usual sizes, beside the shipped MiniLM-L6.

The shipped model is small because it must check at least 200 short claims a second
on two CPU cores. Whoever sets ``ASSAY_NLI_MODEL`` to a stronger model (see the
verifier page) trades that speed for accuracy; this measures the speed side of the
trade for the sizes such a model comes in. The encoders are built from their
configurations with random weights: the forward pass costs the same whatever the
weights, and nothing is downloaded. Accuracy is not measured here: it depends on
the weights, which do not install offline.

Each variant checks the same short pairs (SNLI test, at most 128 word pieces with
the shipped tokenizer) in batches of 32 sorted by length, as the verifier batches
them, fp32 and with dynamic int8 quantisation of
its linear layers; the figure is the median of three passes. Larger variants check
fewer pairs so that the run stays within minutes.

Usage: ``python benchmarks/encoder_size_speed.py [--threads 2] [--data ../shared/data]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch
from transformers import (
    AutoModelForSequenceClassification,
    AutoTokenizer,
    BertConfig,
    DebertaV2Config,
    PretrainedConfig,
    PreTrainedModel,
    PreTrainedTokenizerBase,
)

from assay.training import _data as data
from assay.verifier import DEFAULT_MODEL_DIR
from benchmarks._common import write_result

ROOT = Path(__file__).resolve().parents[1]
BATCH = 32


@dataclass(frozen=True)
class Variant:
    key: str
    label: str
    config: PretrainedConfig | None  # None: the shipped model, loaded with its weights
    pairs: int


def variants() -> list[Variant]:
    def bert(layers: int, hidden: int, heads: int) -> BertConfig:
        return BertConfig(
            num_hidden_layers=layers,
            hidden_size=hidden,
            num_attention_heads=heads,
            intermediate_size=4 * hidden,
            num_labels=3,
        )

    def deberta(layers: int, hidden: int, heads: int) -> DebertaV2Config:
        # DeBERTa-v3's relative attention (c2p and p2c, 256 position buckets);
        # the vocabulary is the shipped tokenizer's, which only sizes the embedding.
        return DebertaV2Config(
            vocab_size=30522,
            num_hidden_layers=layers,
            hidden_size=hidden,
            num_attention_heads=heads,
            intermediate_size=4 * hidden,
            relative_attention=True,
            position_buckets=256,
            max_relative_positions=-1,
            pos_att_type=["p2c", "c2p"],
            position_biased_input=False,
            norm_rel_ebd="layer_norm",
            share_att_key=True,
            num_labels=3,
        )

    return [
        Variant("shipped_minilm_l6", "MiniLM-L6, 384 wide (shipped)", None, 512),
        Variant("minilm_l12", "MiniLM-L12, 384 wide", bert(12, 384, 12), 256),
        Variant("deberta_v3_xsmall", "DeBERTa-v3-xsmall size (12 x 384)", deberta(12, 384, 6), 256),
        Variant("deberta_v3_small", "DeBERTa-v3-small size (6 x 768)", deberta(6, 768, 12), 128),
        Variant("bert_base", "base size, BERT (12 x 768)", bert(12, 768, 12), 128),
        Variant("deberta_v3_base", "DeBERTa-v3-base size (12 x 768)", deberta(12, 768, 12), 96),
        Variant("bert_large", "large size, BERT (24 x 1024)", bert(24, 1024, 16), 32),
        Variant("deberta_v3_large", "DeBERTa-v3-large size (24 x 1024)", deberta(24, 1024, 16), 32),
    ]


def short_pairs(tokenizer: PreTrainedTokenizerBase, root: Path, n: int) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    for p in data.snli(root, "test"):
        if len(tokenizer.encode(p.premise, p.hypothesis)) <= 128:
            pairs.append((p.premise, p.hypothesis))
        if len(pairs) == n:
            break
    return pairs


def claims_per_s(
    model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, pairs: list[tuple[str, str]]
) -> float:
    """The median of three passes over ``pairs``, in batches of ``BATCH`` of pairs of
    like length (as the verifier batches them), after a warm-up pair. Tokenising is
    counted: the verifier does it for every check."""
    pairs = sorted(pairs, key=lambda pair: len(pair[0]) + len(pair[1]))

    def one_pass() -> float:
        started = time.perf_counter()
        for i in range(0, len(pairs), BATCH):
            batch = pairs[i : i + BATCH]
            encoded = tokenizer(
                [p for p, _ in batch],
                [h for _, h in batch],
                padding=True,
                truncation=True,
                max_length=128,
                return_tensors="pt",
            )
            with torch.inference_mode():
                model(**encoded)
        return len(pairs) / (time.perf_counter() - started)

    with torch.inference_mode():
        model(**tokenizer(*pairs[0], return_tensors="pt"))
    return statistics.median(one_pass() for _ in range(3))


def parameters(model: PreTrainedModel) -> int:
    return sum(p.numel() for p in model.parameters())


def measure(variant: Variant, tokenizer: PreTrainedTokenizerBase, root: Path) -> dict[str, Any]:
    if variant.config is None:
        model = AutoModelForSequenceClassification.from_pretrained(DEFAULT_MODEL_DIR)
    else:
        torch.manual_seed(0)
        model = AutoModelForSequenceClassification.from_config(variant.config)
    model = model.float().eval()
    pairs = short_pairs(tokenizer, root, variant.pairs)
    fp32 = claims_per_s(model, tokenizer, pairs)
    int8 = torch.ao.quantization.quantize_dynamic(  # pyright: ignore[reportDeprecated]
        model, {torch.nn.Linear}, dtype=torch.qint8
    )
    quantised = claims_per_s(int8, tokenizer, pairs)
    result = {
        "label": variant.label,
        "parameters_m": round(parameters(model) / 1e6, 1),
        "pairs": len(pairs),
        "fp32_claims_per_s": round(fp32, 1),
        "int8_claims_per_s": round(quantised, 1),
    }
    print(f"{variant.key}: {result}", file=sys.stderr)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    tokenizer = AutoTokenizer.from_pretrained(DEFAULT_MODEL_DIR)
    results = {v.key: measure(v, tokenizer, args.data) for v in variants()}
    write_result(
        "encoder_size_speed",
        {
            "threads": args.threads,
            "batch": BATCH,
            "max_length": 128,
            "weights": "random, except the shipped model",
            "target_short_claims_per_s": 200,
            "variants": results,
        },
    )


if __name__ == "__main__":
    main()
