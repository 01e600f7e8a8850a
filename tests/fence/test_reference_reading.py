"""What the invoice audit's rule-based agents read, beyond the bundled cases: other
currencies, decimal rates, caps in prose, amendments, and lines they cannot read or
check. The documents are those of the shipped eval suite (evals/invoice-audit/cases);
every overage is reported, and anything left unchecked is an open question, never a
clean bill."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay import ControlPlane
from assay.fence import FencedGraph, RunResult

CASES = Path(__file__).resolve().parents[2] / "evals" / "invoice-audit" / "cases"
TASK = "Audit the invoice against the engagement letter and flag any line billed above its cap."
CLEAN_BILL = "No line is shown to be billed above the engagement letter's caps."


def _run(audit: ControlPlane, invoice: FencedGraph, name: str) -> RunResult:
    return audit.run(invoice, {"task": TASK, "documents": str(CASES / name)})


def _claim(result: RunResult, cid: str) -> str:
    [text] = [c.text for c in result.claims if c.id == cid]
    return text


def test_an_overage_in_another_currency_awaits_a_grant_in_that_currency(
    audit: ControlPlane, invoice: FencedGraph, outbox: Path
) -> None:
    """USD 600.00 is above the policy's bound for USD (550): a person decides, on a
    flag that states the amount in dollars, never as if it were euros."""
    result = _run(audit, invoice, "usd_over_cap")
    assert result.status == "awaiting_grant"
    assert "USD 600.00 over the cap in total" in _claim(result, "line4.overage")
    [pending] = result.pending_grants
    assert (pending.args["amount_over_cap"], pending.args["currency"]) == (600.0, "USD")
    assert result.actions == () and not outbox.exists()


def test_a_cap_written_in_prose_is_quoted_and_checked(
    audit: ControlPlane, invoice: FencedGraph, outbox: Path
) -> None:
    result = _run(audit, invoice, "gbp_prose_letter")
    cap = next(c for c in result.claims if c.id == "line2.cap")
    assert cap.type == "Quote" and "associates no more than GBP 240 an hour" in cap.text
    assert "GBP 300.00 over the cap in total" in _claim(result, "line2.overage")
    assert "within the cap" in _claim(result, "line1.overage")
    assert result.status == "answered"
    [action] = result.actions
    assert (action.approver, action.args["currency"]) == ("policy:small-overages-gbp", "GBP")
    [flag] = [json.loads(line) for line in outbox.read_text().splitlines()]
    assert (flag["amount_over_cap"], flag["currency"]) == (300.0, "GBP")


def test_caps_listed_in_one_sentence_between_semicolons_are_each_read(
    audit: ControlPlane, invoice: FencedGraph, outbox: Path
) -> None:
    """ "capped as follows: partners USD 640 an hour; associates …; paralegals USD 150
    an hour": the limiting word governs every rate of its sentence, so the paralegal
    line billed at USD 180 is reported, and lines 1 and 3 are checked too."""
    result = _run(audit, invoice, "usd_semicolon_caps")
    cap = next(c for c in result.claims if c.id == "line2.cap")
    assert cap.type == "Quote" and "paralegals USD 150 an hour" in cap.text
    assert "USD 240.00 over the cap in total" in _claim(result, "line2.overage")
    assert "within the cap" in _claim(result, "line1.overage")
    assert "within the cap" in _claim(result, "line3.overage")
    assert result.status == "answered"
    [action] = result.actions
    assert (action.args["line"], action.args["amount_over_cap"]) == (2, 240.0)
    assert (action.args["currency"], action.status) == ("USD", "executed")


def test_a_decimal_rate_above_its_cap_is_flagged_to_the_cent(
    audit: ControlPlane, invoice: FencedGraph, outbox: Path
) -> None:
    result = _run(audit, invoice, "decimal_rate")
    assert result.status == "answered"
    assert "Line 5 bills 4.0 h at EUR 412.50/h" in _claim(result, "line5.billed")
    [action] = result.actions
    assert (action.status, action.args["line"], action.args["amount_over_cap"]) == (
        "executed",
        5,
        250.0,
    )
    assert action.args["reason"] == "associate billed at EUR 412.5/h against a cap of EUR 350/h"
    [flag] = [json.loads(line) for line in outbox.read_text().splitlines()]
    assert flag["amount_over_cap"] == 250.0


def test_an_amendment_replaces_the_letters_cap(
    audit: ControlPlane, invoice: FencedGraph, outbox: Path
) -> None:
    result = _run(audit, invoice, "amendment")
    assert _claim(result, "line24.cap") == (
        "The amended engagement letter caps senior associates at EUR 420 per hour."
    )
    [action] = result.actions
    assert (action.args["line"], action.args["amount_over_cap"]) == (24, 300.0)


def test_a_line_that_cannot_be_read_is_asked_about_never_a_clean_bill(
    audit: ControlPlane, invoice: FencedGraph, outbox: Path
) -> None:
    result = _run(audit, invoice, "unreadable_line")
    assert result.status == "abstained"
    assert not any(c.id.startswith("line52.") for c in result.claims)
    answer = result.answer or ""
    assert CLEAN_BILL not in answer and "not every line could be checked" in answer
    assert "Line 52 is not written as a time at a rate for a role" in answer
    assert result.actions == () and not outbox.exists()


def test_a_line_billed_in_another_currency_than_its_cap_is_not_compared(
    audit: ControlPlane, invoice: FencedGraph, outbox: Path
) -> None:
    result = _run(audit, invoice, "currency_not_covered")
    assert result.status == "abstained"
    assert "line62.overage" not in {c.id for c in result.claims}
    assert "Line 62 is billed in USD, but the engagement letter caps associates in EUR" in (
        result.answer or ""
    )
    assert result.actions == () and not outbox.exists()


def test_an_invoice_without_a_readable_line_is_not_a_clean_bill(
    audit: ControlPlane, invoice: FencedGraph, outbox: Path
) -> None:
    letter = (CASES / "compliant" / "engagement_letter.md").read_text(encoding="utf-8")
    documents = {
        "engagement_letter.md": letter,
        "invoice.md": "# Invoice INV-4600\n\nServices in September 2025, as agreed.\n",
    }
    result = audit.run(invoice, {"task": TASK, "documents": documents})
    assert result.status == "abstained"
    answer = result.answer or ""
    assert CLEAN_BILL not in answer and "No invoice line could be read" in answer


def test_a_table_invoice_in_dollars_over_the_usd_bound_waits_for_a_person(
    audit: ControlPlane, invoice: FencedGraph, outbox: Path
) -> None:
    """``$800.00`` in a row under "Hours" and "Rate", against "capped at $725 per hour":
    USD 600.00 over, above the policy's USD bound, so a person is asked."""
    result = _run(audit, invoice, "usd_dollar_symbol_over_policy")
    assert result.status == "awaiting_grant"
    billed = next(c for c in result.claims if c.id == "line1.billed")
    assert billed.type == "Quote" and billed.text.startswith("| 1 | M. Halloran | Partner |")
    [pending] = result.pending_grants
    assert (pending.args["amount_over_cap"], pending.args["currency"]) == (600.0, "USD")
    assert "within the cap" in _claim(result, "line2.overage") and not outbox.exists()


