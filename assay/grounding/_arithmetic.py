"""Checked arithmetic: a claim's number that is a computation over its evidence.

An honest report says ``1,256 rolls in total`` where the tool listed ``1040`` and
``216``, ``€20,000 below the £485,000`` where it listed two prices, ``two days after
the loss`` where it gave two dates. Such a number occurs in no evidence, so a check
for occurrences alone refuses honest work; accepting any number that some
combination of the evidence's numbers hits would accept almost anything. So a
number is accepted as a computation only when both hold:

* the claim **says** it is one: a cue word in its sentence (``total``,
  ``combined``, ``more than``, ``after``, ``%``, ``per``, a counted noun, …, see
  :data:`CUES`), and
* the value is **exactly** the result of an operation of that kind over values of
  the cited evidence that fit it: a sum over one column or field (all of it, the
  rows the claim names, its positive or negative part, all but one row, or two of
  its values), a difference of two values of one record, column or of the claim
  itself, a product or ratio of two values whose units give the claim's unit
  (hours x rate, quantity x unit price), a percentage of two values of one
  record, a count of listed items (the elements of a list, the rows of a table,
  the records that name a word of the claim), or a difference of two dates or
  times. Values are compared in the claim's unit and precision.

Where the cue is there, evidence holds the operands, no operation gives the number
and the operation the claim describes with the values it names gives another, the
claim is a miscalculation: :class:`Miscalculation` names the right value.

The search is bounded whatever the evidence: at most :data:`MAX_OPERANDS` values
per claim number, pairs only (never larger subsets, except whole columns or the
rows a claim names), :data:`MAX_DATES` dates per evidence text and
:data:`MAX_RECORDS` records counted; so at most a few thousand candidate results
per claim number. What every number of a claim reads alike (the claim's sentences
and words, the evidence values that can be operands, the records that name a word)
is read once per claim, on a :class:`~assay.grounding._worksheet.Worksheet`, so that
the cost grows with the claim and the evidence, not with their product or square.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

from assay._text import alternation, word_table
from assay.grounding._evidence import EvidenceIndex, Value
from assay.grounding._quantities import Quantity
from assay.grounding._units import currency_of, dollar_like, measure
from assay.grounding._worksheet import Worksheet, claim_words

__all__ = [
    "CUES",
    "MAX_DATES",
    "MAX_OPERANDS",
    "MAX_RECORDS",
    "Computation",
    "Miscalculation",
    "Operand",
    "Operation",
    "claim_words",
    "compute",
    "cues_on",
]

Operation = Literal[
    "sum",
    "difference",
    "product",
    "ratio",
    "percentage",
    "percent_of",
    "count",
    "elapsed",
    "date_shift",
    "maximum",
    "minimum",
]
Cue = Literal[
    "sum", "difference", "product", "ratio", "percentage", "count", "elapsed", "highest", "lowest"
]

#: Values considered per claim number (per operation), first in evidence order.
MAX_OPERANDS = 64
#: Dates and times considered per evidence text.
MAX_DATES = 40
#: Records (lines, JSON objects, rows) counted per evidence text.
MAX_RECORDS = 2_000


def _cue_words(cue: str) -> str:
    """The words of one kind of cue (``words/arithmetic-cues.toml``) as a pattern."""
    return alternation(word_table("arithmetic-cues")[cue])


_EXCLUDING = rf"\b(?:{_cue_words('excluding')})\b"
#: The words by which a claim says a number is computed, by kind of computation: the
#: words are data; the cues that are no words ("%", "x 3", "a two-month deposit",
#: "/", "runtime") are written here.
CUES: dict[Cue, re.Pattern[str]] = {
    "sum": re.compile(rf"\b(?:{_cue_words('sum')})\b|" + _EXCLUDING, re.I),
    "difference": re.compile(rf"\b(?:{_cue_words('difference')})\b", re.I),
    "product": re.compile(
        rf"\b(?:{_cue_words('product')})\b|[\u00d7x]\s?\d"
        r"|\b\w+-(?:hour|day|night|week|month|year)\b",  # a two-month deposit: months x rent
        re.I,
    ),
    "ratio": re.compile(rf"\b(?:{_cue_words('ratio')})\s+\w+|/", re.I),
    "percentage": re.compile(rf"%|\b(?:per\s?cent|{_cue_words('percentage')})\b", re.I),
    "count": re.compile(rf"\b(?:{_cue_words('count')})\b", re.I),
    "elapsed": re.compile(rf"\b(?:{_cue_words('elapsed')}|run\s?time)\b", re.I),
    "highest": re.compile(rf"\b(?:{_cue_words('highest')})\b", re.I),
    "lowest": re.compile(rf"\b(?:{_cue_words('lowest')})\b", re.I),
}


@dataclass(frozen=True, kw_only=True, slots=True)
class Operand:
    """One value a computation used: as written in evidence ``document`` at
    ``start:end`` of its view's text, read in the claim's unit as ``value``."""

    value: Decimal
    text: str
    document: int
    start: int
    end: int


@dataclass(frozen=True, kw_only=True, slots=True)
class Computation:
    """A claim's number as the result of ``operation`` over ``operands``.

    ``unit`` is the claim's unit (``None`` for a plain number or a count), ``cue``
    the claim's word that says it is computed, ``detail`` what was computed over
    (a column, the rows naming a word), for people.
    """

    operation: Operation
    operands: tuple[Operand, ...]
    result: Decimal
    unit: str | None
    cue: str
    detail: str = ""

    def __post_init__(self) -> None:
        # A result read through a unit conversion carries its rounding noise
        # (EUR 1,800 a month for two months: 3600.000000000000000000000001); it is
        # recorded and shown to 15 significant digits, as no evidence writes more.
        object.__setattr__(self, "result", Decimal(format(self.result, ".15g")))


@dataclass(frozen=True, kw_only=True, slots=True)
class Miscalculation:
    """A claim's number that its cue says is computed, but that the computation it
    describes does not give: ``expected`` is what it gives."""

    claimed: Decimal
    expected: Computation


# --- cues ---------------------------------------------------------------------------


def cues_near(text: str, start: int, end: int) -> dict[str, str]:
    """The cue words of the sentence of ``text`` that holds ``start:end``."""
    return _cues(Worksheet(text, ()), start, end)


def cues_on(sheet: Worksheet, start: int, end: int) -> dict[str, str]:
    """:func:`cues_near` on a worksheet's claim: each sentence is read once."""
    return _cues(sheet, start, end)


