"""The verifier's public surface, label mapping, errors and helpers (no model run)."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from assay.errors import RunError, UsageError
from assay.verifier import (
    MODEL_ENV,
    Calibration,
    InMemoryEntailmentCache,
    InvalidPair,
    ModelConfigError,
    ModelLoadError,
    Verifier,
    cache_key,
    label_order,
    missing_numbers,
    premise_windows,
    split_claim,
)
from assay.verifier._calibration import fit_platt
from assay.verifier._evaluate import balanced_accuracy, best_threshold, roc_auc
from assay.verifier._text import split_sentences


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


def test_calibration_round_trip_and_fit(tmp_path: Path) -> None:
    calibration = Calibration(a=2.0, b=-1.0, threshold=0.4, fitted_on=["x"])
    calibration.save(tmp_path / "calibration.json")
    assert Calibration.load(tmp_path / "calibration.json") == calibration
    assert Calibration.load(tmp_path / "absent.json") == Calibration()
    xs = [-3.0, -2.0, -1.0, -0.5, 0.5, 1.0, 2.0, 3.0]
    a, _ = fit_platt(xs, [0, 0, 1, 0, 1, 0, 1, 1])
    assert a > 0


def test_metrics() -> None:
    assert roc_auc([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1]) == 0.75
    assert roc_auc([0.5, 0.5], [0, 1]) == 0.5
    scores, labels = [0.1, 0.2, 0.7, 0.9], [0, 0, 1, 1]
    threshold = best_threshold(scores, labels)
    assert balanced_accuracy(scores, labels, threshold) == 1.0
