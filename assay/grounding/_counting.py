"""The computations of :mod:`assay.grounding._arithmetic` that are not sums or
differences of one unit: products and ratios of two values whose units give the
claim's unit, counts of listed items, and time elapsed between two dates or times.

Each is a generator of candidate :class:`Computation` records, bounded as the
module docstring of :mod:`assay.grounding._arithmetic` says: pairs only, at most
``MAX_OPERANDS`` values and ``MAX_DATES`` dates per text, ``MAX_RECORDS`` records.
What does not depend on the claim's value (the pairs of evidence values and the
units they give, the sizes of lists, the records naming each word, the dates the
claim names) is read once per claim, on its worksheet.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal

from assay.grounding._arithmetic import (
    MAX_DATES,
    MAX_OPERANDS,
    MAX_RECORDS,
    Computation,
    Operand,
)
from assay.grounding._dates import DateMention, find_dates, same_date
from assay.grounding._evidence import EvidenceIndex, Value
from assay.grounding._quantities import Quantity
from assay.grounding._units import measure
from assay.grounding._worksheet import Worksheet

__all__ = ["counts", "elapsed", "percentages", "products"]

_Dims = tuple[tuple[str, int], ...]
_PATH = re.compile(r"^([^\s:]+): ", re.M)
_ELEMENT = re.compile(r"^(.*\])(?:\.|$)")
_ARRAY = re.compile(r"([\w$-]*(?:\[\d+\])*?)\[(\d+)\]")
_LIST_ITEM = re.compile(r"(?<!\S)[A-Za-z][\w.]*-\d[\w.+]*(?!\S)")  # anyio-4.6.2


@dataclass(frozen=True, kw_only=True, slots=True)
class _Factor:
    """A value as a multiple of its dimension's base unit."""

    base: Decimal
    dims: _Dims
    operand: Operand
    record: tuple[int, int]
    named: bool


def _dims_of(unit: str | None) -> tuple[Decimal, _Dims] | None:
    if unit is None:
        return Decimal(1), ()
    found = measure("1 " + unit if unit.startswith("/") else unit)
    if found is None:
        return None
    return found.factor, tuple(sorted((str(k), int(v)) for k, v in dict(found.dimension).items()))


def _combine(a: _Dims, b: _Dims, sign: int) -> _Dims:
    out: dict[str, int] = dict(a)
    for k, v in b:
        out[k] = out.get(k, 0) + sign * v
    return tuple(sorted((k, v) for k, v in out.items() if v))


def _factors(sheet: Worksheet) -> list[_Factor]:
    def read() -> list[_Factor]:
        found: list[_Factor] = []
        for doc, index in enumerate(sheet.indexes):
            for value in index.values:
                found += _readings(doc, value, sheet.mentioned)
        found.sort(key=lambda f: not f.named)
        return found[: 2 * MAX_OPERANDS]

    return sheet.cached("factors", read)


def _pairs(sheet: Worksheet) -> dict[_Dims, list[tuple[str, _Factor, _Factor]]]:
    """The products and ratios of two factors of one record or named by the claim,
    in the order they are tried, by the dimension of their result: a value of the
    claim tries only those in its own dimension."""

    def read() -> dict[_Dims, list[tuple[str, _Factor, _Factor]]]:
        found: dict[_Dims, list[tuple[str, _Factor, _Factor]]] = {}
        for a, b in itertools.combinations(_factors(sheet), 2):
            if not (a.named or b.named or a.record == b.record) or a.operand == b.operand:
                continue
            found.setdefault(_combine(a.dims, b.dims, 1), []).append(("product", a, b))
            for top, bottom in ((a, b), (b, a)):
                if bottom.base:
                    found.setdefault(_combine(top.dims, bottom.dims, -1), []).append(
                        ("ratio", top, bottom)
                    )
        return found

    return sheet.cached("pairs", read)


