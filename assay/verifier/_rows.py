"""Whether a proposition binds a value or an identifier to the wrong row of a table,
or to the wrong clause or section of a document.

"QLD had 1,507 orders" against a sales table whose QLD row holds 992 and whose VIC
row holds 1,507: every value of the claim occurs in the evidence, so the value
checks find nothing wrong, and a small model reads the claim beside the table as
supported. "Clause 4.2 allows termination on 90 days' notice" against a contract
whose 90 days are in clause 7.3 is the same mistake. A table says which row each
value belongs to, and a numbered clause or a headed section which clause, so the
check is plain: where the proposition names exactly one row (by its key: a
table's first cell, a JSON record's fields that are not numbers, a clause's
number, a heading's version or date; else by an identifier like ``BT-105`` that
only that row holds), each of its values found in the table must be in that row,
and each of its identifiers (letters and digits together: ``node-a3``; or what the
text writes as code: ``--dry-run``) that the table writes only in other rows is
bound to the wrong one, unless another cited
entry states it. A proposition that names two rows compares them, and is left
alone; so is a negated one. Plain words are left to the model: "runs on node-a2"
shares "run" with other rows' ``Running`` without saying anything of them.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from assay._text import token_pattern
from assay.grounding import (
    Table,
    TableRow,
    check_values,
    claim_values,
    evidence_index,
    find_tables,
    occurrences_of,
    view_of,
)
from assay.verifier._deterministic import clip
from assay.verifier._polarity import negated

__all__ = ["row_mismatch"]

#: Where rows come from: a text's table, a JSON array of records, or a text's
#: numbered clauses or headed sections.
Kind = Literal["table", "json", "blocks"]

_TOKEN = token_pattern("cells")
_LETTER = re.compile(r"[A-Za-z]")
_DIGIT = re.compile(r"\d")
#: A numbered clause: its number at the start of a line ("4.1 ", "7.3. ", "§ 12 ").
_CLAUSE = re.compile(
    r"(?m)^[\x20\t]*(?:§\x20?)?(?P<key>\d{1,3}(?:\.\d{1,3}){0,3})[.)]?[\x20\t]+(?=\S)"
)
#: The most tokens a phrase that names a row may have ("9 Larchmere Court").
_PHRASE_TOKENS = 3
_BACKTICKED = re.compile(r"`([^`\n]{1,80})`")
_FLAG = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")
#: A Markdown heading.
_HEADING = re.compile(r"(?m)^[\x20\t]{0,3}#{1,6}[\x20\t]+(?P<key>[^\n]+)$")
#: Words that say the number after them names a clause, section or version.
_NAMING = re.compile(
    r"\b(?:clause|section|article|paragraph|para|item|version|release|v|§)\.?\s*$",
    re.IGNORECASE,
)


def row_mismatch(stored: str, claim: str, others: Sequence[str] = ()) -> str | None:
    """Why ``claim`` binds a value or identifier to the wrong row, clause or section
    of the cited entry ``stored``, or None; ``others`` are the other cited entries'
    views, which may state it instead."""
    text = view_of(stored).text
    for rows in _read(stored):
        # A row's key names it; an identifier elsewhere in it ("node-a3") names the
        # row only where no key is named.
        named = [i for i, keys in enumerate(rows.keys) if _names(claim, keys, kind=rows.kind)] or [
            i for i, ids in enumerate(rows.identifiers) if _names(claim, ids, kind="table")
        ]
        if len(named) != 1:
            continue
        row = rows.table.rows[named[0]]
        row_text = clip(text[row.span[0] : row.span[1]], 120)
        where = "section" if rows.kind == "blocks" else "row"
        value = _value_elsewhere(text, rows.table, named[0], claim, others)
        if value is not None:
            return f"“{value}” is not in the {where} it names, “{row_text}”"
        token = (
            None
            if negated(claim)
            else _identifier_elsewhere(rows, named[0], claim, others, text)
            or _cell_elsewhere(rows, named[0], claim, others, text)
        )
        if token is not None:
            return (
                f"“{token}” is written only in other {where}s than the one it names, “{row_text}”"
            )
    return None


@dataclass(frozen=True, slots=True)
class _Rows:
    """One table of an entry, read once: its kind, and per row its tokens, the
    tokens that name it and its identifiers (none written by any other row)."""

    table: Table
    kind: Kind
    tokens: tuple[frozenset[str], ...]
    keys: tuple[frozenset[str], ...]
    identifiers: tuple[frozenset[str], ...]
    #: Per row, each cell's tokens joined by spaces ("9 Larchmere Court").
    cells: tuple[tuple[str, ...], ...]
    #: How many rows write each token.
    rows_with: Counter[str]


@lru_cache(maxsize=64)
def _read(stored: str) -> tuple[_Rows, ...]:
    """Every table of an entry with its labels, in time linear in its size."""
    text = view_of(stored).text
    code = _code(text)
    return tuple(_labelled(text, table, kind, code) for table, kind in _tables(stored))


#: The end of a path that names an item of an array.
_ITEM = re.compile(r"\[\d+\]$")


@lru_cache(maxsize=64)
def _tables(stored: str) -> tuple[tuple[Table, Kind], ...]:
    """The tables of an entry's view: the text's tables (CSV, spaced, between
    pipes), a JSON entry's arrays of records (each record a row, its fields' values
    its cells), and a text's numbered clauses and headed sections."""
    view = view_of(stored)
    tables: list[tuple[Table, Kind]] = [
        (t, "table") for t in find_tables(view.text) if len(t.rows) >= 2
    ]
    if not view.is_json:
        return (*tables, *((t, "blocks") for t in _blocks(view.text)))
    cells: dict[str, list[tuple[int, int]]] = {}
    for line in view.lines:
        cells.setdefault(line.record, []).append((line.value_start, line.end))
    spans = dict(view.records())
    # An item's row holds its own fields and those of the objects nested in it
    # (``containers[0].resources.limits.memory`` is the container's): each record
    # goes to the nearest item of an array it is, or is inside (``[3]``, not a
    # quoted key such as ``annotations["example.org/revision"]``).
    items: dict[str, list[str]] = {}
    for record in spans:
        parts = record.split(".")
        for k in range(len(parts), 0, -1):
            owner = ".".join(parts[:k])
            if _ITEM.search(owner):
                items.setdefault(owner, []).append(record)
                break
    arrays: dict[str, list[TableRow]] = {}
    for item, records in items.items():
        row_cells = [c for r in records for c in cells.get(r, ())]
        start = min(spans[r][0] for r in records)
        end = max(spans[r][1] for r in records)
        row = TableRow(span=(start, end), cells=tuple(row_cells))
        arrays.setdefault(item.rpartition("[")[0], []).append(row)
    tables.extend(
        (Table(columns=(), rows=tuple(rows)), "json") for rows in arrays.values() if len(rows) >= 2
    )
    return tuple(tables)


