"""Checked arithmetic: a claim's number that is a computation it says it is, over
values of its evidence, exactly; and the miscalculations that name the right value."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from assay.grounding import view_of
from assay.grounding._arithmetic import MAX_OPERANDS, Computation, Miscalculation
from assay.grounding._check import ValueCheck, check_values

CONTAINERS = (
    "YARD   BLOCK  TEU  REEFERS\n"
    "North  A      310  12\n"
    "North  B      264  0\n"
    "South  C      666  40\n"
)


def _check(claim: str, *evidence: str) -> dict[str, ValueCheck]:
    return {c.value.text: c for c in check_values(claim, list(evidence))}


def test_a_sum_over_a_column_with_a_cue_is_accepted_and_records_its_operands() -> None:
    check = _check("The three blocks hold 1,240 containers in total.", CONTAINERS)[
        "1,240 containers"
    ]
    assert check.status == "computed" and check.computation is not None
    computation = check.computation
    assert computation.operation == "sum" and computation.result == 1240
    assert sorted(o.text for o in computation.operands) == ["264", "310", "666"]
    spans = [CONTAINERS[o.start : o.end] for o in computation.operands]
    assert sorted(spans) == ["264", "310", "666"]
    assert {o.document for o in computation.operands} == {0}


def test_the_rows_a_claim_names_are_summed() -> None:
    check = _check("Across its blocks, the North yard holds 574 containers.", CONTAINERS)[
        "574 containers"
    ]
    assert check.status == "computed"


def test_a_sum_without_a_cue_is_not_accepted() -> None:
    check = _check("The yard holds 1,240 containers.", CONTAINERS)["1,240 containers"]
    assert check.status == "missing"


def test_a_wrong_total_names_the_right_one() -> None:
    check = _check("The three blocks hold 1,420 containers in total.", CONTAINERS)[
        "1,420 containers"
    ]
    assert check.status == "miscalculated" and check.miscalculation is not None
    assert check.miscalculation.expected.result == 1240
    assert check.miscalculation.claimed == 1420


def test_a_difference_of_two_values_the_claim_names() -> None:
    evidence = json.dumps({"quote": {"list": 980.0, "offer": 845.5, "currency": "GBP"}})
    checks = _check("The offer of £845.50 is £134.50 below the £980 list price.", evidence)
    assert checks["£134.50"].status == "computed"
    wrong = _check("The offer of £845.50 is £143.50 below the £980 list price.", evidence)
    miss = wrong["£143.50"].miscalculation
    assert isinstance(miss, Miscalculation) and miss.expected.result == Decimal("134.50")


def test_hours_times_rate_is_a_product_in_the_claims_unit() -> None:
    evidence = "Line 4: site survey, 3.5 h at CHF 180/h."
    assert _check("The survey came to CHF 630 in total.", evidence)["CHF 630"].status == "computed"
    # The same figure in another currency is no product of these values.
    assert _check("The survey came to EUR 630 in total.", evidence)["EUR 630"].status == "missing"


def test_a_percentage_of_an_amount() -> None:
    evidence = json.dumps({"invoice": {"net": 240.0, "vat_pct": 20, "currency": "EUR"}})
    checks = _check("VAT at 20% adds €48 to the €240 net.", evidence)
    assert checks["€48"].status == "computed"
    assert _check("VAT at 20% adds €42 to the €240 net.", evidence)["€42"].status != "computed"


def test_a_share_written_as_a_percentage_of_its_fraction() -> None:
    evidence = json.dumps({"sla": {"availability": 0.9975}})
    assert _check("Availability was 99.75%.", evidence)["99.75%"].status == "found"


def test_a_count_of_listed_items() -> None:
    evidence = json.dumps({"orders": [{"id": "A-1"}, {"id": "A-2"}, {"id": "A-3"}]})
    assert _check("The customer placed three orders.", evidence)["three orders"].ok
    assert not _check("The customer placed four orders.", evidence)["four orders"].ok


def test_a_count_of_the_rows_that_name_a_word() -> None:
    checks = _check("Two of the blocks are in the North yard.", CONTAINERS)
    assert checks["Two"].ok


def test_a_tally_line_is_not_one_of_the_records_it_counts() -> None:
    log = (
        "FAILED tests/test_a.py::test_one - AssertionError\n"
        "FAILED tests/test_b.py::test_two - TimeoutError\n"
        "FAILED tests/test_c.py::test_three - KeyError\n"
        "3 failed, 118 passed in 42.7s"
    )
    # Four lines name "failed", but the last counts the other three.
    assert not _check("4 tests failed.", log)["4 tests"].ok
    assert _check("Three tests failed.", log)["Three tests"].ok


def test_days_between_two_dates() -> None:
    evidence = json.dumps({"opened": "2025-02-03", "closed": "2025-02-17"})
    assert _check("The case closed 14 days after it opened.", evidence)["14 days"].ok
    assert not _check("The case closed 15 days after it opened.", evidence)["15 days"].ok
    assert _check("The case closed two weeks after it opened.", evidence)["two weeks"].ok


def test_days_between_two_timestamps_count_calendar_days() -> None:
    # 6 days and 7.7 hours apart: "six days after" counts the days of the calendar.
    evidence = json.dumps(
        {"created_at": "2025-01-14T09:02:11Z", "closed_at": "2025-01-20T16:45:00Z"}
    )
    assert _check("The PR was closed six days after it was opened.", evidence)["six days"].ok
    assert not _check("The PR was closed seven days after it was opened.", evidence)[
        "seven days"
    ].ok
    # Hours stay exact: 151.7 hours is neither 151 nor 152.
    assert not _check("The PR was closed 152 hours after it was opened.", evidence)["152 hours"].ok


def test_minutes_between_two_times_the_claim_names() -> None:
    evidence = "DEP 13:05Z\nARR 14:50Z"
    check = _check("The hop took 1 hour 45 minutes, 13:05Z to 14:50Z.", evidence)
    assert check["1 hour 45 minutes"].status == "computed"


@pytest.mark.parametrize(
    "claim",
    [
        "The deploy of checkout-api 5.3.0 ran for 12.5 minutes.",
        "The deploy finished in 12 minutes 30 seconds.",
        "The rollout spent 750 seconds in production.",
    ],
)
def test_a_run_time_between_two_timestamps(claim: str) -> None:
    evidence = json.dumps(
        {"started_at": "2025-04-02T14:05:00Z", "finished_at": "2025-04-02T14:17:30Z"}
    )
    [check] = _check(claim, evidence).values()
    assert check.status == "computed"
    assert check.computation is not None and check.computation.operation == "elapsed"


def test_a_run_time_that_is_not_the_difference_is_not_accepted() -> None:
    evidence = json.dumps(
        {"started_at": "2025-04-02T14:05:00Z", "finished_at": "2025-04-02T14:17:30Z"}
    )
    assert not _check("The deploy ran for 14 minutes.", evidence)["14 minutes"].ok


def test_unrelated_numbers_do_not_add_up_to_a_claim_by_chance() -> None:
    """A column of many values holds pairs that hit many totals; without the cue
    none is accepted, and a sum is only ever over one column."""
    rows = "\n".join(f"r{k}  {k * 7}  {k * 11}  x" for k in range(1, 30))
    evidence = "ROW  A  B  C\n" + rows
    assert _check("Block r3 holds 100 crates.", evidence)["100 crates"].status == "missing"


def test_the_search_stays_bounded_on_large_evidence() -> None:
    rows = "\n".join(f"r{k},{k}.25,{k * 3}" for k in range(3000))
    evidence = "row,a,b\n" + rows
    check = _check("In total the rows come to 123456.75.", evidence)["123456.75"]
    assert check.status in ("missing", "computed", "miscalculated")
    assert MAX_OPERANDS <= 100


def test_a_computation_record_is_typed() -> None:
    check = _check("The three blocks hold 1,240 containers in total.", CONTAINERS)[
        "1,240 containers"
    ]
    assert isinstance(check.computation, Computation)
    assert check.computation.cue.lower() == "total" and check.computation.unit is None


def test_a_result_read_through_a_unit_conversion_is_recorded_without_its_rounding_noise() -> None:
    record = {"rent_monthly": 1800, "currency": "EUR", "deposit_months": 2}
    listing = view_of(json.dumps(record)).text
    check = _check("The flat needs a two-month deposit of EUR 3,600.", listing)["EUR 3,600"]
    assert isinstance(check.computation, Computation)
    assert check.computation.result == Decimal("3600")
    assert format(check.computation.result.normalize(), "f") == "3600"