def _readings(doc: int, value: Value, mentioned: set[tuple[int, int, int]]) -> list[_Factor]:
    q = value.quantity
    if len(q.values) != 1 or q.word is not None:
        return []
    x = next(iter(q.values))
    units: list[str | None] = [q.unit] if q.unit else [None, *[u for u in value.units[:2]]]
    if q.kind == "percent":
        units = []
    out: list[_Factor] = []
    for unit in units:
        dims = _dims_of(unit)
        if dims is None:
            continue
        out.append(
            _Factor(
                base=x * dims[0],
                dims=dims[1],
                operand=Operand(value=x, text=q.text, document=doc, start=q.start, end=q.end),
                record=(doc, value.record),
                named=(doc, q.start, q.end) in mentioned,
            )
        )
    return out


def products(claim: Quantity, sheet: Worksheet, cues: Mapping[str, str]) -> Iterator[Computation]:
    """``a x b`` and ``a / b`` whose units give the claim's (hours x rate, quantity
    x price, total ÷ nights), and ``p% of a``; the two of one record or one named by
    the claim."""
    target = _dims_of(claim.unit if claim.kind not in ("count", "number") else None)
    if target is None:
        return
    scale, dims = target
    cue = next(iter(cues.values()), "")
    multiply, divide = "product" in cues or "sum" in cues, "ratio" in cues
    for operation, a, b in _pairs(sheet).get(dims, ()):
        if operation == "product" and multiply:
            yield _two("product", a, b, a.base * b.base / scale, claim, cue)
        elif operation == "ratio" and divide:
            yield _two("ratio", a, b, a.base / b.base / scale, claim, cue)
    if "percentage" in cues or "product" in cues:
        yield from _percent_of(claim, sheet, cue)


def _two(
    operation: str, a: _Factor, b: _Factor, result: Decimal, claim: Quantity, cue: str
) -> Computation:
    return Computation(
        operation="product" if operation == "product" else "ratio",
        operands=(a.operand, b.operand),
        result=result,
        unit=claim.unit,
        cue=cue,
    )


def _percent_of(claim: Quantity, sheet: Worksheet, cue: str) -> Iterator[Computation]:
    target = _dims_of(claim.unit if claim.kind not in ("count", "number") else None)
    if target is None:
        return
    factors = _factors_by_dims(sheet).get(target[1], [])
    for (p, record, named), a in itertools.product(_percents(sheet), factors):
        if not (named or a.named or record == a.record):
            continue
        yield Computation(
            operation="percent_of",
            operands=(p, a.operand),
            result=p.value * a.base / target[0] / 100,
            unit=claim.unit,
            cue=cue,
        )


def _factors_by_dims(sheet: Worksheet) -> dict[_Dims, list[_Factor]]:
    def read() -> dict[_Dims, list[_Factor]]:
        found: dict[_Dims, list[_Factor]] = {}
        for factor in _factors(sheet):
            found.setdefault(factor.dims, []).append(factor)
        return found

    return sheet.cached("factors by dimension", read)


def _percents(sheet: Worksheet) -> list[tuple[Operand, tuple[int, int], bool]]:
    """The first :data:`MAX_OPERANDS` percentages of the evidence, with their record
    and whether the claim names them."""

    def read() -> list[tuple[Operand, tuple[int, int], bool]]:
        found: list[tuple[Operand, tuple[int, int], bool]] = []
        for doc, index in enumerate(sheet.indexes):
            for value in index.values:
                q = value.quantity
                if len(q.values) != 1 or not (q.kind == "percent" or "percent" in value.units[:1]):
                    continue
                x = next(iter(q.values))
                operand = Operand(value=x, text=q.text, document=doc, start=q.start, end=q.end)
                named = (doc, q.start, q.end) in sheet.mentioned
                found.append((operand, (doc, value.record), named))
                if len(found) == MAX_OPERANDS:
                    return found
        return found

    return sheet.cached("percents", read)


def percentages(sheet: Worksheet, cue: str) -> Iterator[Computation]:
    """``a`` as a percentage of ``b``, two values of one record or column."""
    single = (
        (doc, v)
        for doc, index in enumerate(sheet.indexes)
        for v in index.values
        if len(v.quantity.values) == 1
    )
    values = list(itertools.islice(single, MAX_OPERANDS))
    for (da, a), (db, b) in itertools.permutations(values, 2):
        same_place = da == db and (a.record == b.record or (a.series and a.series == b.series))
        x, y = next(iter(a.quantity.values)), next(iter(b.quantity.values))
        if not same_place or y == 0 or a.quantity.unit != b.quantity.unit or x > y:
            continue
        yield Computation(
            operation="percentage",
            operands=(_operand(da, a, x), _operand(db, b, y)),
            result=x * 100 / y,
            unit="percent",
            cue=cue,
        )


