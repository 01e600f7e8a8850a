"""The derivation language: each function over cited values read as the grounding
reads them, the comparison with a stated result by value, each kind of malformed
expression refused with its reason, the size limits, and no path to ``eval``."""

from __future__ import annotations

from decimal import Decimal

import pytest

from assay.grounding import (
    DERIVATION_FUNCTIONS,
    MAX_DERIVATION_CHARS,
    MAX_DERIVATION_NODES,
    CitedValue,
    Derived,
    derivation_cites,
    derive,
    states_result,
)


def field(value: object, key: str | None = None) -> CitedValue:
    return CitedValue(field=value, key=key)


def quote(text: str) -> CitedValue:
    return CitedValue(quote=text)


START, END = quote("06:12 UTC"), quote("06:49 UTC")
LINES = field(
    [
        {"status": "closed", "hours": Decimal("3.0")},
        {"status": "open", "hours": Decimal("4.5")},
        {"status": "closed", "hours": 1},
    ]
)


def derived(expr: str, result: str, cited: list[CitedValue | None]) -> Derived:
    found = derive(expr, result, cited)
    assert isinstance(found, Derived), found
    return found


@pytest.mark.parametrize(
    ("expr", "result", "cited"),
    [
        ("elapsed($0, $1)", "37 minutes", [START, END]),
        ("elapsed($0, $1)", "0.6167 h", [START, END]),
        (
            "elapsed($0, $1)",
            "1 hour",
            [field("2024-10-01T00:00:00+01:00"), field("2024-10-01T00:00:00+00:00")],
        ),
        (
            "elapsed($0, $1)",
            "2 hours",
            [field("2024-10-01T00:00:00+01:00"), field("2024-10-01T01:00:00Z")],
        ),
        ("elapsed($0, $1)", "two days", [field("2024-08-27"), field("29 August 2024")]),
        ("elapsed($0, $1)", "20 minutes", [quote("23:50"), quote("00:10")]),
        (
            "$1 - $0",
            "1 hour 15 minutes",
            [field("2024-12-03T06:55:00Z"), field("2024-12-03T08:10:00Z")],
        ),
        (
            "sum($0, $1, $2)",
            "7.5 hours",
            [field(Decimal("3.0"), "hours"), field(Decimal("4.5"), "hours"), field(0, "hours")],
        ),
        ("sum($0)", "EUR 1,246.50", [field([Decimal("1000"), Decimal("246.5")], "amount_eur")]),
        (
            "$0 - $1",
            "429.3 kWh",
            [field(Decimal("18771.9"), "value_kwh"), field(Decimal("18342.6"), "value_kwh")],
        ),
        ("$0 * $1", "EUR 3,600", [field(1800, "rent_monthly"), field(2, "deposit_months")]),
        ("$0 / $1", "EUR 199 a night", [quote("EUR 398"), field(2, "nights")]),
        ("$0 / $1", "129", [field(258), field(2)]),
        ("$0 / $1", "129.0", [field(258), field(2)]),
        ("percent($0, $1)", "25%", [field(5), field(20)]),
        ("bp($0, $1)", "250", [field(5), field(200)]),
        ('to($1 - $0, "bp")', "25", [quote("4.25%"), quote("4.50%")]),
        ('to(elapsed($0, $1), "min")', "37", [START, END]),
        ("$0 * $1", "€14.50", [quote("€116.00"), quote("12.5%")]),
        ("count($0)", "3", [LINES]),
        ('count($0, status == "closed")', "two", [LINES]),
        ('count($0, status == "closed" and hours > 2)', "1", [LINES]),
        ('count($0, not status == "closed" or hours >= 4.5)', "1", [LINES]),
        ('count($0, "open" != status)', "2", [LINES]),
        ("min($0)", "1", [field([3, 1, 2])]),
        ("max($0, $1)", "2025-04-30", [field("2025-04-13"), field("2025-04-30")]),
        ("$0 + days(14)", "2025-04-27", [field("2025-04-13")]),
        ("$0 - weeks(2)", "30 March 2025", [field("2025-04-13")]),
        ("$0 + hours(2)", "2025-04-13 08:12 UTC", [field("2025-04-13T06:12:00Z")]),
        # A value that is already a duration is converted, not refused.
        ("$0 + days($1)", "2025-07-11", [field("2025-07-02"), field(9, "transit_days")]),
        ("$0 + days($1)", "2025-07-11", [field("2025-07-02"), quote("9 days")]),
        (
            "$0 + hours($1)",
            "2025-04-13 07:42 UTC",
            [field("2025-04-13T06:12:00Z"), quote("90 minutes")],
        ),
        ("days($0)", "2", [field(48, "hours")]),
        ("-$0 + $1", "4", [field(1), field(5)]),
        ("$0", "1,246.5", [quote("EUR 1,246.50")]),
    ],
)
def test_each_function_evaluates_to_its_stated_result(
    expr: str, result: str, cited: list[CitedValue | None]
) -> None:
    assert derived(expr, result, cited).holds


