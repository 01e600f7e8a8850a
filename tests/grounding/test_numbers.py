"""Numbers as written: grouping, decimal marks by the text's convention, and words."""

from __future__ import annotations

import re
from decimal import Decimal
from unittest.mock import patch

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.grounding import _numbers
from assay.grounding._numbers import convention_of, find_numbers, readings


def _values(text: str) -> list[tuple[str, set[str]]]:
    return [(n.text, {str(v) for v in n.values}) for n in find_numbers(text)]


@pytest.mark.parametrize(
    ("text", "convention"),
    [
        ("the rate is 3.5 and the cap 1,200", "point"),
        ("Gesamt 1.200,50 EUR", "comma"),
        ("ein Anteil von 3,5", "comma"),
        ("total 2,045.75 after tax", "point"),
        ("7 crates and 1,300 bolts", "unknown"),
        ("id,qty,price\na,1200,3\nb,17,4", "unknown"),  # a CSV's commas are no decimals
    ],
)
def test_the_convention_comes_from_unambiguous_numbers(text: str, convention: str) -> None:
    assert convention_of(text) == convention


def test_a_lone_three_digit_group_keeps_both_readings_until_the_text_says() -> None:
    assert readings("3,750") == {Decimal(3750), Decimal("3.750")}
    assert readings("3,750", "point") == {Decimal(3750)}
    assert readings("3,750", "comma") == {Decimal("3.750")}
    assert readings("0,750") == {Decimal("0.750")}  # a leading zero is never grouped


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("EUR 12.345,60 due", [("12.345,60", {"12345.60"})]),
        ("USD 12,345.60 due", [("12,345.60", {"12345.60"})]),
        ("a 6 310,25 balance", [("6 310,25", {"6310.25"})]),
        ("population 4 500 000 in all", [("4 500 000", {"4500000"})]),
        ("rows 3 400 and 9", [("3", {"3"}), ("400", {"400"}), ("9", {"9"})]),
        ("fee 1'250.00 CHF", [("1'250.00", {"1250.00"})]),
        ("cells a,4,7,b", [("4", {"4"}), ("7", {"7"})]),
    ],
)
def test_grouping_is_read_where_it_is_unambiguous(
    text: str, expected: list[tuple[str, set[str]]]
) -> None:
    assert _values(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "ticket OPS-2291 and host web7",
        "release v4.12.0 and 10.0.3.41",
        "order #88120 and commit 5e9c1d2a7b",
        "contract MSA-2023-0417",
        "the 2nd and 3rd attempts",
    ],
)
def test_digits_of_names_are_not_numbers(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Thirteen crates arrived", "13"),
        ("forty-two pallets", "42"),
        ("a hundred and seven boxes", "107"),
        ("four and a half days", "4.5"),
        ("three quarters of the budget", "0.75"),
        ("half of the stock", "0.5"),
    ],
)
def test_numbers_in_words(text: str, value: str) -> None:
    (number,) = find_numbers(text)
    assert number.word and number.values == {Decimal(value)}
    assert text[number.start : number.end] == number.text


def test_pronouns_ordinals_and_acronyms_are_not_numbers() -> None:
    assert _values("the old one was replaced by the second unit on OS images") == []


def test_a_currency_code_against_digits_does_not_hide_the_number() -> None:
    assert _values("billed GBP480.00 today") == [("480.00", {"480.00"})]


# Words text2num reads (cardinals, ordinals, scales, plurals, the forms it refuses)
# and ordinary words, some of which hold a number word inside (often, weight, phone).
_WORDS = tuple(
    [
        "zero",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
        "twenty",
        "thirty",
        "forty",
        "fifty",
        "sixty",
        "seventy",
        "eighty",
        "ninety",
        "hundred",
        "thousand",
        "million",
        "billion",
        "trillion",
        "dozen",
        "first",
        "second",
        "third",
        "fourth",
        "fifth",
        "eighth",
        "ninth",
        "twelfth",
        "twentieth",
        "hundredth",
        "ones",
        "tens",
        "hundreds",
        "thousands",
        "millions",
        "fours",
        "sevens",
        "firsts",
        "a",
        "an",
        "and",
        "oh",
        "o",
        "nil",
        "naught",
        "nought",
        "half",
        "quarter",
        "quarters",
        "the",
        "invoice",
        "bills",
        "hours",
        "at",
        "EUR",
        "per",
        "line",
        "often",
        "weight",
        "phone",
        "someone",
        "tension",
        "content",
        "attend",
        "Twenty-One",
        "NINE",
        "Forty-two",
    ]
)


def test_no_word_or_pair_of_words_loses_a_number() -> None:
    """The same, word by word and for every pair: a word the pre-check missed shows
    up alone even where random texts would mostly hold another number word."""
    texts = [*_WORDS, *(f"{a} {b}" for a in _WORDS for b in _WORDS)]
    skipped = [t for t in texts if not _numbers.MAY_SPELL_A_NUMBER.search(t)]
    assert skipped, "the pre-check spares no text here: the test would prove nothing"
    for text in skipped:
        assert not list(_numbers.spelled_numbers(text)), text


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_WORDS), min_size=1, max_size=8), st.sampled_from(" -"))
def test_texts_without_a_number_word_lose_no_number(words: list[str], sep: str) -> None:
    """The pre-check that spares ``text2num`` a text changes no reading: every text
    reads the same with the check as with ``text2num`` always asked."""
    text = sep.join(words)
    with_check = find_numbers(text)
    with patch.object(_numbers, "MAY_SPELL_A_NUMBER", re.compile("")):  # every text
        assert find_numbers(text) == with_check
