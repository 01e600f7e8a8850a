"""The packed mix and its trainer: inputs as the tokenizer builds them, a few CPU steps,
and the trained weights merged back into a full model that loads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from assay.training._data import ENTAIL, NOT_ENTAIL, Pair
from assay.training._pack import pack, read, write
from assay.training._packed import Batcher, Config, merge, read_pack, train
from assay.training._synthetic import pairs as synthetic_pairs

MODEL = Path(__file__).resolve().parents[2] / "assay" / "verifier" / "model"


@pytest.fixture(scope="module")
def tokenizer() -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(MODEL))


def _pairs() -> list[Pair]:
    long = " ".join(["The invoice INV-2231 was paid in full on 3 March 2024."] * 40)
    return [
        *synthetic_pairs(24, seed=5),
        Pair(premise=long, hypothesis="The invoice was paid.", label=ENTAIL, source="x"),
        Pair(premise="Paid.", hypothesis=long, label=NOT_ENTAIL, source="x"),
    ]


def test_a_pack_round_trips_and_shares_repeated_texts(tokenizer: Any, tmp_path: Path) -> None:
    pairs = _pairs()
    arrays = pack(pairs, tokenizer)
    path = tmp_path / "pack.npz.xz"
    write(arrays, path)
    back = read(path)
    assert read_pack(path).keys() == back.keys()
    for name, array in arrays.items():
        assert np.array_equal(back[name], array), name
    texts = {p.premise for p in pairs} | {p.hypothesis for p in pairs}
    assert len(back["offsets"]) == len(texts) + 1
    assert [int(x) for x in back["label"]] == [p.label for p in pairs]


@pytest.mark.parametrize("max_length", [256, 48])
def test_the_inputs_are_those_the_tokenizer_builds_for_a_pair(
    tokenizer: Any, max_length: int
) -> None:
    pairs = _pairs()
    batcher = Batcher(
        pack(pairs, tokenizer), tokenizer.cls_token_id, tokenizer.sep_token_id, max_length
    )
    for k, p in enumerate(pairs):
        enc = tokenizer(p.premise, p.hypothesis, truncation="longest_first", max_length=max_length)
        got = batcher.batch([k])
        assert got["input_ids"][0].tolist() == enc["input_ids"], p.hypothesis
        assert got["token_type_ids"][0].tolist() == enc["token_type_ids"]
        assert got["attention_mask"][0].tolist() == [1] * len(enc["input_ids"])


def test_a_few_cpu_steps_train_and_merge_into_a_model_that_loads(
    tokenizer: Any, tmp_path: Path
) -> None:
    from safetensors.torch import load_file

    from assay.verifier import Verifier

    write(pack(_pairs() * 8, tokenizer), tmp_path / "pack.npz.xz")
    cfg = Config(
        pack=tmp_path / "pack.npz.xz",
        model=MODEL,
        out=tmp_path / "trained",
        max_steps=3,
        batch_size=4,
        max_length=64,
        val_pairs=2,
    )
    report = train(cfg)
    assert report["steps"] == 3
    assert report["pairs_seen"] == 12
    assert (tmp_path / "trained" / "log.json").is_file()
    replaced = merge(MODEL, tmp_path / "trained", tmp_path / "merged")
    assert "classifier.weight" in replaced
    assert not any(name.endswith("word_embeddings.weight") for name in replaced)
    before = load_file(str(MODEL / "model.safetensors"))
    after = load_file(str(tmp_path / "merged" / "model.safetensors"))
    assert before.keys() == after.keys()
    word = next(name for name in before if name.endswith("word_embeddings.weight"))
    assert np.array_equal(before[word].numpy(), after[word].numpy())
    verifier = Verifier.from_pretrained(tmp_path / "merged", threads=1)
    assert verifier.calibration.threshold == Verifier.from_pretrained(MODEL).calibration.threshold
    assert len(verifier.score([("The build passed.", "The build failed.")])[0]) == 3
