"""Readers for the NLI and grounding data under ``shared/data`` (never copied in).

Every reader yields :class:`Pair` records with a label index: 0 entailment,
1 neutral, 2 contradiction, or 3 for "not entailment" from two-way sets (trained with
a loss on p(entailment) alone, so it never forces neutral against contradiction).
Long premises (SummEdits, ConTRoL) are cut to the window that shares most words with
the hypothesis, matching how inference takes the best window of a long document.
"""

from __future__ import annotations

import ast
import csv
import io
import json
import random
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from assay.verifier import best_window, join_sentences

ENTAIL, NEUTRAL, CONTRA, NOT_ENTAIL = 0, 1, 2, 3
_NAMES = {
    "entailment": ENTAIL,
    "e": ENTAIL,
    "supports": ENTAIL,
    "supported": ENTAIL,
    "support": ENTAIL,
    "neutral": NEUTRAL,
    "n": NEUTRAL,
    "not enough info": NEUTRAL,
    "not_enough_info": NEUTRAL,
    "notenoughinfo": NEUTRAL,
    "contradiction": CONTRA,
    "c": CONTRA,
    "refutes": CONTRA,
    "refuted": CONTRA,
    "refute": CONTRA,
    "not_entailment": NOT_ENTAIL,
}
#: SummEdits domains kept out of training: the long-document dev set.
HELD_OUT_SUMMEDITS = ("news", "podcast")
TRAIN_SUMMEDITS = ("qmsumm", "sales_call", "sales_email", "samsum", "scitldr", "ectsum")
#: SummEdits domains whose source documents carry no restriction beyond the set's
#: Apache-2.0: ``samsum`` edits SAMSum dialogues (CC BY-NC-ND 4.0) and ``ectsum``
#: earnings-call transcripts of unclear terms, so the commercial mix leaves them out.
COMMERCIAL_SUMMEDITS = ("qmsumm", "sales_call", "sales_email", "scitldr")


@dataclass(frozen=True, kw_only=True)
class Pair:
    premise: str
    hypothesis: str
    label: int
    source: str


def _label(raw: str) -> int | None:
    return _NAMES.get(raw.strip().lower())


def _csv_field_limit() -> None:
    csv.field_size_limit(1 << 30)


def snli(root: Path, split: str) -> Iterator[Pair]:
    nli = root / "nli"
    s1 = (nli / f"snli_s1.{split}").read_text(encoding="utf-8").splitlines()
    s2 = (nli / f"snli_s2.{split}").read_text(encoding="utf-8").splitlines()
    labels = (nli / f"snli_labels.{split}").read_text(encoding="utf-8").splitlines()
    for p, h, y in zip(s1, s2, labels, strict=True):
        if (label := _label(y)) is not None:
            yield Pair(premise=p, hypothesis=h, label=label, source=f"snli_{split}")


def mnli(root: Path, part: str) -> Iterator[Pair]:
    """MNLI dev-matched; ``part`` "train" is 4 rows in 5, "test" the 5th (by row index)."""
    with (root / "nli" / "mnli_dev_matched.tsv").open(encoding="utf-8") as fh:
        for i, row in enumerate(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)):
            if (i % 5 == 0) != (part == "test"):
                continue
            if (label := _label(row["gold_label"])) is not None:
                yield Pair(
                    premise=row["premise"],
                    hypothesis=row["hypothesis"],
                    label=label,
                    source=f"mnli_{part}",
                )


def anli(root: Path, split: str) -> Iterator[Pair]:
    for r in (1, 2, 3):
        for line in (root / "nli" / f"anli_R{r}_{split}.jsonl").open(encoding="utf-8"):
            row = json.loads(line)
            if (label := _label(row["label"])) is not None:
                yield Pair(
                    premise=row["context"],
                    hypothesis=row["hypothesis"],
                    label=label,
                    source=f"anli_r{r}_{split}",
                )


