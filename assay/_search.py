"""Lexical search (BM25, via ``bm25s``) shared by the verifier, which looks for
uncited evidence that might refute a proposition, and the reference researcher.

``bm25s`` (and the numpy/scipy stack under it) is imported on first use, not when
``assay`` is imported: a service that never verifies pays nothing for it."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any


def _bm25s() -> Any:
    return importlib.import_module("bm25s")


class Bm25Index:
    """A BM25 index over ``texts`` (English stop words removed)."""

    def __init__(self, texts: Sequence[str]) -> None:
        bm25s = _bm25s()
        self.size = len(texts)
        self._bm25s = bm25s
        self._retriever = bm25s.BM25()
        if texts:
            tokens = bm25s.tokenize(list(texts), stopwords="en", show_progress=False)
            self._retriever.index(tokens, show_progress=False)

    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        """Up to ``k`` (index, score) pairs with a positive score, best first."""
        if not self.size or k <= 0:
            return []
        tokens: Any = self._bm25s.tokenize([query], stopwords="en", show_progress=False)
        if not tokens.ids or not tokens.ids[0]:
            return []  # nothing but stop words, or words the corpus never uses
        docs, scores = self._retriever.retrieve(tokens, k=min(k, self.size), show_progress=False)
        return [(int(d), float(s)) for d, s in zip(docs[0], scores[0], strict=True) if s > 0]
