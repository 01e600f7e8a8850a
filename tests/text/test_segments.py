"""Sentences and clauses, mode by mode: where each cuts, and where it differs from
the others (the reason it is a mode of its own)."""

from __future__ import annotations

import pytest

from assay._text import (
    clause_around,
    clause_spans,
    clause_stop,
    sentence_around,
    sentence_spans,
    sentences,
    split_clauses,
)


def _texts(text: str, spans: list[tuple[int, int]]) -> list[str]:
    return [text[a:b] for a, b in spans]


# --- sentences ------------------------------------------------------------------------


def test_prose_sentences_end_at_marks_before_blanks_and_at_line_breaks() -> None:
    text = "  Dr. Okafor signed on 3 May. It holds (see fig. 2)! Does it?\nYes"
    found = sentences(text)
    assert [s.text for s in found] == [
        "Dr. Okafor signed on 3 May.",
        "It holds (see fig. 2)!",
        "Does it?",
        "Yes",
    ]
    assert all(text[s.start : s.end] == s.text for s in found)
    assert sentence_spans(text) == [(s.start, s.end) for s in found]


@pytest.mark.parametrize(
    "text", ["The U.S. office opened.", "J. Smith signed.", "Prices rose 3.5 per cent."]
)
def test_an_initial_a_dotted_word_or_a_decimal_ends_no_prose_sentence(text: str) -> None:
    assert [s.text for s in sentences(text)] == [text]


def test_a_text_of_blanks_has_no_sentence() -> None:
    assert sentences(" \n\t ") == []
    assert sentence_spans("", "records") == [(0, 0)]


def test_statements_end_at_every_mark_and_semicolon_that_no_digit_follows() -> None:
    text = "Approx. 15 t; in total 32 t!X"
    spans = sentence_spans(text, "statements")
    assert _texts(text, spans) == ["Approx.", " 15 t;", " in total 32 t!", "X"]
    # Prose keeps the abbreviation and the semicolon inside one sentence.
    assert len(sentences("Approx. 15 t; in total 3.2 t.")) == 1


def test_a_statement_starts_only_after_a_mark_that_ends_one() -> None:
    text = "Approx. 1.5 t;;"
    spans = sentence_spans(text, "statements")
    assert _texts(text, spans) == ["Approx.", "5 t;", ";", ""]


def test_records_start_where_a_sentence_visibly_starts() -> None:
    body = "Delivered e.g. a lease. Next (see p. iv) came.  3 more came! ok then"
    assert _texts(body, sentence_spans(body, "records")) == [
        "Delivered e.g. a lease.",
        "Next (see p. iv) came.",
        "3 more came! ok then",
    ]


def test_the_pointer_reading_is_the_sentence_or_line_around_a_span() -> None:
    text = "Revenue rose. Margin 11.2%, down from 12.0%! Other line\nnext"
    start = text.index("11.2%")
    a, b = sentence_around(text, start, start + 5)
    assert text[a:b] == "Margin 11.2%, down from 12.0%!"
    start = text.index("Other")
    assert text[slice(*sentence_around(text, start, start + 5))] == "Other line"
    start = text.index("next")
    assert text[slice(*sentence_around(text, start, start + 4))] == "next"


# --- clauses --------------------------------------------------------------------------


def test_claim_clauses_are_cut_at_joining_words_but_not_at_while_or_so() -> None:
    assert split_clauses("The only copy is on the shelf, but the account is at its limit") == [
        "The only copy is on the shelf",
        "the account is at its limit",
    ]
    assert split_clauses("The loss happened while the policy was in force") == []
    assert split_clauses("The fee was waived, so the invoice was paid in full") == []


def test_claim_clauses_keep_a_list_and_drop_a_concessive_still() -> None:
    assert split_clauses("It covers printing, binding, and delivery to the site") == []
    assert split_clauses("The storm hit the port, but the vessel still sailed on time") == [
        "The storm hit the port",
        "the vessel sailed on time",
    ]


def test_subordinate_clauses_are_cut_before_while_and_so() -> None:
    text = "The claim was not paid because the policy had lapsed, so it was closed"
    pieces = _texts(text, clause_spans(text, "subordinate"))
    assert pieces == [
        "The claim was not paid",
        " because the policy had lapsed",
        ", so it was closed",
    ]
    text = "The loss happened while the policy was in force"
    assert _texts(text, clause_spans(text, "subordinate")) == [
        "The loss happened",
        " while the policy was in force",
    ]


def test_subordinate_clauses_cover_the_span_asked_for() -> None:
    text = "Intro. Consent, which shall not be withheld; assignment needs it. Outro."
    start, end = text.index("Consent"), text.index(" Outro")
    spans = clause_spans(text, "subordinate", start, end)
    assert spans[0][0] == start and spans[-1][1] == end
    assert _texts(text, spans) == [
        "Consent",
        ", which shall not be withheld",
        "; assignment needs it.",
    ]


def test_contrast_clauses_are_cut_inside_each_prose_sentence() -> None:
    text = "Unit tests passed; integration tests failed. Build ok, but deploy was slow."
    assert _texts(text, clause_spans(text, "contrast")) == [
        "Unit tests passed",
        "integration tests failed.",
        "Build ok",
        "but deploy was slow.",
    ]
    assert _texts("a, while b", clause_spans("a, while b", "contrast")) == ["a", "while b"]


def test_the_value_clause_is_bounded_by_marks_and_contrasting_commas() -> None:
    text = "Sales rose, while margin 11.2% fell; costs grew"
    start = text.index("11.2%")
    lo, hi = clause_around(text, start, start + 5, 0, len(text))
    assert text[lo:hi] == " margin 11.2% fell"
    lo, hi = clause_around(text, start, start + 5, start - 3, start + 7)
    assert (lo, hi) == (start - 3, start + 7)  # no end inside the window


def test_a_stop_ends_the_clause_of_a_double_negative() -> None:
    assert clause_stop("not assign: without consent", 0) == 10
    assert clause_stop("not assign without consent", 0) is None
    assert clause_stop("a. b; c", 2) == 4
