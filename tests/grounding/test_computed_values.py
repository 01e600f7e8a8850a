"""Values an honest report computes from its evidence: time elapsed (with its
endpoints, across time zones, "about", "within", "later"), a date plus a number of
days, a sum, a difference of one field of two records, a count of part of a group,
and the largest or smallest of a column. Each is established; the same claim with
the value changed is not, and where the claim says what it computed, the refusal
names the right value."""

from __future__ import annotations

import json
from typing import Any

import pytest

from assay.grounding import Grounded, describe_computation, ground, view_of


def _grounding(claim: str, content: Any) -> tuple[Grounded, ...]:
    text = content if isinstance(content, str) else json.dumps(content)
    return ground(claim, [view_of(text).text]).values


def _established(claim: str, content: Any) -> bool:
    return all(g.established for g in _grounding(claim, content))


def _right_value(claim: str, content: Any) -> str:
    """What the refusal of ``claim`` says the right value is."""
    wrong = [g.miscalculation for g in _grounding(claim, content) if g.miscalculation]
    assert len(wrong) == 1, _grounding(claim, content)
    return describe_computation(wrong[0])


TIMELINE = (
    "INC-7712 timeline (all times UTC, 2025-06-14)\n"
    "12:06 alert fired: checkout p99 latency above 2 s\n"
    "12:09 on-call (R. Mensah) acknowledged\n"
    "12:14 rollback of release 2025.06.14-2 started\n"
    "12:21 rollback complete, latency back to normal\n"
    "12:58 incident resolved after monitoring"
)
FLIGHT = {
    "flight": "AC 871",
    "dep": "2025-03-09T21:40:00-05:00",
    "arr": "2025-03-10T10:55:00+01:00",
}
PIPELINE = {
    "pipeline_id": 48213,
    "created_at": "2025-05-06T09:14:03Z",
    "finished_at": "2025-05-06T09:31:48Z",
}
DEPLOY = {
    "release": "R-3",
    "approved_at": "2025-06-14T11:52:00Z",
    "deployed_at": "2025-06-14T12:03:00Z",
}
TICKET = {"ticket": "SUP-9031", "opened": "2025-09-03T08:12:00Z", "closed": "2025-09-05T16:03:00Z"}
MANIFEST = {"manifest": "SM-88410", "ship_date": "2025-07-02", "transit_days": 9}
LOAN = {"loan": "LN-7720", "issued": "2025-05-20", "loan_period_weeks": 3}
METER = {
    "meter": "EM-2291",
    "reading": {"value": 1520.4, "unit": "kWh"},
    "previous": {"value": 1312.9, "unit": "kWh"},
}
PALLETS = {
    "manifest": "SM-88410",
    "pallets": [
        {"id": "PAL-01", "weight_kg": 412.5},
        {"id": "PAL-02", "weight_kg": 388.0},
        {"id": "PAL-03", "weight_kg": 401.5},
    ],
}
TICKETS = {
    "tickets": [
        {"key": "OPS-311", "status": "closed"},
        {"key": "OPS-312", "status": "open"},
        {"key": "OPS-313", "status": "closed"},
        {"key": "OPS-314", "status": "in_progress"},
        {"key": "OPS-315", "status": "closed"},
    ]
}
KELSO = (
    "| Day | Temp (°C) | Rain (mm) |\n|---|---|---|\n"
    "| Mon | 1.4 | 0.0 |\n| Tue | -2.1 | 0.0 |\n| Wed | 0.3 | 4.2 |\n"
    "| Thu | 3.8 | 11.6 |\n| Fri | 5.0 | 2.2 |"
)


