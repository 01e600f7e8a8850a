"""Whether a proposition binds a value or a word to the wrong row of a table.

"QLD had 1,507 orders" against a sales table whose QLD row holds 992 and whose VIC
row holds 1,507: every value of the claim occurs in the evidence, so the value
checks find nothing wrong, and a small model reads the claim beside the table as
supported. A table says which row each value belongs to, so the check is plain:
where the proposition names exactly one row of a table (by a token of that row's
first cell, its key; else by an identifier like ``BT-105`` that only that row
holds), each of
its values found in the table must be in that row, and each of its identifiers
that the table writes only in other rows ("node-a3" beside another pod) is bound
to the wrong row, unless another cited entry states it. A proposition that names
two rows compares them, and is left alone; so is a negated one. Plain words are
left to the model: "runs on node-a2" shares "run" with other rows' ``Running``
without saying anything of them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from assay.grounding import Table, TableRow, check_values, find_tables, view_of
from assay.verifier._polarity import negated

__all__ = ["row_mismatch"]

_TOKEN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")
_LETTER = re.compile(r"[A-Za-z]")
_DIGIT = re.compile(r"\d")
_BLANKED = re.compile(r"[A-Za-z0-9]")


def row_mismatch(stored: str, claim: str, others: Sequence[str] = ()) -> str | None:
    """Why ``claim`` binds a value or identifier to the wrong row of a table of the
    cited entry ``stored``, or None; ``others`` are the other cited entries' views,
    which may state it instead."""
    text = view_of(stored).text
    for table, keyed in _tables(stored):
        keys, identifiers = _labels(text, table, keyed=keyed)
        # A row's first cell is its key; an identifier elsewhere in it ("node-a3")
        # names the row only where no key is named.
        named = [i for i, labels in enumerate(keys) if _names(claim, labels)] or [
            i for i, labels in enumerate(identifiers) if _names(claim, labels)
        ]
        if len(named) != 1:
            continue
        row = table.rows[named[0]]
        row_text = " ".join(text[row.span[0] : row.span[1]].split())
        value = _value_elsewhere(text, table, named[0], claim, others)
        if value is not None:
            return f"“{value}” is not in the row it names, “{row_text}”"
        word = None if negated(claim) else _word_elsewhere(text, table, named[0], claim, others)
        if word is not None:
            return f"“{word}” is written only in other rows than the one it names, “{row_text}”"
    return None


@lru_cache(maxsize=64)
def _tables(stored: str) -> tuple[tuple[Table, bool], ...]:
    """The tables of an entry's view, each with whether its first column is its
    key: the text's tables (CSV, spaced, between pipes), and a JSON entry's arrays
    of records read as tables (each record a row, its fields' values its cells),
    which have no key column."""
    view = view_of(stored)
    tables = [(t, True) for t in find_tables(view.text) if len(t.rows) >= 2]
    if not view.is_json:
        return tuple(tables)
    cells: dict[str, list[tuple[int, int]]] = {}
    for line in view.lines:
        cells.setdefault(line.record, []).append((line.value_start, line.end))
    arrays: dict[str, list[TableRow]] = {}
    for record, span in view.records():
        head, bracket, _ = record.rpartition("[")
        if bracket:
            row = TableRow(span=span, cells=tuple(cells.get(record, ())))
            arrays.setdefault(head, []).append(row)
    tables += [
        (Table(columns=(), rows=tuple(rows)), False) for rows in arrays.values() if len(rows) >= 2
    ]
    return tuple(tables)


def _labels(text: str, table: Table, *, keyed: bool) -> tuple[list[set[str]], list[set[str]]]:
    """Per row, the tokens that name it and that no other row of the table writes:
    those of its key (its first cell; in a JSON record, any field that is not a
    number), then its identifiers (letters and digits together) elsewhere."""
    tokens = [
        [set(_TOKEN.findall(text[a:b])) for a, b in row.cells] or [set()] for row in table.rows
    ]
    every = [set[str]().union(*cells) for cells in tokens]
    keys: list[set[str]] = []
    identifiers: list[set[str]] = []
    for i, cells in enumerate(tokens):
        elsewhere = set[str]().union(*(t for j, t in enumerate(every) if j != i))
        key = cells[0] if keyed else {t for cell in cells for t in cell if _LETTER.search(t)}
        ids = {t for cell in cells[1:] for t in cell if _LETTER.search(t) and _DIGIT.search(t)}
        keys.append({t for t in key - elsewhere if len(t) >= 2})
        identifiers.append({t for t in ids - elsewhere if len(t) >= 2})
    return keys, identifiers


def _names(claim: str, labels: set[str]) -> bool:
    return any(
        re.search(rf"(?<![\w-]){re.escape(label)}(?![\w-])", claim, re.IGNORECASE)
        for label in labels
    )


def _value_elsewhere(
    text: str, table: Table, row: int, claim: str, others: Sequence[str]
) -> str | None:
    """A value of the claim that the table holds only outside the named row."""
    start, end = table.rows[0].span[0], table.rows[-1].span[1]
    # The text with the other rows' letters and digits written over, so that the
    # table keeps its shape (and its columns their units) but states only the row.
    masked = list(text)
    for i, other in enumerate(table.rows):
        if i != row:
            a, b = other.span
            masked[a:b] = _BLANKED.sub("x", text[a:b])
    in_row = {c.value.start for c in check_values(claim, ["".join(masked)]) if c.ok}
    for check in check_values(claim, [text]):
        found = check.occurrence
        if (
            check.status == "found"
            and found is not None
            and start <= found.start < end
            and check.value.start not in in_row
            and not any(c.ok for c in check_values(check.value.text, list(others)))
        ):
            return check.value.text
    return None


def _word_elsewhere(
    text: str, table: Table, row: int, claim: str, others: Sequence[str]
) -> str | None:
    """An identifier of the claim (letters and digits together: ``node-a3``) that
    the table writes only in other rows. Plain words are not judged: "runs on
    node-a2" shares its verb with other rows' ``Running`` and says nothing of them."""
    own = set(_TOKEN.findall(text[slice(*table.rows[row].span)]))
    stated = {t for other in others for t in _TOKEN.findall(other)}
    for i, other in enumerate(table.rows):
        if i == row:
            continue
        theirs = set(_TOKEN.findall(text[slice(*other.span)]))
        for token in _TOKEN.findall(claim):
            if (
                _LETTER.search(token)
                and _DIGIT.search(token)
                and token in theirs
                and token not in own
                and token not in stated
            ):
                return token
    return None
