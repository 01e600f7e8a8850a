"""A proposition one record of its evidence accounts for slot by slot: code settles
its values, identifiers and names, and the verifier entails it where the model
leaves it open without reading a contradiction; a value, an identifier or a name
held by another record, or by none, accounts for nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from assay import ControlPlane
from assay.ledger import LedgerEntry
from assay.verifier import Verifier
from assay.verifier._accounted import accounted
from tests.verifier.test_ledger_verifier import handover

PUMP = (
    "Maintenance log, pump station 3: on 2 June 2025 the technician Rui Alves replaced "
    "the seal on pump P-3B; vibration fell to 2.1 mm/s."
)
METER = json.dumps(
    {
        "meter": "MTR-7712",
        "reads": [{"date": "2025-05-01", "kwh": 1520.4}, {"date": "2025-06-01", "kwh": 1711.9}],
    }
)
ORDER = json.dumps(
    {
        "order_id": "A-1093",
        "customer": "Lena Park",
        "delivered_on": "2025-03-14",
        "items": [{"sku": "MUG-12", "price": 18.0}, {"sku": "TEA-500", "price": 48.5}],
        "total": 84.5,
        "currency": "USD",
    }
)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    with ControlPlane.open(f"sqlite:///{tmp_path_factory.mktemp('accounted')}/a.db") as cp:
        yield cp


def _entry(store: ControlPlane, text: str) -> LedgerEntry:
    run = store.ledger.start_run()
    return store.ledger.append(run, kind="tool_output", source="tool:read", content=text)


@pytest.mark.parametrize(
    ("evidence", "claim", "record"),
    [
        (PUMP, "On 2 June 2025 Rui Alves fitted a new seal to pump P-3B.", "line 1"),
        (ORDER, "Lena Park's order A-1093 came to $84.50 on 14 March 2025.", ""),
        (ORDER, "Order A-1093 includes TEA-500 at USD 48.50.", "items[1]"),
    ],
)
def test_one_record_holding_every_slot_accounts_for_it(
    store: ControlPlane, evidence: str, claim: str, record: str
) -> None:
    found = accounted(claim, [_entry(store, evidence)])
    assert found is not None and found.record == record


@pytest.mark.parametrize(
    ("evidence", "claim"),
    [
        (METER, "Meter MTR-7712 read 1520.4 kWh on 1 June 2025."),  # another read's date
        (ORDER, "Order A-1093 includes TEA-500 at USD 18.00."),  # another item's price
        (ORDER, "Order A-1093's total was $18.00."),  # an item's price, not the total
        (ORDER, "Marta Quist's order A-1093 came to $84.50."),  # a name the order lacks
        (PUMP, "On 2 June 2025 Rui Alves replaced the seal on pump P-3C."),  # another pump
        (PUMP, "Rui Alves replaced the seal."),  # nothing to anchor it
    ],
)
def test_a_slot_held_elsewhere_or_nowhere_accounts_for_nothing(
    store: ControlPlane, evidence: str, claim: str
) -> None:
    assert accounted(claim, [_entry(store, evidence)]) is None


def test_the_verifier_entails_what_one_record_accounts_for_and_says_so(
    db_url: str, verifier: Verifier
) -> None:
    claim = (
        "On 2 June 2025 Rui Alves fitted a new seal to pump P-3B, after which vibration "
        "dropped to 2.1 mm/s."
    )
    with ControlPlane.open(db_url, nli=verifier) as cp:
        run = cp.ledger.start_run()
        entry = cp.ledger.append(run, kind="tool_output", source="tool:log", content=PUMP)
        (verdict,) = cp.verifier.verify(run, handover(run, (claim, [entry.id]))).verdicts
        assert verdict.verdict.label == "entailment"
        assert verdict.verdict.check == "accounted"
        assert f"stands in {entry.id} (line 1)" in verdict.reason
        # A bar of zero leaves every proposition to the model alone; the verdict
        # says where it stands and the model's doubt (what the bar is fitted on).
        cp.verifier.accounted_bar = 0.0
        (again,) = cp.verifier.verify(run, handover(run, (claim, [entry.id]))).verdicts
        assert again.verdict.check == "model" and again.verdict.label != "entailment"
        assert f"stands in {entry.id} (line 1), but the model reads" in again.reason
        body = json.loads(cp.ledger.get(again.ledger_id).text)
        assert body["accounted"]["ledger_id"] == entry.id
        assert 0.0 <= body["accounted"]["doubt"] <= 1.0


INCIDENT = json.dumps(
    {
        "incident": "INC-2291",
        "outage": {"started_at": "2025-04-13T06:12:00Z", "ended_at": "2025-04-13T06:49:00Z"},
        "maintenance": {"started_at": "2025-04-13T05:00:00Z", "ended_at": "2025-04-13T07:30:00Z"},
    }
)
TIMESHEET = json.dumps(
    {
        "timesheet": "TS-0412",
        "employee": "Ana Ruiz",
        "lines": [
            {"day": "2025-03-03", "project": "PRJ-7", "hours": 2.5},
            {"day": "2025-03-04", "project": "PRJ-7", "hours": 3.0},
            {"day": "2025-03-05", "project": "PRJ-9", "hours": 2.0},
        ],
    }
)
SECTIONS = (
    "Section 001 of CS 3510 (CRN 40112): capacity 30, enrolled 30.\n"
    "Section 002 of CS 3510 (CRN 40113): capacity 30, enrolled 27."
)
SALES = (
    "DATE        ADDRESS            TYPE    BEDS\n"
    "2024-02-14  4 Larchmere Court  flat    2\n"
    "2024-04-30  22 Elmdale Road    semi    3\n"
    "2024-06-11  9 Larchmere Court  flat    3\n"
    "2024-08-02  3 Redland Mews     semi    5"
)


@pytest.mark.parametrize(
    ("evidence", "claim", "record", "computed"),
    [
        # A time between two fields of the record the proposition is about.
        (INCIDENT, "The INC-2291 outage lasted 37 minutes.", "outage", ("37 minutes",)),
        # A difference of two readings, each in a row that states the claim's date.
        (
            METER,
            "Meter MTR-7712 used 191.5 kWh between the 1 May and 1 June 2025 reads, in total.",
            "its rows",
            ("191.5 kWh",),
        ),
        # A sum over a column, the rows bound by the proposition's identifier.
        (TIMESHEET, "Ana Ruiz logged 7.5 hours in total on TS-0412.", "its rows", ("7.5 hours",)),
        # A difference inside one row of text.
        (
            SECTIONS,
            "Section 002 of CS 3510 (CRN 40113) still has three open seats.",
            "line 2",
            ("three",),
        ),
    ],
)
def test_a_value_computed_from_the_record_it_is_about_is_accounted_for(
    store: ControlPlane, evidence: str, claim: str, record: str, computed: tuple[str, ...]
) -> None:
    found = accounted(claim, [_entry(store, evidence)])
    assert found is not None, claim
    assert (found.record, found.computed) == (record, computed)


@pytest.mark.parametrize(
    ("evidence", "claim"),
    [
        # Right arithmetic over the wrong fields: the maintenance window lasted 2.5 hours.
        (INCIDENT, "The INC-2291 outage lasted 2.5 hours."),
        # Right arithmetic in another row: section 002 has the three open seats.
        (SECTIONS, "Section 001 of CS 3510 (CRN 40112) still has three open seats."),
        # Wrong arithmetic.
        (TIMESHEET, "Ana Ruiz logged 8.5 hours in total on TS-0412."),
        (INCIDENT, "The INC-2291 outage lasted 47 minutes."),
        # A part of a group written elsewhere in the evidence, not counted: two are flats.
        (SALES, "Three of the four sales in the extract were flats."),
    ],
)
def test_a_value_computed_over_other_fields_or_wrongly_accounts_for_nothing(
    store: ControlPlane, evidence: str, claim: str
) -> None:
    assert accounted(claim, [_entry(store, evidence)]) is None


SALES_TABLE = (
    "DATE        ADDRESS            TYPE      PRICE_GBP\n"
    "2024-02-14  4 Larchmere Court  flat      338,500\n"
    "2024-04-30  22 Elmdale Road    terraced  612,000\n"
    "2024-06-11  9 Larchmere Court  flat      471,250\n"
    "2024-07-19  41 Cotham Vale     flat      449,995\n"
    "2024-08-02  3 Redland Mews     semi      795,000\n"
)
PODS = json.dumps(
    {
        "pods": [
            {"name": "payments-api-1", "status": "Running"},
            {"name": "payments-api-2", "status": "Running"},
            {"name": "payments-api-3", "status": "CrashLoopBackOff"},
            {"name": "payments-worker-1", "status": "Running"},
        ]
    }
)


@pytest.mark.parametrize(
    ("evidence", "claim", "counted"),
    [
        (SALES_TABLE, "Three of the five sales were flats.", True),
        (SALES_TABLE, "Two of the five sales were flats.", False),  # a miscount
        (SALES_TABLE, "One of the five sales was terraced.", True),
        (PODS, "Two of the three payments-api pods are Running.", True),
        (PODS, "Three of the four pods are Running.", True),
        (PODS, "Three of the three payments-api pods are Running.", False),
    ],
)
def test_a_part_of_a_group_is_counted_over_the_rows(
    store: ControlPlane, evidence: str, claim: str, counted: bool
) -> None:
    found = accounted(claim, [_entry(store, evidence)])
    assert (found is not None) is counted
    if found is not None:
        assert claim.split()[0] in found.computed
