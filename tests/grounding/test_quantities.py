"""Quantities: units, currencies, rates, counts and hedges, and when two are one."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from assay.grounding import (
    check_values,
    claim_values,
    evidence_index,
    occurrences_of,
    view_of,
)
from assay.grounding._quantities import Quantity, find_quantities, same, supports


def _one(text: str) -> Quantity:
    (quantity,) = find_quantities(text)
    return quantity


@pytest.mark.parametrize(
    ("text", "kind", "unit"),
    [
        ("£38.20", "money", "GBP"),
        ("GBP 38.20", "money", "GBP"),
        ("38.20 GBP", "money", "GBP"),
        ("38 euros", "money", "EUR"),
        ("$38", "money", "dollar"),
        ("CHF 95/h", "money", "CHF / hour"),
        ("€12 a night", "money", "EUR / night"),
        ("0.40 per km", "measure", "/ kilometre"),
        ("4.5 kWh", "measure", "kilowatt_hour"),
        ("250ms", "measure", "millisecond"),
        ("12.5%", "percent", "percent"),
        ("12.5 per cent", "percent", "percent"),
        ("a 3-day window", "measure", "day"),
        ("64 cartons", "count", None),
        ("eight cartons", "count", None),
    ],
)
def test_quantities_are_read_with_their_units(text: str, kind: str, unit: str | None) -> None:
    (quantity,) = find_quantities(text)
    assert (quantity.kind, quantity.unit) == (kind, unit)


def test_a_count_names_what_it_counts_and_a_plain_number_stays_plain() -> None:
    assert _one("64 cartons").noun == "cartons"
    assert _one("aisle 7 of the depot").kind == "number"


def test_durations_written_in_parts_are_one_quantity() -> None:
    quantity = _one("it ran 2 hours 40 minutes")
    assert quantity.text == "2 hours 40 minutes"
    assert quantity.values == {Decimal(160)} and quantity.unit == "minute"


@pytest.mark.parametrize(
    ("text", "written", "seconds"),
    [
        ("| ci-02 | integration | 23m 05s | failed |", "23m 05s", 1385),
        ("lint finished in 7m 42s", "7m 42s", 462),
    ],
)
def test_an_m_that_seconds_follow_is_minutes(text: str, written: str, seconds: int) -> None:
    quantity = _one(text)
    assert quantity.text == written
    assert quantity.values == {Decimal(seconds)} and quantity.unit == "second"


@pytest.mark.parametrize(
    ("text", "written", "unit", "value"),
    [
        ("lint finished in 7m42s", "7m42s", "second", 462),
        ("job took 1h2m3s", "1h2m3s", "second", 3723),
        ("uptime 1h30m", "1h30m", "minute", 90),
        ("step 2 ran 1m2.5s", "1m2.5s", "second", Decimal("62.5")),
    ],
)
def test_a_duration_written_as_one_token_is_read(
    text: str, written: str, unit: str, value: Decimal
) -> None:
    quantity = find_quantities(text)[-1]
    assert (quantity.text, quantity.unit, quantity.values) == (written, unit, {Decimal(value)})


def test_a_token_of_one_part_or_inside_a_name_is_no_compact_duration() -> None:
    assert [q.text for q in find_quantities("commit 3f9a2 and build-7m42s")] == []


def test_an_m_alone_stays_unread() -> None:
    # Metres or minutes: nothing says which.
    quantities = find_quantities("the 5m cable, 10s later")
    assert [(q.text, q.unit) for q in quantities] == [("5m", None), ("10s", "second")]


@pytest.mark.parametrize(
    ("text", "written", "unit", "value"),
    [
        ("Term: five (5) years from 1 July 2025.", "five (5) years", "year", 5),
        ("on not less than thirty (30) days' notice", "thirty (30) days", "day", 30),
        ("a fee of twelve ( 12 ) percent", "twelve ( 12 ) percent", "percent", 12),
    ],
)
def test_a_number_written_twice_as_contracts_write_it_is_one_quantity(
    text: str, written: str, unit: str, value: int
) -> None:
    quantity = find_quantities(text)[0]
    assert (quantity.text, quantity.unit, quantity.values) == (written, unit, {Decimal(value)})


def test_a_number_written_twice_differently_stays_two_numbers() -> None:
    assert [q.text for q in find_quantities("five (6) years")] == ["five", "6"]


@pytest.mark.parametrize(
    ("text", "unit"),
    [
        ("It costs EUR 40 per month now.", "EUR / month"),
        ("The link moved 12 MB per second yesterday.", "megabyte / second"),
        ("Drafting is EUR 295 an hour throughout.", "EUR / hour"),
    ],
)
def test_a_rate_written_out_stays_a_rate_whatever_word_follows(text: str, unit: str) -> None:
    (quantity,) = find_quantities(text)
    assert quantity.unit == unit


def test_a_period_before_a_noun_is_no_rate() -> None:
    assert _one("the 8.2 kWh daily figure").unit == "kilowatt_hour"
    assert _one("8.2 kWh daily.").unit == "kilowatt_hour / day"


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("3.0 h", "3 hours"),
        ("2500 ms", "2.5 s"),
        ("4.2 t", "4200 kg"),
        ("2048 MiB", "2 GiB"),
        ("€7.10", "EUR 7.10"),
        ("7.10 EUR", "€7.10"),
        ("£90", "GBP 90"),
        ("CHF 95/h", "CHF 95 per hour"),
        ("120 per minute", "2 per second"),
        ("1,200 per year", "100 per month"),
        ("4.5 kWh", "4500 Wh"),
    ],
)
def test_the_same_amount_in_other_words(a: str, b: str) -> None:
    assert same(_one(a), _one(b)) and same(_one(b), _one(a))


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("5 per second", "5 per minute"),
        ("€900 a month", "€900 a year"),
        ("4.5 kWh", "4.5 MWh"),
        ("$40", "£40"),
        ("$40", "USD 40"),
        ("2,450 kg", "2,540 kg"),
        ("12 °C", "12 °F"),
        ("3 hours", "3 days"),
    ],
)
def test_different_amounts_are_not_the_same(a: str, b: str) -> None:
    assert not same(_one(a), _one(b))


def test_a_percentage_is_the_fraction_it_writes() -> None:
    assert same(_one("6.5%"), _one("0.065"))
    assert same(_one("0.9312"), _one("93.12%"))
    assert not same(_one("6.5%"), _one("0.65"))


def test_a_dollar_sign_needs_evidence_that_names_the_dollar() -> None:
    claim = _one("$2,300")
    assert supports(_one("USD 2300"), claim)
    assert supports(_one("2300"), claim, units=["USD"])  # a bare figure in a USD record
    assert not supports(_one("2300"), claim)  # no currency stated
    assert not supports(_one("GBP 2300"), claim)
    assert not supports(_one("$2,300"), _one("USD 2,300"))


def test_a_rate_without_a_currency_does_not_support_one_with_a_currency() -> None:
    assert supports(_one("12.00/day"), _one("12 a day"))
    assert not supports(_one("12.00/day"), _one("$12 a day"))


def test_hedged_claims_round_on_their_side() -> None:
    evidence = _one("3870 kg")
    assert supports(evidence, _one("about 3.9 tonnes"))
    assert supports(evidence, _one("just under 3.9 tonnes"))
    assert not supports(evidence, _one("a little over 3.9 tonnes"))
    assert not supports(evidence, _one("about 39 tonnes"))
    assert not supports(evidence, _one("3.9 tonnes"))  # unhedged: exact only


def test_a_count_is_supported_by_the_same_number_not_by_an_amount() -> None:
    claim = _one("64 cartons")
    assert supports(_one("64"), claim)
    assert supports(_one("64 boxes"), claim)
    assert not supports(_one("EUR 64"), claim)
    assert not supports(_one("46"), claim)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("EUR 1.2 million", Decimal(1_200_000)),
        ("€1.2m", Decimal(1_200_000)),
        ("$4.2bn", Decimal(4_200_000_000)),
        ("£3.5k", Decimal(3_500)),
        ("4.2 billion USD", Decimal(4_200_000_000)),
        ("USD 2 mln", Decimal(2_000_000)),
    ],
)
def test_a_scale_word_multiplies_an_amount_of_money(text: str, value: Decimal) -> None:
    quantity = _one(text)
    assert quantity.kind == "money" and quantity.values == frozenset({value})
    assert quantity.text == text


def test_a_scale_word_needs_a_currency() -> None:
    """``5m`` of cable is five of something written ``m``, not five million."""
    assert Decimal(5) in _one("5m").values
    assert Decimal(5_000_000) not in _one("5m").values


def test_a_scale_letter_counts_only_glued_to_the_number() -> None:
    assert find_quantities("fees of EUR 5 M&A")[0].values == frozenset({Decimal(5)})
    assert _one("EUR 5M").values == frozenset({Decimal(5_000_000)})


@pytest.mark.parametrize("amount", ["£3,500", "EUR 3.500", "3,500 EUR", "$3,500"])
def test_one_mark_before_three_digits_groups_thousands_in_an_amount(amount: str) -> None:
    """In a text that does not say which mark is decimal, a bare ``3,500`` may be
    three and a half; an amount of money never carries three decimals, so it is
    three thousand five hundred, and a claim of £3.50 is not supported by it."""
    assert _one(amount).values == frozenset({Decimal(3500)})
    cents = amount.replace("3,500", "3.50").replace("3.500", "3.50")
    assert not supports(_one(amount), _one(cents))


def test_an_amount_in_a_currency_of_thousandths_keeps_its_three_decimals() -> None:
    assert Decimal("1.25") in _one("BHD 1.250").values


def test_a_number_that_is_not_money_keeps_both_readings() -> None:
    assert _one("1,125").values == frozenset({Decimal("1.125"), Decimal(1125)})


@pytest.mark.parametrize("text", ["-€20", "-EUR 20", "€-20", "EUR -20.00", "-20 EUR"])
def test_a_minus_before_the_currency_or_the_number_makes_the_amount_negative(text: str) -> None:
    assert _one(text).values == frozenset({Decimal(-20)})
    assert not supports(_one("EUR 20.00"), _one(text))


def test_a_dash_between_two_amounts_is_no_minus() -> None:
    assert [q.values for q in find_quantities("€10 - €20")] == [
        frozenset({Decimal(10)}),
        frozenset({Decimal(20)}),
    ]


@pytest.mark.parametrize(
    ("text", "unit", "value"),
    [
        ("US$ 40", "USD", 40),
        ("CA$12", "CAD", 12),
        ("AU$ 15", "AUD", 15),
        ("USD $1,200", "USD", 1200),
        ("$12 USD", "USD", 12),
        ("$12 (CAD)", "CAD", 12),
        ("A$412,930.50", "AUD", Decimal("412930.50")),
        ("C$12", "CAD", 12),
        ("S$ 40", "SGD", 40),
        # What does not name a dollar leaves the sign as any dollar.
        ("the CA $12", "dollar", 12),
        ("$12 (EUR)", "dollar", 12),
        ("$12 USDC", "dollar", 12),
    ],
)
def test_a_code_beside_the_dollar_sign_says_which_dollar(
    text: str, unit: str, value: int | Decimal
) -> None:
    quantity = find_quantities(text)[-1]
    assert (quantity.unit, quantity.values) == (unit, frozenset({Decimal(value)}))


def test_a_named_dollar_supports_its_code_and_no_other() -> None:
    assert supports(_one("$12 (USD)"), _one("USD 12"))
    # A claim's $ reads as the US dollar: a Canadian amount does not state it.
    assert not supports(_one("CA$12"), _one("$12"))
    assert supports(_one("CA$12"), _one("C$12"))
    assert not supports(_one("CA$12"), _one("USD 12"))


@pytest.mark.parametrize(
    ("claim", "evidence", "supported"),
    [
        ("fell 5%", "-5%", True),
        ("fell by 5%", "-5%", True),
        ("down EUR 20", "EUR -20.00", True),
        ("fell 5%", "5%", True),  # a decline written as its size
        ("rose 5%", "-5%", False),
        ("up EUR 20", "EUR -20.00", False),
        ("fell to 5%", "-5%", False),  # a level, not a change
        ("was 5% lower", "-5%", True),
        ("costs EUR 20 less", "EUR -20.00", True),
        ("a 3.5% drop in orders", "-3.5%", True),
        ("5% lower", "5%", True),
        ("5% higher", "-5%", False),
        ("5% lower", "-6%", False),
        ("lower by 5%", "-5%", True),
        ("reduced to 5%", "-5%", False),  # a level, not a change
        ("more than 5% of", "-5%", False),
    ],
)
def test_a_word_of_decrease_reads_the_change_as_negative(
    claim: str, evidence: str, supported: bool
) -> None:
    found = find_quantities(claim)[-1]
    assert supports(_one(evidence), found) is supported


@pytest.mark.parametrize(
    ("claim", "found"),
    [
        ("The sensor read 21 °C.", True),
        ("The sensor read 21°C.", True),
        ("The sensor read 22 °C.", False),
        ("The sensor read 21 °F.", False),
        ("The ambient air was 70 °F.", True),
        ("The grade was 4 °C.", False),  # grade_c: a "c" that is no temperature scale
    ],
)
def test_a_temperature_field_lends_its_scale(claim: str, found: bool) -> None:
    evidence = json.dumps({"sensor": "t2", "temp_c": 21, "ambient_temp_f": 70, "grade_c": 4})
    assert [c.status == "found" for c in check_values(claim, [evidence])] == [found]


@pytest.mark.parametrize(
    ("claim", "found"),
    [
        ("The vans drove 11,075 km.", True),
        ("The vans drove 11,075 miles.", False),
        ("The site used 412.5 kWh.", True),
        ("The invoice totals EUR 1,980.", True),
        ("York's drivers took 12 days off.", True),
        ("York's drivers took 12 hours off.", False),
        # A field that begins with a word a field may begin with for another reason.
        ("The order is at least 5 minutes.", False),
        ("The depot is 1987 years old.", False),
    ],
)
def test_a_unit_symbol_that_begins_a_field_lends_its_unit(claim: str, found: bool) -> None:
    evidence = (
        "depot,km_driven,kwh_used,eur_total,min_order,days_taken,year_built\n"
        "York,11075,412.5,1980,5,12,1987\n"
        "Hull,7920,300,1500,10,4,1992"
    )
    assert [c.status == "found" for c in check_values(claim, [evidence])] == [found]


@pytest.mark.parametrize(
    ("claim", "found"),
    [
        ("The limit is 600 requests per minute.", True),
        ("The limit is 600 requests a minute.", True),
        ("The limit is 10 requests per second.", True),  # the same rate
        ("The limit is 600 per minute.", True),
        ("The limit is 600 requests per hour.", False),  # another period
        ("The limit is 11 requests per second.", False),
        ("Storage costs EUR 45 per day.", True),
        ("Storage costs EUR 45 per hour.", False),
        ("Storage costs EUR 45.", False),  # a rate is no one-off amount
    ],
)
def test_a_field_named_per_a_period_makes_its_value_a_rate(claim: str, found: bool) -> None:
    evidence = json.dumps({"limits": {"per_minute": 600, "burst": 50}, "storage_eur_per_day": 45})
    assert [c.status == "found" for c in check_values(claim, [view_of(evidence).text])] == [found]


PSQL = """analytics=> SELECT region, orders, revenue_aud FROM q1_sales ORDER BY revenue_aud DESC;
 region | orders | revenue_aud
