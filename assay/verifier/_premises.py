"""What the verifier reads of one evidence entry for one proposition.

The entry is read through its view (:func:`assay.grounding.view_of`: a JSON tool
output as ``path: value`` lines), so that the model and the deterministic checks
see decoded values, and every span they report maps back to the stored text.

Premises are selected before the model runs: an entry whose view is longer than
:data:`MAX_READ_CHARS` is cut into its records (JSON records, text lines or
sentences, long ones into pieces of :data:`UNIT_WORDS` words), and only the
:data:`TOP_UNITS` records most related to the proposition (BM25) are read, in
document order. The model's work then grows with the proposition, not with the
evidence; the one-off cost of indexing a long entry is paid once per entry and
shared by every proposition that cites it.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from assay._search import Bm25Index
from assay._text import token_pattern
from assay.grounding import EvidenceView, find_tables, view_of

#: An entry whose view is at most this long is read whole.
MAX_READ_CHARS = 4_000
#: How many records of a longer entry are read for one proposition.
TOP_UNITS = 12
#: A record longer than this many words is cut into pieces of this many words.
UNIT_WORDS = 60

_WORD = token_pattern("chunks")


@dataclass(frozen=True, slots=True)
class Reading:
    """The text read of one entry for one proposition, and the map back.

    ``text`` is what the checks and the model read; ``pieces`` holds, for each piece
    of it, ``(start in text, start in the view's text, length in the view, length in
    text)``. A piece of the view's text copied as it is has both lengths equal; a
    table row written out (:func:`table_rows`) does not, and any span inside it
    maps to the whole row.
    """

    view: EvidenceView
    text: str
    pieces: tuple[tuple[int, int, int, int], ...]

    def to_stored(self, start: int, end: int) -> tuple[int, int]:
        """The stored span of ``text[start:end]`` (see :meth:`EvidenceView.to_stored`)."""
        a = self._to_view(start, end=False)
        b = self._to_view(max(end, start), end=True)
        return self.view.to_stored(a, max(a, b))

    def _to_view(self, position: int, *, end: bool) -> int:
        starts = [piece[0] for piece in self.pieces]
        index = bisect_right(starts, position - (1 if end and position > 0 else 0)) - 1
        doc_start, view_start, length, written = self.pieces[max(index, 0)]
        if written != length:  # a row written out: the whole row
            return view_start + (length if end else 0)
        return view_start + min(max(position - doc_start, 0), length)


def read(text: str, proposition: str) -> Reading:
    """What is read of the stored entry ``text`` for ``proposition``."""
    view = view_of(text)
    if len(view.text) <= MAX_READ_CHARS:
        return reading_of(view, [(0, len(view.text))])
    units = _units(text)
    chosen = sorted(i for i, _ in _index(text).search(proposition, TOP_UNITS))
    if not chosen:
        chosen = list(range(min(TOP_UNITS, len(units))))
    return reading_of(view, [units[i] for i in chosen])


def reading_of(view: EvidenceView, spans: Sequence[tuple[int, int]]) -> Reading:
    """The spans of ``view.text``, in the order given, read as one text (one per
    line), each row of a table with a header written as its cells named by their
    columns (:func:`table_rows`)."""
    rows = table_rows(view.text)
    starts = [row[0] for row in rows]
    parts: list[str] = []
    pieces: list[tuple[int, int, int, int]] = []
    position = 0
    for start, end in spans:
        at = start
        for row_start, row_end, written in rows[bisect_right(starts, start - 1) :]:
            if row_end > end:
                break
            for text, view_start, length in (
                (view.text[at:row_start], at, row_start - at),
                (written, row_start, row_end - row_start),
            ):
                if text:
                    pieces.append((position, view_start, length, len(text)))
                    parts.append(text)
                    position += len(text)
            at = row_end
        pieces.append((position, at, end - at, end - at))
        parts.append(view.text[at:end] + "\n")
        position += end - at + 1
    return Reading(view=view, text="".join(parts)[:-1], pieces=tuple(pieces))


@lru_cache(maxsize=64)
def table_rows(text: str) -> tuple[tuple[int, int, str], ...]:
    """Each row of a table with a header in ``text``, as ``(start, end, written)``:
    ``written`` names every cell by its column as the table writes it ("site: LEJ2,
    zone: A, ON_HAND: 310"), as a JSON record's ``path: value`` lines do, so that
    the value checks read the column's unit as they read a field's (``km_driven:
    11075``). A small model reads a row so written about as well as a JSON record,
    and a bare row ("LEJ2  A  310  310  0") hardly at all: on a budget CSV it gave
    a true "North spent 98,500" p=0.00, and 0.60 with the row written out. A table
    without a header (a log's columns) is left as written.
    """
    rows: list[tuple[int, int, str]] = []
    for table in find_tables(text):
        if any(column.startswith("#") for column in table.columns):
            continue
        for row in table.rows:
            cells = [text[a:b] for a, b in row.cells]
            written = ", ".join(
                f"{name}: {cell}" for name, cell in zip(table.columns, cells, strict=False)
            )
            rows.append((row.span[0], row.span[1], written))
    return tuple(sorted(rows))


@lru_cache(maxsize=64)
def _units(text: str) -> tuple[tuple[int, int], ...]:
    """The view's records, long ones cut into pieces of ``UNIT_WORDS`` words."""
    view = view_of(text)
    units: list[tuple[int, int]] = []
    for _, (start, end) in view.records():
        words = list(_WORD.finditer(view.text, start, end))
        for first in range(0, len(words), UNIT_WORDS):
            piece = words[first : first + UNIT_WORDS]
            units.append((piece[0].start(), piece[-1].end()))
    return tuple(units)


@lru_cache(maxsize=64)
def _index(text: str) -> Bm25Index:
    view = view_of(text)
    return Bm25Index([view.text[a:b] for a, b in _units(text)])