def _blocks(text: str) -> list[Table]:
    """A text's numbered clauses ("4.1 The Supplier shall …") and its sections under
    Markdown headings ("## 4.3.0 - 2025-02-11"), each a row whose first cell is its
    number or heading and whose second is the rest of it, up to the next one."""
    found: list[Table] = []
    for pattern in (_CLAUSE, _HEADING):
        starts = list(pattern.finditer(text))
        if len(starts) < 2:
            continue
        rows: list[TableRow] = []
        for k, match in enumerate(starts):
            end = starts[k + 1].start() if k + 1 < len(starts) else len(text)
            key = match.span("key")
            rows.append(TableRow(span=(match.start(), end), cells=(key, (key[1], end))))
        found.append(Table(columns=(), rows=tuple(rows)))
    return found


def _labelled(text: str, table: Table, kind: Kind, code: frozenset[str]) -> _Rows:
    """The table with, per row, the tokens that name it and that no other row
    writes: those of its key (a table's first cell; a JSON record's fields that are
    not numbers; a clause's number or a heading's tokens with a digit), then its
    identifiers elsewhere in it (letters and digits together, or code)."""
    written = [
        tuple(" ".join(_TOKEN.findall(text[a:b])) for a, b in row.cells) for row in table.rows
    ]
    cells = [[set(cell.split()) for cell in row] or [set()] for row in written]
    every = [frozenset[str]().union(*row) for row in cells]
    rows_with = Counter(t for tokens in every for t in tokens)
    phrases = [_worded_phrase(row) if kind == "table" else None for row in written]
    rows_with_phrase = Counter(p for p in phrases if p is not None)
    keys: list[frozenset[str]] = []
    identifiers: list[frozenset[str]] = []
    for row, phrase in zip(cells, phrases, strict=True):
        if kind == "json":
            key = {t for cell in row for t in cell if _LETTER.search(t)}
        elif kind == "blocks":
            key = {t for t in row[0] if _DIGIT.search(t)}
        else:
            key = row[0]
        ids = {t for cell in row[1:] for t in cell if _identifier(t) or t in code}
        unique = {t for t in key if rows_with[t] == 1 and (len(t) >= 2 or kind == "blocks")}
        if phrase is not None and rows_with_phrase[phrase] == 1:
            unique.add(phrase)
        keys.append(frozenset(unique))
        identifiers.append(frozenset(t for t in ids if rows_with[t] == 1 and len(t) >= 2))
    return _Rows(
        table=table,
        kind=kind,
        tokens=tuple(every),
        keys=tuple(keys),
        identifiers=tuple(identifiers),
        cells=tuple(written),
        rows_with=rows_with,
    )