--------+--------+-------------
 NSW    |   1824 |   412,930.50
 VIC    |   1507 |   366,118.00
(2 rows)"""
MARKDOWN = """| SKU | on_hand | price_eur |
|-----|--------:|----------:|
| BT-105 | 120 | 4.50 |
| BT-106 | 95 | 3.20 |"""
MYSQL = """+--------+--------+-----------+
| region | orders | total_gbp |
+--------+--------+-----------+
| North  |    412 |  1,204.50 |
| South  |    388 |    998.00 |
+--------+--------+-----------+"""


@pytest.mark.parametrize(
    ("claim", "table", "found"),
    [
        ("VIC brought in AUD 366,118 from 1,507 orders.", PSQL, [True, True]),
        ("NSW took A$412,930.50.", PSQL, [True]),
        ("NSW took US$412,930.50.", PSQL, [False]),  # the column names the dollar
        ("BT-105 costs €4.50.", MARKDOWN, [True]),
        ("BT-105 costs £4.50.", MARKDOWN, [False]),
        ("North took £1,204.50 from 412 orders.", MYSQL, [True, True]),
        ("North took EUR 1,204.50.", MYSQL, [False]),
    ],
)
def test_a_table_between_pipes_lends_its_columns_units(
    claim: str, table: str, found: list[bool]
) -> None:
    assert [c.status == "found" for c in check_values(claim, [view_of(table).text])] == found


ORDER_LINES = 'sku,qty,price_eur\nSKU-1,12,450.00\nSKU-2,3,120.00\nSKU-3,1,"1,250.00"\n'


@pytest.mark.parametrize(
    ("claim", "found"),
    [
        ("SKU-1 was ordered 12 times.", True),
        ("SKU-1 costs EUR 450.00.", True),
        ("SKU-2 costs EUR 120.00.", True),
        # Two cells are not one amount: 12 and 450.00 are not 12,450.00.
        ("SKU-1 costs EUR 12,450.00.", False),
        ("SKU-2 costs EUR 3,120.00.", False),
    ],
)
def test_no_number_reads_across_two_csv_cells(claim: str, found: bool) -> None:
    assert [c.status == "found" for c in check_values(claim, [ORDER_LINES])] == [found]


@pytest.mark.parametrize(
    ("claim", "found"),
    [
        ("Rent is GBP 12,000 per quarter.", True),
        ("Rent is £12,000 a quarter.", True),
        ("Rent is GBP 12,000 quarterly.", True),
        ("Rent is GBP 4,000 a month.", True),
        ("Rent is GBP 12,000 a month.", False),
        ("Rent is GBP 48,000 per quarter.", False),
    ],
)
def test_a_rate_per_quarter_is_a_quarter_of_the_annual_rate(claim: str, found: bool) -> None:
    evidence = "Rent: GBP 48,000 per annum, payable quarterly in advance."
    assert [c.status == "found" for c in check_values(claim, [evidence])] == [found]


def test_every_occurrence_of_a_value_is_found_in_any_form() -> None:
    text = "Line 1: 2.0 h at EUR 610/h.\nLine 2: 120 minutes of review.\nLine 3: 3.0 h."
    (value,) = claim_values("It took 2 hours.")
    found = occurrences_of(value, evidence_index(text))
    assert [o.text for o in found] == ["2.0 h", "120 minutes"]
