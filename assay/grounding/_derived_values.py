"""The values a derivation computes with: amounts, moments and cited arrays, how each
is read from a cited value or a stated result, and when a result states a value.

An :class:`Amount` is a number with its unit (a registry expression: ``hour``,
``EUR``, ``EUR / hour``, ``percent``; ``None`` where nothing names one); a
:class:`Moment` a date, a date and time, or a time of day (in UTC where a zone is
written); :class:`Items` a cited JSON array. Values are read with the grounding
readers (:func:`~assay.grounding.find_quantities`,
:func:`~assay.grounding.find_dates`, :func:`~assay.grounding._units.key_unit`), so
a derivation reads ``"1,246.50 EUR"``, ``2025-04-13T06:12:00+02:00`` and a field
``duration_min: 37`` as the rest of the grounding does.

A refusal is a :class:`Refused` with the reason a person can act on; the language
turns it into the reason its caller reports (the gate's ``bad_derivation``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, Literal, cast

from assay.grounding._dates import DateMention, find_dates
from assay.grounding._keys import key_unit
from assay.grounding._numbers import Convention, find_numbers
from assay.grounding._quantities import find_quantities
from assay.grounding._units import currency_of, measure, unit_of

MomentKind = Literal["date", "datetime", "time"]

#: Units the registry leaves out, as fractions of one.
_FRACTIONS = {"percent": Decimal("0.01"), "basis_point": Decimal("0.0001")}
_SPELLED_FRACTIONS = {
    "%": "percent",
    "percent": "percent",
    "bp": "basis_point",
    "bps": "basis_point",
    "basis_point": "basis_point",
}
_GROUPED = re.compile(r"\d,\d{3}")
_PLAIN_UNIT = re.compile(r"[a-z_]+")


class _Refused(Exception):
    """A derivation that cannot be evaluated, and why (never leaves the grounding)."""


#: The name the derivation modules raise and catch: control flow inside the grounding
#: (a private class, so not one of the exceptions a caller of the library meets).
Refused = _Refused


@dataclass(frozen=True, kw_only=True, slots=True)
class Amount:
    """A number and its unit (``None``: the evidence names none)."""

    value: Decimal
    unit: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class Moment:
    """A date, a date and time, or a time of day; ``at`` is in UTC where ``zoned``."""

    kind: MomentKind
    at: datetime
    zoned: bool = False


@dataclass(frozen=True, kw_only=True, slots=True)
class Items:
    """A cited JSON array, with the key it stands under (which may name a unit)."""

    items: tuple[Any, ...]
    key: str | None = None


Value = Amount | Moment | Items


@dataclass(frozen=True, kw_only=True, slots=True)
class CitedValue:
    """What one citation names, as a derivation reads it: a JSON value (``field``,
    decoded with exact decimals) and the key it stands under, or a quote's text.
    ``convention`` is the entry's way of writing numbers (``1.246,50``)."""

    field: Any = None
    key: str | None = None
    quote: str | None = None
    convention: Convention = "unknown"


@dataclass(frozen=True, kw_only=True, slots=True)
class Stated:
    """A derivation's stated result: its readings (a number may read two ways), the
    decimals each is written with, and its unit, or a moment."""

    text: str
    amounts: tuple[tuple[Decimal, int], ...] = ()
    unit: str | None = None
    moment: Moment | None = None


# --- reading ----------------------------------------------------------------------


def kind_of(value: Value) -> str:
    """What a value is, in words, for a reason."""
    if isinstance(value, Items):
        return f"an array of {len(value.items)} items"
    if isinstance(value, Moment):
        return {"date": "a date", "datetime": "a date and time", "time": "a time of day"}[
            value.kind
        ]
    return "an amount" if value.unit else "a number"


