"""Negation pairs for the commercial mix: each edit's label follows from the pair it
was made from, and a sentence without an auxiliary is left out, never guessed at."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from assay.training._data import CONTRA, ENTAIL, NEUTRAL, Pair
from assay.training._mix import COMMERCIAL, FULL
from assay.training._negation import negate, negations


@pytest.mark.parametrize(
    ("sentence", "negated"),
    [
        (
            "The deployment was rolled back on Friday.",
            "The deployment was not rolled back on Friday.",
        ),
        ("Two dogs are running.", "Two dogs are not running."),
        ("The invoice has been paid.", "The invoice has not been paid."),
        ("The build was not green.", "The build was green."),
        ("The pod isn't ready.", "The pod is ready."),
        ("He did not reply.", "He did reply."),
        ("The island is flooded.", "The island is not flooded."),
        ("Dogs don't bark here.", "Dogs do bark here."),
    ],
)
def test_the_first_auxiliary_changes_polarity(sentence: str, negated: str) -> None:
    assert negate(sentence) == negated


@pytest.mark.parametrize(
    "sentence",
    [
        "She did her homework.",  # "did" is the main verb here
        "A man plays the guitar on a stage.",  # no auxiliary
        " ".join(["The long report"] + ["word"] * 30 + ["was filed."]),  # over 30 words
    ],
)
def test_a_sentence_it_cannot_negate_safely_is_left_out(sentence: str) -> None:
    assert negate(sentence) is None


def _pair(premise: str, hypothesis: str, label: int) -> Pair:
    return Pair(premise=premise, hypothesis=hypothesis, label=label, source="test")


def test_each_edit_takes_the_label_its_source_pair_implies() -> None:
    entailed = _pair("A man is playing a guitar on stage.", "A man is playing music.", ENTAIL)
    neutral = _pair("A man is playing a guitar.", "The man is famous.", NEUTRAL)
    contra = _pair("A man is sleeping.", "A man is running.", CONTRA)
    made = negations([entailed] * 30 + [neutral, contra], 100, random.Random(3))
    found = {(p.premise, p.hypothesis): p.label for p in made}
    assert found[("A man is playing a guitar on stage.", "A man is not playing music.")] == CONTRA
    assert found[("A man is playing a guitar.", "The man is not famous.")] == NEUTRAL
    assert found[("A man is sleeping.", "A man is not running.")] == ENTAIL
    # Contraposition and the sentence against its own negation, both ways.
    assert (
        found[("A man is not playing music.", "A man is not playing a guitar on stage.")] == ENTAIL
    )
    assert found[("A man is playing music.", "A man is not playing music.")] == CONTRA
    assert found[("A man is not playing music.", "A man is playing music.")] == CONTRA
    assert {p.source for p in made} == {"negation"}


def test_a_negated_hypothesis_is_not_always_a_contradiction() -> None:
    pool = [
        _pair(f"Worker {i} is sleeping.", f"Worker {i} is {verb}.", label)
        for i in range(60)
        for verb, label in (("resting", ENTAIL), ("tired", NEUTRAL), ("running", CONTRA))
    ]
    labels = Counter(p.label for p in negations(pool, 120, random.Random(5)))
    assert sum(labels.values()) == 120
    assert labels[CONTRA] < 0.6 * 120 and labels[ENTAIL] > 0.2 * 120 and labels[NEUTRAL] > 0


def test_only_the_commercial_mix_adds_negation_pairs() -> None:
    assert COMMERCIAL.negations > 0 and FULL.negations == 0
