"""Lexical search (BM25, via ``bm25s``) shared by the verifier, which looks for
uncited evidence that might refute a proposition, and the reference researcher.

``bm25s`` (and the numpy/scipy stack under it) is imported on first use, not when
``assay`` is imported: a service that never verifies pays nothing for it.

Texts are split into words here, as ``bm25s.tokenize`` splits them (lower case, its
token pattern, English stop words dropped), and a query is scored with the index's
own ``get_scores`` and ranked with ``bm25s.selection.topk``, the two steps its
``retrieve`` takes for one query: the same scores and the same order, without the
per-call progress bars (built even when hidden), vocabulary round trips and checks
that made a query of a handful of entries cost more than the scoring. The verifier
searches once per proposition, on every hand-over.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Sequence
from functools import cache
from typing import Any

#: ``bm25s.tokenize``'s default token pattern.
_WORD = re.compile(r"(?u)\b\w\w+\b")


@cache
def _bm25s() -> Any:
    return importlib.import_module("bm25s")


@cache
def _topk() -> Any:
    return importlib.import_module("bm25s.selection").topk


@cache
def _stop_words() -> frozenset[str]:
    """The English stop words ``bm25s.tokenize(..., stopwords="en")`` drops."""
    return frozenset(importlib.import_module("bm25s.stopwords").STOPWORDS_EN)


def _words(text: str, stop_words: frozenset[str]) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in stop_words]


class Bm25Index:
    """A BM25 index over ``texts`` (English stop words removed)."""

    def __init__(self, texts: Sequence[str]) -> None:
        bm25s = _bm25s()
        self.size = len(texts)
        self._stop_words = _stop_words()
        self._retriever = bm25s.BM25()
        self._vocab: dict[str, int] = {}
        ids = [
            [self._vocab.setdefault(w, len(self._vocab)) for w in _words(t, self._stop_words)]
            for t in texts
        ]
        # Texts with no word at all (figures only: "1,2 3,4") give bm25s an empty
        # vocabulary, which it cannot index; no query can match them anyway.
        if self._vocab:
            corpus = bm25s.tokenization.Tokenized(ids=ids, vocab=self._vocab)
            self._retriever.index(corpus, show_progress=False)

    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        """Up to ``k`` (index, score) pairs with a positive score, best first."""
        if not self.size or k <= 0:
            return []
        ids = [self._vocab[w] for w in _words(query, self._stop_words) if w in self._vocab]
        if not ids:
            return []  # nothing but stop words, or words the corpus never uses
        scores = self._retriever.get_scores_from_ids(ids)
        top_scores, top_ids = _topk()(scores, k=min(k, self.size), backend="auto", sorted=True)
        return [(int(d), float(s)) for d, s in zip(top_ids, top_scores, strict=True) if s > 0]