def sick(root: Path, sets: tuple[str, ...]) -> Iterator[Pair]:
    with (root / "nli" / "SICK.txt").open(encoding="utf-8") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            label = _label(row["entailment_label"])
            if row["SemEval_set"] in sets and label is not None:
                yield Pair(
                    premise=row["sentence_A"],
                    hypothesis=row["sentence_B"],
                    label=label,
                    source="sick_" + row["SemEval_set"].lower(),
                )


def fever(root: Path) -> Iterator[Pair]:
    _csv_field_limit()
    for shard in sorted((root / "nli-extra" / "fever_train_evidence").glob("*.csv")):
        with shard.open(encoding="utf-8") as fh:
            for row in csv.DictReader(fh):
                label = _label(row["label"])
                if label not in (ENTAIL, CONTRA) or not row["evidence"].startswith("["):
                    continue
                sentences = ast.literal_eval(row["evidence"])
                premise = _detok(join_sentences(sentences))
                if premise:
                    yield Pair(
                        premise=premise, hypothesis=row["claim"], label=label, source="fever"
                    )


def _detok(text: str) -> str:
    """Undo FEVER's PTB escapes so premises look like ordinary text."""
    for a, b in (
        ("-LRB-", "("),
        ("-RRB-", ")"),
        ("-LSB-", "["),
        ("-RSB-", "]"),
        ("-COLON-", ":"),
        (" ,", ","),
        (" .", "."),
        ("( ", "("),
        (" )", ")"),
        (" 's", "'s"),
        (" ;", ";"),
        ("`` ", '"'),
        (" ''", '"'),
    ):
        text = text.replace(a, b)
    return text


def vitaminc(root: Path) -> Iterator[Pair]:
    with zipfile.ZipFile(root / "nli-extra" / "vitaminc" / "vitaminc_real.zip") as zf:
        raw = zf.read("vitaminc_real/test.jsonl").decode("utf-8")
    for line in io.StringIO(raw):
        row = json.loads(line)
        if (label := _label(row["label"])) is not None:
            yield Pair(
                premise=row["evidence"], hypothesis=row["claim"], label=label, source="vitaminc"
            )


def summedits(root: Path, domains: tuple[str, ...], *, window: bool = True) -> Iterator[Pair]:
    """SummEdits doc/summary pairs (1 consistent -> entailment, 0 -> not entailment)."""
    for domain in domains:
        rows = json.loads(
            (root / "nli-extra" / "summedits" / f"summedits_{domain}.json").read_text(
                encoding="utf-8"
            )
        )
        for row in rows:
            doc = row["doc"]
            if window:
                doc = best_window(doc, row["summary"]).text
            label = ENTAIL if str(row["label"]) == "1" else NOT_ENTAIL
            yield Pair(
                premise=doc, hypothesis=row["summary"], label=label, source=f"summedits_{domain}"
            )


def dnli(root: Path, split: str = "train") -> Iterator[Pair]:
    path = root / "nli-extra" / "dialogue_nli_clasp" / f"{split}_5_data.csv"
    with path.open(encoding="utf-8") as fh:
        for row in csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_NONE):
            if len(row) >= 3 and (label := _label(row[2])) is not None:
                yield Pair(premise=row[0].strip(), hypothesis=row[1], label=label, source="dnli")


def fm2(root: Path) -> Iterator[Pair]:
    for line in (root / "nli-extra" / "fm2" / "dev.jsonl").open(encoding="utf-8"):
        row = json.loads(line)
        premise = join_sentences([e["text"] for e in row["gold_evidence"]])
        if premise and (label := _label(row["label"])) is not None:
            yield Pair(
                premise=premise,
                hypothesis=row["text"] if "text" in row else row["claim"],
                label=label,
                source="fm2",
            )


def covidfact(root: Path) -> Iterator[Pair]:
    for line in (root / "nli-extra" / "covidfact" / "COVIDFACT_dataset.jsonl").open():
        row = json.loads(line)
        if (label := _label(row["label"])) is not None:
            yield Pair(
                premise=join_sentences(row["evidence"]),
                hypothesis=row["claim"],
                label=label,
                source="covidfact",
            )


