"""The invoice audit's readers on their own: caps as letters write them (by the grammar
of the sentence, a list or a table), invoice lines in several layouts, the roles and
their synonyms, and which cap a line is held to (or why that cannot be told)."""

from __future__ import annotations

import pytest

from assay.apps.reference._caps import CapReading, read_caps, says_ceiling
from assay.apps.reference._lexicon import ROLE_KINDS, role_kind, singular_role
from assay.apps.reference._lines import read_lines
from assay.apps.reference._reading import Cap, Evidence, Findings, Line, dollar_of, parse


def _caps(
    text: str, default_per: str | None = None
) -> list[tuple[str | None, str, str, str | None]]:
    return [(c.role, c.currency, c.amount, c.per) for c in read_caps(text, default_per=default_per)]


@pytest.mark.parametrize(
    ("text", "default_per", "expected"),
    [
        (
            "The maximum billable rate for a principal is C$640.",
            "hour",
            [("principal", "CAD", "640", "hour")],
        ),
        (
            "Fees for trainees shall not exceed £95/hour.",
            None,
            [("trainee", "GBP", "95", "hour")],
        ),
        (
            "Partner time: capped at CHF 700 per hour.",
            None,
            [("partner", "CHF", "700", "hour")],
        ),
        (
            "Hourly rates will be kept at or below USD 420 for counsel.",
            None,
            [("counsel", "USD", "420", "hour")],
        ),
        (
            "Partners' hourly rate is capped at EUR 500 per hour, and their day rate at "
            "EUR 2,400 per day.",
            None,
            [("partner", "EUR", "500", "hour"), ("partner", "EUR", "2,400", "day")],
        ),
        (
            "Time spent by partners will be charged at no more than GBP 450 an hour. Senior "
            "associates will charge no more than GBP 340 an hour, and associates no more "
            "than GBP 240 an hour.",
            None,
            [
                ("partner", "GBP", "450", "hour"),
                ("senior associate", "GBP", "340", "hour"),
                ("associate", "GBP", "240", "hour"),
            ],
        ),
        (
            "Caps per hour: partner EUR 510, senior associate EUR 390, associate EUR 270.",
            None,
            [
                ("partner", "EUR", "510", "hour"),
                ("senior associate", "EUR", "390", "hour"),
                ("associate", "EUR", "270", "hour"),
            ],
        ),
        (
            "Our fees for partners are capped at $725 per hour, for associates at $450 per hour.",
            None,
            [("partner", "$", "725", "hour"), ("associate", "$", "450", "hour")],
        ),
        (
            "A senior partner's hour will not be invoiced above CHF 780; for lawyers the "
            "ceiling is CHF 450 an hour, and clerks' work is limited to CHF 160 hourly.",
            None,
            [
                ("senior partner", "CHF", "780", "hour"),
                ("lawyer", "CHF", "450", "hour"),
                ("clerk", "CHF", "160", "hour"),
            ],
        ),
        (
            "Counsel's daily rate will not exceed USD 3,000.",
            None,
            [("counsel", "USD", "3,000", "day")],
        ),
    ],
)
def test_caps_are_read_as_letters_write_them(
    text: str, default_per: str | None, expected: list[tuple[str, str, str, str]]
) -> None:
    assert _caps(text, default_per) == expected


def test_a_sentence_is_quoted_whole_for_each_of_its_caps() -> None:
    text = "Intro.\nFees are capped as follows: partners £420 per hour; trainees £110 per hour."
    found = read_caps(text)
    assert [c.text for c in found] == [text.split("\n")[1]] * 2


def test_a_standard_rate_beside_a_cap_is_no_cap() -> None:
    text = (
        "Our standard rate for partners is EUR 700 per hour, but for this matter it is "
        "capped at EUR 540 per hour."
    )
    assert _caps(text) == [("partner", "EUR", "540", "hour")]


@pytest.mark.parametrize(
    "text",
    [
        "Our rate for partners is EUR 700 per hour.",
        "The total fees for the matter are capped at EUR 50,000.",
        "Any rate above these caps requires the client's prior written consent.",
    ],
)
def test_a_rate_that_no_ceiling_governs_or_a_total_is_no_cap(text: str) -> None:
    assert _caps(text) == []


def test_what_a_letter_does_not_say_is_left_unsaid() -> None:
    # No role named: kept with none, for the audit to ask about.
    assert _caps("Our rates are capped at GBP 400 per hour.") == [(None, "GBP", "400", "hour")]
    # No time named, and none for the document: kept with none.
    assert _caps("The partner rate is capped at CHF 720.") == [("partner", "CHF", "720", None)]