def test_a_line_billed_by_the_day_is_held_to_the_daily_cap(
    audit: ControlPlane, invoice: FencedGraph, outbox: Path
) -> None:
    result = _run(audit, invoice, "eur_hourly_and_daily_caps")
    assert "EUR 80.00 over the cap in total" in _claim(result, "line1.overage")
    assert _claim(result, "line2.overage") == (
        "Line 2: 1 day at EUR 3600/day against a cap of EUR 3600/day is within the cap."
    )
    [action] = result.actions
    assert (action.args["line"], action.args["currency"], action.status) == (1, "EUR", "executed")


def test_an_overage_in_a_currency_no_rule_bounds_goes_to_a_person(
    audit: ControlPlane, invoice: FencedGraph, outbox: Path
) -> None:
    result = _run(audit, invoice, "sek_not_covered_by_policy")
    assert result.status == "awaiting_grant"
    [pending] = result.pending_grants
    assert (pending.args["amount_over_cap"], pending.args["currency"]) == (1800.0, "SEK")
    # Each rule bounds one currency; none is SEK's.
    assert len(pending.policy) == 5 and all('currency is "SEK"' in r for r in pending.policy)


@pytest.mark.parametrize(
    ("name", "asked"),
    [
        ("ambiguous_partner_caps", "more than once"),
        ("unitless_cap_ambiguous", "per hour or per day"),
        ("role_not_named_cap", "without naming the role"),
        ("line_two_roles_ambiguous", "names more than one role"),
        ("usd_daily_line_hourly_cap", "per hour, not per day"),
    ],
)
def test_what_cannot_be_told_is_asked_never_guessed(
    audit: ControlPlane, invoice: FencedGraph, outbox: Path, name: str, asked: str
) -> None:
    result = _run(audit, invoice, name)
    assert result.status == "abstained"
    answer = result.answer or ""
    assert asked in answer and CLEAN_BILL not in answer
    assert result.actions == () and result.pending_grants == () and not outbox.exists()