def _cues(sheet: Worksheet, start: int, end: int) -> dict[str, str]:
    """:func:`cues_near` on a worksheet's claim: each sentence is read once."""
    number, sentence = sheet.sentence(start, end)

    def read() -> dict[str, str]:
        found: dict[str, str] = {}
        for cue, pattern in CUES.items():
            m = pattern.search(sentence)
            if m is not None:
                found[cue] = m.group()
        return found

    return dict(sheet.cached(("cues", number), read))


# --- operands -----------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True, slots=True)
class _Candidate:
    """An evidence value read in the claim's unit, with where it sits."""

    operand: Operand
    record: tuple[int, int]
    series: tuple[int, str] | None
    in_claim: bool
    #: The field or column it is a value of, in its document.
    key: tuple[int, str] | None = None


def _in_claim_unit(value: Value, claim: Quantity) -> list[Decimal]:
    """``value`` in the claim's unit (each reading of it), where it can be read in it."""
    q = value.quantity
    if claim.kind in ("count", "number"):
        return sorted(q.values) if q.kind in ("count", "number") else []
    units = [q.unit] if q.unit else list(value.units)
    for unit in units:
        converted = [
            c for x in sorted(q.values) if (c := _convert(x, unit, claim.unit)) is not None
        ]
        if converted:
            return converted
    return []


def _convert(x: Decimal, unit: str, to: str | None) -> Decimal | None:
    if to is None:
        return None
    stated, named = currency_of(to), currency_of(unit)
    if stated is not None and named is not None and stated != named:
        if not dollar_like(stated, named):
            return None
        unit = unit.replace(named, stated, 1)
    if unit == to:
        return x
    a, b = measure(_expr(unit)), measure(_expr(to))
    if a is None or b is None or a.dimension != b.dimension:
        return None
    return x * a.factor / b.factor


def _expr(unit: str) -> str:
    return "1 " + unit if unit.startswith("/") else unit


def _unit_key(claim: Quantity) -> str | None:
    """What the evidence values read in the claim's unit depend on: its unit, or
    nothing for a plain number or count (:func:`_in_claim_unit`)."""
    return None if claim.kind in ("count", "number") else f"unit:{claim.unit}"


def _candidates(claim: Quantity, sheet: Worksheet) -> list[_Candidate]:
    """The evidence values read in the claim's unit, those the claim names first, at
    most :data:`MAX_OPERANDS` of them: read once per unit on the worksheet."""

    def read() -> list[_Candidate]:
        found: list[_Candidate] = []
        for doc, index in enumerate(sheet.indexes):
            for value in index.values:
                q = value.quantity
                for converted in _in_claim_unit(value, claim):
                    operand = Operand(
                        value=converted, text=q.text, document=doc, start=q.start, end=q.end
                    )
                    found.append(
                        _Candidate(
                            operand=operand,
                            record=(doc, value.record),
                            series=(doc, value.series) if value.series else None,
                            in_claim=(doc, q.start, q.end) in sheet.mentioned,
                            key=(doc, value.key) if value.key else None,
                        )
                    )
        found.sort(key=lambda c: not c.in_claim)
        return found[:MAX_OPERANDS]

    return sheet.cached(("candidates", _unit_key(claim)), read)


