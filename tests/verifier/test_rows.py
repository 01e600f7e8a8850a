"""Rows: a proposition that names one row of a table must take its values and its
row-specific words from that row ("QLD had 1,507 orders" where 1,507 is VIC's);
one that names two rows, or says a row is not something, is left to the model.
"""

from __future__ import annotations

import json

import pytest

from assay import ControlPlane
from assay.verifier import LexicalNLI
from assay.verifier._rows import row_mismatch
from tests.verifier.test_ledger_verifier import handover

SALES = """analytics=> SELECT region, orders, revenue_aud FROM q1_sales;
 region | orders | revenue_aud
--------+--------+-------------
 NSW    |   1824 |   412,930.50
 VIC    |   1507 |   366,118.00
 QLD    |    992 |   201,447.25
(3 rows)"""
TIMETABLE = """Service 4412  Sydney Central dep 07:45  -> Newcastle Interchange arr 10:22
Service 4418  Sydney Central dep 09:15  -> Newcastle Interchange arr 11:54 (replacement buses)
Service 4420  Sydney Central dep 10:45  -> cancelled"""
PODS = """NAME                           READY   STATUS             RESTARTS   NODE
payments-api-7d9f8c6b5d-2xkqp  2/2     Running            0          node-a3
payments-api-7d9f8c6b5d-tl8wc  1/2     CrashLoopBackOff   14         node-a2
payments-api-7d9f8c6b5d-q8r2z  2/2     Running            0          node-b1"""


@pytest.mark.parametrize(
    ("table", "claim", "named"),
    [
        (SALES, "QLD had 1,507 orders in Q1.", "1,507 orders"),
        (SALES, "QLD brought in A$366,118.", "A$366,118"),
        (TIMETABLE, "Service 4412 arrives in Newcastle at 11:54.", "11:54"),
        (PODS, "payments-api-7d9f8c6b5d-tl8wc runs on node-a3.", "node-a3"),
        # A whole cell of another row, in words.
        (TIMETABLE, "Service 4418 is cancelled.", "cancelled"),
        (PODS, "payments-api-7d9f8c6b5d-2xkqp is in CrashLoopBackOff.", "CrashLoopBackOff"),
    ],
)
def test_a_value_or_word_of_another_row_is_bound_to_the_wrong_row(
    table: str, claim: str, named: str
) -> None:
    reason = row_mismatch(table, claim)
    assert reason is not None and f"“{named}”" in reason


@pytest.mark.parametrize(
    ("table", "claim"),
    [
        (SALES, "VIC brought in AUD 366,118 from 1,507 orders."),
        (SALES, "NSW had 1,824 orders and A$412,930.50 in revenue."),
        # Two rows named: a comparison.
        (SALES, "QLD had 992 orders, 515 fewer than VIC's 1,507."),
        (TIMETABLE, "Service 4418 runs with replacement buses and arrives at 11:54."),
        (TIMETABLE, "The 10:45 service 4420 is cancelled."),
        # A negated claim about another row's identifier.
        (PODS, "payments-api-7d9f8c6b5d-tl8wc does not run on node-a3."),
        # A plain word other rows share is no identifier of theirs.
        (PODS, "payments-api-7d9f8c6b5d-tl8wc runs on node-a2."),
        # A word the header writes is about every row.
        (SALES, "QLD had the fewest orders."),
        # No row named.
        (SALES, "One region had 1,507 orders."),
    ],
)
def test_a_claim_about_its_own_row_or_about_several_is_left_alone(table: str, claim: str) -> None:
    assert row_mismatch(table, claim) is None


def test_another_cited_entry_may_state_what_the_row_does_not() -> None:
    claim = "QLD had 1,507 orders in Q1."
    correction = "Correction: QLD had 1,507 orders in Q1, not 992."
    assert row_mismatch(SALES, claim, [correction]) is None


def test_the_verifier_refuses_a_value_from_another_row_without_the_model(db_url: str) -> None:
    with ControlPlane.open(db_url, nli=LexicalNLI()) as cp:
        run = cp.ledger.start_run()
        entry = cp.ledger.append(run, kind="tool_output", source="tool:psql", content=SALES)
        text = "QLD had 1,507 orders in Q1."
        verified = cp.verifier.verify(run, handover(run, (text, [entry.id])))
        (missing,) = verified.unsupported
        assert "“1,507 orders” is not in the row it names" in missing.missing_evidence
        assert "QLD | 992 | 201,447.25" in missing.missing_evidence


def test_a_json_array_of_records_is_read_as_a_table() -> None:
    sales = json.dumps(
        {
            "quarter": "Q1",
            "regions": [
                {"orders": 1824, "region": "NSW"},
                {"orders": 1507, "region": "VIC"},
                {"orders": 992, "region": "QLD"},
            ],
        }
    )
    reason = row_mismatch(sales, "QLD had 1,507 orders in Q1.")
    assert reason is not None and "“1,507 orders”" in reason and "QLD" in reason
    assert row_mismatch(sales, "QLD had 992 orders in Q1.") is None
    assert row_mismatch(sales, "QLD had 992 orders, VIC 1,507.") is None


