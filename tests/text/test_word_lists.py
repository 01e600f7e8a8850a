"""Each word list, read by the check that uses it: every entry of the list changes
what the check finds, and a word outside the list does not (so a word added to a
file is a word the check reads, and a list no check reads fails here)."""

from __future__ import annotations

import pytest

from assay._text import sentences, word_list, word_set, word_table
from assay.grounding import CUES, find_quantities, identifier_in_evidence
from assay.grounding._arithmetic import claim_words, cues_near
from assay.verifier._antonyms import action_conflict, in_evidence_words
from assay.verifier._direction import direction_conflict
from assay.verifier._expected import expected_as_done
from assay.verifier._fields import wrong_field
from assay.verifier._flags import flag_conflict, flag_support
from assay.verifier._polarity import negated, opposite_polarity
from assay.verifier._relations import hedged_as_certain, planned_as_done
from assay.verifier._reworded import lexical_similarity
from assay.verifier._sequence import out_of_order
from assay.verifier._text import content_words, word_stems


def _entries(name: str) -> list[str]:
    return list(word_list(name))


@pytest.mark.parametrize("abbreviation", _entries("abbreviations"))
def test_an_abbreviation_does_not_end_a_sentence(abbreviation: str) -> None:
    assert len(sentences(f"See {abbreviation}. Smith for the rest.")) == 1
    assert len(sentences("See Smithers. Smith for the rest.")) == 2


@pytest.mark.parametrize("word", _entries("stop-words"))
def test_a_stop_word_carries_no_content(word: str) -> None:
    assert content_words(f"{word} invoice") == ["invoic"]
    assert lexical_similarity(f"{word} invoice overdue", "invoice overdue") == 1.0
    assert lexical_similarity("invoices overdue", "invoice overdue") < 1.0


@pytest.mark.parametrize(("clipped", "full"), sorted(word_table("clipped-words").items()))
def test_a_clipped_word_meets_the_word_it_clips(clipped: str, full: str) -> None:
    assert word_stems(clipped) == word_stems(full)
    assert word_stems("exa") != word_stems("examination")


@pytest.mark.parametrize("word", _entries("negations"))
def test_a_negation_negates(word: str) -> None:
    assert negated(f"the fee is {word} refundable")
    assert opposite_polarity("the fee is refundable", f"the fee is {word} refundable")
    assert not negated("the fee is fully refundable")


@pytest.mark.parametrize(("word", "direction"), sorted(word_table("comparatives").items()))
def test_a_comparative_bounds_and_goes_past_a_value(word: str, direction: str) -> None:
    del direction  # its own test below: opposite directions do not meet
    assert not negated(f"no {word} than 6 credits count")  # a bound, not a negation
    assert negated("no wider than 6 credits count")
    assert opposite_polarity(f"no {word} than 6 credits count", f"{word} than 6 credits count")


def test_comparatives_meet_only_in_their_own_direction() -> None:
    table = word_table("comparatives")
    for word, direction in table.items():
        for other, way in table.items():
            if way != direction:
                assert not opposite_polarity(
                    f"no {word} than 6 credits count", f"may be {other} than 6 credits"
                )


_MOVES = {
    "up": ("Margin moved from 12.0% to 11.2%.", "Margin {} to 11.2%."),
    "down": ("Margin moved from 10.0% to 11.2%.", "Margin {} to 11.2%."),
    "later": ("The launch moves from 21 July to 14 July.", "The launch was {} to 14 July."),
    "earlier": ("The launch moves from 7 July to 14 July.", "The launch was {} to 14 July."),
}


@pytest.mark.parametrize(
    ("direction", "word"),
    [(d, w) for d, words in word_table("directions").items() for w in words],
)
def test_a_word_of_direction_is_read_against_the_evidence(direction: str, word: str) -> None:
    evidence, claim = _MOVES[direction]
    assert direction_conflict(evidence, claim.format(word)) is not None
    assert direction_conflict(evidence, claim.format("stood")) is None


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        (a, b)
        for pair in word_table("antonyms")["opposites"]
        for side, other in ((pair["one"], pair["other"]), (pair["other"], pair["one"]))
        for a in side
        for b in other
    ],
)
def test_opposite_actions_contradict(ours: str, theirs: str) -> None:
    evidence = f"Release 4.2: {theirs} support for Python 3.8."
    assert action_conflict(evidence, f"Release 4.2 {ours} support for Python 3.8") is not None
    assert action_conflict(evidence, "Release 4.2 documented support for Python 3.8") is None


