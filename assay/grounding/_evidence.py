"""One evidence text read for its values: each quantity and date, with where it sits.

Matching a claim's value needs more than the value: ``2140.5`` under
``gross_weight_kg`` is a mass, ``471,250`` in a ``PRICE_GBP`` column an amount in
pounds, ``1.75`` beside ``currency: EUR`` an amount in euros, ``6.1`` beside ``unit:
%`` a percentage, ``41`` under ``"units": {"wind": "km/h"}`` a speed, a cell under
``Temp (°C)`` a temperature (:mod:`assay.grounding._declared`); and checking a sum
needs to know which values form one column. So a text is read into
:class:`EvidenceIndex`: every quantity with the units its context lends it, the
*record* that holds it (a JSON object, a table row, a line) and the *series* it
belongs to (a JSON field across the elements of an array, a table column).

A JSON tool output is read through its view (``path: value`` lines,
:func:`~assay.grounding.view_of`): the path names the field, the record and the
series. Plain text is read line by line; a CSV block or a table whose columns are
separated by two or more spaces has its header's names as its columns' keys.
Spans are in the view's text (the text itself, for plain text); map them to the
stored text with the view's ``to_stored``.
"""

from __future__ import annotations

import itertools
import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import timedelta

from assay._text import token_pattern
from assay.grounding._dates import DateMention, find_dates, years_in
from assay.grounding._declared import Declarations, header_unit, unit_named
from assay.grounding._keys import key_unit
from assay.grounding._numbers import Convention, convention_of, find_numbers
from assay.grounding._quantities import Quantity, find_quantities
from assay.grounding._units import CURRENCY_SIGNS, is_currency, period_of, unit_of
from assay.grounding._views import view_of

__all__ = ["EvidenceIndex", "Value", "index_evidence"]

_PATH_LINE = re.compile(
    r"([A-Za-z_$][\w$-]*(?:\[\d+\])*(?:\.[\w$-]+(?:\[\d+\])*)*|\[\d+\](?:[\w.\[\]$-]*)):\x20"
)
_KEY_VALUE = re.compile(r"(?:(?<=[\s,{(])|^)([A-Za-z_][\w-]{0,40})\s*[=:]\s*\"?$")
_INDEX = re.compile(r"\[\d+\]")
_CODE_WORD = re.compile(r"(?<![A-Za-z])([A-Z]{3})(?![A-Za-z])")
_RULE = re.compile(r"[\x20\t]*[|+]?(?:[\x20\t]*:?-{3,}:?[\x20\t]*[|+]?)+[\x20\t]*")
_COLUMNS = re.compile(r"\S+(?:\x20\S+)*")
# A currency sign counts where it is written with a number (a shell's ``$`` is not).
_SIGN_BY_DIGIT = re.compile(r"([€£$¥₹])\x20?[-\d]|\d\x20?([€£$¥₹])")
_UNIT_KEYS = frozenset({"unit", "units", "uom", "currency", "ccy", "cur", "period"})
_MAX_TABLE_LINES = 2_000
#: A date stated as an offset from one the evidence writes right after it: "30 days
#: from 2024-11-18", "within fourteen days of 3 March 2025", "10 days before
#: 2025-01-31". Calendar days only: "30 business days" counts days a calendar does
#: not say.
_OFFSET = re.compile(
    r"(?:\b(?P<within>within)\s+)?\b(?P<n>[A-Za-z]+|\d{1,4})(?:\s+\(\d{1,4}\))?\s+"
    r"(?:calendar\s+)?days?\s+(?P<way>from|after|following|of|before)\s+(?:the\s+)?$",
    re.IGNORECASE,
)
#: Words of :data:`_OFFSET` at most ("within fourteen (14) calendar days of the"),
#: with one to spare; a word being a run of anything but white space.
_OFFSET_WORDS = 8
_WORD_START = token_pattern("chunks")


@dataclass(frozen=True, kw_only=True, slots=True)
class Value:
    """A quantity of an evidence text, with where it sits.

    ``units`` are what a bare number may be read as (its field's or column's unit,
    the currencies and units the text names); ``record`` indexes the record that
    holds it; ``series`` names the field or column it is one value of; ``key`` is
    that field's or column's name.
    """

    quantity: Quantity
    units: tuple[str, ...]
    record: int
    series: str | None
    key: str | None