def test_a_list_and_a_table_take_the_ceiling_of_their_introduction_or_header() -> None:
    listed = "The following hourly caps apply:\n- Partner: EUR 450\n- Paralegal: EUR 120"
    assert _caps(listed) == [("partner", "EUR", "450", "hour"), ("paralegal", "EUR", "120", "hour")]
    table = "| Grade | Maximum hourly rate |\n|---|---|\n| Partner | EUR 480 |\n| Clerk | EUR 140 |"
    found = read_caps(table)
    assert [(c.role, c.amount, c.per) for c in found] == [
        ("partner", "480", "hour"),
        ("clerk", "140", "hour"),
    ]
    assert all(c.text == table for c in found)
    rates = "| Grade | Rate |\n|---|---|\n| Partner | EUR 480 |"
    assert read_caps(rates) == []  # a table of rates that caps nothing


@pytest.mark.parametrize(
    "text",
    [
        "shall not exceed",
        "no more than",
        "will not be invoiced above",
        "at or below",
        "up to",
        "at most",
        "capped",
        "the ceiling is",
    ],
)
def test_ceilings_are_told_by_their_grammar(text: str) -> None:
    assert says_ceiling(f"fees {text} EUR 5")


@pytest.mark.parametrize(
    "text", ["we are more than happy to help", "the rate is EUR 5", "rates above EUR 5 apply"]
)
def test_words_of_more_without_a_negation_set_no_ceiling(text: str) -> None:
    assert not says_ceiling(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Line 3: partner, 2.0 h at EUR 520/h, total EUR 1,040.00.",
            ("partner", "2.0", "hour", "EUR", "520", True),
        ),
        (
            "Item 1 — Trainee — 12.0 hours @ £110/hour = £1,320.00",
            ("trainee", "12.0", "hour", "GBP", "110", False),
        ),
        (
            "3. Counsel: 7.5 hours at USD 455 per hour (USD 3,412.50)",
            ("counsel", "7.5", "hour", "USD", "455", False),
        ),
        (
            "Line 1: partner, 2.0 days at EUR 2,600/day, total EUR 5,200.00.",
            ("partner", "2.0", "day", "EUR", "2,600", False),
        ),
        (
            "Pos. 2 \u2013 lawyer \u2013 7.5 hours \u00d7 CHF 475/hour = CHF 3,562.50",
            ("lawyer", "7.5", "hour", "CHF", "475", False),
        ),
        (
            "1) Partner — 2.0 hrs — EUR 450/hr — EUR 900.00",
            ("partner", "2.0", "hour", "EUR", "450", False),
        ),
    ],
)
def test_invoice_lines_are_read_in_their_layouts(text: str, expected: tuple[object, ...]) -> None:
    [line] = read_lines(text)
    assert (line.role, line.quantity, line.per, line.currency, line.rate, line.standard) == expected
    assert line.complete and line.text == text


def test_a_table_row_is_read_by_its_header() -> None:
    table = (
        "| Line | Timekeeper | Role | Hours | Rate | Amount |\n|---|---|---|---|---|---|\n"
        "| 1 | H. Lachance | Principal | 3.0 | C$690 | C$2,070.00 |"
    )
    [line] = read_lines(table)
    assert (line.number, line.role, line.quantity, line.per, line.currency, line.rate) == (
        1,
        "principal",
        "3.0",
        "hour",
        "CAD",
        "690",
    )
    assert line.text == table.split("\n")[2]


def test_a_line_that_names_two_roles_or_none_is_not_complete() -> None:
    [two] = read_lines("Line 72: associate / partner review, 2.0 h at EUR 450/h, total EUR 900.00.")
    assert (two.role, two.roles, two.complete) == (None, ("associate", "partner"), False)
    [none] = read_lines(
        "Line 52: senior associate; seven and a half hours of drafting; EUR 3,375.00."
    )
    assert not none.complete


def test_roles_and_their_synonyms() -> None:
    assert {role_kind(r) for r in ("principal", "senior partner", "partner")} == {"partner"}
    assert {role_kind(r) for r in ("solicitor", "lawyer", "associate")} == {"associate"}
    assert {role_kind(r) for r in ("trainee", "clerk", "paralegal")} == {"paralegal"}
    assert role_kind("senior associate") == "senior associate"
    assert set(ROLE_KINDS.values()) <= set(ROLE_KINDS)  # each kind is itself a role
    assert singular_role("Principals'") == "principal"
    assert singular_role("trainee solicitors") == "trainee solicitor"
    assert singular_role("consultant") is None


