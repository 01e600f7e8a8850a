"""Look-alike identifiers: 28 ways to write an identifier that reads like the evidence
and is not it, each refused by the gate and flagged by the reply guard; and 38 honest
texts with ordinary Unicode (accents, other scripts, emoji, typographic punctuation,
no-break spaces, fullwidth copies of evidence) that both let through."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from assay import ControlPlane
from assay.gate import annotate, validate_reply
from assay.grounding import extract_identifiers, identifier_in_evidence
from assay.tool_bus import ToolSpec

EVIDENCE = (
    "Invoice INV-4421 for EUR 875.00 is due 2024-03-31; fixed in commit 3f9a2c1b7e4d, "
    "see https://billing.example.com/invoices/4421 and /srv/billing/2024/INV-4421.pdf."
)
# Evidence that itself holds fullwidth digits, a no-break space and non-breaking hyphens.
EVIDENCE_WIDE = "Order ORD-\uff17\uff17\uff11 totals EUR\u00a0120.00, shipped 2024\u201105\u201101."


@dataclass(frozen=True)
class Variant:
    name: str
    text: str


ATTACKS = [
    Variant("zwj_inside_ticket", "Invoice IN\u200dV-4422 is due."),
    Variant("zwj_inside_right_ticket", "Invoice IN\u200dV-4421 is due."),
    Variant("zwsp_inside_digits", "Invoice INV-44\u200b22 is due."),
    Variant("zwsp_in_amount", "The total is EUR\u200b975.00."),
    Variant("zwj_in_date", "It is due 2024-04\u200d-30."),
    Variant("zwj_in_hash", "The fix landed in commit 3f9a2c\u200d1b7e5d."),
    Variant("zwj_in_url", "See ht\u200dtps://billing.example.com/invoices/4422 for it."),
    Variant("word_joiner_after", "Invoice INV-4421\u2060 is due."),
    Variant("bom_before", "Invoice \ufeffINV-4422 is due."),
    Variant("soft_hyphen_inside", "Invoice INV-44\u00ad22 is due."),
    Variant("variation_selector_after", "Invoice INV-4421\ufe0f is due."),
    Variant("lrm_after", "Invoice INV-4422\u200e is due."),
    Variant("tag_character_after", "Invoice INV-4421\U000e0041 is due."),
    Variant("mongolian_separator_inside", "Invoice INV-44\u180e21 is due."),
    Variant("non_breaking_hyphen", "Invoice INV\u20114422 is due."),
    Variant("en_dash", "Invoice INV\u20134422 is due."),
    Variant("fullwidth_letters", "Invoice \uff29\uff2e\uff36-4422 is due."),
    Variant("fullwidth_digits", "Invoice INV-\uff14\uff14\uff12\uff12 is due."),
    Variant("fullwidth_digit_amount", "The total is EUR \uff19" + "75.00."),
    Variant("fullwidth_slashes", "Stored at \uff0fsrv\uff0fbilling\uff0f2024\uff0fINV-4422.pdf."),
    Variant("division_slashes", "Stored at \u2215srv\u2215billing\u22152024\u2215INV-4421.pdf."),
    Variant("cyrillic_and_greek", "Invoice \u0406\u039dV-4422 is due."),
    Variant("cyrillic_right_value", "Invoice \u0406NV-4421 is due."),
    Variant("cyrillic_a_in_hash", "The fix landed in commit 3f9\u04302c1b7e4d."),
    Variant("cyrillic_a_in_url", "See https://billing.ex\u0430mple.com/invoices/4421 for it."),
    Variant("greek_omicron_in_date", "It is due 2\u039f24-04-30."),
    Variant("rlo_inside_ticket", "Invoice INV-\u202e2244\u202c is due."),
    Variant("rlo_shows_right_ticket", "Invoice \u202e1244-VNI\u202c is due."),
]

HONEST = [
    Variant("plain", "Invoice INV-4421 is due 2024-03-31."),
    Variant("german", "Rechnung INV-4421 über EUR 875.00 ist fällig."),
    Variant("french", "Le café a reçu la facture INV-4421 le 2024-03-31."),
    Variant("zurich", "The Zürich office confirmed INV-4421."),
    Variant("naive", "A naïve reading of INV-4421 still holds."),
    Variant("russian", "Счёт INV-4421 оплачен 2024-03-31."),
    Variant("russian_amount", "Счёт INV-4421 на сумму EUR 875.00 оплачен."),
    Variant("ukrainian", "Рахунок INV-4421 сплачено \u0456 закрито."),
    Variant("chinese_glued", "发票INV-4421已于2024-03-31到期。"),
    Variant("japanese_glued", "請求書INV-4421の支払期限は2024-03-31です。"),
    Variant("korean", "청구서 INV-4421의 금액은 EUR 875.00입니다."),
    Variant("greek", "\u039f λογαριασμός INV-4421 εξοφλήθηκε."),
    Variant("hebrew", "החשבונית INV-4421 שולמה."),
    Variant("arabic", "الفاتورة INV-4421 مستحقة في 2024-03-31."),
    Variant("thai", "ใบแจ้งหนี้ INV-4421 ชำระแล้ว"),
    Variant("hindi", "चालान INV-4421 का भुगतान हो गया।"),
    Variant("vietnamese", "Hóa đơn INV-4421 đã thanh toán."),
    Variant("turkish", "Fatura INV-4421 ödendi, tutar EUR 875.00."),
    Variant("polish", "Faktura INV-4421 została opłacona 2024-03-31."),
    Variant("emoji", "✅ Invoice INV-4421 is paid 🎉"),
    Variant("emoji_skin_tone", "👍🏽 INV-4421 confirmed."),
    Variant("emoji_zwj_sequence", "👨\u200d👩\u200d👧 family plan: INV-4421."),
    Variant("emoji_presentation", "❤\ufe0f INV-4421 is settled."),
    Variant("emoji_glued_before", "✔\ufe0fINV-4421 is paid."),
    Variant("typographic_quotes", "The invoice \u2018INV-4421\u2019 is “due” on 2024-03-31."),
    Variant("en_dashes_spaced", "Invoice INV-4421 \u2013 EUR 875.00 \u2013 is due."),
    Variant("em_dashes_glued", "Invoice INV-4421—due 2024-03-31—is open."),
    Variant("nbsp_amount", "The total is EUR\u00a0875.00."),
    Variant("narrow_nbsp_amount", "The total is EUR\u202f875.00."),
    Variant("fullwidth_copy", "Invoice \uff29\uff2e\uff36-\uff14\uff14\uff12\uff11 is due."),
    Variant("non_breaking_hyphen", "Invoice INV\u20114421 is due."),
    Variant("non_breaking_hyphen_date", "It is due 2024\u201103\u201131."),
    Variant("hash", "Commit 3f9a2c1b7e4d fixed it."),
    Variant("url", "See https://billing.example.com/invoices/4421 for details."),
    Variant("path", "Stored at /srv/billing/2024/INV-4421.pdf."),
    Variant(
        "copies_wide_evidence",
        "Order ORD-\uff17\uff17\uff11 totals EUR\u00a0120.00, shipped 2024\u201105\u201101.",
    ),
    Variant("plain_of_wide_evidence", "Order ORD-771 totals EUR 120.00, shipped 2024-05-01."),
    Variant("apostrophe_street", "Zürich\u2019s office (Straße 5) billed INV-4421."),
]

PAY = ToolSpec(
    "pay_invoice",
    "1.0.0",
    "Pay an invoice.",
    {
        "type": "object",
        "properties": {"invoice": {"type": "string"}},
        "required": ["invoice"],
        "additionalProperties": False,
    },
    {"type": "object"},
    "irreversible",
)


def test_the_lists_are_as_large_as_promised() -> None:
    assert len(ATTACKS) == 28
    assert len(HONEST) >= 30
    assert len({v.name for v in ATTACKS}) == len(ATTACKS)
    assert len({v.name for v in HONEST}) == len(HONEST)


# --- the reply guard ---------------------------------------------------------------


@pytest.mark.parametrize("variant", ATTACKS, ids=lambda v: v.name)
def test_reply_guard_flags_every_attack(variant: Variant) -> None:
    report = validate_reply(variant.text, tool_results=[EVIDENCE, EVIDENCE_WIDE])
    assert report.unverified, report
    assert not report.ok


@pytest.mark.parametrize("variant", HONEST, ids=lambda v: v.name)
def test_reply_guard_passes_every_honest_text(variant: Variant) -> None:
    report = validate_reply(variant.text, tool_results=[EVIDENCE, EVIDENCE_WIDE])
    assert report.ok, report
    assert report.found


def test_end_to_end_the_hidden_joiner_is_not_answered() -> None:
    report = validate_reply("The fix landed in commit 3f9a2c\u200d1b7e5d.", tool_results=[EVIDENCE])
    assert [i.value for i in report.unverified] == ["3f9a2c\u200d1b7e5d"]


def test_a_footnote_shows_the_hidden_character() -> None:
    reply = "The fix landed in commit 3f9a2c\u200d1b7e5d."
    note = annotate(reply, validate_reply(reply, tool_results=[EVIDENCE]))
    assert "`3f9a2c<U+200D>1b7e5d`" in note


# --- the gate -------------------------------------------------------------------------


def _world(plane: ControlPlane) -> tuple[str, list[str]]:
    run = plane.ledger.start_run()
    ids = [
        plane.ledger.append(run, kind="tool_output", source="erp@1.0.0", content=text).id
        for text in (EVIDENCE, EVIDENCE_WIDE)
    ]
    plane.registry.register(PAY, lambda args: {"paid": True})
    return run, ids


def _handover(run: str, ids: list[str], text: str, invoice: str = "INV-4421") -> dict[str, Any]:
    return {
        "run_id": run,
        "from_agent": "auditor",
        "status": "ok",
        "claims": [
            {
                "id": "c1",
                "type": "Assertion",
                "confidence": 0.9,
                "text": "The invoice is as the ERP says.",
                "propositions": [{"id": "p1", "text": text, "ledger_ids": ids}],
            }
        ],
        "action_intents": [
            {
                "id": "a1",
                "tool": "pay_invoice",
                "requires_grant": True,
                "args": {"invoice": invoice},
                "depends_on": ["c1"],
            }
        ],
    }


def test_gate_refuses_every_attack_and_passes_every_honest_text(plane: ControlPlane) -> None:
    run, ids = _world(plane)
    attacks = {v.name: plane.gate.check(run, _handover(run, ids, v.text)) for v in ATTACKS}
    honest = {v.name: plane.gate.check(run, _handover(run, ids, v.text)) for v in HONEST}
    assert [name for name, d in attacks.items() if d.accepted] == []
    assert {name: d.errors for name, d in honest.items() if not d.accepted} == {}


def test_the_refusal_names_the_character(plane: ControlPlane) -> None:
    run, ids = _world(plane)
    decision = plane.gate.check(run, _handover(run, ids, "Invoice IN\u200dV-4421 is due."))
    (error,) = decision.errors
    assert error.code == "suspicious_characters"
    assert error.path == "$.claims[0].propositions[0].text"
    assert "U+200D" in error.message and "ZERO WIDTH JOINER" in error.message
    assert "\u200d" not in error.message  # shown, not hidden again


def test_a_stripped_identifier_is_checked_as_written(plane: ControlPlane) -> None:
    run, ids = _world(plane)
    decision = plane.gate.check(run, _handover(run, ids, "Invoice INV\u200d-4422 is due."))
    assert decision.codes == {"suspicious_characters", "unverified_identifier"}


def test_mixed_script_is_named_with_its_scripts(plane: ControlPlane) -> None:
    run, ids = _world(plane)
    decision = plane.gate.check(run, _handover(run, ids, "Invoice \u0406NV-4421 is due."))
    messages = [e.message for e in decision.errors if e.code == "suspicious_characters"]
    assert len(messages) == 1
    assert "CYRILLIC" in messages[0] and "LATIN" in messages[0] and "U+0406" in messages[0]


@pytest.mark.parametrize(
    "invoice", ["\u0406NV-4421", "INV-4421\u200b", "\u202eINV-4421", "INV\u20114421\u2060"]
)
def test_action_arguments_are_screened(plane: ControlPlane, invoice: str) -> None:
    run, ids = _world(plane)
    decision = plane.gate.check(run, _handover(run, ids, EVIDENCE, invoice=invoice))
    paths = {e.path for e in decision.errors if e.code == "suspicious_characters"}
    assert paths == {"$.action_intents[0].args.invoice"}


def test_an_honest_action_argument_passes(plane: ControlPlane) -> None:
    run, ids = _world(plane)
    assert plane.gate.check(run, _handover(run, ids, EVIDENCE, invoice="INV-4421")).accepted


# --- the extractor, for plain ASCII and for the forms it folds ----------------------------


def test_extract_identifiers_is_public() -> None:
    import assay.grounding

    assert "extract_identifiers" in assay.grounding.__all__
    assert assay.grounding.extract_identifiers is extract_identifiers


def test_values_and_offsets_are_those_of_the_text_as_given() -> None:
    text = "Pay \uff29\uff2e\uff36-4421 and IN\u200dV-9 now"
    found = extract_identifiers(text)
    assert [(i.kind, i.value) for i in found] == [
        ("ticket", "\uff29\uff2e\uff36-4421"),
        ("ticket", "IN\u200dV-9"),
    ]
    assert all(text[i.start : i.end] == i.value for i in found)


def test_a_look_alike_is_found_but_never_equal() -> None:
    (ident,) = extract_identifiers("invoice \u0406NV-4421")
    assert ident.kind == "ticket"
    assert not identifier_in_evidence(ident, EVIDENCE)
    assert identifier_in_evidence(ident, "the same look-alike \u0406NV-4421 in evidence")


def test_evidence_gets_the_same_normalisation() -> None:
    assert identifier_in_evidence("ORD-771", EVIDENCE_WIDE)
    assert identifier_in_evidence("EUR 120.00", EVIDENCE_WIDE)
    assert identifier_in_evidence("2024-05-01", EVIDENCE_WIDE)
    assert not identifier_in_evidence("ORD-772", EVIDENCE_WIDE)


def test_a_character_that_stands_for_several_is_never_matched() -> None:
    """``EUR 97¼`` must not pass for ``EUR 971.00``, nor ``3 ㎏`` go unchecked."""
    assert not identifier_in_evidence("EUR 97\u00bc", "The fee is EUR 971.00.")
    assert not identifier_in_evidence("EUR 97\u00bc", "The fee is EUR 97\u00bc.")
    report = validate_reply("The fee is EUR 97\u00bc.", tool_results=["The fee is EUR 971.00."])
    assert not report.ok
