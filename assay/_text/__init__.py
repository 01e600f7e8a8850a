"""One reading of text for every check: sentences, clauses, tokens and word lists.

The gate's value checks, the grounding of values and the verifier's deterministic
checks all read claims and evidence as text. They read it here, so that a sentence,
a clause or a word is cut the same way wherever the same cut is meant, and where two
checks need different cuts, each is a named mode with the reason it differs:

* :mod:`assay._text._segments`: sentences and clauses (``prose``, ``statements``,
  ``records``; ``claim``, ``subordinate``, ``contrast``, ``value``, ``stop``);
* :mod:`assay._text._tokens`: the kinds of token (words, numbers, names, cells ...);
* :mod:`assay._text._words`: the word lists (negations, antonyms, directions, cue
  words, stop words ...), data files in ``assay/_text/words/`` read once.

It sits at the bottom of the layers, beside ``assay._canonical``: it imports nothing
else of assay, and everything above may use it.
"""

from __future__ import annotations

from assay._text._segments import (
    SentenceMode,
    Span,
    clause_around,
    clause_spans,
    clause_stop,
    sentence_around,
    sentence_spans,
    sentences,
    split_clauses,
    word_count,
)
from assay._text._tokens import TokenKind, numbers_in, token_pattern, tokens
from assay._text._words import alternation, word_list, word_set, word_table

__all__ = [
    "SentenceMode",
    "Span",
    "TokenKind",
    "alternation",
    "clause_around",
    "clause_spans",
    "clause_stop",
    "numbers_in",
    "sentence_around",
    "sentence_spans",
    "sentences",
    "split_clauses",
    "token_pattern",
    "tokens",
    "word_count",
    "word_list",
    "word_set",
    "word_table",
]
