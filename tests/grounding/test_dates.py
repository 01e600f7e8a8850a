"""Dates and times in their common written forms, and when two are one."""

from __future__ import annotations

import pytest

from assay.grounding import check_values
from assay.grounding._dates import DateMention, find_dates, same_date


def _one(text: str) -> DateMention:
    (mention,) = find_dates(text)
    return mention


@pytest.mark.parametrize(
    "written",
    [
        "2025-03-18",
        "18 March 2025",
        "March 18, 2025",
        "Mar 18 2025",
        "Tuesday, 18th of March 2025",
        "18/03/2025",  # no month 18: not ambiguous
        "2025-03-18T09:30:00Z",
    ],
)
def test_one_day_in_many_spellings(written: str) -> None:
    mention = _one(f"shipped on {written} from the depot")
    assert (mention.year, mention.month, mention.day) == (2025, 3, 18)
    assert same_date(_one("2025-03-18"), mention, frozenset())


def test_an_ambiguous_numeric_date_matches_only_itself() -> None:
    written = _one("signed 04/02/2025")
    assert written.ambiguous
    assert same_date(written, _one("signed 04/02/2025"), frozenset())
    assert not same_date(written, _one("2025-02-04"), frozenset())
    assert not same_date(written, _one("2025-04-02"), frozenset())
    assert not same_date(_one("2 April 2025"), written, frozenset())


@pytest.mark.parametrize("written", ["04.02.2025", "4.2.2025"])
def test_a_dotted_date_is_day_first(written: str) -> None:
    """Every convention that writes dates with dots puts the day first: 4 February."""
    dotted = _one(f"Rechnungsdatum {written}")
    assert not dotted.ambiguous
    assert (dotted.year, dotted.month, dotted.day) == (2025, 2, 4)
    assert same_date(_one("4 February 2025"), dotted, frozenset())
    assert not same_date(_one("2 April 2025"), dotted, frozenset())


def test_a_different_day_is_a_different_date() -> None:
    assert not same_date(_one("17 March 2025"), _one("2025-03-18"), frozenset())
    assert not same_date(_one("18 March 2024"), _one("2025-03-18"), frozenset())


def test_months_and_yearless_dates() -> None:
    assert same_date(_one("in August 2026"), _one("2026-08"), frozenset())
    assert same_date(_one("in August 2026"), _one("2026-08-14"), frozenset())
    assert not same_date(_one("in August 2027"), _one("2026-08"), frozenset())
    assert same_date(_one("on 9 May"), _one("2025-05-09"), frozenset())
    # A year the evidence leaves out is read from the evidence text's own years.
    assert same_date(_one("on 9 May 2025"), _one("on 9 May"), frozenset({2025}))
    assert not same_date(_one("on 9 May 2025"), _one("on 9 May"), frozenset({2024}))


def test_a_list_of_days_gives_one_date_per_day() -> None:
    days = find_dates("the lab is shut on 3, 10 and 17 July 2025.")
    assert [(d.day, d.month, d.year) for d in days] == [(3, 7, 2025), (10, 7, 2025), (17, 7, 2025)]
    assert days[-1].text == "17 July 2025"


@pytest.mark.parametrize(
    ("claim", "evidence", "expected"),
    [
        ("at 4 p.m.", "opens until 16:00", True),
        ("at 4:30pm", "16:30", True),
        ("at 9 a.m.", "09:00", True),
        ("at 4 p.m.", "14:00", False),
        ("at 07:45 UTC", "2025-03-18T07:45:00Z", True),
        ("at 07:45 UTC", "2025-03-18T07:45:00+01:00", False),
    ],
)
def test_times_of_day(claim: str, evidence: str, expected: bool) -> None:
    assert same_date(_one(claim), _one(evidence), frozenset()) is expected


def test_names_and_versions_hold_no_dates() -> None:
    assert find_dates("ticket OPS-2025-0318, build 3.18.2025-rc and v2025.03") == []


TERMS = (
    "Invoice 2024-0917 issued 2024-11-18.\n"
    "Payment terms: 30 days from 2024-11-18. Objections within fourteen days of 3 March 2025.\n"
    "Cutover 10 days before 2025-01-31. Refunds take 10 business days from 2025-01-06.\n"
    "Reminders go out 7 days of 2025-02-01."
)


@pytest.mark.parametrize(
    ("claim", "phrase"),
    [
        ("Invoice 2024-0917 is due on 18 December 2024.", "30 days from 2024-11-18"),
        ("Objections must be in by 17 March 2025.", "within fourteen days of 3 March 2025"),
        ("The cutover is on 21 January 2025.", "10 days before 2025-01-31"),
        # The date written out is still found as written.
        ("The invoice was issued on 18 November 2024.", "2024-11-18"),
    ],
)
def test_a_date_stated_as_days_from_another_is_found(claim: str, phrase: str) -> None:
    (check,) = [c for c in check_values(claim, [TERMS]) if c.value.date is not None]
    assert check.status == "found" and check.occurrence is not None
    assert check.occurrence.text == phrase


@pytest.mark.parametrize(
    "claim",
    [
        # One day off.
        "Invoice 2024-0917 is due on 19 December 2024.",
        # Business days are not calendar days.
        "Refunds arrive by 16 January 2025.",
        # "of" is an offset only after "within".
        "Reminders go out on 8 February 2025.",
    ],
)
def test_other_dates_are_not_read_into_an_offset(claim: str) -> None:
    (check,) = [c for c in check_values(claim, [TERMS]) if c.value.date is not None]
    assert check.status == "missing"
