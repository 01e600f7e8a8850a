"""The shipped model on obvious pairs, long documents and multi-sentence claims."""

from __future__ import annotations

import copy

import pytest
import torch

from assay.verifier import InMemoryEntailmentCache, Verifier

FILLER = [
    "The river floods every spring after the snow melts in the mountains.",
    "Local farmers grow barley, oats and potatoes on the terraces above the valley.",
    "A narrow-gauge railway was built in the late nineteenth century to carry timber.",
    "The village school has two classrooms and a small library.",
    "Tourists mostly arrive in summer to hike the ridge trails.",
    "The old mill was converted into a museum of rural life.",
    "Winters are long, and the pass is often closed by snow until April.",
    "A weekly market is held in the square on Saturdays.",
]
KEY = "The bridge over the river was completed in 1931 and is 240 metres long."


def test_entailment(verifier: Verifier) -> None:
    result = verifier.check(
        "The quarterly meeting is on Tuesday at 3 pm in room 204, chaired by Ana Silva.",
        "The meeting is on Tuesday.",
    )
    assert result.label == "entailment" and result.supported
    assert result.score >= verifier.threshold
    assert result.probs["entailment"] == max(result.probs.values())
    assert sum(result.probs.values()) == pytest.approx(1.0, abs=1e-5)


def test_negation_contradicts(verifier: Verifier) -> None:
    result = verifier.check(
        "The deployment to production was rolled back on Friday.",
        "The deployment to production was not rolled back on Friday.",
    )
    assert result.label == "contradiction" and not result.supported
    assert result.probs["contradiction"] == max(result.probs.values())
    [support] = verifier.support_features(
        [("The deployment was rolled back on Friday.", "The deployment was not rolled back.")]
    )
    assert support.contradicted and support.log_odds < 0


def test_wrong_number_is_not_supported(verifier: Verifier) -> None:
    document = "The company reported revenue of 12 million dollars in 2023."
    right = verifier.check(document, "The company reported revenue of 12 million dollars.")
    wrong = verifier.check(document, "The company reported revenue of 45 million dollars.")
    assert right.supported and not wrong.supported
    assert wrong.score < verifier.threshold <= right.score


def test_unrelated_claim_is_not_supported(verifier: Verifier) -> None:
    result = verifier.check("A man is playing a guitar on a stage.", "The man is a famous surgeon.")
    assert not result.supported
    assert result.score < verifier.threshold


def test_long_document_finds_the_supporting_sentence(verifier: Verifier) -> None:
    sentences = FILLER * 6
    sentences.insert(25, KEY)
    document = " ".join(sentences)
    claim = "The bridge over the river was completed in 1931."
    result = verifier.check(document, claim)
    start, end = result.evidence_span
    assert document[start:end].count(KEY) == 1
    assert end - start < len(document) / 3
    assert result.score > verifier.check(" ".join(FILLER * 6), claim).score


def test_weakest_sentence_of_a_claim_decides(verifier: Verifier) -> None:
    document = f"{FILLER[0]} {KEY}"
    supported = "The bridge over the river was completed in 1931."
    both = verifier.check(document, f"{supported} The bridge was designed by Gustave Eiffel.")
    alone = verifier.check(document, supported)
    assert alone.supported and not both.supported
    assert both.score < alone.score


CHANGE_LOG = (
    "Ticket OPS-3391 was opened by Marta Quiroga on Monday. The on-call engineer, Dev "
    "Patel, restarted the ingest worker at 14:05. The queue drained within ten minutes."
)


BUILD_LOG = (
    "Build 812 compiled in 4 minutes. The integration stage failed on test_refund_flow. "
    "The artefact was not published."
)


@pytest.mark.parametrize(
    ("document", "claim"),
    [
        # The roles swapped between the two clauses.
        (CHANGE_LOG, "Dev Patel opened OPS-3391, but Marta Quiroga restarted the ingest worker."),
        # The first clause true, the second the opposite.
        (BUILD_LOG, "Build 812 compiled, and the integration stage passed."),
    ],
)
def test_a_clause_read_as_contradicted_decides_its_sentence(
    verifier: Verifier, document: str, claim: str
) -> None:
    assert verifier.check(document, claim).label == "contradiction"


def test_a_sentence_of_true_clauses_stays_supported(verifier: Verifier) -> None:
    claim = "Marta Quiroga opened OPS-3391, and Dev Patel restarted the ingest worker at 14:05."
    assert verifier.check(CHANGE_LOG, claim).supported


def test_label_order_is_read_from_config(verifier: Verifier) -> None:
    permutation = [2, 0, 1]
    model = copy.deepcopy(verifier.model)
    head = model.classifier
    with torch.no_grad():
        head.weight.copy_(verifier.model.classifier.weight[permutation])
        head.bias.copy_(verifier.model.classifier.bias[permutation])
    original = verifier.model.config.id2label
    model.config.id2label = {i: original[p] for i, p in enumerate(permutation)}
    permuted = Verifier(
        model, verifier.tokenizer, model_id="permuted", calibration=verifier.calibration
    )
    pair = ("The cat sat on the mat.", "A cat is sitting.")
    a, b = verifier.check(*pair), permuted.check(*pair)
    assert permuted.labels != verifier.labels
    assert a.label == b.label
    assert a.score == pytest.approx(b.score, abs=1e-5)
    assert a.probs == pytest.approx(b.probs, abs=1e-5)


def test_cache_skips_the_model_on_a_repeat(verifier: Verifier) -> None:
    cache = InMemoryEntailmentCache()
    pair = ("Paris is the capital of France.", "France's capital is Paris.")
    first = verifier.check(*pair, cache=cache)
    passes = verifier.forward_passes
    second = verifier.check(*pair, cache=cache)
    assert verifier.forward_passes == passes
    assert second == first
    assert len(cache) == 1


def test_check_many_matches_check(verifier: Verifier) -> None:
    pairs = [
        ("The store opens at 9 am.", "The store opens in the morning."),
        (" ".join(FILLER), "The mill became a museum."),
        ("Rain is expected tomorrow.", "It will be sunny tomorrow."),
    ]
    many = verifier.check_many(pairs)
    assert [r.score for r in many] == pytest.approx(
        [verifier.check(*p).score for p in pairs], abs=1e-4
    )