@pytest.mark.parametrize(
    ("expr", "result", "cited", "right"),
    [
        ("elapsed($0, $1)", "47 minutes", [START, END], "37 minutes"),
        ("elapsed($0, $1)", "0.7 h", [START, END], "0.6 h"),
        ("sum($0)", "EUR 1,246", [field([Decimal("1000"), Decimal("246.5")])], "EUR 1,246.50"),
        ("sum($0)", "EUR 1,246.49", [field([Decimal("1000"), Decimal("246.5")])], "EUR 1,246.50"),
        ('count($0, status == "closed")', "3", [LINES], "2"),
        ("$0 + days(14)", "2025-04-28", [field("2025-04-13")], "2025-04-27"),
        ("$0 / $1", "EUR 50", [quote("EUR 100"), quote("2 hours")], None),
    ],
)
def test_a_wrong_result_names_the_right_value(
    expr: str, result: str, cited: list[CitedValue | None], right: str | None
) -> None:
    found = derived(expr, result, cited)
    assert not found.holds
    if right is not None:
        assert found.value == right


def test_a_statement_says_what_was_computed_from_what() -> None:
    found = derived("elapsed($0, $1)", "47 minutes", [START, END])
    assert found.statement == "the time between 06:12 UTC and 06:49 UTC is 37 minutes"
    assert found.operation == "elapsed" and found.cites == (0, 1)
    assert derivation_cites("elapsed($3, $1) + to($3, '$9')") == (3, 1)


