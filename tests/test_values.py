"""Whether an action's numbers and booleans are established by text: the honest
paraphrases that must pass and the invented or mis-united values that must not."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from assay._values import Slots, mentions, role_problems, ungrounded_values, unroled_arguments

LINE = "Line 3: Partner review, 2.0 h at EUR 610/h, EUR 1,220."


def _schema(**props: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": props}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("EUR 875.00", [({"875.00"}, "EUR")]),
        ("€1.917,50", [({"1917.50"}, "EUR")]),
        ("1,200 units", [({"1200", "1.200"}, None)]),
        ("99.9%", [({"99.9"}, "percent")]),
        ("EUR 295 per hour", [({"295"}, "EUR / hour")]),
        ("at EUR 610/h", [({"610"}, "EUR / hour")]),
        ("refund of -5", [({"-5"}, None)]),
        ("INV-4421 and W-12", []),
        ("1\u202f000 kg", [({"1000"}, "kilogram")]),
        ("\uff11\uff12\uff10 units", [({"120"}, None)]),
    ],
)
def test_numbers_are_read_with_their_units(text: str, expected: list[Any]) -> None:
    found = [({str(v) for v in m.values}, m.unit) for m in mentions(text)]
    assert found == expected


def test_a_count_names_what_it_counts() -> None:
    (mention,) = mentions("W-12 holds 120 units of BT-105")
    assert mention.after == "units" and mention.values == {Decimal(120)}


HONEST = [
    ({"amount": 875.0}, {"amount": {"x-assay-unit": "EUR"}}, "exceeds the cap by EUR 875.00"),
    ({"amount": 1220}, {"amount": {"x-assay-unit": "EUR"}}, LINE),
    ({"hours": 2}, {"hours": {"x-assay-unit": "hours"}}, LINE),
    ({"rate": 610}, {"rate": {"x-assay-unit": "EUR/h"}}, LINE),
    ({"line": 3}, {}, LINE),
    ({"units": 120}, {"units": {"x-assay-unit": "units"}}, "W-12 holds 120 units of BT-105."),
    ({"share": 0.5}, {}, '{"share": 0.5, "ok": true}'),
    ({"ok": True}, {}, '{"share": 0.5, "ok": true}'),
    ({"urgent": True}, {"urgent": {"x-assay-grounding": "choice"}}, "nothing about it"),
    ({"n": 12}, {"n": {"x-assay-unit": "widget"}}, "we hold 12 widgets"),
    ({"items": [{"qty": 2}]}, {}, "two lines, qty 2 each"),
    ({"minutes": 120}, {"minutes": {"x-assay-unit": "min"}}, LINE),  # 2.0 h is 120 minutes
    ({"amount": 1917.5}, {"amount": {"x-assay-unit": "EUR"}}, "a total of 1.917,50 EUR"),
    ({"items": 120}, {"items": {"x-assay-unit": "pieces"}}, "W-12 holds 120 units of BT-105."),
]
INVENTED = [
    ({"amount": 400}, {"amount": {"x-assay-unit": "EUR"}}, "exceeds the cap by EUR 875.00"),
    ({"amount": 610}, {"amount": {"x-assay-unit": "EUR"}}, LINE),  # a rate, not an amount
    ({"amount": 42.5}, {"amount": {"x-assay-unit": "USD"}}, "charged $42.50"),
    ({"hours": 20}, {"hours": {"x-assay-unit": "h"}}, LINE),
    ({"ok": False}, {}, '{"share": 0.5, "ok": true}'),
    ({"notify": True}, {}, "nothing about it"),
    ({"n": 4421}, {}, "invoice INV-4421"),
    ({"n": float("inf")}, {}, "inf"),
    ({"items": [{"qty": 3}]}, {}, "two lines, qty 2 each"),
    ({"rate": 610}, {"rate": {"x-assay-unit": "EUR/min"}}, LINE),  # per hour, not per minute
    ({"n": 12}, {"n": {"x-assay-unit": "widget"}}, "we hold 12 gadgets"),
    ({"amount": 40}, {"amount": {"x-assay-unit": "GBP"}}, "paid $40"),
]


@pytest.mark.parametrize(("args", "props", "text"), HONEST)
def test_honest_values_are_established(
    args: dict[str, Any], props: dict[str, Any], text: str
) -> None:
    assert ungrounded_values(args, _schema(**props), [text]) == []


@pytest.mark.parametrize(("args", "props", "text"), INVENTED)
def test_invented_values_are_not(args: dict[str, Any], props: dict[str, Any], text: str) -> None:
    problems = ungrounded_values(args, _schema(**props), [text])
    assert len(problems) == 1 and problems[0][0].startswith("/")


def test_only_limits_the_check_to_named_arguments() -> None:
    args = {"a": 1, "b": 2}
    assert ungrounded_values(args, None, ["a is 1"], only=["/a"]) == []
    assert [p for p, _ in ungrounded_values(args, None, ["a is 1"])] == ["/b"]


def test_deep_and_large_values_are_walked_without_recursion() -> None:
    value: Any = 7
    for _ in range(50_000):
        value = [value]
    assert [p.count("/") for p, _ in ungrounded_values({"x": value}, None, ["6"])] == [50_001]
    text = "1,111 " * 200_000  # a million characters of numbers, read in one pass
    found = mentions(text)
    assert len(found) == 200_000
    assert all(m.values == {Decimal("1.111"), Decimal(1111)} for m in found)


CURRENCY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "amount": {
            "type": "number",
            "x-assay-unit": {"argument": "currency"},
            "x-assay-role": {"pred": "over_cap", "arg": 1},
        },
        "currency": {"type": "string"},
    },
}


@pytest.mark.parametrize(
    ("currency", "text", "grounded"),
    [
        ("USD", "Line 4 is USD 600.00 over the cap in total.", True),
        ("GBP", "Line 2 is £300.00 over the cap in total.", True),
        ("EUR", "Line 4 is USD 600.00 over the cap in total.", False),
        (None, "Line 4 is USD 600.00 over the cap in total.", False),
        (7, "Line 4 is USD 600.00 over the cap in total.", False),
    ],
)
def test_a_unit_may_be_the_value_of_another_argument(
    currency: object, text: str, grounded: bool
) -> None:
    args: dict[str, Any] = {"amount": 600.0 if "600" in text else 300.0}
    if currency is not None:
        args["currency"] = currency
    problems = ungrounded_values(args, CURRENCY_SCHEMA, [text])
    assert (problems == []) is grounded, problems
    slots = [Slots(pred="over_cap", args=("Line 4", text.split(" is ")[1].split(" over")[0]))]
    assert (role_problems(args, CURRENCY_SCHEMA, slots) == []) is grounded


def test_an_argument_that_gives_a_roled_amount_its_unit_is_bound_through_it() -> None:
    args = {"amount": 600.0, "currency": "USD"}
    assert unroled_arguments(args, CURRENCY_SCHEMA) == []
    loose = {"properties": {"amount": {"x-assay-unit": {"argument": "currency"}}}}
    assert unroled_arguments(args, loose) == ["/amount", "/currency"]
