"""The deterministic checks read their input in one pass: each fast reading gives
exactly what the plain pattern it replaces gives (which read the rest of a clause, a
run of blanks or a run of capitals again from every position), and what every value
of a claim asks is worked out once."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from assay._text import _segments, word_set
from assay.grounding import _check
from assay.verifier import _fields, _polarity
from assay.verifier._deterministic import deterministic_gaps, proper_names
from assay.verifier._expected import expected_as_done
from assay.verifier._text import split_clauses, split_sentences

_SETTINGS = settings(max_examples=300, deadline=None)


def _texts(*pieces: str) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(pieces), max_size=30).map("".join)


# --- negations and comparisons -------------------------------------------------------

_DOUBLE_NEGATIVE = re.compile(r"\b(?:not|never)\b(?P<between>[^.;:!?]*?)\bwithout\b", re.I)


@_SETTINGS
@given(_texts("not ", "never ", "without ", "NOT", "Without", "withouts ", "x ", ". ", "; ", " "))
def test_double_negatives_are_read_as_the_plain_pattern_reads_them(text: str) -> None:
    plain = _DOUBLE_NEGATIVE.sub(lambda m: f" {m.group('between')} ", text)
    assert _polarity._without_double_negatives(text) == plain  # pyright: ignore[reportPrivateUsage]


_GAP = re.compile(r"^[\s%]*(?:[^\W\d]+\s+)?$")


@_SETTINGS
@given(_texts("3 ", "12", "more than ", "less than ", "%", " ", "  ", "\n", "days ", "x", "three "))
def test_a_difference_is_found_where_the_plain_gap_finds_one(text: str) -> None:
    numbers = _polarity.find_numbers(text)
    differences = _polarity._Differences(text, numbers)  # pyright: ignore[reportPrivateUsage]
    for position in range(len(text) + 1):
        plain = any(n.end <= position and _GAP.match(text[n.end : position]) for n in numbers)
        assert differences.before(position) == plain


_COMPARISONS = st.builds(
    _polarity._Comparison,  # pyright: ignore[reportPrivateUsage]
    direction=st.sampled_from(["up", "down"]),
    bound=st.booleans(),
    values=st.frozensets(st.sampled_from([Decimal(1), Decimal("1.0"), Decimal(6)]), max_size=2),
    positive=st.booleans(),
    modal=st.booleans(),
)


@_SETTINGS
@given(st.lists(_COMPARISONS, max_size=6), st.lists(_COMPARISONS, max_size=6))
def test_a_bound_is_passed_where_some_pair_passes_it(bounds: list[Any], others: list[Any]) -> None:
    pairwise = any(
        b.bound
        and not o.bound
        and b.direction == o.direction
        and bool(b.values & o.values)
        and (o.modal or not b.positive)
        for b in bounds
        for o in others
    )
    assert _polarity._passed(bounds, others) == pairwise  # pyright: ignore[reportPrivateUsage]


# --- parties --------------------------------------------------------------------------

_LEGAL_FORM = re.compile(r"\s+(?:Ltd|Limited|plc|Inc|LLC|LLP|GmbH|AG|SA|BV|NV)\.?$", re.I)
_PARTY_PIECES = _texts(
    "Kestrel ",
    "Joinery",
    " Ltd",
    "(lender)",
    '(the "Tenant")',
    "AAAA",
    "x",
    " ",
    "\n",
    "nv",
    ".",
    "-",
)


@_SETTINGS
@given(_PARTY_PIECES)
def test_parties_are_those_the_plain_pattern_finds(text: str) -> None:
    found = [m.span() for m in _fields._parties(text)]  # pyright: ignore[reportPrivateUsage]
    assert found == [m.span() for m in _fields._PARTY.finditer(text)]  # pyright: ignore[reportPrivateUsage]
    name = text.strip()
    without = _fields._without_legal_form(name)  # pyright: ignore[reportPrivateUsage]
    assert without == _LEGAL_FORM.sub("", name)


# --- sentences and clauses ------------------------------------------------------------

_CUT = re.compile(
    r";\s+|\s+(?:\u2014|\u2013|--)\s+|,\s+(?=(?:but|whereas|although|though|yet|and)\s)", re.I
)
_STANDIN_CUT = re.compile(
    r";|,?\s+(?=(?:because|since|as|although|though|while|whereas|but|so|after|before"
    r"|until|unless|when|if)\b)|,\s+(?=(?:which|who|whose)\b)",
    re.I,
)
_CLAUSE_PIECES = _texts(
    "a", "b c", ", ", "; ", " \u2014 ", "--", " ", "   ", "and ", "but ", "which ", "if ", "x"
)


@_SETTINGS
@given(_CLAUSE_PIECES)
def test_clauses_are_cut_where_the_plain_patterns_cut_them(text: str) -> None:
    spans = [m.span() for m in _segments._CLAIM_CUT.finditer(text)]  # pyright: ignore[reportPrivateUsage]
    assert spans == [m.span() for m in _CUT.finditer(text)]
    standin = [m.span() for m in _segments._SUBORDINATE_CUT.finditer(text)]  # pyright: ignore[reportPrivateUsage]
    assert standin == [m.span() for m in _STANDIN_CUT.finditer(text)]


def _ends_sentence(text: str, stop: int) -> bool:
    head = text[:stop].rstrip()
    if not head.endswith("."):
        return True
    last = head.rsplit(None, 1)[-1].rstrip(".").lower()
    single_initial = len(last) == 1 and last.isalpha()
    dotted = "." in last and not last.replace(".", "").isdigit()
    return last not in word_set("abbreviations") and not single_initial and not dotted


@_SETTINGS
@given(_texts("Mr.", " ", "e.g.", "U.S.", "J.", "no.", "3.", "x", "The", ". ", "\n", "! "))
def test_a_sentence_ends_where_the_whole_text_before_it_says(text: str) -> None:
    for stop in range(len(text) + 1):
        fast = _segments._ends_sentence(text, stop)  # pyright: ignore[reportPrivateUsage]
        assert fast == _ends_sentence(text, stop)


def test_long_runs_of_blanks_sentences_and_clauses_are_still_cut() -> None:
    text = "Rent is EUR 900" + " " * 5000 + "\u2014 the deposit is two months. " * 200
    assert len(split_sentences(text)) == 200
    assert split_clauses("a b c" + " " * 5000 + "\u2014 d e f") == ["a b c", "d e f"]


# --- dates, names, values ----------------------------------------------------------------


def test_a_plan_is_found_among_many_dates_of_one_long_line() -> None:
    evidence = "; ".join(f"item {i} done 2025-01-{1 + i % 28:02d}" for i in range(300))
    evidence += "; disk array due 2025-01-31"
    claim = "The disk array was replaced on 31 January 2025 and " + "ok and " * 300 + "done."
    span = expected_as_done(evidence, claim)
    assert span is not None and evidence[span[0] : span[1]] == "due 2025-01-31"


def test_names_after_long_blanks_are_read_as_names() -> None:
    text = "The report" + " " * 3000 + "names Alice." + "\n" * 3000 + "Bob agreed with Carol."
    assert proper_names(text) == ["Alice", "Carol"]


def test_every_amount_of_a_claim_is_worked_out_once(monkeypatch: Any) -> None:
    """The gate asks for each amount the evidence does not state; the values of the
    whole claim are checked once, not once per amount."""
    calls: list[str] = []
    plain = _check._check_indexed  # pyright: ignore[reportPrivateUsage]

    def counted(claim: str, evidence: Any) -> Any:
        calls.append(claim)
        return plain(claim, evidence)

    monkeypatch.setattr(_check, "_check_indexed", counted)
    claim = "The lines total " + ", ".join(f"EUR {9000 + i}.00" for i in range(40)) + "."
    settled = deterministic_gaps(claim, ["line 1: EUR 100.00\nline 2: EUR 200.00"])
    assert len(settled.gaps) == 40
    assert len(calls) == 1
