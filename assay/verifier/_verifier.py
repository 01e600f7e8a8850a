"""The NLI cross-encoder behind :class:`Verifier`.

A check is three steps: cut the document into overlapping sentence windows, split the
claim into sentences, and score every (window, sentence) pair with the cross-encoder.
A sentence is as supported as its best window (max over windows: evidence may sit
anywhere in a long document); a claim is as supported as its weakest sentence (min
over sentences: one unsupported sentence makes the whole claim unsupported).

torch is imported where a model is loaded or run, not with the package, so that
``import assay`` and the command line stay quick for work that never needs the model.
"""

from __future__ import annotations

import hashlib
import os
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.verifier._cache import EntailmentCache, cache_key
from assay.verifier._calibration import Calibration, entailment_log_odds
from assay.verifier._errors import InvalidPair, ModelConfigError, ModelLoadError
from assay.verifier._records import LABELS, Entailment, Label
from assay.verifier._text import (
    DEFAULT_WINDOW_WORDS,
    Span,
    missing_numbers,
    premise_windows,
    split_claim,
)

#: Environment variable naming a replacement model (hub id or local path).
MODEL_ENV = "ASSAY_NLI_MODEL"
DEFAULT_MODEL_DIR = Path(__file__).parent / "model"
#: Entailment-logit penalty for a window missing one of the claim's numbers.
NUMBER_PENALTY = 4.0
_LOADED: dict[tuple[str, int | None], Verifier] = {}


@dataclass(frozen=True, kw_only=True)
class _Job:
    pair: int
    sentence: int
    window: Span
    hypothesis: str


def label_order(id2label: dict[int, str]) -> tuple[Label, ...]:
    """Map a config's ``id2label`` onto assay's labels, in the model's output order.

    A two-way model (entailment / not_entailment) maps its negative class to neutral.
    """
    order: list[Label] = []
    for index in sorted(id2label):
        name = id2label[index].strip().lower().replace("-", "_").replace(" ", "_")
        if name.startswith(("not_", "non_")) or name == "neutral":
            order.append("neutral")
        elif name.startswith("entail"):
            order.append("entailment")
        elif name.startswith("contradict"):
            order.append("contradiction")
        else:
            raise ModelConfigError(f"cannot map NLI label {id2label[index]!r} (id {index})")
    if "entailment" not in order or len(set(order)) != len(order):
        raise ModelConfigError(f"id2label {id2label!r} needs one entailment label")
    return tuple(order)


def _model_id(source: str) -> str:
    """A stable id: a local model's directory name plus a hash of its weights and config."""
    path = Path(source)
    if not path.is_dir():
        return source
    digest = hashlib.sha256()
    for name in ("config.json", "model.safetensors", "pytorch_model.bin", "calibration.json"):
        file = path / name
        if file.is_file():
            digest.update(file.read_bytes())
    return f"{path.resolve().name}@{digest.hexdigest()[:12]}"