def healthver(root: Path) -> Iterator[Pair]:
    with (root / "nli-extra" / "healthver" / "healthver_dev.csv").open(encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            if (label := _label(row["label"])) is not None:
                yield Pair(
                    premise=row["evidence"],
                    hypothesis=row["claim"],
                    label=label,
                    source="healthver",
                )


def scifact(root: Path) -> Iterator[Pair]:
    with (root / "nli-extra" / "scifact_rte" / "train.tsv").open(encoding="utf-8") as fh:
        for row in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE):
            if (label := _label(row["entailment"])) is not None:
                yield Pair(
                    premise=row["sentence1"],
                    hypothesis=row["sentence2"],
                    label=label,
                    source="scifact",
                )


def climate_fever(root: Path) -> Iterator[Pair]:
    for line in (root / "nli-extra" / "climate_fever" / "climate-fever.jsonl").open():
        row = json.loads(line)
        for ev in row["evidences"]:
            if (label := _label(ev["evidence_label"])) is not None:
                yield Pair(
                    premise=ev["evidence"],
                    hypothesis=row["claim"],
                    label=label,
                    source="climate_fever",
                )


def control(root: Path) -> Iterator[Pair]:
    for line in (root / "nli-extra" / "control_nli" / "dev.jsonl").open(encoding="utf-8"):
        row = json.loads(line)
        if (label := _label(str(row.get("label", "")))) is not None:
            premise = best_window(row["premise"], row["hypothesis"]).text
            yield Pair(premise=premise, hypothesis=row["hypothesis"], label=label, source="control")


def cad_nli(root: Path) -> Iterator[Pair]:
    """Counterfactually revised SNLI train pairs (minimal edits that flip the label)."""
    path = root / "nli-extra" / "cad_nli" / "all_combined_train.tsv"
    with path.open(encoding="utf-8") as fh:
        for row in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE):
            if (label := _label(row["gold_label"])) is not None:
                yield Pair(
                    premise=row["sentence1"], hypothesis=row["sentence2"], label=label, source="cad"
                )


def med(root: Path) -> Iterator[Pair]:
    """MED monotonicity pairs ("some"/"all"/"no" scope); its "neutral" also covers
    contradiction, so it is read as two-way "not entailment"."""
    with (root / "nli-extra" / "med" / "MED.tsv").open(encoding="utf-8") as fh:
        for row in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE):
            raw = row["gold_label"].strip().lower()
            label = ENTAIL if raw == "entailment" else NOT_ENTAIL if raw == "neutral" else None
            if label is not None and row["sentence1"] and row["sentence2"]:
                yield Pair(
                    premise=row["sentence1"], hypothesis=row["sentence2"], label=label, source="med"
                )


def sample(pairs: Iterator[Pair], n: int, rng: random.Random) -> list[Pair]:
    """Up to ``n`` pairs drawn uniformly (all of them when there are fewer)."""
    items = list(pairs)
    rng.shuffle(items)
    return items[:n]


def conjunctions(pool: list[Pair], n: int, rng: random.Random) -> list[Pair]:
    """Two-fact hypotheses built from pairs of supported FEVER claims.

    Half keep both evidence passages (entailment); half keep only the first, so the
    second fact is unsupported (not entailment). They teach that every fact of a claim
    needs support, the failure mode of multi-fact claims against real citations.
    """
    supported = [p for p in pool if p.label == ENTAIL]
    out: list[Pair] = []
    for i in range(n):
        a, b = rng.sample(supported, 2)
        hypothesis = f"{a.hypothesis.rstrip(' .')}; {b.hypothesis.rstrip(' .')}."
        if i % 2 == 0:
            parts = [a.premise, b.premise]
            rng.shuffle(parts)
            out.append(
                Pair(
                    premise=" ".join(parts),
                    hypothesis=hypothesis,
                    label=ENTAIL,
                    source="fever_conj",
                )
            )
        else:
            out.append(
                Pair(
                    premise=a.premise, hypothesis=hypothesis, label=NOT_ENTAIL, source="fever_conj"
                )
            )
    return out
