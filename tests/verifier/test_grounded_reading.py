"""How the verifier reads evidence: JSON through its view, long entries through a
bounded selection of records, typed propositions slot by slot, and feedback that
names the right entry. The model is not the subject here: the deterministic
stand-in judges what reaches a model."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from assay import ControlPlane
from assay._limits import MAX_PROPOSITION_CHARS
from assay.verifier import LexicalNLI
from assay.verifier._deterministic import in_evidence_terms
from assay.verifier._premises import MAX_READ_CHARS, TOP_UNITS, read
from assay.verifier._slots import Binding, bind
from tests.verifier.test_batched_verification import RecordingNLI

SHIPMENT = {
    "shipment": "SH-40417",
    "carrier": "Nordfrakt",
    "parcels": [
        {"ref": "P-1", "weight_kg": 4.2, "status": "delivered", "city": "Aarhus"},
        {"ref": "P-2", "weight_kg": 11.0, "status": "held at customs", "city": "Odense"},
    ],
}


@pytest.fixture
def cp(db_url: str) -> Iterator[ControlPlane]:
    with ControlPlane.open(db_url, nli=LexicalNLI()) as plane:
        yield plane


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def _verify(
    cp: ControlPlane,
    run: str,
    text: str,
    ids: list[str],
    *,
    args: list[str] | None = None,
) -> Any:
    prop: dict[str, Any] = {"id": "c1.p", "text": text, "ledger_ids": ids}
    if args is not None:
        prop["pred"], prop["args"] = "states", args
    handover = {
        "run_id": run,
        "from_agent": "analyst",
        "status": "ok",
        "claims": [
            {
                "id": "c1",
                "type": "Assertion",
                "text": text,
                "confidence": 0.9,
                "propositions": [prop],
            }
        ],
    }
    return cp.verifier.verify(run, handover).verdicts[0]


def test_a_decoded_json_value_is_stated_verbatim_and_its_span_is_the_stored_one(
    cp: ControlPlane,
) -> None:
    run = cp.ledger.start_run()
    stored = _json({"note": "Parcel P-2 is held at customs in Odense.\nCall the broker."})
    entry = cp.ledger.append(run, kind="tool_output", source="tool:track", content=stored)
    verdict = _verify(cp, run, "Parcel P-2 is held at customs in Odense.", [entry.id])
    assert verdict.verdict.label == "entailment"
    start, end = verdict.verdict.span
    assert stored[start:end] == "Parcel P-2 is held at customs in Odense"


def test_typed_arguments_must_share_one_record(cp: ControlPlane) -> None:
    run = cp.ledger.start_run()
    entry = cp.ledger.append(
        run, kind="tool_output", source="tool:shipment", content=_json(SHIPMENT)
    )
    # The right weight bound to the wrong parcel: every value occurs, never together.
    wrong = _verify(cp, run, "Parcel P-1 weighs 11.0 kg.", [entry.id], args=["P-1", "11.0 kg"])
    assert wrong.verdict.label == "missing_evidence"
    assert "never stated together in one record" in wrong.reason
    assert "parcels[0]" in wrong.reason and "parcels[1]" in wrong.reason
    invented = _verify(cp, run, "Parcel P-3 weighs 4.2 kg.", [entry.id], args=["P-3", "4.2 kg"])
    assert invented.verdict.label == "missing_evidence"
    assert "“P-3” occurs in none of its cited evidence" in invented.reason


def test_typed_arguments_in_one_record_send_only_that_record_to_the_model(
    cp: ControlPlane,
) -> None:
    run = cp.ledger.start_run()
    stored = _json(SHIPMENT)
    entry = cp.ledger.append(run, kind="tool_output", source="tool:shipment", content=stored)
    args = ["SH-40417", "P-2", "held at customs"]
    # The shipment's own number comes with the parcel's record (its enclosing object).
    binding = bind(args, [entry])
    assert isinstance(binding, Binding) and binding.record == "parcels[1]"
    assert "SH-40417" in binding.reading.text and "P-1" not in binding.reading.text
    verdict = _verify(
        cp, run, "Shipment SH-40417 parcel P-2 is held at customs.", [entry.id], args=args
    )
    assert verdict.verdict.label != "missing_evidence"
    assert verdict.verdict.ledger_id == entry.id


def test_a_long_entry_is_read_through_a_bounded_selection_of_records() -> None:
    rows = [f"Row {i}: account AC-{i:05d} closed with balance EUR {i}.00." for i in range(20_000)]
    text = "\n".join(rows)
    reading = read(text, "Account AC-12345 closed with balance EUR 12345.00.")
    assert len(text) > 100 * MAX_READ_CHARS
    assert len(reading.text.split("\n")) <= TOP_UNITS
    assert "AC-12345" in reading.text
    at = reading.text.index("AC-12345")
    start, end = reading.to_stored(at, at + len("AC-12345"))
    assert text[start:end] == "AC-12345"


STOCK_CSV = (
    "Stock at 07:00\n"
    "site,zone,ON_HAND,allocated\n"
    "LEJ2,A,310,310\n"
    "DUB1,B,1256,0\n"
    "Checked by the night shift."
)


def test_a_table_row_is_read_with_its_cells_named_by_their_columns() -> None:
    reading = read(STOCK_CSV, "How many rolls does DUB1 hold?")
    assert reading.text.splitlines() == [
        "Stock at 07:00",
        "site,zone,ON_HAND,allocated",
        "site: LEJ2, zone: A, ON_HAND: 310, allocated: 310",
        "site: DUB1, zone: B, ON_HAND: 1256, allocated: 0",
        "Checked by the night shift.",
    ]
    # A span inside a written-out row is that row of the stored text; elsewhere
    # the span maps character for character.
    start = reading.text.index("ON_HAND: 1256")
    assert STOCK_CSV[slice(*reading.to_stored(start, start + 13))] == "DUB1,B,1256,0"
    start = reading.text.index("night shift")
    assert STOCK_CSV[slice(*reading.to_stored(start, start + 11))] == "night shift"


def test_a_table_without_a_header_is_read_as_written() -> None:
    log = "09:12  CLM-220391  FNOL received\n09:40  CLM-220391  adjuster assigned\n"
    assert read(log, "When was the adjuster assigned?").text == log


def test_a_proposition_over_the_limit_is_not_judged(cp: ControlPlane) -> None:
    run = cp.ledger.start_run()
    entry = cp.ledger.append(run, kind="tool_output", source="tool:x", content="All is well.")
    text = "All is well. " * (MAX_PROPOSITION_CHARS // 10)
    verdict = _verify(cp, run, text, [entry.id])
    assert verdict.verdict.label == "missing_evidence"
    assert "over the limit" in verdict.reason


def test_an_uncited_entry_that_states_it_is_named(cp: ControlPlane) -> None:
    run = cp.ledger.start_run()
    terms = cp.ledger.append(
        run, kind="tool_output", source="tool:terms", content="Payment is due within 30 days."
    )
    stock = cp.ledger.append(
        run,
        kind="tool_output",
        source="tool:stock",
        content="Warehouse Lund holds the spare pumps on shelf nine.",
    )
    verdict = _verify(cp, run, "Warehouse Lund holds the spare pumps on shelf nine.", [terms.id])
    assert verdict.verdict.label != "entailment"
    assert stock.id in verdict.reason
    assert "contradicts" not in verdict.reason


def test_a_wrong_total_is_a_contradiction_that_names_the_right_value(cp: ControlPlane) -> None:
    run = cp.ledger.start_run()
    stored = _json(SHIPMENT)
    entry = cp.ledger.append(run, kind="tool_output", source="tool:shipment", content=stored)
    verdict = _verify(cp, run, "In total the two parcels weigh 16.2 kg.", [entry.id])
    assert verdict.verdict.label == "contradiction"
    assert "15.2" in verdict.reason
    body = json.loads(cp.ledger.get(verdict.ledger_id).text)
    (computation,) = body["computations"]
    assert computation["operation"] == "sum" and computation["result"] == "15.2"
    assert sorted(o["text"] for o in computation["operands"]) == ["11.0", "4.2"]
    for operand in computation["operands"]:
        start, end = operand["span"]
        assert stored[start:end] == operand["text"]


def test_a_right_total_is_recorded_with_its_operands(cp: ControlPlane) -> None:
    run = cp.ledger.start_run()
    entry = cp.ledger.append(
        run, kind="tool_output", source="tool:shipment", content=_json(SHIPMENT)
    )
    verdict = _verify(cp, run, "In total the two parcels weigh 15.2 kg.", [entry.id])
    assert verdict.verdict.label != "missing_evidence"  # the total is not a gap
    body = json.loads(cp.ledger.get(verdict.ledger_id).text)
    # "two parcels" is a count of the listed parcels, 15.2 kg the sum of their weights.
    by_result = {c["result"]: c for c in body["computations"]}
    assert by_result["2"]["operation"] == "count"
    assert by_result["15.2"]["operation"] == "sum"
    assert {o["ledger_id"] for o in by_result["15.2"]["operands"]} == {entry.id}


def test_values_are_restated_as_the_evidence_writes_them() -> None:
    evidence = [
        "due: 2024-10-31\nfines.amount: 1.75\nfines.currency: EUR\n"
        "on_hand: 1240\ngross_kg: 2140.5\ntimeout: 30000 ms"
    ]
    assert in_evidence_terms("It was due on 31 October 2024.", evidence) == (
        "It was due on 2024-10-31."
    )
    assert in_evidence_terms("€1.75 in fines", evidence) == "1.75 in fines"
    # The key gives the unit; the value is restated as the evidence writes it, bare.
    assert in_evidence_terms("It weighs a little over 2.1 tonnes.", evidence) == (
        "It weighs 2140.5."
    )
    assert in_evidence_terms("no answer within 30 seconds", evidence) == (
        "no answer within 30000 ms"
    )
    # A count keeps what it counts and takes only the evidence's number.
    assert in_evidence_terms("It holds 1,240 rolls.", evidence) == "It holds 1240 rolls."
    # A value the evidence does not state, or states otherwise, is left as written.
    assert in_evidence_terms("It was due on 30 October 2024.", evidence) == (
        "It was due on 30 October 2024."
    )
    assert in_evidence_terms("It holds 1,250 rolls.", evidence) == "It holds 1,250 rolls."


def test_the_model_reads_the_values_as_the_cited_evidence_writes_them(db_url: str) -> None:
    nli = RecordingNLI()
    with ControlPlane.open(db_url, nli=nli) as plane:
        run = plane.ledger.start_run()
        stored = _json(
            {"loan": "LN-88", "due": "2024-10-31", "fine": {"amount": 1.75, "currency": "EUR"}}
        )
        entry = plane.ledger.append(run, kind="tool_output", source="tool:loan", content=stored)
        text = "Loan LN-88 was due back on 31 October 2024 and owes €1.75."
        verdict = _verify(plane, run, text, [entry.id])
    hypotheses = {hypothesis for call in nli.calls for _, hypothesis in call}
    assert hypotheses == {"Loan LN-88 was due back on 2024-10-31 and owes 1.75."}
    # What is recorded is the proposition as the agent wrote it.
    assert verdict.proposition == text