# --- the search ---------------------------------------------------------------------


def compute(
    claim: Quantity,
    claim_text: str,
    indexes: Sequence[EvidenceIndex],
    *,
    mentioned: Iterable[tuple[int, int, int]] = (),
    sheet: Worksheet | None = None,
) -> Computation | Miscalculation | None:
    """The computation over ``indexes`` that gives ``claim``, where a cue of
    ``claim_text`` says it is one; else the miscalculation the cue describes, or
    ``None``. ``mentioned`` are the ``(document, start, end)`` evidence spans of the
    claim's other values (operands the claim names).

    ``sheet``, where given, is the worksheet of ``claim_text`` over ``indexes`` and
    ``mentioned``, kept from one value of the claim to the next so that what they
    all read is read once (one is made where none is given)."""
    if sheet is None:
        sheet = Worksheet(claim_text, indexes, mentioned)
    cues = _cues(sheet, claim.start, claim.end)
    if claim.noun and "count" not in cues:
        cues["count"] = claim.noun  # "three orders": the counted noun says it is a count
    if not cues or len(claim.values) == 0:
        return None
    candidates = _candidates(claim, sheet)
    for found in _searches(claim, cues, candidates, sheet):
        if _matches(found.result, claim):
            return found
    return _miscalculation(claim, cues, candidates, sheet)


def _searches(
    claim: Quantity, cues: dict[str, str], candidates: list[_Candidate], sheet: Worksheet
) -> Iterator[Computation]:
    from assay.grounding._counting import counts, elapsed, percentages, products

    if "sum" in cues:
        yield from _sums(candidates, claim, cues["sum"], sheet)
    if "difference" in cues or _both_named(candidates):
        cue = cues.get("difference", "named operands")
        yield from _differences(candidates, claim, cue)
    if "percentage" in cues and claim.kind == "percent":
        yield from percentages(sheet, cues["percentage"])
    if cues.keys() & {"product", "ratio", "percentage", "sum"}:
        yield from products(claim, sheet, cues)
    if claim.kind in ("count", "number") and ("count" in cues or claim.noun):
        yield from counts(claim, sheet, cues.get("count", claim.noun or ""))
    if "elapsed" in cues or "difference" in cues:
        cue = cues.get("elapsed") or cues.get("difference", "")
        yield from elapsed(claim, sheet, cue)


def _matches(result: Decimal, claim: Quantity) -> bool:
    """``result`` is the claim's value at the claim's precision (a hedged claim: on
    the side its hedge says)."""
    for v in claim.values:
        if _same_number(result, v) or (result < 0 and _same_number(-result, v)):
            return True
        step = Decimal(1).scaleb(-claim.decimals)
        rounded = result.quantize(step) if abs(result) < Decimal("1e20") else result
        if claim.approximation is None:
            if rounded == v and _digits(result) > claim.decimals and claim.decimals >= 2:
                return True
            continue
        if abs(result - v) * 2 <= _hedge_step(v, claim.decimals):
            side = claim.approximation
            if not ((side == "over" and result < v) or (side == "under" and result > v)):
                return True
    return False


def _same_number(x: Decimal, y: Decimal) -> bool:
    """Equal, up to the rounding of unit factors such as 1/3600 in 28 digits."""
    return x == y or abs(x - y) <= abs(y) * Decimal("1e-18")


def _digits(value: Decimal) -> int:
    exponent = value.normalize().as_tuple().exponent
    return max(0, -exponent) if isinstance(exponent, int) else 0


def _hedge_step(value: Decimal, decimals: int) -> Decimal:
    if decimals:
        return Decimal(1).scaleb(-decimals)
    exponent = value.normalize().as_tuple().exponent
    return Decimal(1).scaleb(max(0, exponent if isinstance(exponent, int) else 0))


def _both_named(candidates: list[_Candidate]) -> bool:
    return sum(1 for c in candidates if c.in_claim) >= 2


