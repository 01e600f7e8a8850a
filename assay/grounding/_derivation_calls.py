"""The derivation language's operations and functions, each over the values a
derivation computes with (:mod:`assay.grounding._derived_values`); what the
language is, and how it is parsed, is :mod:`assay.grounding._derivation`."""

from __future__ import annotations

import ast
from collections.abc import Callable
from datetime import timedelta
from decimal import Decimal
from typing import Any, cast

from assay.grounding._derived_values import (
    Amount,
    Moment,
    Refused,
    Value,
    amounts_of,
    converted,
    joined,
    kind_of,
    to_unit,
)

__all__ = ["CALLS", "DURATIONS", "OPERATIONS", "as_amount", "binary", "matches", "negated"]

DURATIONS = {"days": "day", "weeks": "week", "hours": "hour", "minutes": "minute"}
OPERATIONS: dict[type[ast.operator], str] = {
    ast.Add: "sum",
    ast.Sub: "difference",
    ast.Mult: "product",
    ast.Div: "ratio",
}


def as_amount(value: Value, where: str) -> Amount:
    if not isinstance(value, Amount):
        raise Refused(f"{where} takes an amount, not {kind_of(value)}")
    return value


def negated(value: Value, negate: bool) -> Value:
    amount = as_amount(value, "a sign")
    return Amount(value=-amount.value if negate else amount.value, unit=amount.unit)


def binary(op: type[ast.operator], a: Value, b: Value) -> Value:
    if op in (ast.Add, ast.Sub) and (isinstance(a, Moment) or isinstance(b, Moment)):
        return _moment_arithmetic(op is ast.Add, a, b)
    x, y = as_amount(a, f"{OPERATIONS[op]}"), as_amount(b, f"{OPERATIONS[op]}")
    if op in (ast.Add, ast.Sub):
        unit = x.unit or y.unit
        other = to_unit(y, unit, "add or subtract")
        own = to_unit(x, unit, "add or subtract")
        return Amount(value=own + other if op is ast.Add else own - other, unit=unit)
    if op is ast.Mult:
        return joined(x.value * y.value, x.unit, y.unit, "*")
    if y.value == 0:
        raise Refused("the expression divides by zero")
    return joined(x.value / y.value, x.unit, y.unit, "/")  # like over like: a number


def _moment_arithmetic(add: bool, a: Value, b: Value) -> Value:
    if isinstance(a, Moment) and isinstance(b, Moment) and not add:
        return _elapsed("difference", [b, a])
    moment, span = (a, b) if isinstance(a, Moment) else (b, a)
    if not isinstance(moment, Moment) or not isinstance(span, Amount) or (not add and moment is b):
        raise Refused("a date takes a duration added or subtracted (days(14)), not a date")
    if span.unit is None:
        raise Refused("a number added to a date needs a unit: days(14), hours(2)")
    seconds = to_unit(span, "second", "add")
    delta = timedelta(seconds=float(seconds))
    at = moment.at + delta if add else moment.at - delta
    return Moment(kind=moment.kind, at=at, zoned=moment.zoned)


def _sum(name: str, values: list[Value]) -> Value:
    amounts = amounts_of(values, f"{name}()")
    if not amounts:
        raise Refused(f"{name}() has nothing to add")
    total: Value = amounts[0]
    for amount in amounts[1:]:
        total = binary(ast.Add, total, amount)
    return total


def _extreme(name: str, values: list[Value]) -> Value:
    if values and all(isinstance(v, Moment) for v in values):
        moments = cast(list[Moment], values)
        if len({(m.kind, m.zoned) for m in moments}) > 1:
            raise Refused(f"{name}() compares moments of one kind (dates, or zoned times)")
        pick = min if name == "min" else max
        return pick(moments, key=lambda m: m.at)
    amounts = amounts_of(values, f"{name}()")
    if not amounts:
        raise Refused(f"{name}() has nothing to compare")
    unit = next((a.unit for a in amounts if a.unit), None)
    keyed = [(to_unit(a, unit, "compare"), a) for a in amounts]
    chosen = (min if name == "min" else max)(keyed, key=lambda pair: pair[0])
    return chosen[1]


