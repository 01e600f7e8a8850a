"""What the checked arithmetic reads of a claim is read once for all of its values,
and reads exactly what the plain patterns read (the claim's sentences, the words of
a record), so that a claim of many numbers costs no more than its length."""

from __future__ import annotations

import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from assay.grounding import check_values, evidence_index, index_evidence
from assay.grounding._arithmetic import CUES
from assay.grounding._worksheet import Worksheet

#: The sentence pattern read from every position (as the checks once read it).
_SENTENCE = re.compile(r"[^.!?;]*(?:[.!?;](?!\d)|$)")


def _sentence_of(text: str, start: int, end: int) -> str:
    for m in _SENTENCE.finditer(text):
        if m.start() <= start and end <= max(m.end(), m.start() + 1):
            return m.group()
    return text


_PIECES = st.sampled_from(["a", "b ", "1", ".", "5", ";", "!", "?", " ", "\n", "x. ", "2.5", "..."])
_TEXTS = st.lists(_PIECES, max_size=30).map("".join)


@settings(max_examples=300, deadline=None)
@given(_TEXTS, st.integers(0, 40), st.integers(0, 6))
def test_a_value_s_sentence_is_the_one_the_plain_pattern_finds(
    text: str, start: int, length: int
) -> None:
    start = min(start, len(text))
    end = min(start + length, len(text))
    assert Worksheet(text, ()).sentence(start, end)[1] == _sentence_of(text, start, end)


_WORDS = ["North", "north", "DUB1", "Eastgate", "eastgate", "EASTGATE", "Kelvin", "\u212aelvin"]
_RECORD_PIECES = st.sampled_from([*_WORDS, " ", "\n", "-", "_", ",", ": ", "x", "3 "])


@settings(max_examples=200, deadline=None)
@given(st.lists(_RECORD_PIECES, max_size=30).map("".join))
def test_the_words_of_a_record_are_those_the_record_pattern_finds(text: str) -> None:
    index = index_evidence(text).bound(text)
    sheet = Worksheet("", [index])
    for k, (start, end) in enumerate(index.records):
        line = text[start:end]
        for word in _WORDS:
            pattern = r"(?<![\w-])" + re.escape(word) + r"(?![\w-])"
            assert (word in sheet.words_of((0, k))) == (re.search(pattern, line) is not None)
            if re.search(pattern, line, re.IGNORECASE):
                assert k in sheet.records_with(0, word)


class _Counted:
    """A cue pattern that counts the texts it is searched in."""

    def __init__(self, pattern: re.Pattern[str], calls: list[str]) -> None:
        self.pattern = pattern
        self.calls = calls

    def search(self, text: str) -> Any:
        self.calls.append(text)
        return self.pattern.search(text)


def test_each_sentence_of_a_claim_is_searched_for_cues_once(monkeypatch: Any) -> None:
    evidence = "\n".join(f"line {i}: EUR {100 + i}.00" for i in range(20))
    claim = "Lines came to " + ", ".join(f"EUR {5000 + i}.00 in total" for i in range(60))
    calls: list[str] = []
    for cue, pattern in list(CUES.items()):
        monkeypatch.setitem(CUES, cue, _Counted(pattern, calls))
    checks = check_values(claim, [evidence])
    assert sum(c.status != "found" for c in checks) == 60
    assert len(calls) == len(CUES)  # one sentence, each cue once: not once per value


def test_a_date_stated_as_days_from_another_is_found_on_a_line_of_many_dates() -> None:
    dates = ", ".join(f"2025-01-{1 + i % 28:02d}" for i in range(400))
    text = f"terms: 30 days from 2024-11-18, {dates}, then 10 days before 2025-01-31"
    offsets = [d for d, _ in evidence_index(text).dates if "days" in d.text]
    assert [(d.text, d.year, d.month, d.day) for d in offsets] == [
        ("30 days from 2024-11-18", 2024, 12, 18),
        ("10 days before 2025-01-31", 2025, 1, 21),
    ]
