"""Each kind of token on one text: what it keeps whole, and what it cuts."""

from __future__ import annotations

from typing import get_args

import pytest

from assay._text import TokenKind, numbers_in, token_pattern, tokens


def _split(text: str) -> list[str]:
    return text.split()


TEXT = "Merged by d.varga@ex.org: node-a3 fixed 1,200.50 EUR/h (+3) in 2nd run_time isActive"

EXPECTED: dict[TokenKind, list[str]] = {
    "chunks": _split(
        "Merged by d.varga@ex.org: node-a3 fixed 1,200.50 EUR/h (+3) in 2nd run_time isActive"
    ),
    "letters": _split("Merged by d varga ex org node a fixed EUR h in nd run time isActive"),
    "word_chars": _split(
        "Merged by d varga ex org node a3 fixed 1 200 50 EUR h 3 in 2nd run_time isActive"
    ),
    "stem_words": _split(
        "merged by d.varga ex.org node a3 fixed 1,200.50 eur/h 3 in 2nd run time isactive"
    ),
    "hyphenated": _split("Merged by d varga ex org node-a fixed EUR h in nd run time isActive"),
    "names": _split(
        "Merged by d.varga@ex.org node-a3 fixed 1 200.50 EUR h 3 in 2nd run_time isActive"
    ),
    "terms": _split(
        "Merged by d.varga ex.org node-a3 fixed 1 200.50 EUR/h 3 in 2nd run_time isActive"
    ),
    "args": _split(
        "Merged by d.varga ex.org node-a3 fixed 1 200.50 EUR h 3 in 2nd run_time isActive"
    ),
    "cells": _split(
        "Merged by d.varga ex.org node-a3 fixed 1 200.50 EUR h 3 in 2nd run_time isActive"
    ),
    "runs": _split(
        "Merged by d varga ex org node-a3 fixed 1 200 50 EUR h 3 in 2nd run_time isActive"
    ),
    "row_words": _split("Merged varga org node-a3 fixed EUR 2nd run time isActive"),
    "key_words": _split("Merged by d varga ex org node a fixed EUR h in nd run time is Active"),
    "numbers": _split("1,200.50 +3"),
    "amounts": _split("1,200.50 3"),
}


def test_every_kind_is_shown_here() -> None:
    assert set(EXPECTED) == set(get_args(TokenKind))


@pytest.mark.parametrize("kind", sorted(EXPECTED))
def test_a_kind_of_token_cuts_as_documented(kind: TokenKind) -> None:
    text = TEXT.lower() if kind == "stem_words" else TEXT  # read from lower-cased text
    assert tokens(text, kind) == EXPECTED[kind]
    assert [m.group(0) for m in token_pattern(kind).finditer(text)] == EXPECTED[kind]


def test_stem_words_are_read_from_lower_cased_text() -> None:
    found = tokens("rates 3.5, 1,200 and 24/7 at a.m.", "stem_words")
    assert found == _split("rates 3.5 1,200 and 24/7 at a.m")


def test_numbers_are_normalised() -> None:
    assert numbers_in("EUR 1,200.50, +3 and -4 but not v2 or x3") == ["1200.50", "3", "-4"]
