"""The synthetic agent-evidence pairs: seeded, balanced twins, short premises, JSON
rendered as the verifier shows it, and nothing taken from the development set."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from assay.errors import UsageError
from assay.training._data import ENTAIL, NOT_ENTAIL
from assay.training._mix import COMMERCIAL, MIXES, get_mix
from assay.training._synthetic import PHENOMENON_LABEL, generate, pairs

DEV = (
    Path(__file__).resolve().parents[3]
    / "shared"
    / "data"
    / "agent-grounding-dev"
    / "agent_grounding_dev.jsonl"
)
N = 3000


@pytest.fixture(scope="module")
def sample() -> list[tuple[str, str, int, str, str]]:
    return [(p.premise, p.hypothesis, p.label, p.domain, p.phenomenon) for p in generate(N, 7)]


def test_the_same_seed_gives_the_same_pairs_and_another_seed_others() -> None:
    assert generate(400, 3) == generate(400, 3)
    assert generate(400, 3) != generate(400, 4)


def test_pairs_come_as_balanced_twins_over_one_premise(
    sample: list[tuple[str, str, int, str, str]],
) -> None:
    assert len(sample) == N
    assert Counter(label == ENTAIL for _, _, label, _, _ in sample) == {True: N // 2, False: N // 2}
    for (p1, h1, y1, _, _), (p2, h2, y2, _, ph2) in zip(sample[::2], sample[1::2], strict=True):
        assert p1 == p2 and h1 != h2
        assert y1 == ENTAIL and y2 == PHENOMENON_LABEL[ph2] != ENTAIL


def test_every_edit_kind_and_many_domains_occur(
    sample: list[tuple[str, str, int, str, str]],
) -> None:
    phenomena = Counter(ph for *_, ph in sample)
    assert set(PHENOMENON_LABEL) <= set(phenomena)
    assert len({d for _, _, _, d, _ in sample}) >= 12
    # No kind of edit swamps the rest.
    assert max(phenomena[p] for p in PHENOMENON_LABEL) < 0.2 * N


def test_premises_are_short_and_focused(sample: list[tuple[str, str, int, str, str]]) -> None:
    words = sorted(len(p.split()) for p, *_ in sample)
    assert words[-1] <= 120
    assert words[len(words) // 2] <= 45


def test_json_premises_are_rendered_as_view_sentences(
    sample: list[tuple[str, str, int, str, str]],
) -> None:
    rendered = [p for p, *_ in sample if re.match(r"^[a-z_]+(\[\d+\])?(\.[a-z_]+)*: ", p)]
    assert len(rendered) > N // 10
    assert not any(p.lstrip().startswith("{") for p, *_ in sample if "booking" in p)
    assert all(re.search(r"\w: [^\n]+\.( |$)", p) for p in rendered)


def test_hypotheses_are_sentences_not_templates(
    sample: list[tuple[str, str, int, str, str]],
) -> None:
    for _, hypothesis, *_ in sample:
        assert "{" not in hypothesis and "}" not in hypothesis
        assert hypothesis.endswith((".", "?", "!"))
    assert len({h for _, h, *_ in sample}) > 0.9 * N


def test_training_records_are_tagged_synthetic() -> None:
    records = pairs(10, 1)
    assert {r.source for r in records} == {"synthetic"}
    assert all(r.label in (0, 1, 2, NOT_ENTAIL) for r in records)


@pytest.mark.skipif(not DEV.exists(), reason="agent-grounding-dev is not checked out here")
def test_no_development_claim_or_identifier_is_generated() -> None:
    dev = [json.loads(line) for line in DEV.read_text(encoding="utf-8").splitlines() if line]
    claims = {_norm(item["claim"]) for item in dev}
    ids = {
        token
        for item in dev
        for token in re.findall(r"\b[A-Z]{2,}-\d[\w-]{3,}\b", json.dumps(item["evidence"]))
    }
    generated = generate(20_000, 11)
    assert not claims & {_norm(p.hypothesis) for p in generated}
    assert not any(token in p.premise for p in generated for token in ids if len(token) > 8)


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def test_the_commercial_mix_holds_only_commercial_sets_and_a_synthetic_share() -> None:
    assert all(source.commercial for source in COMMERCIAL.sources)
    assert not {"anli", "sick", "control", "scifact"} & {s.name for s in COMMERCIAL.sources}
    real = sum(s.count for s in COMMERCIAL.sources) + COMMERCIAL.conjunctions
    assert 0.3 <= COMMERCIAL.synthetic / (real + COMMERCIAL.synthetic) <= 0.4
    assert {"full", "commercial", "commercial+anli+sick"} <= set(MIXES)


def test_an_unknown_mix_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="unknown mix"):
        get_mix("everything")
