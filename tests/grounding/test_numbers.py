"""Numbers as written: grouping, decimal marks by the text's convention, and words."""

from __future__ import annotations

from decimal import Decimal

import pytest

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