def read_cited(index: int, cited: CitedValue) -> Value:
    """The value citation ``index`` names: a JSON number (in the unit its key names),
    array, or text holding one value; or a quote holding exactly one number, amount,
    date or time."""
    if cited.quote is not None:
        return _read_text(f"${index}", cited.quote, cited.convention)
    field = cited.field
    if isinstance(field, bool):
        raise Refused(f"${index} is a true/false field, not a value to compute with")
    if isinstance(field, int | Decimal | float):
        return Amount(value=Decimal(str(field)), unit=key_unit(cited.key or ""))
    if isinstance(field, str):
        return _read_text(f"${index}", field, cited.convention)
    if isinstance(field, list):
        return Items(items=tuple(cast(list[Any], field)), key=cited.key)
    if isinstance(field, dict):
        raise Refused(f"${index} is a record; cite one of its fields, or an array to count")
    raise Refused(f"${index} is null")


def read_item(item: Any, key: str | None, where: str) -> Amount:
    """One item of a cited array as an amount (for ``sum``, ``min``, ``max``)."""
    if isinstance(item, int | Decimal | float) and not isinstance(item, bool):
        return Amount(value=Decimal(str(item)), unit=key_unit(key or ""))
    if isinstance(item, str):
        read = _read_text(where, item, "unknown")
        if isinstance(read, Amount):
            return read
    raise Refused(f"{where} is not a number: {str(item)[:40]!r}")


def _read_text(where: str, text: str, convention: Convention) -> Amount | Moment:
    dates = find_dates(text)
    spans = [(d.start, d.end) for d in dates]
    quantities = find_quantities(text, convention=convention, skip=spans)
    if len(dates) == 1 and not quantities:
        return moment_of(dates[0])
    if len(quantities) == 1 and not dates:
        found = quantities[0]
        if len(found.values) > 1:
            readings = " or ".join(sorted(format(v, "f") for v in found.values))
            raise Refused(f"{where} {found.text!r} is ambiguous: it reads as {readings}")
        unit = found.unit if found.unit is not None else None
        return Amount(value=found.value, unit=unit)
    shown = text if len(text) <= 60 else text[:59] + "…"
    count = len(dates) + len(quantities)
    raise Refused(
        f"{where} {shown!r} holds {count} values; it must hold exactly one number, "
        "amount, date or time"
    )


def moment_of(mention: DateMention) -> Moment:
    """A date mention as a moment (a time of day without a date is one too)."""
    zoned = mention.zone is not None
    at = mention.moment()
    if at is not None:
        kind: MomentKind = "date" if mention.hour is None else "datetime"
        return Moment(kind=kind, at=at, zoned=zoned)
    if mention.hour is None or mention.minute is None:
        raise Refused(f"{mention.text!r} is not a whole date or a time of day")
    clock = datetime(2000, 1, 1, mention.hour, mention.minute, mention.second or 0)
    clock -= timedelta(minutes=mention.zone or 0)
    return Moment(kind="time", at=clock.replace(year=2000, month=1, day=1), zoned=zoned)


def read_result(result: str) -> Stated:
    """The stated result: one number, amount, date or time, as written."""
    dates = find_dates(result)
    spans = [(d.start, d.end) for d in dates]
    quantities = find_quantities(result, skip=spans)
    if len(dates) == 1 and not quantities:
        return Stated(text=result, moment=moment_of(dates[0]))
    if len(quantities) == 1 and not dates:
        found = quantities[0]
        readings = tuple((v, _decimals(v)) for v in sorted(found.values))
        return Stated(text=result, amounts=readings, unit=found.unit)
    raise Refused(
        f"the result {result!r} must state one number, amount, date or time "
        f"(it states {len(dates) + len(quantities)})"
    )


def _decimals(value: Decimal) -> int:
    exponent = value.as_tuple().exponent
    return -exponent if isinstance(exponent, int) and exponent < 0 else 0


# --- units ------------------------------------------------------------------------


