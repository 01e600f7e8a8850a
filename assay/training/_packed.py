"""Continue training the cross-encoder on a packed mix, on an accelerator or the CPU.

Why: ``assay verifier train`` tokenises as it goes and is sized for two CPU cores
(one pass, 42 minutes). On a GPU the same model takes many passes over a larger
sample of the same commercial mix in minutes, provided nothing else is the
bottleneck: the mix is packed beforehand (:mod:`assay.training._pack`), and this
file needs nothing but numpy, torch, transformers and safetensors, so it runs on a
machine without the project's dependencies (``python assay/training/_packed.py``).

The recipe is the shipped one's: frozen word embeddings, AdamW, linear warm-up and
decay, length-bucketed batches, two-way pairs trained on p(entailment) alone; with
bf16 autocast on CUDA. The schedule ends at zero when the planned epochs or the time
budget run out, whichever comes first. Only the weights that train are written (fp16
safetensors in shards of at most ``--shard-mib``, the word embeddings stay those of
the starting model), with a JSON log; :func:`merge` puts them back into a full model
directory here.

    python assay/training/_packed.py --pack pack.npz.xz --model assay/verifier/model \\
        --out OUT --device cuda --epochs 3 --batch-size 64 --lr 3e-5 --time-budget-s 300
"""

from __future__ import annotations

import argparse
import io
import json
import lzma
import math
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

#: Share of pairs kept out of training to watch the loss on (at most ``val_pairs``).
_VAL_SHARE = 0.01


@dataclass(frozen=True, kw_only=True)
class Config:
    pack: Path
    model: Path
    out: Path
    device: str = "cpu"
    epochs: float = 1.0
    batch_size: int = 64
    lr: float = 3e-5
    max_length: int = 256
    time_budget_s: float = 0.0
    max_steps: int = 0
    seed: int = 22
    shard_mib: float = 15.0
    val_pairs: int = 3000


def read_pack(path: Path) -> dict[str, np.ndarray]:
    """The arrays :mod:`assay.training._pack` wrote (an xz-compressed ``.npz``)."""
    with np.load(io.BytesIO(lzma.decompress(path.read_bytes()))) as loaded:
        return {name: loaded[name] for name in loaded.files}