@dataclass(frozen=True, kw_only=True, slots=True)
class EvidenceIndex:
    """What the checks need of one evidence text.

    ``text`` is the view's text where it differs from the text indexed (a JSON
    entry's ``path: value`` lines), else ``None``, so that a cached index never
    holds the caller's text: :meth:`bound` gives it back for the checks that read it.
    """

    text: str | None
    values: tuple[Value, ...]
    dates: tuple[tuple[DateMention, int], ...]
    records: tuple[tuple[int, int], ...]
    years: frozenset[int]
    #: The number of rows of each table of the text.
    tables: tuple[int, ...] = ()
    #: How the text writes decimals, where its unambiguous numbers say.
    convention: Convention = "unknown"

    def bound(self, stored: str) -> EvidenceIndex:
        """This index with its text: ``stored``, the text it was made from, where
        the view's text is that text."""
        return self if self.text is not None else replace(self, text=stored)

    @property
    def view_text(self) -> str:
        """The text the spans of this index are in (a bound index only)."""
        if self.text is None:
            raise ValueError("an index made from plain text holds no text: bind it first")
        return self.text


@dataclass(frozen=True, kw_only=True, slots=True)
class TableRow:
    """One row of a table in a text: its line's span and each cell's span."""

    span: tuple[int, int]
    cells: tuple[tuple[int, int], ...]


@dataclass(frozen=True, kw_only=True, slots=True)
class Table:
    """A table of a text (CSV, spaced columns or cells between pipes): its column
    names (``#0``, ``#1``… where it has no header) and its rows."""

    columns: tuple[str, ...]
    rows: tuple[TableRow, ...]


def find_tables(text: str) -> list[Table]:
    """The tables of ``text``, read as the value checks read them."""
    lines = list(_lines(text))
    return [
        Table(
            columns=tuple(header),
            rows=tuple(
                TableRow(span=lines[n], cells=tuple(span for _, span in cells)) for n, cells in rows
            ),
        )
        for header, rows in _tables(text, lines)
    ]


def index_evidence(stored: str) -> EvidenceIndex:
    """The values, dates and records of one evidence text."""
    text = view_of(stored).text if stored.lstrip()[:1] in ("{", "[") else stored
    convention = convention_of(text)
    dates = find_dates(text)
    lines = list(_lines(text))
    shape = _shape(text, lines)
    context = _context(text, shape)
    skip = [(d.start, d.end) for d in dates] + shape.names
    values: list[Value] = []
    line_index = 0
    scan = _cells_apart(text, shape.delimiters)
    for quantity in find_quantities(scan, convention=convention, skip=skip):
        while line_index + 1 < len(lines) and lines[line_index + 1][0] <= quantity.start:
            line_index += 1
        record, series, key = shape.places.get(quantity.start, (line_index, None, None))
        if key is None:
            key = _key_before(text, lines[line_index][0] if lines else 0, quantity.start)
        near = shape.context.get(record, ())
        values.append(
            Value(
                quantity=quantity,
                units=_units_of(quantity, key, near, context, shape.declared.get(quantity.start)),
                record=record,
                series=series,
                key=key,
            )
        )
    records = tuple((start, end) for start, end in lines)
    starts = [start for start, _ in lines]
    offset = _offset_dates(text, dates, starts)
    dated = tuple((d, _line_of(starts, d.start)) for d in [*dates, *offset])
    return EvidenceIndex(
        text=None if text == stored else text,
        values=tuple(values),
        dates=dated,
        records=records,
        years=years_in(text),
        tables=shape.tables,
        convention=convention,
    )


def _offset_dates(text: str, dates: Sequence[DateMention], starts: list[int]) -> list[DateMention]:
    """The dates ``text`` states as a number of days from one it writes ("payment
    terms: 30 days from 2024-11-18" states 2024-12-18), each spanning the whole
    phrase. They come after the dates written out, which are found first.

    The phrase is looked for from the start of the date's line (``starts`` are
    those of the lines), but no further back than :data:`_OFFSET_WORDS` words
    before the date, which it cannot be longer than: a line of many dates is not
    read again for each."""
    found: list[DateMention] = []
    words: list[int] = []  # where each word of the text starts, once needed
    for mention in dates:
        moment = mention.moment()
        if moment is None:
            continue
        words = words or [m.start() for m in _WORD_START.finditer(text)]
        line_start = starts[_line_of(starts, mention.start)]
        before = bisect_left(words, mention.start) - _OFFSET_WORDS
        lo = max(line_start, words[before]) if before >= 0 else line_start
        match = _OFFSET.search(text, lo, mention.start)
        if match is None or (match.group("way").lower() == "of" and not match.group("within")):
            continue
        numbers = find_numbers(match.group("n"))
        if len(numbers) != 1 or len(numbers[0].values) != 1:
            continue
        days = int(next(iter(numbers[0].values)))
        shift = timedelta(days=-days if match.group("way").lower() == "before" else days)
        moved = moment + shift
        found.append(
            replace(
                mention,
                start=match.start(),
                text=text[match.start() : mention.end],
                year=moved.year,
                month=moved.month,
                day=moved.day,
                ambiguous=False,
            )
        )
    return found


