"""The word-list files are well formed: read by one loader, each entry normalised as
its readers expect, no entry twice, shipped with the package."""

from __future__ import annotations

import fnmatch
import re
import tomllib
from importlib.resources import files
from pathlib import Path

import pytest

from assay._text import alternation, word_list, word_set, word_table
from assay.grounding import CUES
from assay.verifier._text import word_stems

WORDS = files("assay._text") / "words"
ROOT = Path(__file__).resolve().parents[2]
_LIST_FILES = sorted(p.name for p in WORDS.iterdir() if p.name.endswith(".txt"))
_TABLE_FILES = sorted(p.name for p in WORDS.iterdir() if p.name.endswith(".toml"))
#: A word: lower-case ASCII letters. A phrase: words separated by single spaces.
_WORD = re.compile(r"[a-z]+")
_PHRASE = re.compile(r"[a-z]+(?: [a-z]+)*")


def _name(file: str) -> str:
    return file.rsplit(".", 1)[0]


def test_every_file_is_a_list_or_a_table() -> None:
    names = [p.name for p in WORDS.iterdir()]
    assert names and sorted(names) == sorted(_LIST_FILES + _TABLE_FILES)
    assert all(re.fullmatch(r"[a-z][a-z0-9-]*\.(txt|toml)", n) for n in names)


@pytest.mark.parametrize("file", _LIST_FILES)
def test_a_list_has_one_normalised_entry_a_line_and_none_twice(file: str) -> None:
    entries = word_list(_name(file))
    assert entries
    assert len(set(entries)) == len(entries), "an entry is written twice"
    for entry in entries:
        assert entry == entry.strip().lower()
        assert "  " not in entry and "\t" not in entry


def _table_entries(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)):
        return [e for v in value for e in _table_entries(v)]
    if isinstance(value, dict):
        return [e for v in value.values() for e in _table_entries(v)]
    raise AssertionError(f"not a word, array or table: {value!r}")


@pytest.mark.parametrize("file", _TABLE_FILES)
def test_a_table_holds_lower_case_words_and_no_array_twice_the_same(file: str) -> None:
    raw = tomllib.loads((WORDS / file).read_text(encoding="utf-8"))
    for entry in _table_entries(raw):
        assert _PHRASE.fullmatch(entry), entry

    def arrays(value: object) -> list[list[str]]:
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return [value]  # pyright: ignore[reportUnknownVariableType]
        if isinstance(value, list):
            return [a for v in value for a in arrays(v)]  # pyright: ignore[reportUnknownVariableType]
        if isinstance(value, dict):
            return [a for v in value.values() for a in arrays(v)]  # pyright: ignore[reportUnknownVariableType]
        return []

    for array in arrays(raw):
        assert len(set(array)) == len(array), array


@pytest.mark.parametrize(
    "name",
    [
        "common-words",
        "field-name-leads",
        "negations",
        "not-nouns",
        "numbering-words",
        "passive-auxiliaries",
        "permission-words",
        "plural-nouns",
        "pronouns",
        "state-fields",
        "stop-words",
    ],
)
def test_lists_of_single_words_hold_single_words(name: str) -> None:
    assert all(_WORD.fullmatch(w) for w in word_list(name))


@pytest.mark.parametrize("name", ["done-verbs", "expectation-words", "plan-labels"])
def test_lists_of_phrases_hold_words_and_single_spaces(name: str) -> None:
    assert all(_PHRASE.fullmatch(w) for w in word_list(name))


def test_abbreviations_are_written_without_their_final_full_stop() -> None:
    assert all(re.fullmatch(r"[a-z]+(?:\.[a-z]+)*", a) for a in word_list("abbreviations"))


def test_a_clipped_word_maps_to_a_longer_word_that_starts_alike() -> None:
    for clipped, full in word_table("clipped-words").items():
        assert _WORD.fullmatch(clipped) and _WORD.fullmatch(full)
        assert len(full) > len(clipped) and full[0] == clipped[0]


