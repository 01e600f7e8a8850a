"""Citations a proposition points with: each reason a fabricated one is refused, on
each storage engine, and what an honest one names."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from assay import ControlPlane
from assay.contract import PointerCitation, Proposition, QuoteCitation
from assay.gate import CitedSpan, GateDecision
from assay.gate import locate_citation as locate

ORDER = json.dumps(
    {
        "order": {
            "id": "A-1093",
            "total": 84.5,
            "currency": "USD",
            "delivered_on": "2025-03-14",
            "note": "Left with the neighbour.\nSigned: R. Okafor",
            "lines": [{"sku": "KB-2", "qty": 2}],
            "a/b": {"~k": 1},
        }
    },
    indent=2,
)
LETTER = "Order A-1093 was delivered on 14\u00a0March 2025. The customer paid $84.50."


def _decide(plane: ControlPlane, cites: list[dict[str, Any]]) -> tuple[GateDecision, str, str]:
    run = plane.ledger.start_run()
    order = plane.ledger.append(run, kind="tool_output", source="lookup_order", content=ORDER)
    letter = plane.ledger.append(run, kind="retrieval", source="letter.md", content=LETTER)
    ids = {"ORDER": order.id, "LETTER": letter.id}
    written = [{k: ids.get(v, v) for k, v in c.items()} for c in cites]
    text = "Order A-1093 was delivered on 14 March 2025."
    handover = {
        "run_id": run,
        "from_agent": "desk",
        "status": "ok",
        "claims": [
            {
                "id": "c1",
                "type": "Assertion",
                "text": text,
                "confidence": 0.9,
                "propositions": [{"id": "p1", "text": text, "cites": written}],
            }
        ],
    }
    return plane.gate.check(run, handover), order.id, letter.id


@pytest.mark.parametrize(
    ("cite", "why"),
    [
        ({"ledger_id": "LETTER", "quote": "delivered on 15 March 2025"}, "does not occur"),
        ({"ledger_id": "LETTER", "pointer": "/order/delivered_on"}, "not JSON"),
        ({"ledger_id": "ORDER", "pointer": "/order/shipped_on"}, "no key 'shipped_on'"),
        ({"ledger_id": "ORDER", "pointer": "/order/lines/1"}, "not an index"),
        ({"ledger_id": "ORDER", "pointer": "/order/lines/01"}, "not an index"),
        ({"ledger_id": "ORDER", "pointer": "/order/total/usd"}, "is a value, not a record"),
    ],
)
def test_a_fabricated_citation_is_refused_naming_its_place_and_why(
    plane: ControlPlane, cite: dict[str, Any], why: str
) -> None:
    honest = {"ledger_id": "ORDER", "pointer": "/order/delivered_on"}
    decision, order, letter = _decide(plane, [honest, cite])
    assert not decision.accepted
    assert [e.code for e in decision.errors] == ["fabricated_citation"]
    error = decision.errors[0]
    assert error.path == "$.claims[0].propositions[0].cites[1]"
    assert error.message.startswith(f"{order if cite['ledger_id'] == 'ORDER' else letter}: ")
    assert why in error.message


@pytest.mark.parametrize(
    "cite",
    [
        {"ledger_id": "LETTER", "quote": "delivered on 14 March 2025"},  # NFKC: a no-break space
        {"ledger_id": "ORDER", "quote": '"delivered_on": "2025-03-14"'},  # the stored bytes
        {"ledger_id": "ORDER", "quote": "neighbour.\nSigned"},  # a decoded string
        {"ledger_id": "ORDER", "pointer": "/order/delivered_on"},
        {"ledger_id": "ORDER", "pointer": "/order"},  # a record: each of its fields
        {"ledger_id": "ORDER", "pointer": "/order/a~1b/~0k"},
    ],
)
def test_an_honest_citation_passes_and_its_entry_is_cited(
    plane: ControlPlane, cite: dict[str, Any]
) -> None:
    decision, order, letter = _decide(plane, [cite])
    assert decision.accepted, decision.errors
    assert decision.handover is not None
    wanted = order if cite["ledger_id"] == "ORDER" else letter
    assert decision.handover.claims[0].propositions[0].ledger_ids == [wanted]


def test_a_citation_of_an_unknown_entry_is_reported_once_where_it_is_cited(
    plane: ControlPlane,
) -> None:
    decision, _, _ = _decide(plane, [{"ledger_id": "led_nothing", "quote": "x"}])
    assert ("unknown_ledger_id", "$.claims[0].propositions[0].ledger_ids[0]") in [
        (e.code, e.path) for e in decision.errors
    ]
    assert not any(".cites" in e.path for e in decision.errors)


def test_what_a_citation_names() -> None:
    field = locate(ORDER, PointerCitation(ledger_id="e", pointer="/order/total"))
    assert isinstance(field, CitedSpan)
    assert ORDER[slice(*field.stored)] == "84.5"
    assert field.shown == "/order/total: 84.5"
    assert [line.path for line in field.lines] == ["order.total"]
    record = locate(ORDER, PointerCitation(ledger_id="e", pointer="/order/lines/0"))
    assert isinstance(record, CitedSpan)
    assert [line.path for line in record.lines] == ["order.lines[0].sku", "order.lines[0].qty"]
    quote = locate(LETTER, QuoteCitation(ledger_id="e", quote="14 March 2025"))
    assert isinstance(quote, CitedSpan)
    assert LETTER[slice(*quote.stored)] == "14\u00a0March 2025"
    escaped = locate(ORDER, QuoteCitation(ledger_id="e", quote="neighbour.\nSigned"))
    assert isinstance(escaped, CitedSpan)
    assert ORDER[slice(*escaped.stored)] == "neighbour.\\nSigned"


def test_a_quote_with_combining_marks_maps_back_to_its_stored_characters() -> None:
    text = "Cafe\u0301 du Port: the \ufb01nal bill is EUR 41."
    found = locate(text, QuoteCitation(ledger_id="e", quote="Café du Port: the final"))
    assert isinstance(found, CitedSpan)
    assert text[slice(*found.stored)] == "Cafe\u0301 du Port: the \ufb01nal"


def test_citations_round_trip_through_the_contract() -> None:
    raw = {
        "id": "p",
        "text": "Order A-1093 was delivered on 14 March 2025.",
        "ledger_ids": ["led_b"],
        "cites": [
            {"ledger_id": "led_a", "quote": "delivered on 14 March 2025"},
            {"ledger_id": "led_b", "pointer": "/order/a~1b/~0k"},
        ],
    }
    prop = Proposition.model_validate(raw)
    assert prop.ledger_ids == ["led_b", "led_a"]  # a cited entry is cited
    assert prop.cites is not None
    assert isinstance(prop.cites[0], QuoteCitation) and isinstance(prop.cites[1], PointerCitation)
    dumped = prop.model_dump(mode="json")
    assert Proposition.model_validate(dumped) == prop
    assert Proposition.model_validate_json(prop.model_dump_json()) == prop
    plain = Proposition(id="p", text="t", ledger_ids=["led_a"])
    assert "cites" not in plain.model_dump()  # a hand-over without them is as before


@pytest.mark.parametrize(
    "cite",
    [
        {"ledger_id": "led_a"},
        {"ledger_id": "led_a", "quote": "x", "pointer": "/x"},
        {"ledger_id": "led_a", "quote": ""},
        {"ledger_id": "led_a", "pointer": "order/total"},
        {"ledger_id": "led_a", "pointer": "/a~2"},
        {"ledger_id": "led_a", "quote": "x", "note": "extra"},
        "led_a",
    ],
)
def test_a_malformed_citation_is_a_schema_violation(cite: object) -> None:
    with pytest.raises(ValidationError):
        Proposition.model_validate({"id": "p", "text": "t", "cites": [cite]})