class Batcher:
    """Model inputs for pairs of the pack: ``[CLS] premise [SEP] claim [SEP]``, the
    longer side cut first to fit ``max_length``, as the tokenizer does for a pair."""

    def __init__(self, arrays: dict[str, np.ndarray], cls: int, sep: int, max_length: int):
        self.a, self.cls, self.sep, self.max_length = arrays, cls, sep, max_length
        lengths = np.diff(arrays["offsets"])
        self.lengths = lengths[arrays["premise"]] + lengths[arrays["hypothesis"]]

    def _text(self, i: int) -> np.ndarray:
        off = self.a["offsets"]
        return self.a["tokens"][off[i] : off[i + 1]].astype(np.int64)

    def _pair(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        p, h = self._text(int(self.a["premise"][k])), self._text(int(self.a["hypothesis"][k]))
        room = self.max_length - 3
        if len(p) + len(h) > room:
            keep_h = min(len(h), max(room - len(p), room // 2))
            p, h = p[: room - keep_h], h[:keep_h]
        return p, h

    def batch(self, rows: Sequence[int] | np.ndarray) -> dict[str, torch.Tensor]:
        pairs = [self._pair(k) for k in rows]
        width = max(len(p) + len(h) + 3 for p, h in pairs)
        ids = np.zeros((len(rows), width), dtype=np.int64)
        types = np.zeros_like(ids)
        mask = np.zeros_like(ids)
        cls, sep = np.array([self.cls]), np.array([self.sep])
        for r, (p, h) in enumerate(pairs):
            n, m = len(p), len(h)
            ids[r, : n + m + 3] = np.concatenate((cls, p, sep, h, sep))
            types[r, n + 2 : n + m + 3] = 1
            mask[r, : n + m + 3] = 1
        return {
            "input_ids": torch.from_numpy(ids),
            "token_type_ids": torch.from_numpy(types),
            "attention_mask": torch.from_numpy(mask),
            "labels": torch.from_numpy(self.a["label"][list(rows)].astype(np.int64)),
        }


def plan_epoch(
    rows: np.ndarray, lengths: np.ndarray, size: int, rng: np.random.Generator
) -> list[np.ndarray]:
    """Length-bucketed batches: shuffle, sort within blocks of 50 batches, shuffle batches."""
    rows = rows[rng.permutation(len(rows))]
    out: list[np.ndarray] = []
    block = size * 50
    for start in range(0, len(rows), block):
        chunk = rows[start : start + block]
        chunk = chunk[np.argsort(lengths[chunk], kind="stable")]
        out += [chunk[i : i + size] for i in range(0, len(chunk), size)]
    return [out[i] for i in rng.permutation(len(out))]


def mixed_loss(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """NLL for 3-way labels; -log(1 - p(entailment)) for two-way "not entailment" (3)."""
    logp = torch.log_softmax(logits.float(), dim=-1)
    not_entail = torch.logsumexp(logp[:, 1:], dim=-1)
    picked = logp.gather(1, labels.clamp(max=2).unsqueeze(1)).squeeze(1)
    return -torch.where(labels < 3, picked, not_entail).mean()


def lr_factor(step: int, total: int, elapsed_s: float, budget_s: float) -> float:
    """Linear warm-up over the first 6% of steps, then linear decay to zero.

    Progress is the larger of the step fraction and, with a time budget, the elapsed
    fraction of it: on a slower (or shared) machine the schedule still ends at zero
    when the budget runs out, so a budget-cut run is a finished run on less data.
    Both trainers use it (``assay verifier train`` imports it from here, since this
    file must run without the project's other modules).
    """
    warm = max(1, int(0.06 * total))
    if step < warm:
        return (step + 1) / warm
    progress = step / total
    if budget_s > 0:
        progress = max(progress, elapsed_s / budget_s)
    return max(0.0, 1.0 - progress) / (1.0 - warm / total)


@dataclass(kw_only=True)
class Log:
    steps: int = 0
    seen: int = 0
    loss: float = 0.0
    curve: list[dict[str, float]] = field(default_factory=list)
    evals: list[dict[str, float]] = field(default_factory=list)


def _inputs(batch: dict[str, torch.Tensor], device: str) -> dict[str, torch.Tensor]:
    return {k: v.to(device, non_blocking=True) for k, v in batch.items()}


def _autocast(device: str) -> Any:
    if device.startswith("cuda"):
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return torch.autocast("cpu", enabled=False)


@torch.no_grad()
def evaluate(model: Any, batcher: Batcher, rows: np.ndarray, cfg: Config) -> dict[str, float]:
    """Loss and accuracy on held-out pairs (two-way pairs: entailment or not)."""
    model.eval()
    total, right, n = 0.0, 0, 0
    for start in range(0, len(rows), 256):
        batch = _inputs(batcher.batch(rows[start : start + 256]), cfg.device)
        labels = batch.pop("labels")
        with _autocast(cfg.device):
            logits = model(**batch).logits.float()
        total += mixed_loss(logits, labels).item() * len(labels)
        top = logits.argmax(-1)
        hit = torch.where(labels < 3, top == labels, top != 0)
        right, n = right + int(hit.sum().item()), n + len(labels)
    model.train()
    return {"loss": round(total / max(n, 1), 4), "accuracy": round(right / max(n, 1), 4)}


def _load(cfg: Config) -> tuple[Any, Any]:
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(cfg.model))
    model = AutoModelForSequenceClassification.from_pretrained(str(cfg.model)).float()
    model.get_input_embeddings().weight.requires_grad_(False)
    return model.to(cfg.device), tokenizer


def _step(model: Any, optim: Any, batch: dict[str, torch.Tensor], cfg: Config) -> torch.Tensor:
    inputs = _inputs(batch, cfg.device)
    labels = inputs.pop("labels")
    with _autocast(cfg.device):
        logits = model(**inputs).logits
    loss = mixed_loss(logits, labels)
    loss.backward()
    torch.nn.utils.clip_grad_norm_([p for p in model.parameters() if p.requires_grad], 1.0)
    optim.step()
    optim.zero_grad(set_to_none=True)
    return loss.detach().float()


def train(cfg: Config) -> dict[str, Any]:
    """Train as the module describes; writes the changed weights and ``log.json``."""
    started = time.monotonic()
    torch.manual_seed(cfg.seed)
    rng = np.random.default_rng(cfg.seed)
    arrays = read_pack(cfg.pack)
    model, tokenizer = _load(cfg)
    batcher = Batcher(arrays, tokenizer.cls_token_id, tokenizer.sep_token_id, cfg.max_length)
    order = rng.permutation(len(arrays["label"]))
    n_val = min(cfg.val_pairs, int(len(order) * _VAL_SHARE))
    val, rows = np.sort(order[:n_val]), order[n_val:]
    per_epoch = math.ceil(len(rows) / cfg.batch_size)
    total = max(1, math.ceil(per_epoch * cfg.epochs))
    if cfg.max_steps:
        total = min(total, cfg.max_steps)
    trainable = [p for p in model.parameters() if p.requires_grad]
    fused = cfg.device.startswith("cuda")
    optim = torch.optim.AdamW(trainable, lr=cfg.lr, weight_decay=0.01, fused=fused)
    log = Log()
    log.evals.append({"step": 0, **evaluate(model, batcher, val, cfg)})
    model.train()
    t0 = time.monotonic()
    _loop(model, optim, batcher, (rows, val), (total, per_epoch), cfg, rng, log, t0)
    train_s = time.monotonic() - t0
    log.evals.append({"step": log.steps, **evaluate(model, batcher, val, cfg)})
    shards = save_trained(model, cfg.out, cfg.shard_mib)
    report = {
        "config": {k: str(v) for k, v in cfg.__dict__.items()},
        "pairs": len(arrays["label"]),
        "train_pairs": len(rows),
        "val_pairs": n_val,
        "steps": log.steps,
        "planned_steps": total,
        "pairs_seen": log.seen,
        "epochs_seen": round(log.seen / len(rows), 3),
        "final_loss": round(log.loss, 4),
        "train_seconds": round(train_s, 1),
        "pairs_per_second": round(log.seen / max(train_s, 1e-9), 1),
        "total_seconds": round(time.monotonic() - started, 1),
        "device_name": torch.cuda.get_device_name() if fused else "cpu",
        "evals": log.evals,
        "curve": log.curve,
        "shards": shards,
    }
    (cfg.out / "log.json").write_text(json.dumps(report, indent=2) + "\n")
    return report


def _batches(batcher: Batcher, plan: list[np.ndarray], cfg: Config) -> Any:
    """The epoch's batches, built by worker processes on CUDA (the GPU never waits
    for them), in this process on the CPU."""
    from torch.utils.data import DataLoader

    cuda = cfg.device.startswith("cuda")
    return DataLoader(
        plan,  # pyright: ignore[reportArgumentType]
        batch_size=None,
        collate_fn=batcher.batch,
        num_workers=4 if cuda else 0,
        pin_memory=cuda,
        prefetch_factor=8 if cuda else None,
    )


def _loop(
    model: Any,
    optim: torch.optim.Optimizer,
    batcher: Batcher,
    split: tuple[np.ndarray, np.ndarray],
    plan: tuple[int, int],
    cfg: Config,
    rng: np.random.Generator,
    log: Log,
    t0: float,
) -> None:
    """Steps until the planned steps or the time budget are spent; the held-out loss
    after each epoch."""
    (rows, val), (total, per_epoch) = split, plan
    ema: torch.Tensor | None = None
    while log.steps < total:
        epoch = plan_epoch(rows, batcher.lengths, cfg.batch_size, rng)
        for batch in _batches(batcher, epoch, cfg):
            factor = lr_factor(log.steps, total, time.monotonic() - t0, cfg.time_budget_s)
            if log.steps >= total or factor <= 0.0:
                break
            for group in optim.param_groups:
                group["lr"] = cfg.lr * factor
            seen = len(batch["labels"])
            loss = _step(model, optim, batch, cfg)
            ema = loss if ema is None else 0.98 * ema + 0.02 * loss
            log.steps, log.seen = log.steps + 1, log.seen + seen
            if log.steps % 200 == 0 or log.steps == total:
                log.loss = float(ema.item())
                log.curve.append(
                    {"step": log.steps, "loss": round(log.loss, 4), "lr": round(factor, 4),
                     "seconds": round(time.monotonic() - t0, 1)}
                )  # fmt: skip
                print(json.dumps(log.curve[-1]), flush=True)
            if log.steps % per_epoch == 0:
                log.evals.append({"step": log.steps, **evaluate(model, batcher, val, cfg)})
                print(json.dumps(log.evals[-1]), flush=True)
        else:
            continue
        break
    if ema is not None:
        log.loss = float(ema.item())


def save_trained(model: Any, out: Path, shard_mib: float) -> list[str]:
    """The weights that trained (all but the frozen word embeddings), fp16, in shards."""
    from safetensors.torch import save_file

    out.mkdir(parents=True, exist_ok=True)
    frozen = {id(model.get_input_embeddings().weight)}
    limit = int(shard_mib * (1 << 20))
    shards: list[dict[str, torch.Tensor]] = [{}]
    size = 0
    for name, tensor in model.state_dict().items():
        if id(tensor) in frozen or name.endswith("word_embeddings.weight"):
            continue
        half = tensor.detach().to("cpu", torch.float16).contiguous()
        if shards[-1] and size + half.numel() * 2 > limit:
            shards.append({})
            size = 0
        shards[-1][name] = half
        size += half.numel() * 2
    names = [f"trained-{i:02d}.safetensors" for i in range(len(shards))]
    for name, shard in zip(names, shards, strict=True):
        save_file(shard, str(out / name))
    return names


def merge(base: Path, trained: Path, out: Path) -> list[str]:
    """A full model directory at ``out``: ``base`` (config, tokenizer, frozen word
    embeddings) with the weights in ``trained``'s shards; fp16 on disk, as shipped.
    Returns the names of the tensors replaced."""
    from safetensors.torch import load_file
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    model = AutoModelForSequenceClassification.from_pretrained(str(base)).float()
    state = model.state_dict()
    replaced: list[str] = []
    for shard in sorted(trained.glob("trained-*.safetensors")):
        for name, tensor in load_file(str(shard)).items():
            if name not in state or state[name].shape != tensor.shape:
                raise ValueError(f"{shard.name}: {name} is not a weight of {base}")
            state[name].copy_(tensor.float())
            replaced.append(name)
    out.mkdir(parents=True, exist_ok=True)
    model.half().save_pretrained(str(out), safe_serialization=True)
    AutoTokenizer.from_pretrained(str(base)).save_pretrained(str(out))
    calibration = base / "calibration.json"
    if calibration.is_file():
        shutil.copy(calibration, out / "calibration.json")
    return replaced


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--pack", type=Path, required=True)
    parser.add_argument("--model", type=Path, required=True, help="checkpoint to start from")
    parser.add_argument("--out", type=Path, required=True)
    for name, kind in (
        ("device", str), ("epochs", float), ("batch-size", int), ("lr", float),
        ("max-length", int), ("time-budget-s", float), ("max-steps", int), ("seed", int),
        ("shard-mib", float), ("val-pairs", int),
    ):  # fmt: skip
        default = Config.__dataclass_fields__[name.replace("-", "_")].default
        parser.add_argument(f"--{name}", type=kind, default=default)
    args = vars(parser.parse_args(argv))
    report = train(Config(**args))
    print(json.dumps({k: v for k, v in report.items() if k != "curve"}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
