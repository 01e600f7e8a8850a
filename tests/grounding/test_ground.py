"""``ground``: one entry point for a statement's values, shared by the gate and the
verifier; the verifier reads back what the gate grounded instead of redoing it."""

from __future__ import annotations

from pathlib import Path

from assay import ControlPlane
from assay.grounding import GROUNDING_CACHE, ground
from assay.verifier import LexicalNLI
from tests.verifier.test_ledger_verifier import handover

ORDER = '{"order": "SO-1093", "total": 129.0, "currency": "USD", "delivered": "2025-03-14"}'
CONTAINERS = "YARD   BLOCK  TEU\nNorth  A      310\nNorth  B      264\nSouth  C      666\n"


def test_each_value_is_found_computed_miscalculated_or_missing() -> None:
    found = ground("Order SO-1093 came to $129 and was delivered on 14 March 2025.", [ORDER])
    assert [(g.identifier.value, g.found_in) for g in found.values] == [
        ("SO-1093", (0,)),
        ("$129", (0,)),
        ("14 March 2025", (0,)),
    ]
    assert not found.missing
    total = ground("The three blocks hold 1,240 containers in total.", [CONTAINERS]).values[-1]
    assert total.computation is not None and total.established
    wrong = ground("The three blocks hold 1,420 containers in total.", [CONTAINERS]).values[-1]
    assert wrong.miscalculation is not None and not wrong.established
    assert [g.identifier.value for g in ground("Order SO-1039 was paid.", [ORDER]).missing] == [
        "SO-1039"
    ]


def test_every_text_that_states_a_value_is_named_unless_asked_for_the_first() -> None:
    texts = ["SO-1093 shipped.", "Nothing here.", "SO-1093 delivered."]
    assert ground("SO-1093", texts).values[0].found_in == (0, 2)
    assert ground("SO-1093", texts, search_all=False).values[0].found_in == (0,)


def test_the_verifier_reads_back_what_the_gate_grounded(tmp_path: Path) -> None:
    with ControlPlane.open(f"sqlite:///{tmp_path / 'a.db'}", nli=LexicalNLI()) as cp:
        run = cp.ledger.start_run()
        entry = cp.ledger.append(run, kind="tool_output", source="tool:orders", content=ORDER)
        text = "Order SO-1093 was delivered on 14 March 2025; it came to $129."
        body = handover(run, (text, [entry.id]))
        before = (GROUNDING_CACHE.hits, GROUNDING_CACHE.misses)
        decision = cp.gate.check(run, body)
        assert decision.accepted
        after_gate = (GROUNDING_CACHE.hits, GROUNDING_CACHE.misses)
        # The gate grounds the claim's text and its proposition's (the same here).
        assert after_gate[1] > before[1]
        cp.verifier.verify(run, body)
        # The verifier's grounding of the proposition is the gate's, read back.
        assert GROUNDING_CACHE.hits > after_gate[0]
        assert GROUNDING_CACHE.misses == after_gate[1]