def test_comparatives_point_one_of_the_known_ways() -> None:
    ways = {"up", "down", "later", "earlier", "longer", "shorter"}
    assert set(word_table("comparatives").values()) <= ways


def test_directions_name_the_four_ways_and_no_word_points_two() -> None:
    table = word_table("directions")
    assert set(table) == {"up", "down", "later", "earlier"}
    every = [w for words in table.values() for w in words]
    assert len(set(every)) == len(every)


def test_each_antonym_writes_one_stem_and_no_pair_shares_one() -> None:
    table = word_table("antonyms")
    for pair in table["opposites"]:
        one, other = ([s for w in side for s in word_stems(w)] for side in pair.values())
        assert len(one) == len(pair["one"]) and len(other) == len(pair["other"])
        assert not set(one) & set(other)


def test_a_group_of_the_same_action_is_one_side_of_a_pair() -> None:
    table = word_table("antonyms")
    sides = [set(side) for pair in table["opposites"] for side in pair.values()]
    for group in table["same"]:
        assert any(set(group) <= side for side in sides), group


def test_the_cue_kinds_are_the_arithmetic_kinds() -> None:
    assert set(word_table("arithmetic-cues")) == set(CUES) | {"excluding"}


#: The lists read as alternatives of one pattern between word boundaries, each list
#: with the others of the same pattern.
_ALTERNATIVES = {
    "directions": [w for ws in word_table("directions").values() for w in ws],
    "sequence-words": [w for ws in word_table("sequence-words").values() for w in ws],
    "negations": list(word_list("negations")),
    "comparatives": list(word_table("comparatives")),
    "plan-labels": list(word_list("plan-labels")),
    "expectation-words": list(word_list("expectation-words")),
    "done-verbs": list(word_list("done-verbs")),
    **{
        f"cues {cue}": list(words) + (list(cues["excluding"]) if cue == "sum" else [])
        for cues in [word_table("arithmetic-cues")]
        for cue, words in cues.items()
    },
}


@pytest.mark.parametrize("name", sorted(_ALTERNATIVES))
def test_no_entry_starts_another_so_their_order_does_not_matter(name: str) -> None:
    """Between word boundaries, two entries can match at one place only where one is
    the first words of the other ("in" and "in all"); without such a pair, the order
    :func:`alternation` writes them in changes nothing that is found."""
    entries = _ALTERNATIVES[name]
    for a in entries:
        for b in entries:
            assert a == b or not b.startswith(a + " "), (a, b)


def test_alternation_escapes_entries_and_matches_any_blanks_in_a_phrase() -> None:
    pattern = re.compile(rf"\b(?:{alternation(['e.g', 'pushed back', 'push'])})\b")
    assert pattern.findall("e.g pushed \n back, push; egg") == ["e.g", "pushed \n back", "push"]
    assert alternation(["a", "abc", "ab"]) == "abc|ab|a"


def test_each_file_is_read_once_and_cannot_be_changed_by_a_reader() -> None:
    assert word_list("negations") is word_list("negations")
    assert word_set("negations") == frozenset(word_list("negations"))
    table = word_table("directions")
    assert table is word_table("directions")
    with pytest.raises(TypeError):
        table["up"] = ()  # type: ignore[index]
    assert isinstance(table["up"], tuple)


@pytest.mark.parametrize("name", ["../pyproject", "Negations", "", "a/b"])
def test_a_name_that_is_no_list_is_refused(name: str) -> None:
    with pytest.raises(ValueError, match="not a word list"):
        word_list(name)


def test_the_wheel_ships_every_word_list() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "assay._text" in config["tool"]["setuptools"]["packages"]
    globs = config["tool"]["setuptools"]["package-data"]["assay._text"]
    for name in _LIST_FILES + _TABLE_FILES:
        assert any(fnmatch.fnmatch(f"words/{name}", glob) for glob in globs), name