@pytest.mark.parametrize(
    ("honest", "wrong", "content"),
    [
        # Both endpoints, and the duration between them.
        (
            "It lasted 15 minutes, from 12:06 to 12:21.",
            "It lasted 25 minutes, from 12:06 to 12:21.",
            TIMELINE,
        ),
        # The records the claim speaks of, not any two times of the log.
        (
            "R. Mensah acknowledged the alert 3 minutes after it fired.",
            "R. Mensah acknowledged the alert 5 minutes after it fired.",
            TIMELINE,
        ),
        (
            "INC-7712 was resolved 52 minutes after the alert fired.",
            "INC-7712 was resolved 42 minutes after the alert fired.",
            TIMELINE,
        ),
        # Across time zones.
        (
            "AC 871 lands 7 hours 15 minutes after it leaves.",
            "AC 871 lands 13 hours 15 minutes after it leaves.",
            FLIGHT,
        ),
        # About, within, later.
        (
            "Pipeline 48213 finished about 18 minutes after it was created.",
            "Pipeline 48213 finished about 28 minutes after it was created.",
            PIPELINE,
        ),
        (
            "R-3 reached production within 11 minutes of its approval.",
            "R-3 reached production within 6 minutes of its approval.",
            DEPLOY,
        ),
        ("SUP-9031 was closed two days later.", "SUP-9031 was closed three days later.", TICKET),
        # A date plus a number of days (or weeks) the evidence states.
        (
            "SM-88410 should arrive on 11 July 2025, 9 days after it ships.",
            "SM-88410 should arrive on 12 July 2025, 9 days after it ships.",
            MANIFEST,
        ),
        (
            "LN-7720 is due back on 10 June 2025, three weeks after it was issued.",
            "LN-7720 is due back on 11 June 2025, three weeks after it was issued.",
            LOAN,
        ),
        # One field of two records.
        (
            "EM-2291 used 207.5 kWh since the previous reading.",
            "EM-2291 used 217.5 kWh since the previous reading.",
            METER,
        ),
        # A sum over a column.
        (
            "The three pallets weigh 1,202 kg in total.",
            "The three pallets weigh 1,220 kg in total.",
            PALLETS,
        ),
        ("Kelso had 18 mm of rain in total.", "Kelso had 19 mm of rain in total.", KELSO),
        # A count of part of a group.
        ("Three of the five tickets are closed.", "Four of the five tickets are closed.", TICKETS),
        # The largest or smallest of a column, and which row holds it.
        (
            "The heaviest pallet is PAL-01, at 412.5 kg.",
            "The heaviest pallet is PAL-03, at 401.5 kg.",
            PALLETS,
        ),
        (
            "The coldest day was Tuesday, at -2.1 °C.",
            "The coldest day was Monday, at 1.4 °C.",
            KELSO,
        ),
        (
            "The wettest day was Thursday, with 11.6 mm.",
            "The wettest day was Wednesday, with 4.2 mm.",
            KELSO,
        ),
    ],
)
def test_a_computed_value(honest: str, wrong: str, content: Any) -> None:
    assert _established(honest, content)
    assert not _established(wrong, content)


@pytest.mark.parametrize(
    ("claim", "content", "named"),
    [
        (
            "SM-88410 should arrive on 12 July 2025, 9 days after it ships.",
            MANIFEST,
            "2025-07-02 plus 9 days in the cited evidence is 2025-07-11",
        ),
        (
            "The heaviest pallet is PAL-03, at 401.5 kg.",
            PALLETS,
            "the largest value of pallets[*].weight_kg in the cited evidence is 412.5",
        ),
        (
            "The coldest day was Monday, at 1.4 °C.",
            KELSO,
            "the smallest value of Temp (°C) in the cited evidence is -2.1",
        ),
        ("The three pallets weigh 1,220 kg in total.", PALLETS, "is 1202"),
    ],
)
def test_a_wrong_value_is_refused_naming_the_right_one(
    claim: str, content: Any, named: str
) -> None:
    assert named in _right_value(claim, content)


def test_an_extreme_in_another_unit_is_named_in_the_claims_unit() -> None:
    jobs = {
        "jobs": [{"name": "build", "duration_ms": 184000}, {"name": "test", "duration_ms": 612500}]
    }
    assert _established("The longest job was test, at 612.5 seconds.", jobs)
    assert _right_value("The longest job was build, at 184 seconds.", jobs).endswith("612.5")


def test_a_superlative_speaks_of_the_value_after_it_not_of_every_value() -> None:
    claim = "The coldest day was Tuesday at -2.1 °C, and Friday reached 5.0 °C."
    assert _established(claim, KELSO)


def test_a_digit_counts_part_of_a_group_only_before_the_groups_size() -> None:
    assert _established("Aisle 7 of the depot holds the stock.", "Depot map: aisle 7, bay 3")
    assert not _established("2 of the 5 tickets are open.", TICKETS)
    assert _established("1 of the 5 tickets is open.", TICKETS)


def test_a_date_shift_needs_a_cue_and_a_related_number_of_days() -> None:
    # No word says the date is computed: only a date the evidence writes will do.
    assert not _established("SM-88410 should arrive on 11 July 2025.", MANIFEST)
    # Days the evidence does not state shift nothing.
    assert not _established("It arrives on 13 July 2025, 11 days after it ships.", MANIFEST)


def test_a_range_writes_its_zone_once() -> None:
    window = "Outage window: 12:06-12:21 UTC"
    assert _established("The outage lasted 15 minutes, from 12:06 to 12:21 UTC.", window)
    assert not _established("The outage lasted 25 minutes, from 12:06 to 12:21 UTC.", window)