def unit_named(spelling: str) -> str:
    """The unit a ``to(x, "...")`` names: a written spelling (``h``, ``min``,
    ``kWh``, ``€``, ``%``, ``bp``) or a registry expression (``EUR / hour``)."""
    if spelling.strip() in _SPELLED_FRACTIONS:
        return _SPELLED_FRACTIONS[spelling.strip()]
    named = unit_of(spelling.strip())
    if named is None and measure(spelling) is not None:
        named = spelling.strip()
    if named is None:
        raise Refused(f"{spelling!r} is not a unit the registry knows")
    return named


def _measure(unit: str) -> tuple[Decimal, Any] | None:
    if unit in _FRACTIONS:
        return _FRACTIONS[unit], "dimensionless"
    found = measure(_expression(unit))
    if found is None:
        return None
    return found.factor, found.dimension or "dimensionless"


def _expression(unit: str) -> str:
    """A unit as the registry parses it: a rate of nothing named (``/ month``) is
    one per month."""
    return "1 " + unit if unit.startswith("/") else unit


def converted(amount: Amount, unit: str | None) -> Decimal | None:
    """``amount`` in ``unit``; its number where either has no unit; ``None`` where
    the two measure different things (or the registry knows either not)."""
    if amount.unit is None or unit is None or amount.unit == unit:
        return amount.value
    a, b = _measure(amount.unit), _measure(unit)
    currency = currency_of(unit)
    # A value whose evidence names no currency (a bare 398 over 2 nights) is compared
    # with a money result (EUR 199 a night) in the result's other units.
    if a and b and a[1] != b[1] and currency is not None and currency_of(amount.unit) is None:
        b = _measure(_expression(unit).replace(currency, "1", 1))
    if a is None or b is None or a[1] != b[1]:
        return None
    return amount.value * a[0] / b[0]


def to_unit(amount: Amount, unit: str | None, doing: str) -> Decimal:
    """:func:`converted`, refused where the units measure different things."""
    value = converted(amount, unit)
    if value is None:
        raise Refused(f"cannot {doing} {amount.unit} and {unit}: they measure different things")
    return value


def joined(value: Decimal, a: str | None, b: str | None, op: str) -> Amount:
    """A product (``op`` ``*``) or a ratio (``/``) of two amounts in units ``a`` and
    ``b``: in their joined unit, or a plain number where the units cancel (a monthly
    rent times a number of months is an amount of money; hours over hours a number)."""
    if a in _FRACTIONS or b in _FRACTIONS:  # a share of an amount: that amount's unit
        factor = _FRACTIONS.get(a or "", Decimal(1)) * _FRACTIONS.get(b or "", Decimal(1))
        if op == "/" and b in _FRACTIONS:
            factor = _FRACTIONS.get(a or "", Decimal(1)) / _FRACTIONS[b or ""]
        a, b = (None if a in _FRACTIONS else a), (None if b in _FRACTIONS else b)
        value *= factor
    if b is None:
        return Amount(value=value, unit=a)
    if a is None:
        return Amount(value=value, unit=b if op == "*" else f"1 / ({_expression(b)})")
    unit = f"({_expression(a)}) {op} ({_expression(b)})"
    found = measure(unit)
    if found is not None and not found.dimension:
        return Amount(value=value * found.factor)
    return Amount(value=value, unit=unit)


# --- comparing and showing --------------------------------------------------------


def holds(value: Amount | Moment, stated: Stated) -> bool:
    """Whether ``value`` is the stated result: an amount rounded to the decimals the
    result is written with (money to the cent at least) in the result's unit, a
    moment to the precision the result is written with."""
    if isinstance(value, Moment):
        return stated.moment is not None and _same_moment(value, stated.moment)
    if stated.moment is not None:
        return False
    money = currency_of(stated.unit) is not None or currency_of(value.unit) is not None
    number = converted(value, stated.unit)
    if number is None:
        return False
    for reading, decimals in stated.amounts:
        places = max(decimals, 2) if money else decimals
        if number.quantize(Decimal(1).scaleb(-places), ROUND_HALF_UP) == reading:
            return True
    return False


