"""The lexical search index the verifier looks for refuting evidence with."""

from __future__ import annotations

from assay._search import Bm25Index


def test_texts_without_a_word_are_indexed_and_match_nothing() -> None:
    """Evidence of figures only ("1,2 3,4") has no word for BM25's vocabulary; the
    index must still build (it raised ``max() arg is an empty sequence``)."""
    index = Bm25Index(["1,2 3,4", "5 6"])
    assert index.search("the total is 1,2", k=3) == []


def test_a_query_finds_the_text_that_shares_its_words() -> None:
    index = Bm25Index(["the invoice was paid in March", "the ticket is closed", "1,2"])
    found = index.search("which ticket is closed", k=3)
    assert [i for i, _ in found] == [1] and found[0][1] > 0
