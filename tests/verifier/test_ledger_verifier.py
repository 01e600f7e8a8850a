"""``cp.verifier``: verdicts from ledger evidence only, with the real shipped model;
the deterministic checks, abstention records, and ``reworded_unsupported``."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

import pytest

from assay import ControlPlane, Verifier
from assay.verifier import Entailment, EntailmentCache, LexicalNLI
from assay.verifier._deterministic import deterministic_gaps, proper_names

LETTER = (
    "4.2 The hourly rate for partners is capped at EUR 520 per hour.\n\n"
    "4.3 The hourly rate for senior associates is capped at EUR 380 per hour."
)
INVOICE = "Line 14: senior associate, 12.5 h at EUR 450/h, total EUR 5,625.00."


@pytest.fixture
def cp(db_url: str, verifier: Verifier) -> Iterator[ControlPlane]:
    with ControlPlane.open(db_url, nli=verifier) as plane:
        yield plane


def handover(run: str, *props: tuple[str, list[str]], kind: str = "Assertion") -> dict[str, Any]:
    return {
        "run_id": run,
        "from_agent": "analyst",
        "status": "ok",
        "claims": [
            {
                "id": f"c{i}",
                "type": kind,
                "text": text,
                "confidence": 0.9,
                "propositions": [{"id": f"c{i}.p", "text": text, "ledger_ids": ids}],
            }
            for i, (text, ids) in enumerate(props)
        ],
    }


def _evidence(cp: ControlPlane) -> tuple[str, str, str]:
    run = cp.ledger.start_run()
    letter = cp.ledger.append(run, kind="retrieval", source="letter.md", content=LETTER)
    invoice = cp.ledger.append(run, kind="tool_output", source="tool:read", content=INVOICE)
    return run, letter.id, invoice.id


def test_supported_propositions_are_entailed_with_their_span(cp: ControlPlane) -> None:
    run, letter, invoice = _evidence(cp)
    verified = cp.verifier.verify(
        run,
        handover(
            run,
            ("The engagement letter caps senior associates at EUR 380 per hour.", [letter]),
            ("Line 14 bills 12.5 h at EUR 450/h for a senior associate.", [invoice]),
        ),
    )
    assert verified.all_entailed, [v.reason for v in verified.verdicts]
    cap = verified.handover.claims[0].propositions[0].entailment
    assert cap is not None and cap.label == "entailment" and cap.ledger_id == letter
    assert cap.span is not None
    assert "senior associates is capped at EUR 380" in LETTER[cap.span[0] : cap.span[1]]
    assert cap.model == cp.verifier.model.model_id  # type: ignore[attr-defined]
    verdicts = cp.ledger.entries(run, kinds=["verdict"])
    assert len(verdicts) == 2
    assert json.loads(verdicts[0].text)["label"] == "entailment"


def test_a_number_missing_from_the_evidence_is_settled_without_the_model(
    cp: ControlPlane,
) -> None:
    run, letter, _invoice = _evidence(cp)
    passes = cp.verifier.model.forward_passes  # type: ignore[attr-defined]
    verified = cp.verifier.verify(
        run,
        handover(
            run, ("The engagement letter caps senior associates at EUR 400 per hour.", [letter])
        ),
    )
    [missing] = verified.unsupported
    assert missing.label == "missing_evidence"
    assert "EUR 400" in missing.missing_evidence
    assert cp.verifier.model.forward_passes == passes  # type: ignore[attr-defined]
    [record] = cp.ledger.entries(run, kinds=["unsupported"])
    assert json.loads(record.text)["proposition"].startswith("The engagement letter caps")


def test_support_outside_the_ledger_is_no_support(cp: ControlPlane) -> None:
    run, _letter, _invoice = _evidence(cp)
    other = cp.ledger.start_run()
    elsewhere = cp.ledger.append(other, kind="retrieval", source="x", content=LETTER)
    verified = cp.verifier.verify(
        run,
        handover(
            run,
            ("The hourly rate for partners is capped at EUR 520 per hour.", [elsewhere.id]),
            (
                "The hourly rate for partners is capped at EUR 520 per hour.",
                ["led_0000000000000000"],
            ),
        ),
    )
    assert [u.label for u in verified.unsupported] == ["missing_evidence", "missing_evidence"]
    assert all("no ledger entry of this run" in u.missing_evidence for u in verified.unsupported)


def test_invented_names_end_unsupported(cp: ControlPlane) -> None:
    run, _letter, invoice = _evidence(cp)
    verified = cp.verifier.verify(
        run,
        handover(
            run,
            (
                "Line 14 was drafted by Jonas Brandt and Mira Okafor in the Hamburg office.",
                [invoice],
            ),
        ),
    )
    [missing] = verified.unsupported
    assert missing.label == "missing_evidence"
    assert "Brandt" in missing.missing_evidence and "Hamburg" in missing.missing_evidence


def test_a_claim_that_something_is_absent_while_the_ledger_shows_it(cp: ControlPlane) -> None:
    run, letter, _invoice = _evidence(cp)
    verified = cp.verifier.verify(
        run,
        handover(
            run,
            (
                "The engagement letter sets no cap on the hourly rate of senior associates.",
                [letter],
            ),
        ),
    )
    [unsupported] = verified.unsupported
    assert unsupported.label in ("contradiction", "neutral")
    assert unsupported.proposition.startswith("The engagement letter sets no cap")


class AlwaysContradicts:
    """A model that answers "contradiction" (p=0.95) for every pair, on the line of
    the document that starts with ``line``: what a small cross-encoder does with a
    short premise that leaves most of the claim out."""

    threshold = 0.5

    def __init__(self, line: str) -> None:
        self.line = line

    def check_many(
        self, pairs: Iterable[tuple[str, str]], *, cache: EntailmentCache | None = None
    ) -> list[Entailment]:
        results: list[Entailment] = []
        for document, _claim in pairs:
            start = max(document.find(self.line), 0)
            end = document.find("\n", start)
            results.append(
                Entailment(
                    label="contradiction",
                    score=0.05,
                    probs={"entailment": 0.02, "neutral": 0.03, "contradiction": 0.95},
                    evidence_span=(start, len(document) if end < 0 else end),
                    model="always-contradicts",
                )
            )
        return results


FLIGHT = (
    "flight: NX 482\n"
    "route: Lisbon to Amsterdam\n"
    "NX 482 to Amsterdam: delayed, inbound aircraft arrived late."
)
FLIGHT_CLAIM = "Flight NX 482 to Amsterdam is delayed because its inbound aircraft arrived late."


@pytest.mark.parametrize(
    ("line", "label"),
    [
        # A line that only names the flight is not about the delay: it is silent.
        ("flight: NX 482", "neutral"),
        # A sentence that writes most of the claim's words can contradict it.
        ("NX 482 to Amsterdam", "contradiction"),
    ],
)
def test_only_a_premise_about_the_proposition_is_named_as_contradicting_it(
    db_url: str, line: str, label: str
) -> None:
    with ControlPlane.open(db_url, nli=AlwaysContradicts(line)) as plane:
        run = plane.ledger.start_run()
        entry = plane.ledger.append(run, kind="tool_output", source="tool:flight", content=FLIGHT)
        verified = plane.verifier.verify(run, handover(run, (FLIGHT_CLAIM, [entry.id])))
    [unsupported] = verified.unsupported
    assert unsupported.label == label, unsupported.missing_evidence
    if label == "neutral":
        assert "does not state it" in unsupported.missing_evidence
        assert unsupported.contradicting_ledger_id is None
    else:
        assert f"{entry.id} contradicts it" in unsupported.missing_evidence
        assert unsupported.contradicting_span is not None
        start, end = unsupported.contradicting_span
        assert FLIGHT[start:end].startswith(line)


def test_conjectures_are_not_verified(cp: ControlPlane) -> None:
    run, _letter, _invoice = _evidence(cp)
    verified = cp.verifier.verify(
        run, handover(run, ("The firm may have agreed a discount.", []), kind="Conjecture")
    )
    assert verified.verdicts == () and verified.unsupported == ()


def test_claim_status_feeds_the_grants(cp: ControlPlane) -> None:
    run, letter, invoice = _evidence(cp)
    cp.verifier.verify(
        run,
        handover(
            run,
            ("The engagement letter caps senior associates at EUR 380 per hour.", [letter]),
            ("Line 14 bills 12.5 h at EUR 999/h.", [invoice]),
        ),
    )
    status = cp.verifier.claim_status(run, ["c0", "c1", "c9"])
    assert status["c0"].known and status["c0"].labels == ("entailment",)
    assert status["c1"].labels == ("missing_evidence",)
    assert not status["c9"].known


def test_reworded_unsupported_is_rejected_until_new_evidence_is_cited(db_url: str) -> None:
    with ControlPlane.open(db_url, nli=LexicalNLI()) as cp:
        run, letter, _invoice = _evidence(cp)
        assert cp.verifier.verify(
            run, handover(run, ("The board approved the partner rate in March.", [letter]))
        ).unsupported
        again = cp.gate.check(
            run, handover(run, ("The board approved the partner rate in March.", [letter]))
        )
        assert "reworded_unsupported" in again.codes
        reread = cp.ledger.append(run, kind="retrieval", source="letter.md#copy", content=LETTER)
        copied = cp.gate.check(
            run, handover(run, ("The board approved the partner rate in March.", [reread.id]))
        )
        assert "reworded_unsupported" in copied.codes  # the same bytes are no new evidence
        minutes = cp.ledger.append(
            run,
            kind="retrieval",
            source="minutes.md",
            content="The board approved the partner rate in March.",
        )
        settled = cp.gate.check(
            run,
            handover(run, ("The board approved the partner rate in March.", [letter, minutes.id])),
        )
        assert "reworded_unsupported" not in settled.codes


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("Work was done by Jonas Brandt in Hamburg.", ["Jonas", "Brandt", "Hamburg"]),
        ("The engagement letter caps rates.", []),
        ("Line 14: EUR 450/h. The Engagement Letter says so.", ["Engagement", "Letter"]),
    ],
)
def test_proper_names(text: str, names: list[str]) -> None:
    assert proper_names(text) == names


THREAD = (
    "3  2024-11-21 09:12  From: orders@castellanpaper.example.org  To: purchasing@example.org\n"
    '   "We\'ll ship 8 replacement packs with your next order, expected 28 Nov."'
)


@pytest.mark.parametrize(
    ("claim", "gaps"),
    [
        # A company named by its address: the whole name run is written as one word.
        ("Castellan Paper said it would ship eight replacement packs.", []),
        ("Orders from Castellan Paper are expected on 28 Nov.", []),
        # A part of the joined word alone is not the name, nor another name.
        ("The packs come from Castellan Supplies.", ["Castellan", "Supplies"]),
        ("Then Paper said it would ship eight packs.", ["Paper"]),
    ],
)
def test_a_name_the_evidence_writes_as_one_word(claim: str, gaps: list[str]) -> None:
    assert deterministic_gaps(claim, [THREAD]).gaps == gaps


def test_a_hyphenated_name_matches_its_parts_and_its_joined_form() -> None:
    evidence = ["Vendor: Rheinwerk Antriebe GmbH; contact m.haas (Kiln-Harbour office)."]
    assert deterministic_gaps("The order went to Rhein-Werk via Kiln Harbour.", evidence).gaps == []
    assert deterministic_gaps("The order went via Kiln Bay.", evidence).gaps == ["Bay"]


def _room_evidence(cp: ControlPlane) -> tuple[str, str, str, str]:
    run = cp.ledger.start_run()
    room = {"room": "Lovelace", "capacity": 8, "floor": 3, "screen": True}
    booking = {"room": "Lovelace", "booked_by": "K. Osei", "slot": "10:00-11:00"}
    rules = "Rooms on floor 3 are quiet rooms. Food is not allowed in quiet rooms."
    room_id = cp.ledger.append(
        run, kind="tool_output", source="tool:room", content=json.dumps(room)
    ).id
    booking_id = cp.ledger.append(
        run, kind="tool_output", source="tool:booking", content=json.dumps(booking)
    ).id
    rules_id = cp.ledger.append(run, kind="retrieval", source="handbook.md", content=rules).id
    return run, room_id, booking_id, rules_id


def test_two_facts_from_two_entries_are_read_clause_by_clause(cp: ControlPlane) -> None:
    run, room, booking, _rules = _room_evidence(cp)
    claim = "K. Osei booked Lovelace for 10:00-11:00, and the room has a screen."
    verified = cp.verifier.verify(run, handover(run, (claim, [room, booking])))
    assert verified.all_entailed, [v.reason for v in verified.verdicts]


def test_a_clause_the_evidence_denies_is_the_opposite(cp: ControlPlane) -> None:
    run, room, _booking, rules = _room_evidence(cp)
    claim = "Lovelace is on floor 3; food is allowed in quiet rooms."
    verdict = cp.verifier.verify(run, handover(run, (claim, [room, rules]))).verdicts[0]
    assert verdict.verdict.label == "contradiction"
    assert verdict.reason == f"{rules} says the opposite: “Food is not allowed in quiet rooms.”"


def test_a_short_clause_is_not_read_against_a_line_that_only_names_it(cp: ControlPlane) -> None:
    run, room, booking, _rules = _room_evidence(cp)
    claim = "The Lovelace room has no whiteboard, but K. Osei booked it."
    verdict = cp.verifier.verify(run, handover(run, (claim, [room, booking]))).verdicts[0]
    assert "says the opposite" not in verdict.reason


def test_a_claim_about_a_csv_row_is_read_against_the_row_written_out(cp: ControlPlane) -> None:
    run = cp.ledger.start_run()
    csv = "depot,vans,km_driven\nLeeds,14,18230\nYork,9,11075\nHull,6,7920"
    fleet = cp.ledger.append(run, kind="tool_output", source="tool:fleet", content=csv).id
    verified = cp.verifier.verify(
        run, handover(run, ("The York depot has 9 vans, which drove 11,075 km.", [fleet]))
    )
    assert verified.all_entailed, [v.reason for v in verified.verdicts]
    span = verified.verdicts[0].verdict.span
    assert span is not None and "York,9,11075" in csv[span[0] : span[1]]


def test_a_clause_whose_denial_the_evidence_negates_is_the_opposite(cp: ControlPlane) -> None:
    run = cp.ledger.start_run()
    pet = {"patient": "Rex", "species": "dog", "weight_kg": 9.5}
    clinic = "Boosters are given without an appointment on weekday mornings."
    pet_id = cp.ledger.append(
        run, kind="tool_output", source="tool:pet", content=json.dumps(pet)
    ).id
    clinic_id = cp.ledger.append(run, kind="retrieval", source="clinic.md", content=clinic).id
    claim = "Rex weighs 9.5 kg, and boosters need an appointment."
    verdict = cp.verifier.verify(run, handover(run, (claim, [pet_id, clinic_id]))).verdicts[0]
    assert verdict.verdict.label == "contradiction"
    assert verdict.reason.startswith(f"{clinic_id} says the opposite")


INCIDENT = (
    "INC-7730 timeline (UTC)\n11:05 Alert fired: search p99 latency above 3 s.\n"
    "11:12 On-call (T. Berg) acknowledged.\n11:36 Cause found: an index rebuild saturated "
    "the disks.\nNo data was lost."
)


@pytest.mark.parametrize(
    ("notes", "claim"),
    [
        (
            "## 2.8.0 - 2025-01-20\n- Added export to Parquet.\n- Dropped support for Python "
            "3.9.\n\n## 2.7.2 - 2024-12-02\n- Fixed a crash when the config file is empty.",
            "The search latency alert fired at 11:05 UTC, and T. Berg acknowledged it at 11:12.",
        ),
        (
            "## 4.1.0 - 2025-02-03\n- Added retry budgets.\n\n"
            "## 4.0.3 - 2024-11-18\n- Fixed a leak.",
            "T. Berg acknowledged the alert at 11:12.",
        ),
    ],
)
def test_an_uncited_entry_about_something_else_does_not_contradict(
    cp: ControlPlane, notes: str, claim: str
) -> None:
    # A release note's date is no other value for the time an alert fired.
    run = cp.ledger.start_run()
    cited = cp.ledger.append(run, kind="tool_output", source="tool:timeline", content=INCIDENT).id
    cp.ledger.append(run, kind="tool_output", source="tool:notes", content=notes)
    verdict = cp.verifier.verify(run, handover(run, (claim, [cited]))).verdicts[0]
    assert verdict.verdict.label != "contradiction" or verdict.verdict.ledger_id == cited, (
        verdict.reason
    )
