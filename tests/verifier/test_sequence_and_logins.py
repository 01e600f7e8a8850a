"""Order in time and logins read record by record: what dates an event (a time it
writes, the one timestamp of the one record of its code), what it leaves undated,
and which dotted words are logins."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any, cast

import pytest

from assay.grounding import view_of
from assay.ledger import LedgerEntry
from assay.verifier._handles import login_elsewhere
from assay.verifier._sequence import out_of_order

LOG = (
    "2025-07-08 13:02 deploy D-4410 payments-api author=ayesha.k\n"
    "2025-07-08 14:20 deploy D-4412 payments-api author=lee.t"
)
TWO_DAYS = json.dumps(
    {
        "deploys": [
            {"id": "D-1", "at": "2025-07-08T13:02:00Z"},
            {"id": "D-2", "at": "2025-07-09T09:00:00Z"},
        ]
    }
)
TWO_STAMPS = json.dumps(
    {"deploy": "D-7", "started": "2025-07-08T13:00:00Z", "ended": "2025-07-08T13:30:00Z"}
)


@pytest.mark.parametrize(
    ("proposition", "evidence", "wrong"),
    [
        ("The spike at 13:30 UTC followed deploy D-4412.", LOG, True),
        ("The spike at 14:30 UTC followed deploy D-4412.", LOG, False),
        ("Deploy D-4410 came before deploy D-4412.", LOG, False),
        ("Deploy D-4412 came before deploy D-4410.", LOG, True),
        # A time of day is not compared with moments of two days.
        ("The spike at 10:00 UTC followed deploy D-2.", view_of(TWO_DAYS).text, False),
        # A record with two timestamps does not say which one dates the event.
        ("The spike at 12:00 UTC followed deploy D-7.", view_of(TWO_STAMPS).text, False),
        # Neither side dated by the evidence: nothing is read.
        ("The spike at 12:00 UTC followed the 13:00 UTC page.", LOG, False),
    ],
)
def test_an_order_is_contradicted_only_where_the_evidence_dates_both_sides(
    proposition: str, evidence: str, wrong: bool
) -> None:
    assert (out_of_order(proposition, [evidence]) is not None) == wrong


def _entry(text: str) -> LedgerEntry:
    return cast(LedgerEntry, cast(Any, SimpleNamespace(id="led_1", text=text)))


@pytest.mark.parametrize(
    ("proposition", "login"),
    [
        ("Deploy D-4412 was made by ayesha.k.", "ayesha.k"),
        ("@lee.t shipped D-4410.", "lee.t"),
        ("Deploy D-4410 was made by ayesha.k.", None),
        ("Deploy D-4410 went to registry.example.org at 1 p.m.", None),  # a host, a time
        ("Deploy D-4410 was made by priya.s.", None),  # not in the evidence at all
    ],
)
def test_a_login_is_placed_in_the_record_that_gives_it(proposition: str, login: str | None) -> None:
    found = login_elsewhere(proposition, [_entry(LOG)])
    assert (found.login if found else None) == login