def _lines(text: str) -> Iterator[tuple[int, int]]:
    start = 0
    for m in re.finditer(r"\n", text):
        yield start, m.start()
        start = m.end()
    yield start, len(text)


def _line_of(starts: list[int], at: int) -> int:
    return max(0, bisect_right(starts, at) - 1)


# --- where each value sits ---------------------------------------------------------

_Place = tuple[int, str | None, str | None]


@dataclass(frozen=True, kw_only=True, slots=True)
class _Shape:
    """What a text's structure says: the record, series and key of the value at
    each offset, the spans of field names (not values), and the units each record
    states in a ``currency``, ``unit`` or ``period`` field or column."""

    places: dict[int, _Place]
    names: list[tuple[int, int]]
    context: dict[int, tuple[str, ...]]
    tables: tuple[int, ...]
    #: Offsets of the commas between the cells of its CSV rows.
    delimiters: tuple[int, ...] = ()
    #: The unit a ``units`` object declares for the value at each offset.
    declared: dict[int, str] = field(default_factory=dict[int, str])


def _shape(text: str, lines: list[tuple[int, int]]) -> _Shape:
    places: dict[int, _Place] = {}
    names: list[tuple[int, int]] = []
    stated: dict[int, dict[str, str]] = {}
    records: dict[str, int] = {}
    units = Declarations()
    for k, (start, end) in enumerate(lines):
        m = _PATH_LINE.match(text, start, end)
        if m is None:
            continue
        path = m.group(1)
        head, _, key = path.rpartition(".")
        record = records.setdefault(head, k)
        key = _KEY_TAIL.sub("", key or path)
        places[m.end()] = (record, _INDEX.sub("[*]", path), key)
        names.append((m.start(), m.end()))
        if not units.note(head, key, text[m.end() : end]):
            _note(stated, record, key, text[m.end() : end])
    declared = {
        at: unit
        for at, (_, series, key) in places.items()
        if series and key and (unit := units.unit_for(series, key)) is not None
    }
    tables: list[int] = []
    delimiters: list[int] = []
    for table, (header, rows) in enumerate(_tables(text, lines)):
        tables.append(len(rows))
        for k, cells in rows:
            delimiters += _csv_delimiters(text, lines[k], cells)
            for column, (cell_start, cell_end) in cells:
                if column < len(header):
                    name = header[column]
                    places[cell_start] = (k, f"table{table}:{name}", name)
                    _note(stated, k, name, text[cell_start:cell_end])
    context = {record: _record_units(keys) for record, keys in stated.items()}
    return _Shape(
        places=places,
        names=names,
        context={k: v for k, v in context.items() if v},
        tables=tuple(tables),
        delimiters=tuple(delimiters),
        declared=declared,
    )


def _note(stated: dict[int, dict[str, str]], record: int, key: str, value: str) -> None:
    if key.lower() in _UNIT_KEYS:
        stated.setdefault(record, {})[key.lower()] = value.strip()


def _record_units(keys: dict[str, str]) -> tuple[str, ...]:
    """``currency: EUR`` and ``period: year`` make ``EUR / year``; ``unit: C`` Celsius;
    ``unit: %`` percent, ``unit: g/L`` grams per litre."""
    units: list[str] = []
    for key in ("currency", "ccy", "cur", "unit", "units", "uom"):
        unit = unit_named(keys[key]) if key in keys else None
        if unit is not None:
            units.append(unit)
    period = period_of(keys.get("period", "")) if keys.get("period") else None
    if period is not None:
        units = [f"{u} / {period}" for u in units] + [f"/ {period}"]
    return tuple(dict.fromkeys(units))


_KEY_TAIL = re.compile(r"\[\d+\]$")


_Row = tuple[int, list[tuple[int, tuple[int, int]]]]


def _tables(text: str, lines: list[tuple[int, int]]) -> Iterator[tuple[list[str], list[_Row]]]:
    """Each CSV block, spaced table or table between pipes (three columns or more,
    two rows or more): its columns' names and each row's cells as ``(column, (start,
    end))``, a row numbered by its line. A first line without digits is the header;
    a table without one names its columns by position (``#0``, ``#1``…). A rule under
    a header or round a table (``|---|---|``, ``----+----``) is no row."""
    numbered = [
        (n, line)
        for n, line in enumerate(lines[:_MAX_TABLE_LINES])
        if not _RULE.fullmatch(text, *line)
    ]
    k = 0
    while k < len(numbered):
        first = _cells(text, *numbered[k][1])
        j = k + 1
        while j < len(numbered) and len(first) >= 3:
            line = numbered[j][1]
            if len(_cells(text, *line)) != len(first) or _is_csv(text, numbered[k][1]) != _is_csv(
                text, line
            ):
                break
            j += 1
        if j - k < 3:
            k += 1
            continue
        names = [text[s:e] for s, e in first]
        headed = not any(c.isdigit() for name in names for c in name)
        start = k + 1 if headed else k
        rows = [(n, list(enumerate(_cells(text, *line)))) for n, line in numbered[start:j]]
        yield (names if headed else [f"#{c}" for c in range(len(first))]), rows
        k = j