def _same_moment(value: Moment, stated: Moment) -> bool:
    if stated.kind == "date":
        return value.kind != "time" and value.at.date() == stated.at.date()
    if stated.kind == "time" or value.kind == "time":
        return (value.at.hour, value.at.minute) == (stated.at.hour, stated.at.minute)
    return value.kind == "datetime" and value.at.replace(second=0) == stated.at.replace(second=0)


def shown(value: Amount | Moment, stated: Stated | None = None) -> str:
    """``value`` as a person reads it: in the stated result's unit, precision and
    written form where there is one (``37 minutes`` for a result ``47 minutes``)."""
    if isinstance(value, Moment):
        return _shown_moment(value)
    number = converted(value, stated.unit) if stated else value.value
    like = (
        min(stated.amounts, key=lambda r: abs(r[0] - number) if number is not None else 0)
        if stated and stated.amounts
        else None
    )
    if number is None or like is None or stated is None:
        return _with_unit(_number(value.value, None), value.unit)
    money = currency_of(stated.unit) is not None or currency_of(value.unit) is not None
    places = max(like[1], 2) if money else like[1]
    written = _number(number.quantize(Decimal(1).scaleb(-places), ROUND_HALF_UP), stated.text)
    numbers = find_numbers(stated.text)
    if len(numbers) == 1:
        return stated.text[: numbers[0].start] + written + stated.text[numbers[0].end :]
    return _with_unit(written, stated.unit or value.unit)


def _number(value: Decimal, like: str | None) -> str:
    if value == value.to_integral_value() and _decimals(value) == 0:
        value = value.quantize(Decimal(1))
    grouped = like is not None and bool(_GROUPED.search(like))
    return format(value, ",f" if grouped else "f")


def _with_unit(number: str, unit: str | None) -> str:
    if unit is None:
        return number
    if unit == "percent":
        return f"{number}%"
    if _PLAIN_UNIT.fullmatch(unit):
        return f"{number} {unit.replace('_', ' ')}{'' if number == '1' else 's'}"
    return f"{number} {unit}"


def _shown_moment(value: Moment) -> str:
    zone = " UTC" if value.zoned else ""
    if value.kind == "date":
        return value.at.date().isoformat()
    if value.kind == "time":
        return value.at.strftime("%H:%M") + zone
    return value.at.strftime("%Y-%m-%d %H:%M") + zone


def states(text: str, stated: Stated) -> bool:
    """Whether ``text`` writes the stated result's value, exactly, in any form the
    grounding reads (``1 hour 15 minutes`` writes ``75 minutes``, ``€42.40`` writes
    ``EUR 42.4``)."""
    dates = find_dates(text)
    if stated.moment is not None:
        moments = [m for m in (_moment_or_none(d) for d in dates) if m is not None]
        return any(_same_moment(m, stated.moment) for m in moments)
    spans = [(d.start, d.end) for d in dates]
    for quantity in find_quantities(text, skip=spans):
        if quantity.approximation is not None:
            continue
        for value in quantity.values:
            number = converted(Amount(value=value, unit=quantity.unit), stated.unit)
            if number is not None and any(_close(number, r) for r, _ in stated.amounts):
                return True
    return False


def _close(x: Decimal, y: Decimal) -> bool:
    """Equal up to the rounding of a unit's factor (1/3600 of an hour)."""
    return abs(x - y) <= max(abs(x), abs(y)) * Decimal("1e-20")


def _moment_or_none(mention: DateMention) -> Moment | None:
    try:
        return moment_of(mention)
    except Refused:
        return None


def amounts_of(values: Sequence[Value], where: str) -> list[Amount]:
    """The amounts of ``values``, each array's items read one by one."""
    out: list[Amount] = []
    for k, value in enumerate(values):
        if isinstance(value, Items):
            out += [
                read_item(item, value.key, f"{where}: item {i}")
                for i, item in enumerate(value.items)
            ]
        elif isinstance(value, Amount):
            out.append(value)
        else:
            raise Refused(f"{where}: argument {k + 1} is {kind_of(value)}, not an amount")
    return out
