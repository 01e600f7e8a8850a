"""The verifier's public surface, label mapping, errors and helpers (no model run)."""

from __future__ import annotations

import itertools
import math
import random
from pathlib import Path

import pytest

from assay.errors import InvalidPair, ModelConfigError, ModelLoadError, RunError, UsageError
from assay.training._evaluate import balanced_accuracy, best_threshold, roc_auc
from assay.verifier import (
    MODEL_ENV,
    Calibration,
    InMemoryEntailmentCache,
    Verifier,
    cache_key,
    coverage,
    label_order,
)
from assay.verifier._calibration import coverage_penalty, fit_logistic
from assay.verifier._text import (
    evidence_units,
    focused_premises,
    missing_numbers,
    premise_windows,
    split_claim,
    split_clauses,
    split_sentences,
    word_stems,
)


def test_label_order_maps_names_in_model_order() -> None:
    assert label_order({0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"}) == (
        "contradiction",
        "neutral",
        "entailment",
    )
    assert label_order({0: "entailment", 1: "not_entailment"}) == ("entailment", "neutral")


@pytest.mark.parametrize("id2label", [{0: "LABEL_0", 1: "LABEL_1"}, {0: "neutral"}])
def test_label_order_refuses_unmappable_labels(id2label: dict[int, str]) -> None:
    with pytest.raises(ModelConfigError):
        label_order(id2label)
    assert issubclass(ModelConfigError, UsageError)


def test_missing_model_is_a_run_error(tmp_path: Path) -> None:
    with pytest.raises(ModelLoadError) as info:
        Verifier.from_pretrained(tmp_path / "absent")
    assert isinstance(info.value, RunError)


def test_default_honours_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(MODEL_ENV, str(tmp_path / "elsewhere"))
    with pytest.raises(ModelLoadError, match="elsewhere"):
        Verifier.default()


def test_default_can_load_the_int8_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_NLI_QUANTIZE", "1")
    int8 = Verifier.default()
    assert int8.model_id.endswith("+int8")
    result = int8.check("The meeting is on Tuesday at 3 pm.", "The meeting is on Tuesday.")
    assert result.supported
    monkeypatch.delenv("ASSAY_NLI_QUANTIZE")
    assert not Verifier.default().model_id.endswith("+int8")


def test_invalid_pairs_are_refused(verifier: Verifier) -> None:
    with pytest.raises(InvalidPair):
        verifier.check("some evidence", "   ")


def test_sentences_keep_offsets() -> None:
    text = "Dr. Smith met J. Doe in the U.S. on Monday. Revenue was 3.5 million!\nNext line"
    spans = split_sentences(text)
    assert [s.text for s in spans] == [
        "Dr. Smith met J. Doe in the U.S. on Monday.",
        "Revenue was 3.5 million!",
        "Next line",
    ]
    assert all(text[s.start : s.end] == s.text for s in spans)


def test_windows_overlap_by_one_sentence() -> None:
    text = " ".join(f"Sentence number {i} has five words." for i in range(12))
    windows = premise_windows(text, window_words=18)
    assert len(windows) > 1
    for left, right in itertools.pairwise(windows):
        assert right.start < left.end
    assert windows[0].start == 0 and windows[-1].end == len(text)
    assert premise_windows("Short text.")[0].text == "Short text."


def test_claims_split_into_sentences() -> None:
    assert split_claim("It rained. The match was cancelled.") == [
        "It rained.",
        "The match was cancelled.",
    ]


@pytest.mark.parametrize(
    ("sentence", "clauses"),
    [
        (
            "The spare key is at reception, but the van's tank is nearly empty.",
            ["The spare key is at reception", "the van's tank is nearly empty."],
        ),
        (
            "Refunds take five days; exchanges are made on the spot.",
            ["Refunds take five days", "exchanges are made on the spot."],
        ),
        (
            "The audit found 3 open findings, 2 fewer than last year, and none of them is high.",
            ["The audit found 3 open findings, 2 fewer than last year", "none of them is high."],
        ),
        (
            "The pump was replaced — the old one had seized — and tested at 4 bar.",
            ["The pump was replaced", "the old one had seized", "tested at 4 bar."],
        ),
        # The "still" of a concession goes with its conjunction; any other stays.
        (
            "Two pumps failed their test, but the line still started at 06:00.",
            ["Two pumps failed their test", "the line started at 06:00."],
        ),
        (
            "The invoice was paid, and the claim is still under review.",
            ["The invoice was paid", "the claim is still under review."],
        ),
        # A list is no clause, nor is a piece of one or two words.
        ("The kit holds a charger, two spare batteries, and a carry case.", []),
        ("Red, green, and blue are in stock.", []),
        ("Delivery takes 3 days — sometimes more.", []),
        # "while" dates one clause by the other; cut apart they would not say so.
        ("The loss happened on 3 May, while the policy was still in force.", []),
        ("The invoice was paid on time.", []),
    ],
)
def test_sentences_split_into_clauses(sentence: str, clauses: list[str]) -> None:
    assert split_clauses(sentence) == clauses


def test_clipped_words_meet_the_words_they_clip() -> None:
    assert word_stems("exam lab docs config") == word_stems(
        "examination laboratory documents configuration"
    )
    assert (
        coverage("The course has no written final exam.", "There is no written final examination.")
        == 0.8
    )


def test_missing_numbers() -> None:
    assert missing_numbers("Sales were 1,200 units in 2021.", "In 2021 we sold 1200 units.") == []
    assert missing_numbers("Sales were 1,500 units.", "We sold 1200 units.") == ["1500"]


def test_in_memory_cache_round_trip() -> None:
    cache = InMemoryEntailmentCache()
    key = cache_key("m", "premise", "hypothesis")
    assert cache.get(key) is None
    cache.put(key, (1.0, 2.0, 3.0))
    assert cache.get(key) == (1.0, 2.0, 3.0)
    assert key.premise_sha256 != key.hypothesis_sha256


def test_calibration_round_trip(tmp_path: Path) -> None:
    calibration = Calibration(a=2.0, b=-1.0, c=1.5, threshold=0.4, fitted_on=["x"])
    calibration.save(tmp_path / "calibration.json")
    assert Calibration.load(tmp_path / "calibration.json") == calibration
    assert Calibration.load(tmp_path / "absent.json") == Calibration()


def test_logistic_fit_recovers_known_weights() -> None:
    rng = random.Random(3)
    rows = [(rng.uniform(-4, 4), rng.uniform(-3, 0)) for _ in range(4000)]
    labels = [int(rng.random() < 1 / (1 + math.exp(-(1.5 * x + 2.0 * z + 0.5)))) for x, z in rows]
    (a, c), b = fit_logistic(rows, labels)
    assert abs(a - 1.5) < 0.2 and abs(c - 2.0) < 0.3 and abs(b - 0.5) < 0.3


def test_coverage_only_ever_lowers_the_score() -> None:
    calibration = Calibration(a=1.0, b=0.0, c=2.0)
    assert coverage_penalty(1.0) == 0.0
    assert calibration.score(1.0, coverage=1.0) == calibration.score(1.0)
    scores = [calibration.score(1.0, coverage=k / 10) for k in range(11)]
    assert scores == sorted(scores) and scores[0] < 0.1 < 0.7 < scores[-1]


def test_coverage_counts_content_words_the_document_writes() -> None:
    document = "The supplier invoiced 40 hours of partner time in March."
    assert coverage("The supplier invoiced partner time.", document) == 1.0
    assert coverage("The supplier invoices partners.", document) == 1.0  # stems meet
    assert coverage("The auditor approved partner time.", document) == 0.5
    assert coverage("It is.", document) == 1.0  # nothing to cover


def test_focused_premises_pick_the_sentences_that_share_the_claim_words() -> None:
    document = (
        "The firm was founded in Leeds. It moved to York in 1990. "
        "Its founder, Ann Reid, retired in 2001. The York office employs 40 people."
    )
    premises = focused_premises(document, "Ann Reid founded the York office.", focus=3)
    assert premises[0].text == "Its founder, Ann Reid, retired in 2001."
    assert premises[1].text == (
        "Its founder, Ann Reid, retired in 2001. The York office employs 40 people."
    )
    assert len(premises) == 3
    # Consecutive sentences: the span covers them all, in document order.
    start, end = premises[1].span
    assert document[start:end] == premises[1].text
    # The third premise joins the first sentence to the last two: its span is the
    # sentence that shares most words, not everything between them.
    assert premises[2].text.startswith("The firm was founded in Leeds.")
    start, end = premises[2].span
    assert document[start:end] == "Its founder, Ann Reid, retired in 2001."
    assert [p.text for p in focused_premises("One fact.", "One fact.")] == ["One fact."]


def test_long_sentences_are_cut_into_units() -> None:
    line = " ".join(f"w{i}" for i in range(130))
    units = evidence_units(line, unit_words=60)
    assert [len(u.text.split()) for u in units] == [60, 60, 10]
    assert all(line[u.start : u.end] == u.text for u in units)


def test_metrics() -> None:
    assert roc_auc([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1]) == 0.75
    assert roc_auc([0.5, 0.5], [0, 1]) == 0.5
    scores, labels = [0.1, 0.2, 0.7, 0.9], [0, 0, 1, 1]
    threshold = best_threshold(scores, labels)
    assert balanced_accuracy(scores, labels, threshold) == 1.0


@pytest.mark.parametrize(
    ("premise", "claim", "otherwise"),
    [
        # An amendment gives the cap otherwise: it may overturn cited support.
        (
            "Senior associates are capped at EUR 420 per hour.",
            "Senior associates are capped at EUR 380 per hour.",
            True,
        ),
        ("The hearing moved to 3 May 2025.", "The hearing is on 2025-04-02.", True),
        # A time entry that leaves the rate out gives nothing otherwise.
        (
            "Line 13: associate, 4 entries, 8.0 h in total, document review.",
            "Line 13 bills 8.0 h at EUR 260/h for an associate.",
            False,
        ),
        # Another line's rate is about another line, not this one's rate otherwise
        # (and "3" is not found inside "310").
        (
            "Invoice line 2: senior associate, 2.5 h at EUR 309/h.",
            "Line 1 bills 2.5 h at EUR 308/h for a senior associate.",
            False,
        ),
        (
            "Invoice line 5: senior associate, 2.5 h at EUR 312/h.",
            "Line 3 bills 2.5 h at EUR 310/h for a senior associate.",
            False,
        ),
        (
            "Invoice line 3: senior associate, 2.5 h at EUR 312/h.",
            "Line 3 bills 2.5 h at EUR 310/h for a senior associate.",
            True,
        ),
        # Another kind of value (a count, not an amount) is not the same slot.
        ("Line 13 has 4 entries.", "Line 13 bills EUR 260/h.", False),
        (
            "Senior associates are capped at EUR 380 per hour.",
            "They are capped at EUR 380 per hour.",
            False,
        ),
    ],
)
def test_a_premise_gives_a_value_otherwise_only_in_the_same_kind(
    premise: str, claim: str, otherwise: bool
) -> None:
    from assay.verifier._deterministic import states_another_value

    assert states_another_value(premise, claim) is otherwise