def _elapsed(name: str, values: list[Value]) -> Value:
    if len(values) != 2 or not all(isinstance(v, Moment) for v in values):
        kinds = ", ".join(kind_of(v) for v in values)
        raise Refused(f"{name}() takes two dates, date-times or times of day, not {kinds}")
    a, b = cast(list[Moment], values)
    if a.kind != b.kind:
        raise Refused(f"{name}() between {kind_of(a)} and {kind_of(b)}: cite two of one kind")
    if a.zoned != b.zoned and a.kind != "date":
        raise Refused(f"{name}(): one time has a zone and the other none")
    if a.kind == "date":
        return Amount(value=Decimal((b.at.date() - a.at.date()).days), unit="day")
    seconds = Decimal(int((b.at - a.at).total_seconds()))
    if a.kind == "time" and seconds < 0:
        seconds += 24 * 3600  # two times of day: to the next such time, across midnight
    return Amount(value=seconds, unit="second")


def _duration(name: str, values: list[Value]) -> Value:
    if len(values) != 1:
        raise Refused(f"{name}() takes one number")
    amount = as_amount(values[0], f"{name}()")
    unit = DURATIONS[name]
    if amount.unit is None:
        return Amount(value=amount.value, unit=unit)
    # A value that is already a duration (``transit_days: 9``, ``"90 minutes"``) is
    # converted; any other unit is no duration.
    if converted(amount, unit) is None:
        raise Refused(f"{name}() takes a plain number or a duration, not {amount.unit}")
    return Amount(value=to_unit(amount, unit, "convert"), unit=unit)


def _share(name: str, values: list[Value]) -> Value:
    if len(values) != 2:
        raise Refused(f"{name}() takes two amounts: a part and its whole")
    part, whole = as_amount(values[0], f"{name}()"), as_amount(values[1], f"{name}()")
    if whole.value == 0:
        raise Refused(f"{name}(): the whole is zero")
    scale = Decimal(100) if name == "percent" else Decimal(10_000)
    unit = "percent" if name == "percent" else "basis_point"
    share = to_unit(part, whole.unit, "compare")
    return Amount(value=share / whole.value * scale, unit=unit)


CALLS: dict[str, Callable[[str, list[Value]], Value]] = {
    "sum": _sum,
    "min": _extreme,
    "max": _extreme,
    "elapsed": _elapsed,
    "percent": _share,
    "bp": _share,
    **dict.fromkeys(DURATIONS, _duration),
}


def matches(test: ast.expr, item: dict[str, Any]) -> bool:
    """Whether one record meets a ``count`` condition (a field it lacks meets none)."""
    if isinstance(test, ast.BoolOp):
        results = (matches(v, item) for v in test.values)
        return all(results) if isinstance(test.op, ast.And) else any(results)
    if isinstance(test, ast.UnaryOp):
        return not matches(test.operand, item)
    compare = cast(ast.Compare, test)
    left, right = compare.left, compare.comparators[0]
    flipped = not isinstance(left, ast.Name)
    field, literal = (right, left) if flipped else (left, right)
    name, wanted = cast(ast.Name, field).id, cast(ast.Constant, literal).value
    if name not in item:
        return False
    op = type(compare.ops[0])
    have = item[name]
    a, b = (wanted, have) if flipped else (have, wanted)
    return _compare(op, a, b)


def _compare(op: type[ast.cmpop], a: Any, b: Any) -> bool:
    numbers = all(isinstance(v, int | float | Decimal) and not isinstance(v, bool) for v in (a, b))
    if numbers:
        a, b = Decimal(str(a)), Decimal(str(b))
    elif op not in (ast.Eq, ast.NotEq) or type(a) is not type(b):
        return op is ast.NotEq
    checks: dict[type[ast.cmpop], Callable[[Any, Any], bool]] = {
        ast.Eq: lambda x, y: x == y,
        ast.NotEq: lambda x, y: x != y,
        ast.Lt: lambda x, y: x < y,
        ast.LtE: lambda x, y: x <= y,
        ast.Gt: lambda x, y: x > y,
        ast.GtE: lambda x, y: x >= y,
    }
    return checks[op](a, b)