def _operand(doc: int, value: Value, x: Decimal) -> Operand:
    q = value.quantity
    return Operand(value=x, text=q.text, document=doc, start=q.start, end=q.end)


# --- counts -----------------------------------------------------------------------


def counts(claim: Quantity, sheet: Worksheet, cue: str) -> Iterator[Computation]:
    """The number of elements of a list, rows of a table, items of a listed line,
    or records naming a word of the claim."""
    for doc in range(len(sheet.indexes)):
        for size, detail in _sizes(sheet, doc):
            yield _count(doc, size, claim, cue, detail)


def _sizes(sheet: Worksheet, doc: int) -> list[tuple[int, str]]:
    """What :func:`counts` counts in evidence ``doc``, in order: its lists, tables
    and listed lines, then the records naming each word of the claim that some
    record names (read once per claim)."""

    def read() -> list[tuple[int, str]]:
        index = sheet.indexes[doc]
        found = list(_list_sizes(index))
        for word in sheet.words:
            named = _records_naming(index, word, sheet.records_with(doc, word))
            if named:
                found.append((named, f"records naming {word}"))
        return found

    return sheet.cached(("sizes", doc), read)


def _count(doc: int, size: int, claim: Quantity, cue: str, detail: str) -> Computation:
    return Computation(
        operation="count",
        operands=(),
        result=Decimal(size),
        unit=None,
        cue=cue,
        detail=f"{detail} (document {doc})",
    )


def _list_sizes(index: EvidenceIndex) -> Iterator[tuple[int, str]]:
    text = index.view_text
    arrays: dict[str, set[str]] = {}
    for m in itertools.islice(_PATH.finditer(text), MAX_RECORDS):
        for a in _ARRAY.finditer(m.group(1)):
            arrays.setdefault(m.group(1)[: a.start(2) - 1], set()).add(a.group(2))
        head = m.group(1).split(".")
        if len(head) >= 2 and "[" not in head[0]:
            arrays.setdefault("{}", set()).add(head[0])
    for name, members in arrays.items():
        yield len(members), f"the elements of {name or 'the list'}"
    for number, rows in enumerate(index.tables):
        yield rows, f"the rows of table {number}"
    for start, end in index.records[:MAX_RECORDS]:
        items = _LIST_ITEM.findall(text, start, end)
        if len(items) >= 3:
            yield len(items), "the listed names of a line"


def _records_naming(index: EvidenceIndex, word: str, among: Sequence[int]) -> int:
    """How many records name ``word``, of those numbered ``among`` (the records that
    write the word in any case; those that do not cannot name it). A record that
    counts it itself ("3 failed, 118 passed") is a tally of the others, not one of
    them."""
    if not among:
        return 0
    pattern = re.compile(r"(?<![\w-])" + re.escape(word) + r"(?![\w-])", re.I)
    tally = re.compile(r"(?<![\w.,])\d[\d,]*\s+" + re.escape(word) + r"(?![\w-])", re.I)
    records: set[str] = set()
    text = index.view_text
    for k in among:
        if k >= MAX_RECORDS:
            break
        start, end = index.records[k]
        line = text[start:end]
        if pattern.search(line) is None or tally.search(line) is not None:
            continue
        path = _PATH.match(line)
        element = _ELEMENT.match(path.group(1)) if path is not None else None
        records.add(element.group(1) if element is not None else str(k))
    return len(records)


# --- time elapsed -----------------------------------------------------------------


