"""Values whose unit or currency the evidence states apart from the number: in a
field beside it, in a ``units`` object, in a column's header, in the field's name, or
in the record's currency; and values packed into one token. Each honest form is
established; the same claim with one value or unit changed is not."""

from __future__ import annotations

import json
from typing import Any

import pytest

from assay.grounding import check_values, ground, view_of


def _text(content: Any) -> str:
    return content if isinstance(content, str) else json.dumps(content)


def _established(claim: str, content: Any) -> bool:
    """Whether the gate's grounding and the value rules both account for every value."""
    text = _text(content)
    grounded = not ground(claim, [view_of(text).text]).missing
    checked = all(c.ok for c in check_values(claim, [text]))
    assert grounded == checked, (grounded, checked)
    return grounded


LAB = {
    "order_id": "LAB-20931",
    "results": [
        {"analyte": "HbA1c", "value": 6.1, "unit": "%"},
        {"analyte": "albumin", "value": 41, "unit": "g/L"},
    ],
}
STATION = {
    "station": "WS-KEL-04",
    "units": {"temp": "°C", "wind": "km/h", "rain": "mm"},
    "observations": {"temp_min": -3.2, "temp_max": 4.9, "wind_max": 41, "rain_total": 6.5},
}
SERIES = {
    "service": "checkout-api",
    "units": {"p99_latency": "ms", "error_rate": "%"},
    "series": [
        {"hour": "11:00", "p99_latency": 412, "error_rate": 0.4},
        {"hour": "12:00", "p99_latency": 2310, "error_rate": 2.6},
    ],
}
PAYROLL = (
    "employee_id,name,hours,rate (CAD/h),gross (CAD)\n"
    "E-1042,Maya Okafor,37.5,42.00,1575.00\n"
    "E-1043,Luis Brandt,40.0,38.50,1540.00\n"
    "E-1044,Ines Varga,22.5,45.00,1012.50\n"
)
KELSO = (
    "| Day | Temp (°C) | Rain (mm) |\n|---|---|---|\n"
    "| Mon | 1.4 | 0.0 |\n| Tue | -2.1 | 0.0 |\n| Thu | 3.8 | 11.6 |"
)
BILLING = {"engagement": "ENG-4471", "billing": {"currency": "CAD", "hourly_rate": 240}}
FOLIO = {"folio": "HF-30917", "currency": "CAD", "nightly_rate": 189}
ORDER_USD = {"order_id": "A-1093", "total": 129.0, "currency": "USD"}
ORDER_CAD = {"order_id": "C-5521", "total": 69.5, "currency": "CAD"}
BOOKING = {"pnr": "QX7K2M", "baggage": "2PC 23KG", "packaging": "12x1L"}
PARCEL = {"parcel": "PK-4410", "weight_kg": 2.35}


@pytest.mark.parametrize(
    ("honest", "wrong", "content"),
    [
        # A unit in a field beside the value.
        ("HbA1c is 6.1%.", "HbA1c is 6.7%.", LAB),
        ("Albumin is 41 g/L.", "Albumin is 41 mg/L.", LAB),
        # A units object that names the fields it applies to.
        ("6.5 mm of rain fell.", "6.5 cm of rain fell.", STATION),
        ("Gusts reached 41 km/h.", "Gusts reached 41 km.", STATION),
        ("The p99 latency peaked at 2.31 s.", "The p99 latency peaked at 2.31 ms.", SERIES),
        ("At 11:00 the error rate was 0.4%.", "At 11:00 the error rate was 4%.", SERIES),
        # A column's header, in CSV and Markdown.
        ("Ines Varga is paid CAD 45 an hour.", "Ines Varga is paid CAD 45 a day.", PAYROLL),
        ("Gross pay was C$1,575.00.", "Gross pay was €1,575.00.", PAYROLL),
        ("Thursday had 11.6 mm of rain.", "Thursday had 11.6 cm of rain.", KELSO),
        # A price per period named by the field, in the record's currency.
        ("The rate is C$240 an hour.", "The rate is €240 an hour.", BILLING),
        ("It is 189 Canadian dollars a night.", "It is 189 US dollars a night.", FOLIO),
        ("It is CAD 189 a night.", "It is CAD 189 a week.", FOLIO),
        # The record's currency, and a number equal by value (129.0 and 129).
        ("Order A-1093 totals $129.", "Order A-1093 totals $192.", ORDER_USD),
        ("It came to 129.00 US dollars.", "It came to 129.00 euros.", ORDER_USD),
        ("Order C-5521 totals CAD 69.50.", "Order C-5521 totals $69.50.", ORDER_CAD),
        ("Order C-5521 totals C$69.50.", "Order C-5521 totals US$69.50.", ORDER_CAD),
        # Packed fields read into their parts.
        ("It holds two 23 kg bags.", "It holds two 32 kg bags.", BOOKING),
        ("It holds twelve 1 L bottles.", "It holds twelve 1.5 L bottles.", BOOKING),
        # An ambiguous number read with the evidence's decimal point.
        ("Parcel PK-4410 weighs 2,350 g.", "Parcel PK-4410 weighs 2,350 kg.", PARCEL),
    ],
)
def test_a_unit_stated_apart_from_its_number(honest: str, wrong: str, content: Any) -> None:
    assert _established(honest, content)
    assert not _established(wrong, content)


def test_a_units_object_lends_its_unit_only_to_the_fields_it_names() -> None:
    content = {"units": {"wind": "km/h"}, "wind_max": 41, "rain_total": 41}
    assert _established("Gusts reached 41 km/h.", content)
    other = {"units": {"wind": "km/h"}, "rain_total": 41}
    assert not _established("Gusts reached 41 km/h.", other)


def test_a_units_object_lends_its_unit_only_inside_the_record_that_holds_it() -> None:
    content = {"a": {"units": {"load": "kg"}, "load": 12}, "b": {"load": 30}}
    assert _established("A carries 12 kg.", content)
    assert not _established("B carries 30 kg.", content)


def test_a_records_percent_is_not_lent_to_the_rest_of_the_text() -> None:
    content = {"rate": {"value": 6.1, "unit": "%"}, "count": 41}
    assert _established("The rate is 6.1%.", content)
    assert not _established("The share is 41%.", content)


@pytest.mark.parametrize(
    ("claim", "content", "supported"),
    [
        ("It costs $12.", {"price": 12, "currency": "USD"}, True),
        ("It costs $12.", {"price": 12, "currency": "CAD"}, False),
        ("It costs $12.", {"price": 12, "currency": "AUD"}, False),
        ("It costs $12.", "Price: CA$12", False),
        ("It costs $12.", "Price: $12", True),
        ("It costs C$12.", "Price: CA$12", True),
        ("It costs USD 12.", "Price: $12", False),
        ("It costs $12.", {"price_usd": 12}, True),
        ("It costs $12.", {"price_cad": 12}, False),
    ],
)
def test_a_claims_dollar_sign_is_the_us_dollar(claim: str, content: Any, supported: bool) -> None:
    assert _established(claim, content) is supported