def _line(role: str, per: str = "hour") -> Line:
    return Line(
        number=1, role=role, hours="1.0", currency="EUR", rate="500", ledger_id="l", per=per
    )


def _cap(role: str, amount: str, per: str | None = "hour", *, amended: bool = False) -> Cap:
    return Cap(role=role, amount=amount, currency="EUR", ledger_id="c", per=per, amended=amended)


def test_a_line_is_held_to_its_roles_cap_then_to_a_synonyms() -> None:
    found = Findings(caps=[_cap("partner", "520"), _cap("senior partner", "650")])
    assert found.cap_for(_line("partner")) == _cap("partner", "520")
    assert found.cap_for(_line("senior partner")) == _cap("senior partner", "650")
    why = found.cap_for(_line("principal"))
    assert isinstance(why, str) and "more than once" in why
    assert Findings(caps=[_cap("partner", "520")]).cap_for(_line("principal")) == _cap(
        "partner", "520"
    )
    assert Findings(caps=[_cap("partner", "520")]).cap_for(_line("associate")) is None


def test_an_amendments_cap_replaces_the_letters() -> None:
    found = Findings(caps=[_cap("associate", "400"), _cap("associate", "360", amended=True)])
    assert found.cap_for(_line("associate")) == _cap("associate", "360", amended=True)


def test_a_cap_per_another_time_or_per_no_time_is_not_compared() -> None:
    daily = Findings(caps=[_cap("partner", "2400", "day")])
    assert "per day, not per hour" in str(daily.cap_for(_line("partner")))
    unsaid = Findings(caps=[_cap("partner", "720", None)])
    assert "per hour or per day" in str(unsaid.cap_for(_line("partner")))
    both = Findings(caps=[_cap("partner", "500"), _cap("partner", "3600", "day")])
    assert both.cap_for(_line("partner", "day")) == _cap("partner", "3600", "day")


def test_a_cap_reading_is_a_frozen_record() -> None:
    reading = CapReading(role=None, amount="1", currency="EUR", per=None, text="t")
    with pytest.raises(AttributeError):
        reading.role = "partner"  # type: ignore[misc]


def test_a_table_numbered_by_ref_with_its_unit_in_the_header() -> None:
    table = (
        "| Ref | Professional | Seniority | Time (hrs) | Hourly rate | Fee |\n"
        "|---|---|---|---|---|---|\n"
        "| 2 | E. Papas | Associate | 16.0 | \u20ac335.00 | \u20ac5,360.00 |"
    )
    [line] = read_lines(table)
    assert (line.number, line.role, line.quantity, line.per, line.currency, line.rate) == (
        2,
        "associate",
        "16.0",
        "hour",
        "EUR",
        "335.00",
    )
    assert read_lines(table.replace("Ref", "Who")) == []  # no column numbers the lines


@pytest.mark.parametrize(
    ("text", "dollar"),
    [
        ("We bill monthly. Partners: $600 per hour.", "USD"),
        ("Fees are billed in Canadian dollars. Partners: $600 per hour.", "CAD"),
        ("Amounts in AUD. Partners: $600 per hour.", "AUD"),
        ("Fees in USD, or in C$ at the client's choice. Partners: $600 per hour.", "$"),
    ],
)
def test_a_bare_dollar_is_the_one_its_document_names(text: str, dollar: str) -> None:
    assert dollar_of(text) == dollar


def _evidence(document: str, text: str) -> Evidence:
    return Evidence(ledger_id=f"led_{document}", document=document, passage=0, text=text)


def test_a_dollar_cap_and_a_dollar_line_are_each_in_their_documents_dollar() -> None:
    letter = _evidence(
        "engagement_letter.md",
        "Fees are billed in Canadian dollars. Partners are capped at $600 per hour.",
    )
    invoice = _evidence("invoice.md", "Line 1: partner, 2.0 h at $650/h, total $1,300.00.")
    found = parse([letter, invoice])
    [cap] = found.caps
    assert (cap.role, cap.currency, cap.amount) == ("partner", "CAD", "600")
    assert found.lines[1].currency == "USD"  # the invoice names no dollar: a US one
    # Not the same currency, so the line is asked about, never compared (see the agents).
    assert found.cap_for(found.lines[1]) == cap and cap.currency != found.lines[1].currency