@pytest.mark.parametrize(
    ("written", "claimed"),
    [(a, b) for group in word_table("antonyms")["same"] for a in group for b in group if a != b],
)
def test_the_same_action_is_restated_in_the_evidence_word(written: str, claimed: str) -> None:
    evidence = [f"Warranty claim {written}."]
    assert in_evidence_words(f"the claim was {claimed}", evidence) == f"the claim was {written}"
    assert in_evidence_words("the claim was filed", evidence) == "the claim was filed"


def _cue_texts() -> list[tuple[str, str]]:
    table = word_table("arithmetic-cues")
    kinds = {kind: kind for kind in CUES} | {"excluding": "sum"}
    return [(kinds[name], word) for name, words in table.items() for word in words]


@pytest.mark.parametrize(("cue", "word"), _cue_texts())
def test_a_cue_word_says_its_number_is_computed(cue: str, word: str) -> None:
    text = f"It came to 45 {word} night in the end."
    at = text.index("45")
    assert cue in cues_near(text, at, at + 2)
    assert cue not in cues_near("It came to 45 in the end.", 11, 13)


@pytest.mark.parametrize("word", _entries("common-words"))
def test_a_common_word_names_no_row(word: str) -> None:
    assert claim_words(f"{word.capitalize()} Eastgate {word}") == ["Eastgate"]


@pytest.mark.parametrize("label", _entries("plan-labels"))
def test_a_plan_label_gives_a_date_as_expected(label: str) -> None:
    claim = "The disk array was replaced on 31 January 2025."
    assert expected_as_done(f"Disk array replacement {label} 2025-01-31", claim) is not None
    assert expected_as_done("Disk array replacement done 2025-01-31", claim) is None


@pytest.mark.parametrize("word", _entries("expectation-words"))
def test_an_expectation_reports_nothing_as_done(word: str) -> None:
    evidence = "Disk array replacement due 2025-01-31"
    claim = "The disk array was replaced on 31 January 2025"
    assert expected_as_done(evidence, f"{claim}, {word} the engineer.") is None
    assert expected_as_done(evidence, f"{claim}, said the engineer.") is not None


@pytest.mark.parametrize("verb", _entries("done-verbs"))
def test_a_verb_of_completion_reports_an_event_as_done(verb: str) -> None:
    evidence = "Shipment ETA 2025-02-04"
    assert expected_as_done(evidence, f"The shipment {verb} on 4 February 2025.") is not None
    assert expected_as_done(evidence, "The shipment Felixstowe on 4 February 2025.") is None


@pytest.mark.parametrize("noun", _entries("plural-nouns"))
def test_a_plural_noun_is_counted(noun: str) -> None:
    found = find_quantities(f"We hired 12 {noun} this year.")
    assert [q.noun for q in found] == [noun]
    assert [q.noun for q in find_quantities("We hired 12 staffer this year.")] == [None]


@pytest.mark.parametrize("word", _entries("not-nouns"))
def test_a_word_that_is_no_noun_is_not_counted(word: str) -> None:
    assert all(q.noun != word for q in find_quantities(f"We saw 12 {word} there."))
    assert [q.noun for q in find_quantities("We saw 12 badgers there.")] == ["badgers"]


@pytest.mark.parametrize("word", _entries("numbering-words"))
def test_a_numbering_field_holds_a_bare_number(word: str) -> None:
    assert identifier_in_evidence("#4190", f"linked_{word}: 4190")
    assert not identifier_in_evidence("#4190", "amount: 4190")


@pytest.mark.parametrize("lead", _entries("field-name-leads"))
def test_a_lead_word_of_a_field_name_states_nothing(lead: str) -> None:
    claim = "The account is inactive"
    assert flag_conflict(f"account.{lead}_active: true", claim) is not None
    assert flag_conflict("account.maybe_active: true", claim) is None


@pytest.mark.parametrize("auxiliary", _entries("passive-auxiliaries"))
def test_a_passive_states_an_able_field(auxiliary: str) -> None:
    view = "fare.refundable: false"
    assert flag_conflict(view, f"The fare {auxiliary} refunded") is not None
    assert flag_conflict(view, "The fare got refunded") is None