CONTRACT = """SERVICES AGREEMENT
4.1 The Supplier shall deliver the Services within twenty (20) Business Days.
4.2 Fees are payable within 45 days of receipt of a valid invoice.
7.3 Either party may terminate this Agreement for convenience on ninety (90) days' notice."""
CHANGELOG = """## 4.3.0 - 2025-02-11
- Added: `--dry-run` flag for `sync`.
- Changed: default timeout raised from 30 s to 60 s.
## 4.2.1 - 2025-01-28
- Fixed: crash when the config file is empty."""


@pytest.mark.parametrize(
    ("document", "claim", "named"),
    [
        (CONTRACT, "Clause 4.2 allows termination for convenience on 90 days' notice.", "90 days"),
        (CONTRACT, "Under section 4.1, fees are payable within 45 days.", "45 days"),
        (CHANGELOG, "Version 4.2.1 raised the default timeout to 60 s.", "60 s"),
        (CHANGELOG, "Version 4.2.1 added the --dry-run flag.", "dry-run"),
    ],
)
def test_a_value_or_code_of_another_clause_or_section_is_bound_to_the_wrong_one(
    document: str, claim: str, named: str
) -> None:
    reason = row_mismatch(document, claim)
    assert reason is not None and f"“{named}”" in reason and "section" in reason


@pytest.mark.parametrize(
    ("document", "claim"),
    [
        (CONTRACT, "Under clause 7.3 either party may terminate on 90 days' notice."),
        (CONTRACT, "Fees are payable within 45 days of receipt of a valid invoice."),
        # A number that is no clause's: "4.1" without a word that names a clause.
        (CONTRACT, "Interest runs at 4.1% a year on fees unpaid after 45 days."),
        (CONTRACT, "Clauses 4.1 and 7.3 set 20 and 90 days."),
        (CHANGELOG, "4.3.0 added a --dry-run flag for sync."),
        (CHANGELOG, "Version 4.2.1 fixed a crash when the config file was empty."),
    ],
)
def test_a_claim_about_its_own_clause_or_section_is_left_alone(document: str, claim: str) -> None:
    assert row_mismatch(document, claim) is None


def test_a_record_named_by_an_enum_written_in_words() -> None:
    payslip = json.dumps(
        {
            "gross": {"amount": 5210.0, "currency": "EUR"},
            "deductions": [
                {"type": "income_tax", "amount": 1180.4},
                {"type": "pension", "amount": 260.5},
                {"type": "health", "amount": 312.6},
            ],
        }
    )
    reason = row_mismatch(payslip, "Her income tax deduction was EUR 312.60.")
    assert reason is not None and "income_tax" in reason
    assert row_mismatch(payslip, "Her income tax deduction was EUR 1,180.40.") is None


PAYROLL = """PAY_DATE    EMPLOYEE          HOURS  GROSS_EUR
2024-11-29  Ana Lobo          151.5  3,912.40
2024-11-29  Ruairi Kell       160.0  4,480.00
2024-11-29  Mette Ravn         98.0  2,310.75"""


@pytest.mark.parametrize(
    ("claim", "wrong"),
    [
        ("Ruairi Kell was paid EUR 2,310.75 gross.", "EUR 2,310.75"),
        ("Ana Lobo worked 160.0 hours.", "160.0 hours"),
        ("Mette Ravn was paid EUR 2,310.75 for 98 hours.", None),
        # Two rows named: a comparison is left alone.
        ("Ruairi Kell worked 160.0 hours, more than Ana Lobo's 151.5.", None),
    ],
)
def test_a_row_keyed_by_a_date_is_named_by_its_first_cell_in_words(
    claim: str, wrong: str | None
) -> None:
    reason = row_mismatch(PAYROLL, claim)
    if wrong is None:
        assert reason is None
    else:
        assert reason is not None and f"“{wrong}”" in reason


LEAVE = "employee,team,days_taken,days_left\nPriya Nair,Support,12,13\nOwen Tull,Platform,20,5\n"


@pytest.mark.parametrize(
    ("claim", "wrong"),
    [
        ("Owen Tull works in Support and has taken 20 days.", "Support"),
        ("Priya Nair, who works in Support, has 13 days of leave left.", None),
        # Both cells written: a move from one to the other.
        ("Owen Tull moved from Support to Platform.", None),
        ("Owen Tull does not work in Support.", None),
    ],
)
def test_a_whole_cell_of_another_row_is_bound_to_the_wrong_row(
    claim: str, wrong: str | None
) -> None:
    reason = row_mismatch(LEAVE + "Lena Vos,Support,3,22", claim)
    if wrong is None:
        assert reason is None
    else:
        assert reason is not None and f"“{wrong}”" in reason


DEPLOYMENT = json.dumps(
    {
        "spec": {
            "containers": [
                {"name": "indexer", "resources": {"limits": {"memory": "1536Mi", "cpu": "750m"}}},
                {"name": "sidecar", "resources": {"limits": {"memory": "512Mi", "cpu": "100m"}}},
            ]
        }
    }
)


def test_an_object_nested_in_a_json_item_is_part_of_the_items_row() -> None:
    """``containers[0].resources.limits.memory`` is the indexer container's, not a
    row of its own beside it."""
    assert row_mismatch(DEPLOYMENT, "The indexer container is limited to 1.5 GiB.") is None
    found = row_mismatch(DEPLOYMENT, "The indexer container is limited to 512 MiB.")
    assert found is not None and "indexer" in found
