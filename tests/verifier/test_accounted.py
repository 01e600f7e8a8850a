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
        # A bar of zero leaves every proposition to the model alone.
        cp.verifier.accounted_bar = 0.0
        (again,) = cp.verifier.verify(run, handover(run, (claim, [entry.id]))).verdicts
        assert again.verdict.check == "model" and again.verdict.label != "entailment"