def _sums(
    candidates: list[_Candidate], claim: Quantity, cue: str, sheet: Worksheet
) -> Iterator[Computation]:
    """Sums over one column or field: all of it, its positive and negative parts,
    the rows that name a word of the claim, all but one row, two of its values."""
    excluding = re.fullmatch(_EXCLUDING, cue, re.I) is not None
    for series, members in _by_series(candidates).items():
        if len(members) < 2:
            continue
        name = series[1]
        if excluding:  # "leaving out the cancelled booking": all rows but the one it names
            words = set(sheet.words)
            for left_out in members:
                if sheet.words_of(left_out.record) & words:
                    rest = [c for c in members if c is not left_out]
                    yield _sum(rest, claim, cue, f"{name} without {left_out.operand.text}")
            continue
        yield _sum(members, claim, cue, f"all of {name}")
        positive = [c for c in members if c.operand.value > 0]
        negative = [c for c in members if c.operand.value < 0]
        for part, label in ((positive, "positive"), (negative, "negative")):
            if 1 < len(part) < len(members):
                yield _sum(part, claim, cue, f"the {label} values of {name}")
        for word, named in _rows_naming(claim, sheet, series, members):
            yield _sum(named, claim, cue, f"the {name} of the rows naming {word}")
        for a, b in itertools.combinations(members, 2):
            yield _sum([a, b], claim, cue, f"two values of {name}")


def _by_series(candidates: list[_Candidate]) -> dict[tuple[int, str], list[_Candidate]]:
    groups: dict[tuple[int, str], list[_Candidate]] = {}
    for c in candidates:
        if c.series is not None:
            groups.setdefault(c.series, []).append(c)
    return groups


def _rows_naming(
    claim: Quantity, sheet: Worksheet, series: tuple[int, str], members: list[_Candidate]
) -> list[tuple[str, list[_Candidate]]]:
    """Each word of the claim, in order, with the members of ``series`` whose records
    write it, where that is more than one of them and not all: the rows a sum over
    the rows the claim names adds up. Read once per series (the members are the same
    for every value of the claim in one unit), looking up only the words the
    members' records write."""

    def read() -> list[tuple[str, list[_Candidate]]]:
        written = frozenset().union(*(sheet.words_of(c.record) for c in members))
        found: list[tuple[str, list[_Candidate]]] = []
        for word in sheet.words:
            if word not in written:
                continue
            named = [c for c in members if word in sheet.words_of(c.record)]
            if 1 < len(named) < len(members):
                found.append((word, named))
        return found

    return sheet.cached(("rows naming", _unit_key(claim), series), read)


def _sum(members: list[_Candidate], claim: Quantity, cue: str, detail: str) -> Computation:
    return Computation(
        operation="sum",
        operands=tuple(c.operand for c in members),
        result=sum((c.operand.value for c in members), Decimal(0)),
        unit=claim.unit,
        cue=cue,
        detail=detail,
    )


def _differences(candidates: list[_Candidate], claim: Quantity, cue: str) -> Iterator[Computation]:
    """Differences of two values of one record or column, or one the claim names."""
    for a, b in itertools.combinations(candidates, 2):
        related = a.in_claim or b.in_claim or a.record == b.record
        related = related or (a.series is not None and a.series == b.series)
        # ``reading.value`` and ``previous.value``: one field of two records.
        related = related or (a.key is not None and a.key == b.key)
        if not related or a.operand.value == b.operand.value:
            continue
        big, small = (a, b) if a.operand.value >= b.operand.value else (b, a)
        yield Computation(
            operation="difference",
            operands=(big.operand, small.operand),
            result=big.operand.value - small.operand.value,
            unit=claim.unit,
            cue=cue,
        )


def _natural_sums(
    candidates: list[_Candidate], claim: Quantity, cue: str, sheet: Worksheet
) -> list[Computation]:
    """The sums a claim describes: over the rows it names, else over whole columns."""
    named: list[Computation] = []
    whole: list[Computation] = []
    for series, members in _by_series(candidates).items():
        if len(members) < 2:
            continue
        whole.append(_sum(members, claim, cue, f"all of {series[1]}"))
        for word, rows in _rows_naming(claim, sheet, series, members):
            named.append(_sum(rows, claim, cue, f"the {series[1]} of the rows naming {word}"))
    return named or whole


def _miscalculation(
    claim: Quantity, cues: dict[str, str], candidates: list[_Candidate], sheet: Worksheet
) -> Miscalculation | None:
    """What the computation the claim describes gives instead: the difference of
    the two values it names, or (for a sum) the column total nearest to it."""
    if claim.kind == "number":
        return None  # a bare number says too little of what it was computed from
    claimed = max(claim.values)
    named = [c for c in candidates if c.in_claim]
    options: list[Computation] = []
    if "difference" in cues and len(named) == 2:
        options += list(_differences(named, claim, cues["difference"]))
    if "sum" in cues and not options:
        options += _natural_sums(candidates, claim, cues["sum"], sheet)
    near = [o for o in options if o.result != 0 and Decimal("0.5") <= claimed / o.result <= 2]
    if not near:
        return None
    best = min(near, key=lambda o: abs(o.result - claimed))
    return Miscalculation(claimed=claimed, expected=best)