def _worded_phrase(cells: tuple[str, ...]) -> str | None:
    """Where a row's first cell holds no word (a date, a number), its first cell
    that does, as a phrase of at most three tokens ("9 Larchmere Court"): a sales
    extract keyed by date is named by its address."""
    if not cells or _LETTER.search(cells[0]):
        return None
    for cell in cells[1:]:
        if _LETTER.search(cell):
            return cell.lower() if len(cell.split()) <= _PHRASE_TOKENS else None
    return None


@lru_cache(maxsize=64)
def _code(text: str) -> frozenset[str]:
    """The tokens a text writes as code: inside backticks, or as a ``--flag``."""
    spans = [m.group(1) for m in _BACKTICKED.finditer(text)]
    spans += [m.group(1) for m in _FLAG.finditer(text)]
    return frozenset(t for span in spans for t in _TOKEN.findall(span))


def _identifier(token: str) -> bool:
    """Letters and digits together (``node-a3``, ``BT-105``)."""
    return bool(_LETTER.search(token) and _DIGIT.search(token))


def _names(claim: str, labels: frozenset[str], *, kind: Kind) -> bool:
    """Whether the claim writes one of the labels. A clause's or section's number
    names it only after a word that says so ("clause 4.2", "section 7", "version
    4.2.1") or where it has two dots: alone, "4.1" is as likely an amount."""
    written = _claim_tokens(claim)
    for label in labels:
        if label.lower() not in written:
            continue
        if kind != "blocks" or _LETTER.search(label) or label.count(".") >= 2:
            return True
        pattern = rf"(?<![\w-]){re.escape(label)}(?![\w-])"
        if any(_NAMING.search(claim, 0, m.start()) for m in re.finditer(pattern, claim)):
            return True
    return False


@lru_cache(maxsize=256)
def _claim_tokens(claim: str) -> frozenset[str]:
    """The claim's tokens, lower-cased, with each run of two or three words also
    joined as a field or enum writes it ("income tax" is ``income_tax`` and
    ``income-tax``) and as a phrase ("9 larchmere court")."""
    tokens = [t.lower() for t in _TOKEN.findall(claim)]
    joined = {
        joiner.join(tokens[i : i + n])
        for n in range(2, _PHRASE_TOKENS + 1)
        for i in range(len(tokens) - n + 1)
        for joiner in ("_", "-", " ")
    }
    return frozenset(tokens) | joined


def _value_elsewhere(
    text: str, table: Table, row: int, claim: str, others: Sequence[str]
) -> str | None:
    """A value of the claim that the table holds, but only outside the named row."""
    start, end = table.rows[0].span[0], table.rows[-1].span[1]
    own_start, own_end = table.rows[row].span
    index = evidence_index(text).bound(text)
    for value in claim_values(claim):
        inside = [o for o in occurrences_of(value, index) if start <= o.start < end]
        if (
            inside
            and not any(own_start <= o.start < own_end for o in inside)
            and not any(c.ok for c in check_values(value.text, list(others)))
        ):
            return value.text
    return None


def _cell_elsewhere(
    rows: _Rows, row: int, claim: str, others: Sequence[str], text: str
) -> str | None:
    """A whole cell of another row, in words (``Support`` in a ``team`` column),
    that the claim writes where the named row's cell of that column says otherwise
    (``Platform``) and the named row writes none of its words: "Owen Tull works in
    Support" against Owen's row. A word inside a cell ("run" in ``Running``) is no
    cell; a claim that also writes the named row's own cell compares the two."""
    if rows.kind != "table":
        return None
    written = _claim_tokens(claim)
    own = {t.lower() for t in rows.tokens[row]}
    stated = {t.lower() for other in others for t in _TOKEN.findall(other)}
    for column, mine in enumerate(rows.cells[row]):
        if mine.lower() in written:
            continue
        for k, theirs in enumerate(rows.cells):
            if k == row or column >= len(theirs):
                continue
            tokens = theirs[column].split()
            if (
                tokens
                and len(tokens) <= _PHRASE_TOKENS
                and all(_LETTER.search(t) for t in tokens)
                and theirs[column].lower() in written
                and not any(t.lower() in own or t.lower() in stated for t in tokens)
            ):
                return theirs[column]
    return None


def _identifier_elsewhere(
    rows: _Rows, row: int, claim: str, others: Sequence[str], text: str
) -> str | None:
    """An identifier of the claim (or a token the text writes as code) that the
    table writes only in other rows."""
    own = rows.tokens[row]
    stated = {t for other in others for t in _TOKEN.findall(other)}
    code = _code(text)
    for token in _TOKEN.findall(claim):
        if (
            (_identifier(token) or token in code)
            and rows.rows_with[token] > 0  # written in some row, and not in its own
            and token not in own
            and token not in stated
        ):
            return token
    return None