class Verifier:
    """Checks whether a document entails a claim with an NLI sequence classifier."""

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        *,
        model_id: str,
        calibration: Calibration | None = None,
        max_length: int = 256,
        batch_size: int = 32,
        window_words: int = DEFAULT_WINDOW_WORDS,
    ) -> None:
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.model_id = model_id
        self.labels = label_order({int(k): v for k, v in model.config.id2label.items()})
        self.calibration = calibration or Calibration()
        self.max_length = max_length
        self.batch_size = batch_size
        self.window_words = window_words
        #: Number of forward passes run so far (a cache hit runs none).
        self.forward_passes = 0

    @property
    def threshold(self) -> float:
        """Scores at or above this count as supported (chosen on held-out grounding data)."""
        return self.calibration.threshold

    @classmethod
    def from_pretrained(
        cls,
        path_or_id: str | os.PathLike[str],
        *,
        threads: int | None = None,
        quantize: bool = False,
    ) -> Verifier:
        """Load any Hugging Face NLI sequence classifier (local path or hub id).

        ``threads`` sets torch's intra-op threads; ``quantize`` applies dynamic int8
        quantisation to the linear layers (faster on CPU, slightly less accurate).
        """
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        source = os.fspath(path_or_id)
        if threads is not None:
            torch.set_num_threads(threads)
        try:
            tokenizer = AutoTokenizer.from_pretrained(source)
            # fp16 on disk, fp32 in memory: CPU kernels are fastest and exact in fp32.
            model = AutoModelForSequenceClassification.from_pretrained(source).float()
        except (OSError, ValueError) as exc:
            raise ModelLoadError(f"cannot load NLI model {source!r}: {exc}") from exc
        if quantize:
            with warnings.catch_warnings():  # torch marks the eager API deprecated
                warnings.simplefilter("ignore", DeprecationWarning)
                model = torch.ao.quantization.quantize_dynamic(  # pyright: ignore[reportDeprecated]
                    model, {torch.nn.Linear}, dtype=torch.qint8
                )
        calibration = Calibration.load(Path(source) / "calibration.json")
        suffix = "+int8" if quantize else ""
        return cls(model, tokenizer, model_id=_model_id(source) + suffix, calibration=calibration)

    @classmethod
    def default(cls, *, threads: int | None = None) -> Verifier:
        """The shipped model, or the one ``ASSAY_NLI_MODEL`` names; loaded once per process."""
        source = os.environ.get(MODEL_ENV) or str(DEFAULT_MODEL_DIR)
        key = (source, threads)
        if key not in _LOADED:
            _LOADED[key] = cls.from_pretrained(source, threads=threads)
        return _LOADED[key]

    def check(
        self, document: str, claim: str, *, cache: EntailmentCache | None = None
    ) -> Entailment:
        """Whether ``document`` supports ``claim``; see :class:`Entailment`."""
        return self.check_many([(document, claim)], cache=cache)[0]

    def check_many(
        self, pairs: Iterable[tuple[str, str]], *, cache: EntailmentCache | None = None
    ) -> list[Entailment]:
        """Check many (document, claim) pairs in length-bucketed batches."""
        return [self._result(*decided) for decided in self._decide(list(pairs), cache)]

    def log_odds_many(
        self, pairs: Iterable[tuple[str, str]], *, cache: EntailmentCache | None = None
    ) -> list[float]:
        """Uncalibrated log-odds of support per pair (what calibration is fitted on)."""
        return [odds for odds, _, _ in self._decide(list(pairs), cache)]

    def _decide(
        self, pairs: list[tuple[str, str]], cache: EntailmentCache | None
    ) -> list[tuple[float, _Job, tuple[float, ...]]]:
        """Per pair: the weakest claim sentence's best window, with its log-odds and logits."""
        jobs = [job for i, pair in enumerate(pairs) for job in self._jobs(i, *pair)]
        logits = self.score([(j.window.text, j.hypothesis) for j in jobs], cache=cache)
        best: dict[tuple[int, int], tuple[float, _Job, tuple[float, ...]]] = {}
        entail = self.labels.index("entailment")
        for job, raw in zip(jobs, logits, strict=True):
            row = self._number_penalty(job, raw, entail)
            odds = entailment_log_odds(row, entail)
            key = (job.pair, job.sentence)
            if key not in best or odds > best[key][0]:
                best[key] = (odds, job, row)
        per_pair: dict[int, list[tuple[float, _Job, tuple[float, ...]]]] = {}
        for (pair, _), value in best.items():
            per_pair.setdefault(pair, []).append(value)
        return [min(per_pair[i], key=lambda v: v[0]) for i in range(len(pairs))]

    def _number_penalty(self, job: _Job, row: tuple[float, ...], entail: int) -> tuple[float, ...]:
        """Lower the entailment logit of a window that lacks a number the claim states.

        A small cross-encoder is weak at telling 12 from 45; a number that the window
        never writes is a cheap, deterministic sign that it does not support the claim.
        """
        if not missing_numbers(job.hypothesis, job.window.text):
            return row
        return tuple(v - NUMBER_PENALTY if i == entail else v for i, v in enumerate(row))

    def _jobs(self, index: int, document: str, claim: str) -> list[_Job]:
        if not isinstance(document, str) or not isinstance(claim, str):
            raise InvalidPair("document and claim must both be str")
        if not claim.strip():
            raise InvalidPair("the claim is empty")
        windows = premise_windows(document, window_words=self.window_words)
        return [
            _Job(pair=index, sentence=s, window=w, hypothesis=sentence)
            for s, sentence in enumerate(split_claim(claim))
            for w in windows
        ]

    def _result(self, odds: float, job: _Job, row: Sequence[float]) -> Entailment:
        import torch

        scaled = torch.tensor(row) / self.calibration.temperature
        probs = torch.softmax(scaled, dim=0).tolist()
        by_label = {label: float(p) for label, p in zip(self.labels, probs, strict=True)}
        full = {label: by_label.get(label, 0.0) for label in LABELS}
        top = max(self.labels, key=lambda label: by_label[label])
        return Entailment(
            label=top,
            score=self.calibration.score(odds),
            probs=full,
            evidence_span=(job.window.start, job.window.end),
            model=self.model_id,
        )

    def score(
        self, pairs: Sequence[tuple[str, str]], *, cache: EntailmentCache | None = None
    ) -> list[tuple[float, ...]]:
        """Raw logits for (premise, hypothesis) pairs, in the model's label order."""
        out: list[tuple[float, ...] | None] = [None] * len(pairs)
        todo: list[int] = []
        keys = [cache_key(self.model_id, p, h) for p, h in pairs] if cache is not None else []
        for i in range(len(pairs)):
            hit = cache.get(keys[i]) if cache is not None else None
            if hit is None:
                todo.append(i)
            else:
                out[i] = hit
        todo.sort(key=lambda i: len(pairs[i][0]) + len(pairs[i][1]))
        for start in range(0, len(todo), self.batch_size):
            batch = todo[start : start + self.batch_size]
            rows = self._forward([pairs[i] for i in batch])
            for i, row in zip(batch, rows, strict=True):
                out[i] = row
                if cache is not None:
                    cache.put(keys[i], row)
        return [row for row in out if row is not None]

    def _forward(self, pairs: Sequence[tuple[str, str]]) -> list[tuple[float, ...]]:
        import torch

        encoded = self.tokenizer(
            [p for p, _ in pairs],
            [h for _, h in pairs],
            truncation="longest_first",
            max_length=self.max_length,
            padding=True,
            return_tensors="pt",
        )
        with torch.inference_mode():
            logits = self.model(**encoded).logits.float()
        self.forward_passes += 1
        return [tuple(float(v) for v in row) for row in logits.tolist()]
