"""The NLI cross-encoder behind :class:`Verifier`.

A check is four steps. Split the claim into sentences. For each sentence, build a few
short premises from the document units (sentences) that share most content words
with it: the best unit, the best two, the best three, each in document order. Score
every (premise, sentence) pair with the cross-encoder; a sentence is as supported as
its best premise (max), a claim as its weakest sentence (min: one unsupported
sentence makes the whole claim unsupported). A sentence that joins clauses ("X, but
Y"; "X; Y") is also read clause by clause, and its weakest clause decides where it
reads better than the whole or is read as contradicted
(:meth:`Verifier._sentence_reading`). Finally the calibration combines that
log-odds with the claim's word coverage of the document into one probability.

Focused premises, rather than long windows of the document, are what a small model
reads well: the supporting sentence is not diluted by its neighbours, and a check
against a long document costs three short forward passes per claim sentence.

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

from assay.contract import NLI_LABELS as LABELS
from assay.contract import NLILabel as Label
from assay.errors import InvalidPair, ModelConfigError, ModelLoadError
from assay.verifier._cache import (
    CacheKey,
    EntailmentCache,
    cache_key,
    lookup_many,
    store_many,
)
from assay.verifier._calibration import Calibration, Support, entailment_log_odds
from assay.verifier._records import Entailment
from assay.verifier._text import (
    DEFAULT_FOCUS,
    DEFAULT_UNIT_WORDS,
    Premise,
    coverage,
    focused_premises,
    missing_numbers,
    split_claim,
    split_clauses,
)

#: Environment variable naming a replacement model (hub id or local path).
MODEL_ENV = "ASSAY_NLI_MODEL"
#: Environment variable that turns on dynamic int8 quantisation of the default model.
QUANTIZE_ENV = "ASSAY_NLI_QUANTIZE"
DEFAULT_MODEL_DIR = Path(__file__).parent / "model"
#: Entailment-logit penalty for a premise missing one of the claim's numbers.
NUMBER_PENALTY = 4.0
_LOADED: dict[tuple[str, int | None, bool], Verifier] = {}


@dataclass(frozen=True, kw_only=True)
class _Job:
    pair: int
    sentence: int
    clause: int | None  # None: the whole sentence
    premise: Premise
    hypothesis: str


#: One reading of a claim sentence or clause: its best premise's entailment
#: log-odds, that premise's job and its (penalised) logits.
_Reading = tuple[float, "_Job", tuple[float, ...]]


@dataclass(frozen=True, kw_only=True)
class _Decision:
    """What decided one pair: its support inputs and the weakest sentence's best premise."""

    support: Support
    job: _Job
    logits: tuple[float, ...]


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
        focus: int = DEFAULT_FOCUS,
        unit_words: int = DEFAULT_UNIT_WORDS,
    ) -> None:
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.model_id = model_id
        self.labels = label_order({int(k): v for k, v in model.config.id2label.items()})
        self.calibration = calibration or Calibration()
        self.max_length = max_length
        self.batch_size = batch_size
        self.focus = focus
        self.unit_words = unit_words
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
                warnings.filterwarnings("ignore", ".*quantiz.*deprecated", UserWarning)
                model = torch.ao.quantization.quantize_dynamic(  # pyright: ignore[reportDeprecated]
                    model, {torch.nn.Linear}, dtype=torch.qint8
                )
        calibration = Calibration.load(Path(source) / "calibration.json")
        suffix = "+int8" if quantize else ""
        return cls(model, tokenizer, model_id=_model_id(source) + suffix, calibration=calibration)

    @classmethod
    def default(cls, *, threads: int | None = None) -> Verifier:
        """The shipped model, or the one ``ASSAY_NLI_MODEL`` names; loaded once per process.

        ``ASSAY_NLI_QUANTIZE=1`` loads it with dynamic int8 quantisation: about 1.6x the
        short-claim throughput, ROC AUC within 0.01 on the dev samples measured; fp32
        stays the default because the calibration was fitted on fp32 outputs.
        """
        source = os.environ.get(MODEL_ENV) or str(DEFAULT_MODEL_DIR)
        quantize = os.environ.get(QUANTIZE_ENV, "").strip().lower() in ("1", "true", "yes")
        key = (source, threads, quantize)
        if key not in _LOADED:
            _LOADED[key] = cls.from_pretrained(source, threads=threads, quantize=quantize)
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
        return [self._result(decided) for decided in self._decide(list(pairs), cache)]

    def support_features(
        self, pairs: Iterable[tuple[str, str]], *, cache: EntailmentCache | None = None
    ) -> list[Support]:
        """Per pair, the uncalibrated inputs of the decision: the model's log-odds, the
        claim's word coverage of the document (what the calibration is fitted on) and
        whether the model's top label vetoes support."""
        return [d.support for d in self._decide(list(pairs), cache)]

    def _decide(
        self, pairs: list[tuple[str, str]], cache: EntailmentCache | None
    ) -> list[_Decision]:
        jobs = [job for i, pair in enumerate(pairs) for job in self._jobs(i, *pair)]
        logits = self.score([(j.premise.text, j.hypothesis) for j in jobs], cache=cache)
        best: dict[tuple[int, int, int | None], _Reading] = {}
        entail = self.labels.index("entailment")
        for job, raw in zip(jobs, logits, strict=True):
            row = self._number_penalty(job, raw, entail)
            odds = entailment_log_odds(row, entail)
            key = (job.pair, job.sentence, job.clause)
            if key not in best or odds > best[key][0]:
                best[key] = (odds, job, row)
        readings: dict[tuple[int, int], list[_Reading]] = {}
        for (pair, sentence, _), value in best.items():
            readings.setdefault((pair, sentence), []).append(value)
        per_pair: dict[int, list[_Reading]] = {}
        for (pair, _), sentence_readings in readings.items():
            per_pair.setdefault(pair, []).append(self._sentence_reading(sentence_readings))
        decisions: list[_Decision] = []
        for i, (document, claim) in enumerate(pairs):
            odds, job, row = min(per_pair[i], key=lambda v: v[0])
            top = self.labels[max(range(len(row)), key=row.__getitem__)]
            support = Support(odds, coverage(claim, document), top == "contradiction")
            decisions.append(_Decision(support=support, job=job, logits=row))
        return decisions

    def _sentence_reading(self, readings: Sequence[_Reading]) -> _Reading:
        """How supported one claim sentence is, from its readings: the whole sentence
        first, then each of its clauses (:func:`split_clauses`).

        A sentence joins what it says, and its weakest clause is as far as the
        evidence carries it: the weakest clause decides where it reads better than
        the whole sentence (a small model reads "X is on the shelf, but Y is at its
        limit" poorly, and two facts from two entries never sit in one premise),
        and where the model reads it as contradicted ("Dev Patel opened it, but
        Marta restarted the worker", with the roles swapped). Otherwise the whole
        sentence decides: a clause cut out of it can lose what it refers to ("the
        third is in CrashLoopBackOff").
        """
        whole, *clauses = readings
        if not clauses:
            return whole
        weakest = min(clauses, key=lambda reading: reading[0])
        odds, _, row = weakest
        contradicted = self.labels[max(range(len(row)), key=row.__getitem__)] == "contradiction"
        return weakest if contradicted or odds > whole[0] else whole

    def _number_penalty(self, job: _Job, row: tuple[float, ...], entail: int) -> tuple[float, ...]:
        """Lower the entailment logit of a premise that lacks a number the claim states.

        A small cross-encoder is weak at telling 12 from 45; a number that the premise
        never writes is a cheap, deterministic sign that it does not support the claim.
        """
        if not missing_numbers(job.hypothesis, job.premise.text):
            return row
        return tuple(v - NUMBER_PENALTY if i == entail else v for i, v in enumerate(row))

    def _jobs(self, index: int, document: str, claim: str) -> list[_Job]:
        if not isinstance(document, str) or not isinstance(claim, str):
            raise InvalidPair("document and claim must both be str")
        if not claim.strip():
            raise InvalidPair("the claim is empty")
        # Per sentence: the whole sentence (clause None) first, then its clauses.
        return [
            _Job(pair=index, sentence=s, clause=c, premise=premise, hypothesis=part)
            for s, sentence in enumerate(split_claim(claim))
            for c, part in [(None, sentence), *enumerate(split_clauses(sentence))]
            for premise in focused_premises(
                document, part, focus=self.focus, unit_words=self.unit_words
            )
        ]

    def _result(self, decision: _Decision) -> Entailment:
        """The record for one pair: the calibrated score and the decision.

        ``contradiction`` when the model's own top label for the deciding premise is
        contradiction, whatever the score: word overlap never overrides a model that
        reads the evidence as saying the opposite. Otherwise ``entailment`` when the
        score reaches the threshold, ``neutral`` below it.
        """
        import torch

        probs = torch.softmax(torch.tensor(decision.logits), dim=0).tolist()
        by_label = {label: float(p) for label, p in zip(self.labels, probs, strict=True)}
        full = {label: by_label.get(label, 0.0) for label in LABELS}
        support = decision.support
        label: Label
        if support.contradicted:
            label = "contradiction"
        elif self.calibration.supports(support):
            label = "entailment"
        else:
            label = "neutral"
        return Entailment(
            label=label,
            score=self.calibration.score(support.log_odds, support.coverage),
            probs=full,
            evidence_span=decision.job.premise.span,
            model=self.model_id,
        )

    def score(
        self, pairs: Sequence[tuple[str, str]], *, cache: EntailmentCache | None = None
    ) -> list[tuple[float, ...]]:
        """Raw logits for (premise, hypothesis) pairs, in the model's label order."""
        keys = [cache_key(self.model_id, p, h) for p, h in pairs] if cache is not None else []
        out: list[tuple[float, ...] | None] = (
            lookup_many(cache, keys) if cache is not None else [None] * len(pairs)
        )
        todo = sorted(
            (i for i, row in enumerate(out) if row is None),
            key=lambda i: len(pairs[i][0]) + len(pairs[i][1]),
        )
        computed: list[tuple[CacheKey, tuple[float, ...]]] = []
        for start in range(0, len(todo), self.batch_size):
            batch = todo[start : start + self.batch_size]
            rows = self._forward([pairs[i] for i in batch])
            for i, row in zip(batch, rows, strict=True):
                out[i] = row
                if cache is not None:
                    computed.append((keys[i], row))
        if cache is not None:
            store_many(cache, computed)
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
