"""Hostile text is read correctly at a size where quadratic patterns took minutes (80 KB
of ``1,111,111…`` took about a minute to extract). Nothing here measures time: how the
time grows with the size of each family is measured by
``benchmarks/pathological_inputs.py`` (linear work: a ratio of about 4 between 40 and
160 KB), whose families include all of these."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from assay import ControlPlane
from assay.gate._reply import reply_report
from assay.grounding import extract_identifiers, identifier_in_evidence

SIZE = 80 * 1024


def _repeat(unit: str, head: str = "", tail: str = "") -> str:
    return head + unit * ((SIZE - len(head) - len(tail)) // len(unit)) + tail


HOSTILE: dict[str, Callable[[], str]] = {
    "digits_comma": lambda: _repeat(",111", head="1", tail=" items"),
    "digits_dot": lambda: _repeat(".111", head="1", tail=" items"),
    "digits_space": lambda: _repeat(" 111", head="1", tail=" items"),
    "digits_apostrophe": lambda: _repeat("'111", head="1", tail=" items"),
    "digits_nbsp": lambda: _repeat("\u00a0111", head="1", tail=" items"),
    "hex_run": lambda: _repeat("3f9a2c1b7e4d", tail="z"),
    "hex_tokens": lambda: _repeat("commit ab12cd3 "),
    "long_path": lambda: _repeat("segment/", head="/srv/", tail="x"),
    "deep_slashes": lambda: _repeat("a/"),
    "slashes_only": lambda: _repeat("/"),
    "hash_signs": lambda: _repeat("#", tail="1"),
    "many_tickets": lambda: _repeat("#1 INV-7 "),
    "colour_tickets": lambda: _repeat("fill #1 "),
    "at_signs": lambda: _repeat("a@"),
    "plus_signs": lambda: _repeat("a+"),
    "dotted_words": lambda: _repeat("a."),
    "format_chars": lambda: _repeat("\u200d", head="INV-4421"),
    "format_in_digits": lambda: _repeat("1\u200b", head="EUR "),
    "cyrillic_words": lambda: _repeat("\u0406NV-1 "),
    "bidi_controls": lambda: _repeat("\u202e1\u202c"),
}


@pytest.mark.parametrize("family", sorted(HOSTILE))
def test_hostile_input_is_read_whole(family: str) -> None:
    text = HOSTILE[family]()
    found = extract_identifiers(text)
    assert all(text[i.start : i.end] == i.value for i in found)
    identifier_in_evidence("EUR 875.00", text)
    identifier_in_evidence("3f9a2c1b7e4d", text)
    report = reply_report(text, tool_results=[text])
    assert len(report.found) + len(report.unverified) + len(report.user_origin) >= len(found)


def test_gate_refuses_a_hostile_proposition_for_its_size(plane: ControlPlane) -> None:
    run = plane.ledger.start_run()
    evidence = HOSTILE["digits_comma"]()
    entry = plane.ledger.append(run, kind="tool_output", source="erp@1.0.0", content=evidence)
    proposition = evidence[: 40 * 1024] + " EUR"
    handover = {
        "run_id": run,
        "from_agent": "auditor",
        "status": "ok",
        "claims": [
            {
                "id": "c1",
                "type": "Assertion",
                "confidence": 0.5,
                "text": proposition,
                "propositions": [{"id": "p1", "text": proposition, "ledger_ids": [entry.id]}],
            }
        ],
    }
    decision = plane.gate.check(run, handover)
    # The proposition is refused for its size before any identifier is read from it;
    # the claim's text (no size limit of its own) is still read, in linear time.
    assert "proposition_too_long" in decision.codes
    assert decision.codes <= {"unverified_identifier", "unverified_value", "proposition_too_long"}


def test_a_number_longer_than_any_amount_is_not_read_from_its_start() -> None:
    """Digit groups are bounded (13, and a decimal part), so an endless run is not one
    amount: only its tail is, and evidence is read the same way."""
    text = "1" + ",111" * 40 + " EUR"
    (amount,) = extract_identifiers(text)
    assert amount.kind == "amount"
    # Numbers are read left to right in runs of at most 13 groups: the amount is the
    # last run, the one the currency follows.
    assert amount.value.endswith(" EUR") and 1 <= amount.value.count(",") <= 13
    assert len(amount.value) < 80
    found = extract_identifiers("EUR 1,234,567,890.50 and 1 000 000 000 000 CHF")
    assert [i.value for i in found] == ["EUR 1,234,567,890.50", "1 000 000 000 000 CHF"]