@pytest.mark.parametrize(
    ("expr", "result", "cited", "why"),
    [
        ("elapsed($0, $1", "1", [START, END], "does not parse"),
        ("$0 $1", "1", [START, END], "does not parse"),
        ("", "1", [], "does not parse"),
        ("$2", "1", [START, END], "$2 names no citation (the proposition has 2)"),
        ("$0", "1", [None], "$0 names nothing"),
        ("x + 1", "1", [], "'x' is not a citation"),
        ("$0.hour", "1", [START], "attribute access"),
        ("$0[0]", "1", [LINES], "indexing"),
        ("$0 ** 2", "1", [field(2)], "that operator"),
        ("$0 if $0 else $1", "1", [field(2)], "not part of the language"),
        ("lambda: 1", "1", [], "a function definition"),
        ('"1"', "1", [], "a literal outside to() and count()"),
        ("$0 == 1", "1", [field(1)], "a comparison outside count()"),
        ("round($0)", "1", [field(1)], "'round' is not a function of the language"),
        ("sum(*$0)", "1", [LINES], "not keywords or *"),
        ("sum(start=$0)", "1", [LINES], "not keywords or *"),
        ("count($0, $1)", "1", [LINES, field(1)], "a condition compares"),
        ("count($0, status)", "1", [LINES], "a condition compares"),
        ("count($0, status == other)", "1", [LINES], "compared with a number or a text"),
        ('to($0, "parsecs")', "1", [field(1, "hours")], "not a unit the registry knows"),
        ("to($0, 1)", "1", [field(1, "hours")], 'to($0, "h")'),
        ("count($0)", "1", [field(3)], "count() takes a cited array"),
        ("count($0, status == 'x')", "1", [field([1, 2])], "an array of records"),
        ("elapsed($0, $1)", "1", [field(1), field(2)], "takes two dates"),
        ("elapsed($0, $1)", "1", [field("2025-04-13"), START], "cite two of one kind"),
        (
            "elapsed($0, $1)",
            "1",
            [field("2025-04-13T06:12:00Z"), field("2025-04-13T07:00:00")],
            "a zone",
        ),
        ("$0 + $1", "1", [quote("EUR 1"), quote("2 hours")], "measure different things"),
        ("$0 + 14", "2025-04-27", [field("2025-04-13")], "needs a unit: days(14)"),
        ("$0 + $1", "1", [field("2025-04-13"), field("2025-04-14")], "not a date"),
        ("sum($0)", "1", [LINES], "is not a number"),
        ("$0", "1", [field(True)], "true/false field"),
        ("$0", "1", [field({"a": 1})], "is a record"),
        ("$0", "1", [field(None)], "is null"),
        ("$0", "1", [quote("held 37 cartons against 41 expected")], "holds 2 values"),
        ("$0", "1", [quote("1,256 rolls")], "ambiguous"),
        ("$0 / 0", "1", [field(1)], "divides by zero"),
        ("percent($0, $1)", "1", [field(1), field(0)], "the whole is zero"),
        ("$0", "lots", [field(1)], "must state one number"),
        ("$0", "2025-04-13", [field(1)], "is a date or time; the expression gives a number"),
        ("days($0)", "1", [field(2, "amount_eur")], "a plain number or a duration"),
    ],
)
def test_a_malformed_derivation_is_refused_with_its_reason(
    expr: str, result: str, cited: list[CitedValue | None], why: str
) -> None:
    found = derive(expr, result, cited)
    assert isinstance(found, str)
    assert why in found


@pytest.mark.parametrize(
    "expr",
    [
        "__import__('os').system('true')",
        "().__class__.__bases__[0].__subclasses__()",
        "eval('1')",
        "exec('x = 1')",
        "_cite0",
        "[x for x in ()]",
        "(lambda: 0)()",
        "$0.__class__",
        "f'{$0}'",
    ],
)
def test_nothing_reaches_eval(expr: str) -> None:
    assert isinstance(derive(expr, "1", [field(1)]), str)


def test_the_size_limits() -> None:
    at_limit = "+".join(["1"] * (MAX_DERIVATION_NODES // 3))
    assert isinstance(derive(at_limit, str(MAX_DERIVATION_NODES // 3), []), Derived)
    too_many = "+".join(["1"] * MAX_DERIVATION_NODES)
    assert "syntax nodes" in str(derive(too_many, "1", []))
    too_long = "1" + " " * MAX_DERIVATION_CHARS
    assert "characters long" in str(derive(too_long, "1", []))
    deep = "(" * 150 + "1" + ")" * 150  # within both limits: read, and evaluated
    assert isinstance(derive(deep, "1", []), Derived)


def test_every_function_is_documented() -> None:
    assert set(DERIVATION_FUNCTIONS) == {
        "sum",
        "min",
        "max",
        "count",
        "elapsed",
        "days",
        "weeks",
        "hours",
        "minutes",
        "to",
        "percent",
        "bp",
    }


@pytest.mark.parametrize(
    ("text", "states"),
    [
        ("The outage lasted 37 minutes.", True),
        ("The outage lasted 0.6166666666666666666666666667 hours.", True),
        ("The outage lasted 47 minutes.", False),
        ("The outage lasted about 37 minutes.", False),
        ("The outage lasted 37 seconds.", False),
    ],
)
def test_a_text_states_a_result_exactly(text: str, states: bool) -> None:
    found = derived("elapsed($0, $1)", "37 minutes", [START, END])
    assert states_result(text, found) is states