def _csv_delimiters(
    text: str, line: tuple[int, int], cells: list[tuple[int, tuple[int, int]]]
) -> list[int]:
    """The commas between the cells of one CSV row, which no number reads across:
    in ``SKU-1,12,450.00`` the cells 12 and 450.00 are not the amount 12,450.00. A
    row with a double quote keeps its commas (a quoted cell may hold one)."""
    if not _is_csv(text, line) or '"' in text[line[0] : line[1]]:
        return []
    return [cell_end for _, (_, cell_end) in cells[:-1]]


def _cells_apart(text: str, delimiters: Sequence[int]) -> str:
    """``text`` with each of ``delimiters`` written as a semicolon (same length,
    same offsets), for the search for numbers."""
    if not delimiters:
        return text
    chars = list(text)
    for at in delimiters:
        chars[at] = ";"
    return "".join(chars)


def _piped_cells(line: str, start: int) -> list[tuple[int, int]]:
    """The cells of a row written between pipes (Markdown, ``psql``, MySQL): each
    cell's text without its padding; the empty cells outside a leading or trailing
    pipe are no cells."""
    bounds = [-1, *(i for i, c in enumerate(line) if c == "|"), len(line)]
    cells: list[tuple[int, int]] = []
    for a, b in itertools.pairwise(bounds):
        piece = line[a + 1 : b]
        stripped = piece.strip()
        if not stripped and (a == -1 or b == len(line)):
            continue
        left = a + 1 + (len(piece) - len(piece.lstrip()))
        cells.append((start + left, start + left + len(stripped)))
    return cells


def _is_csv(text: str, line: tuple[int, int]) -> bool:
    row = text[line[0] : line[1]]
    return row.count(",") >= 2 and "  " not in row.strip() and row.count("|") < 2


def _cells(text: str, start: int, end: int) -> list[tuple[int, int]]:
    line = text[start:end]
    if line.count("|") >= 2:
        return _piped_cells(line, start)
    if _is_csv(text, (start, end)):
        spans: list[tuple[int, int]] = []
        at = start
        for part in line.split(","):
            spans.append((at, at + len(part)))
            at += len(part) + 1
        return spans
    if re.search(r"\S\x20{2,}\S", line) is None:
        return []
    return [(start + m.start(), start + m.end()) for m in _COLUMNS.finditer(line)]


def _key_before(text: str, line_start: int, at: int) -> str | None:
    """``voltage_mv=3512``, ``"gross_weight_kg": 2140.5``, ``limit: 5``: the key
    written right before a value on its line."""
    m = _KEY_VALUE.search(text, max(line_start, at - 48), at)
    return m.group(1) if m is not None else None


# --- the units a value's context lends it -----------------------------------------


def _context(text: str, shape: _Shape) -> tuple[str, ...]:
    """Currencies the text names (codes, signs, ``_eur`` columns), and the units its
    records state, for the bare numbers of the whole text."""
    named: dict[str, None] = {}
    for m in _CODE_WORD.finditer(text):
        unit = unit_of(m.group(1))
        if unit is not None and is_currency(unit):
            named[unit] = None
    for m in _SIGN_BY_DIGIT.finditer(text):
        named[CURRENCY_SIGNS[m.group(1) or m.group(2)]] = None
    for _, _, key in shape.places.values():
        unit = key_unit(key) if key else None
        if unit is not None and is_currency(unit):
            named[unit] = None
    for units in shape.context.values():
        # A record's percent or rate (``unit: %``, ``unit: g/L``) is its own: a bare
        # number elsewhere in the text is not read in it.
        named.update(dict.fromkeys(u for u in units if "/" not in u and u != "percent"))
    return tuple(named)


def _units_of(
    quantity: Quantity,
    key: str | None,
    near: tuple[str, ...],
    context: tuple[str, ...],
    declared: str | None = None,
) -> tuple[str, ...]:
    """What a bare number may be read as: the unit a ``units`` object declares for
    its field, else its field's or column's unit (a header's ``(°C)`` first), else the
    units its record states, else those its text names."""
    if quantity.kind != "number":
        return ()
    hint = declared or ((header_unit(key) or key_unit(key)) if key else None)
    if hint is not None and hint.startswith("/"):
        money = [u for u in (*near, *context) if is_currency(u)]
        return (*[f"{c} {hint}" for c in dict.fromkeys(money)], hint)
    if hint is not None:
        return (hint,)
    if key is not None and key.lower() in _UNIT_KEYS:
        return ()
    return tuple(dict.fromkeys((*near, *context)))