@pytest.mark.parametrize("pronoun", _entries("pronouns"))
def test_a_pronoun_needs_no_word_of_the_record(pronoun: str) -> None:
    view = "name: Ana Ruiz\nactive: true"
    assert flag_support(view, f"{pronoun.capitalize()} is active") is not None
    assert flag_support(view, "Bob is active") is None


@pytest.mark.parametrize("word", _entries("permission-words"))
def test_a_permission_is_stated_by_a_modal(word: str) -> None:
    claim = "Unused days may not carry over"
    assert flag_conflict(f"carry_over_{word}: true", claim) is not None
    assert flag_conflict("carry_over_wanted: true", claim) is None


@pytest.mark.parametrize("name", _entries("state-fields"))
def test_a_state_field_holds_no_name(name: str) -> None:
    view = f"ticket.{name}: escalated\nticket.owner: dana"
    assert wrong_field(view, f"The ticket {name} is dana") is None
    control = "ticket.reviewer: escalated\nticket.owner: dana"
    assert wrong_field(control, "The ticket reviewer is dana") is not None


def test_every_list_is_read_by_a_test_here() -> None:
    """A file added to ``words/`` needs a test in this module that shows its check
    reading it."""
    from importlib.resources import files

    names = {p.name.rsplit(".", 1)[0] for p in (files("assay._text") / "words").iterdir()}
    source = (files("tests.text") / "test_word_lists.py").read_text(encoding="utf-8")
    assert all(f'"{name}"' in source for name in names), sorted(names)
    assert word_set("negations")  # the loader reads the package's own files


@pytest.mark.parametrize("word", _entries("hedge-words"))
def test_a_hedge_leaves_open_what_a_claim_states_as_certain(word: str) -> None:
    claim = "The supplier will raise the storage rate in April."
    assert hedged_as_certain([f"The supplier {word} raise the storage rate in April."], claim)
    assert not hedged_as_certain(["The supplier raises the storage rate in April."], claim)


@pytest.mark.parametrize("word", _entries("pending-words"))
def test_a_pending_word_gives_an_act_as_still_to_come(word: str) -> None:
    claim = "The board approved the dividend for the shareholders."
    evidence = f"The dividend for the shareholders is {word} by the board."
    assert planned_as_done([evidence], claim) is not None
    settled = "The dividend for the shareholders is set by the board."
    assert planned_as_done([settled], claim) is None


@pytest.mark.parametrize("verb", _entries("completion-words"))
def test_a_completion_word_reports_an_act_as_done(verb: str) -> None:
    evidence = "The dividend for the shareholders is pending at the board."
    assert planned_as_done([evidence], f"The board {verb} the dividend for the shareholders.")
    assert not planned_as_done([evidence], "The board holds the dividend for the shareholders.")


_TIMELINE = (
    "deploys[0].id: D-4410\ndeploys[0].at: 2025-07-08T13:02:00Z\n"
    "alerts[0].id: ALR-901\nalerts[0].fired_at: 2025-07-08T13:15:00Z"
)


@pytest.mark.parametrize(
    ("order", "word"),
    [(o, w) for o, words in word_table("sequence-words").items() for w in words],
)
def test_a_word_of_sequence_is_read_against_the_timestamps(order: str, word: str) -> None:
    """Each word puts its first event after (``later``) or before (``earlier``) its
    second: the evidence's order contradicts one way and not the other."""
    wrong, right = ("D-4410", "ALR-901") if order == "later" else ("ALR-901", "D-4410")
    assert out_of_order(f"Event {wrong} {word} event {right}.", [_TIMELINE]) is not None
    assert out_of_order(f"Event {right} {word} event {wrong}.", [_TIMELINE]) is None
    assert out_of_order(f"Event {wrong} beside event {right}.", [_TIMELINE]) is None


def _state_entries() -> list[tuple[str, str]]:
    table = word_table("state-classes")
    return [(name, word) for name, words in table.items() for word in words]


@pytest.mark.parametrize(("state", "word"), _state_entries())
def test_a_state_word_puts_its_record_in_its_class(state: str, word: str) -> None:
    from assay.verifier._states import class_of, said_classes

    assert class_of(word.replace(" ", "_")) == state
    assert said_classes(f"Request RQ-7 is {word} close.") == {state}
    assert said_classes("Request RQ-7 is reviewed now.") == set()
