"""What the checked arithmetic reads of one claim and its evidence, read once for all
of the claim's values.

:func:`~assay.grounding._arithmetic.compute` is asked once per value of a claim that
no evidence states. Each time it needs the sentence around the value, the claim's
words, the evidence values that can be operands, and which records of the evidence
name a word. Read again for every value, each of these costs as much as the whole
claim or the whole evidence, so a claim of a few hundred numbers cost the square of
its length. A :class:`Worksheet` reads each of them once and keeps it for the
claim's other values: the sentences of the claim (its ``statements``, cut by
:mod:`assay._text`, as spans found by bisection), anything derived from the evidence
(by key), and, per evidence text, which records hold each word.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Hashable, Iterable, Sequence
from functools import cached_property
from typing import TypeVar, cast

from assay._text import sentence_spans, token_pattern, word_set
from assay.grounding._evidence import EvidenceIndex

__all__ = ["Worksheet", "claim_words", "fold"]

T = TypeVar("T")

#: A whole word as the record checks compare them: a run of word characters and
#: hyphens (what ``(?<![\w-])word(?![\w-])`` finds).
_RUN = token_pattern("runs")
#: The four characters besides ASCII letters that a case-insensitive pattern of an
#: ASCII letter also matches.
_FOLDED = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"})
#: A word of a claim that may name a row (``DUB1``, ``Eastgate``, ``3rd``), unless
#: it is a common word (``words/common-words.txt``).
_WORD = token_pattern("row_words")


def claim_words(text: str) -> list[str]:
    """Words of a claim that may name rows of the evidence (``DUB1``, ``Eastgate``)."""
    common = word_set("common-words")
    words = [w for w in _WORD.findall(text) if w.lower() not in common]
    return list(dict.fromkeys(words))


def fold(word: str) -> str:
    """``word`` lower-cased, with the non-ASCII letters that a case-insensitive match
    takes for ``i``, ``s`` and ``k`` written as those: two words that such a match
    finds equal fold to the same text."""
    return word.translate(_FOLDED).lower()


class Worksheet:
    """One claim text and the evidence indexes its values are computed over, with
    what has been read of them so far.

    ``mentioned`` are the ``(document, start, end)`` evidence spans of the claim's
    values that evidence states. A worksheet is made for one claim and one set of
    bound indexes (``EvidenceIndex.bound``) and must not be used with others.
    """

    def __init__(
        self,
        text: str,
        indexes: Sequence[EvidenceIndex],
        mentioned: Iterable[tuple[int, int, int]] = (),
    ) -> None:
        self.text = text
        self.indexes = indexes
        self.mentioned = set(mentioned)
        self._memo: dict[Hashable, object] = {}

    @cached_property
    def _sentences(self) -> tuple[list[tuple[int, int]], list[int]]:
        """The spans of the claim's sentences, and how far each reaches: its end, and
        one past its start for an empty one."""
        spans = sentence_spans(self.text, "statements")
        return spans, [max(end, start + 1) for start, end in spans]

    def sentence(self, start: int, end: int) -> tuple[int, str]:
        """The number and text of the first sentence that holds ``start:end`` (the
        whole text, numbered -1, where none does)."""
        # Sentences follow one another, so the first that reaches ``end`` is the only
        # one that can also begin at or before ``start``.
        spans, reach = self._sentences
        i = bisect_left(reach, end)
        if i == len(spans) or spans[i][0] > start:
            return -1, self.text
        return i, self.text[slice(*spans[i])]

    @cached_property
    def words(self) -> list[str]:
        """:func:`claim_words` of the claim (read once; not to be changed)."""
        return claim_words(self.text)

    def cached(self, key: Hashable, make: Callable[[], T]) -> T:
        """``make()``, the first time ``key`` is asked for; what it gave, after."""
        if key not in self._memo:
            self._memo[key] = make()
        return cast(T, self._memo[key])

    def words_of(self, record: tuple[int, int]) -> frozenset[str]:
        """The whole words, case and all, of record ``record`` (document, record
        number): a word of letters, digits and hyphens is in them exactly where
        ``(?<![\\w-])word(?![\\w-])`` finds it in the record."""
        return self._runs(record[0]).get(record[1], frozenset())

    def records_with(self, document: int, word: str) -> list[int]:
        """The records of ``document``, in order, that write ``word`` as a whole word
        in any case: a superset of those a case-insensitive match finds it in."""
        return self._folded(document).get(fold(word), [])

    def _runs(self, document: int) -> dict[int, frozenset[str]]:
        def make() -> dict[int, frozenset[str]]:
            index = self.indexes[document]
            text = index.view_text
            return {
                k: frozenset(_RUN.findall(text, start, end))
                for k, (start, end) in enumerate(index.records)
            }

        return self.cached(("runs", document), make)

    def _folded(self, document: int) -> dict[str, list[int]]:
        def make() -> dict[str, list[int]]:
            found: dict[str, list[int]] = {}
            for k, runs in self._runs(document).items():
                for word in {fold(run) for run in runs}:
                    found.setdefault(word, []).append(k)
            return found

        return self.cached(("folded", document), make)