def elapsed(claim: Quantity, sheet: Worksheet, cue: str) -> Iterator[Computation]:
    """Time between two dates or times of the evidence: one named by the claim, or
    both of one record, or any two where the evidence holds few."""
    dims = _dims_of(claim.unit)
    if claim.unit is None or dims is None or dims[1] != (("[time]", 1),):
        return
    dated = _dated(sheet)
    few = len(dated) <= 8
    spoken = _spoken_of(sheet, dated)
    for (da, a, ra, na), (db, b, rb, nb) in itertools.combinations(dated, 2):
        if not (na or nb or few or (da, ra) == (db, rb)):
            continue
        if spoken and not ((na or (da, ra) in spoken) and (nb or (db, rb) in spoken)):
            continue
        seconds = _calendar_between(a, b) if claim.unit in _CALENDAR_UNITS else None
        if seconds is None:
            seconds = _between(a, b)
        if seconds is None or seconds == 0:
            continue
        yield Computation(
            operation="elapsed",
            operands=(_date_operand(da, a), _date_operand(db, b)),
            result=Decimal(abs(seconds)) / dims[0],
            unit=claim.unit,
            cue=cue,
        )


def _dated(sheet: Worksheet) -> list[tuple[int, DateMention, int, bool]]:
    """The first :data:`MAX_DATES` dates of each evidence text, with their record and
    whether the claim names them (writes the same date)."""

    def read() -> list[tuple[int, DateMention, int, bool]]:
        written = find_dates(sheet.text)
        return [
            (doc, mention, record, any(same_date(c, mention, frozenset()) for c in written))
            for doc, index in enumerate(sheet.indexes)
            for mention, record in index.dates[:MAX_DATES]
        ]

    return sheet.cached("dated", read)


def _spoken_of(
    sheet: Worksheet, dated: list[tuple[int, DateMention, int, bool]]
) -> frozenset[tuple[int, int]]:
    """The dated records the claim speaks of, where it speaks of two or more: those
    that write a word of the claim ("acknowledged", "fired"). Time elapsed is then
    the time between two of them, not between any two times of the evidence (in an
    incident log, the alert "fired" at 12:06 and was "acknowledged" at 12:09: three
    minutes after, whatever else happened five minutes after 12:09). Read once."""

    def read() -> frozenset[tuple[int, int]]:
        words = set(sheet.words)
        spoken = {
            (doc, record) for doc, _, record, _ in dated if sheet.words_of((doc, record)) & words
        }
        return frozenset(spoken) if len(spoken) >= 2 else frozenset()

    return sheet.cached("dated records spoken of", read)


#: Units a claim counts whole calendar days in: "closed six days after it was
#: opened" from 14 January 09:02 to 20 January 16:45 is six days, not 6.32.
_CALENDAR_UNITS = frozenset({"day", "week"})


def _calendar_between(a: DateMention, b: DateMention) -> int | None:
    """Seconds between the calendar days of two mentions that both write a day (as
    written, in their own zones), or None."""
    if None in (a.year, a.month, a.day, b.year, b.month, b.day):
        return None
    first = date(a.year or 0, a.month or 0, a.day or 0)
    second = date(b.year or 0, b.month or 0, b.day or 0)
    return (second - first).days * 86_400


def _between(a: DateMention, b: DateMention) -> int | None:
    """Seconds from ``a`` to ``b``: by date-time where both have a date, by clock
    where neither has one."""
    ma, mb = a.moment(), b.moment()
    if ma is not None and mb is not None:
        if (a.hour is None) != (b.hour is None):
            return None
        return int((mb - ma).total_seconds())
    ca, cb = a.clock_minutes(), b.clock_minutes()
    if ca is None or cb is None:
        return None
    if (a.zone is None) != (b.zone is None):
        # "12:06-12:21 UTC", "from 12:06 to 12:21 UTC": a range writes its zone once,
        # so the two times are compared as written, in the one zone.
        ca, cb = _written_minutes(a), _written_minutes(b)
    return (cb - ca) * 60  # a time of day and a date-time: the same day


def _written_minutes(mention: DateMention) -> int:
    return (mention.hour or 0) * 60 + (mention.minute or 0)


def _date_operand(doc: int, mention: DateMention) -> Operand:
    moment = mention.moment() or datetime(2000, 1, 1)
    value = (
        Decimal(int(moment.timestamp()))
        if mention.moment()
        else Decimal(mention.clock_minutes() or 0)
    )
    return Operand(
        value=value, text=mention.text, document=doc, start=mention.start, end=mention.end
    )
