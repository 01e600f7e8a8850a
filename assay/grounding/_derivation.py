"""Derivations: a value a proposition computes from its cited values, stated as a
short expression that code evaluates.

A small cross-encoder cannot do arithmetic: "the outage lasted 37 minutes" is as
likely to it as "47 minutes" beside ``06:12`` and ``06:49``. An agent that states
``{"expr": "elapsed($0, $1)", "result": "37 minutes"}`` beside its citations makes
the computation checkable exactly. ``$0``, ``$1``, … are the proposition's
citations (``cites``) by index; what each names is read with the grounding readers
(a JSON number in the unit its key names, a date, a time, an amount in any written
form, a cited array).

The language is Python's expression syntax, parsed with :mod:`ast` and restricted
to a whitelist: numbers, ``$N``, ``+ - * /``, unary minus, and calls of the
functions in :data:`DERIVATION_FUNCTIONS` by name; text literals only as a unit (``to``) or
as a value in a ``count`` condition, where names are the fields of each counted
record. Nothing is ever passed to ``eval``; an expression is at most
:data:`MAX_DERIVATION_CHARS` characters and :data:`MAX_DERIVATION_NODES` syntax nodes, and
its cost is linear in its size and the arrays it counts.

:func:`derive` evaluates an expression against the cited values and compares it
with the stated result by value: ``129.0`` is ``129``, ``37 minutes`` is
``0.6167 h`` (the value rounded to the result's written decimals), money to the
cent. A derivation that cannot be evaluated is refused with a reason
(:class:`Derived` or ``str``).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal, DecimalException, localcontext
from typing import Any, cast

from assay.grounding._derived_values import (
    Amount,
    CitedValue,
    Items,
    Moment,
    Refused,
    Stated,
    Value,
    amounts_of,
    holds,
    joined,
    kind_of,
    read_cited,
    read_result,
    shown,
    states,
    to_unit,
    unit_named,
)

__all__ = [
    "DERIVATION_FUNCTIONS",
    "MAX_DERIVATION_CHARS",
    "MAX_DERIVATION_NODES",
    "CitedValue",
    "Derived",
    "derivation_cites",
    "derive",
    "states_result",
]

#: Longest expression accepted, in characters.
MAX_DERIVATION_CHARS = 400
#: Most syntax nodes an expression may parse to (``sum($0, $1)`` is 7).
MAX_DERIVATION_NODES = 120
#: The functions of the language, each with what it takes.
DERIVATION_FUNCTIONS: dict[str, str] = {
    "sum": "amounts or cited arrays of numbers: their sum",
    "min": "amounts (or arrays of numbers), or moments: the least",
    "max": "amounts (or arrays of numbers), or moments: the greatest",
    "count": "a cited array, and optionally a condition on its records' fields",
    "elapsed": "two dates, date-times or times of day: the time from the first to the second",
    "days": "a number: that many days (also weeks, hours, minutes)",
    "weeks": "a number: that many weeks",
    "hours": "a number: that many hours",
    "minutes": "a number: that many minutes",
    "to": 'an amount and a unit ("h", "min", "kWh", "%", "bp"): the amount in that unit',
    "percent": "two amounts a, b: a as a percentage of b",
    "bp": "two amounts a, b: a as basis points of b",
}
_DURATIONS = {"days": "day", "weeks": "week", "hours": "hour", "minutes": "minute"}
#: ``$N`` outside a text literal (a literal is matched first, and kept).
_CITE = re.compile(r"(\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*')|\$(\d{1,4})")
_CITE_NAME = re.compile(r"_cite(\d{1,4})")
_COMPARISONS = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE)
_OPERATIONS: dict[type[ast.operator], str] = {
    ast.Add: "sum",
    ast.Sub: "difference",
    ast.Mult: "product",
    ast.Div: "ratio",
}


@dataclass(frozen=True, kw_only=True)
class Derived:
    """A derivation evaluated: ``value`` is what the expression gives, written as the
    result is (``shown``); ``holds`` whether it is the stated ``result``;
    ``operation`` its outermost step (``elapsed``, ``sum``, ``difference``, ...);
    ``cites`` the citations it reads, by index; ``statement`` what it computed, for
    people ("the time between 06:12 UTC and 06:49 UTC is 37 minutes")."""

    expr: str
    result: str
    value: str
    holds: bool
    operation: str
    unit: str | None
    cites: tuple[int, ...]
    statement: str
    stated: Stated


def derive(expr: str, result: str, cited: Sequence[CitedValue | None]) -> Derived | str:
    """``expr`` evaluated over ``cited`` (the proposition's citations in order; ``None``
    for one that names nothing) and compared with ``result``; or why it cannot be."""
    try:
        tree, source = _parse(expr)
        stated = read_result(result)
        evaluator = _Evaluator(source, cited)
        with localcontext() as context:
            context.prec = 34
            value = evaluator.value(tree)
    except Refused as refused:
        return str(refused)
    except DecimalException:
        return "the expression divides by zero or overflows"
    if not isinstance(value, Amount | Moment):
        return f"the expression gives {kind_of(value)}, not a value"
    if (isinstance(value, Moment)) != (stated.moment is not None):
        return (
            f"the result {result!r} is {'a date or time' if stated.moment else 'an amount'}; "
            f"the expression gives {kind_of(value)}"
        )
    written = shown(value, stated)
    return Derived(
        expr=expr,
        result=result,
        value=written,
        holds=holds(value, stated),
        operation=_operation(tree),
        unit=value.unit if isinstance(value, Amount) else None,
        cites=tuple(sorted(evaluator.read)),
        statement=_statement(tree, evaluator, written),
        stated=stated,
    )


def derivation_cites(expr: str) -> tuple[int, ...]:
    """The citation indexes ``expr`` names (``$0``, ``$3``), in order, each once."""
    found = [int(m.group(2)) for m in _CITE.finditer(expr) if m.group(2) is not None]
    return tuple(dict.fromkeys(found))


def states_result(text: str, derived: Derived) -> bool:
    """Whether ``text`` (a proposition, or one value of it) writes the derivation's
    stated result, exactly, in any written form the grounding reads."""
    return states(text, derived.stated)


# --- parsing ----------------------------------------------------------------------


def _parse(expr: str) -> tuple[ast.expr, str]:
    if len(expr) > MAX_DERIVATION_CHARS:
        raise Refused(
            f"the expression is {len(expr)} characters long; at most {MAX_DERIVATION_CHARS}"
        )
    bare = _CITE.sub(lambda m: m.group(1) or "", expr)
    if "_cite" in bare:
        raise Refused("'_cite' is not a name of the language; a citation is written $0, $1, …")
    source = _CITE.sub(lambda m: m.group(1) or f"_cite{m.group(2)}", expr).strip()
    try:
        tree = ast.parse(source, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        reason = exc.msg if isinstance(exc, SyntaxError) else str(exc) or type(exc).__name__
        raise Refused(f"the expression does not parse: {reason}") from None
    nodes = sum(1 for _ in ast.walk(tree))
    if nodes > MAX_DERIVATION_NODES:
        raise Refused(f"the expression has {nodes} syntax nodes; at most {MAX_DERIVATION_NODES}")
    _check(tree.body, source, condition=False)
    return tree.body, source


def _check(node: ast.AST, source: str, *, condition: bool) -> None:
    """Refuse, before anything is read, every node the language does not have."""
    if isinstance(node, ast.Call):
        _check_call(node, source)
    elif isinstance(node, ast.BinOp) and type(node.op) in _OPERATIONS and not condition:
        _check(node.left, source, condition=False)
        _check(node.right, source, condition=False)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        _check(node.operand, source, condition=condition)
    elif condition:
        _check_condition(node, source)
    elif isinstance(node, ast.Name):
        if not _CITE_NAME.fullmatch(node.id):
            raise Refused(f"{node.id!r} is not a citation ($0, $1, …) or a call of a function")
    elif not (isinstance(node, ast.Constant) and _number_literal(node.value)):
        raise Refused(f"{_piece(node, source)!r} is not part of the language ({_what(node)})")


def _check_condition(node: ast.AST, source: str) -> None:
    """A ``count`` condition: comparisons of a field with a literal, joined by
    ``and``, ``or`` and ``not``."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        _check_condition(node.operand, source)
    elif isinstance(node, ast.BoolOp):
        for value in node.values:
            _check_condition(value, source)
    elif isinstance(node, ast.Compare):
        _check_comparison(node, source)
    else:
        raise Refused(
            f"{_piece(node, source)!r}: a condition compares a field with a number or a text"
        )


def _check_call(node: ast.Call, source: str) -> None:
    name = node.func.id if isinstance(node.func, ast.Name) else None
    if name not in DERIVATION_FUNCTIONS:
        shown_name = name or _piece(node.func, source)
        known = ", ".join(DERIVATION_FUNCTIONS)
        raise Refused(f"{shown_name!r} is not a function of the language (it has {known})")
    if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
        raise Refused(f"{name}() takes plain arguments, not keywords or *")
    args = node.args
    for k, arg in enumerate(args):
        if k == 1 and name in ("to", "count"):
            continue
        _check(arg, source, condition=False)
    if name == "to" and (len(args) != 2 or not _text_literal(args[1])):
        raise Refused('to() takes an amount and a unit in quotes: to($0, "h")')
    if name == "count" and not 1 <= len(args) <= 2:
        raise Refused("count() takes a cited array and, optionally, a condition")
    if name == "count" and len(args) == 2:
        _check(args[1], source, condition=True)


def _check_comparison(node: ast.Compare, source: str) -> None:
    if len(node.ops) != 1 or not isinstance(node.ops[0], _COMPARISONS):
        raise Refused(f"{_piece(node, source)!r}: a condition compares one field with one value")
    left, right = node.left, node.comparators[0]
    field, value = (left, right) if isinstance(left, ast.Name) else (right, left)
    if not isinstance(field, ast.Name) or _CITE_NAME.fullmatch(field.id):
        raise Refused(f"{_piece(node, source)!r}: a condition names a field of the records")
    if not isinstance(value, ast.Constant) or not (
        _number_literal(value.value) or isinstance(value.value, str | bool)
    ):
        raise Refused(f"{_piece(node, source)!r}: a field is compared with a number or a text")


def _number_literal(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _text_literal(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _piece(node: ast.AST, source: str) -> str:
    text = ast.get_source_segment(source, node) or type(node).__name__
    return _CITE_NAME.sub(lambda m: f"${m.group(1)}", text)[:60]


def _what(node: ast.AST) -> str:
    names = {
        ast.Attribute: "attribute access",
        ast.Subscript: "indexing",
        ast.Lambda: "a function definition",
        ast.Compare: "a comparison outside count()",
        ast.BinOp: "that operator",
        ast.Constant: "a literal outside to() and count()",
    }
    return next((what for kind, what in names.items() if isinstance(node, kind)), "not allowed")


# --- evaluating -------------------------------------------------------------------


class _Evaluator:
    """One evaluation: the cited values it read, each read once."""

    def __init__(self, source: str, cited: Sequence[CitedValue | None]) -> None:
        self.source = source
        self.cited = cited
        self.read: dict[int, Value] = {}

    def value(self, node: ast.expr) -> Value:
        if isinstance(node, ast.Name):
            return self._cite(int(node.id.removeprefix("_cite")))
        if isinstance(node, ast.Constant):
            literal = ast.get_source_segment(self.source, node) or str(node.value)
            return Amount(value=Decimal(literal))
        if isinstance(node, ast.UnaryOp):
            return _negated(self.value(node.operand), isinstance(node.op, ast.USub))
        if isinstance(node, ast.BinOp):
            return _binary(type(node.op), self.value(node.left), self.value(node.right))
        call = cast(ast.Call, node)
        name = cast(ast.Name, call.func).id
        if name == "count":
            return self._count(call)
        if name == "to":
            unit = unit_named(str(cast(ast.Constant, call.args[1]).value))
            amount = _amount(self.value(call.args[0]), "to()")
            return Amount(value=to_unit(amount, unit, "convert between"), unit=unit)
        return _CALLS[name](name, [self.value(a) for a in call.args])

    def _cite(self, index: int) -> Value:
        if index in self.read:
            return self.read[index]
        if index >= len(self.cited):
            raise Refused(f"${index} names no citation (the proposition has {len(self.cited)})")
        cited = self.cited[index]
        if cited is None:
            raise Refused(f"${index} names nothing in its entry")
        self.read[index] = read_cited(index, cited)
        return self.read[index]

    def _count(self, call: ast.Call) -> Amount:
        array = self.value(call.args[0])
        if not isinstance(array, Items):
            raise Refused(f"count() takes a cited array (a pointer to one), not {kind_of(array)}")
        if len(call.args) == 1:
            return Amount(value=Decimal(len(array.items)))
        test = call.args[1]
        counted = 0
        for item in array.items:
            if not isinstance(item, dict):
                raise Refused("count() with a condition takes an array of records")
            counted += _matches(test, cast(dict[str, Any], item))
        return Amount(value=Decimal(counted))


def _cite_index(node: ast.expr) -> int | None:
    if isinstance(node, ast.Name) and (found := _CITE_NAME.fullmatch(node.id)):
        return int(found.group(1))
    return None


def _amount(value: Value, where: str) -> Amount:
    if not isinstance(value, Amount):
        raise Refused(f"{where} takes an amount, not {kind_of(value)}")
    return value


def _negated(value: Value, negate: bool) -> Value:
    amount = _amount(value, "a sign")
    return Amount(value=-amount.value if negate else amount.value, unit=amount.unit)


def _binary(op: type[ast.operator], a: Value, b: Value) -> Value:
    if op in (ast.Add, ast.Sub) and (isinstance(a, Moment) or isinstance(b, Moment)):
        return _moment_arithmetic(op is ast.Add, a, b)
    x, y = _amount(a, f"{_OPERATIONS[op]}"), _amount(b, f"{_OPERATIONS[op]}")
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
        total = _binary(ast.Add, total, amount)
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
    amount = _amount(values[0], f"{name}()")
    if amount.unit is not None:
        raise Refused(f"{name}() takes a plain number, not {amount.unit}")
    return Amount(value=amount.value, unit=_DURATIONS[name])


def _share(name: str, values: list[Value]) -> Value:
    if len(values) != 2:
        raise Refused(f"{name}() takes two amounts: a part and its whole")
    part, whole = _amount(values[0], f"{name}()"), _amount(values[1], f"{name}()")
    if whole.value == 0:
        raise Refused(f"{name}(): the whole is zero")
    scale = Decimal(100) if name == "percent" else Decimal(10_000)
    unit = "percent" if name == "percent" else "basis_point"
    share = to_unit(part, whole.unit, "compare")
    return Amount(value=share / whole.value * scale, unit=unit)


_CALLS: dict[str, Callable[[str, list[Value]], Value]] = {
    "sum": _sum,
    "min": _extreme,
    "max": _extreme,
    "elapsed": _elapsed,
    "percent": _share,
    "bp": _share,
    **dict.fromkeys(_DURATIONS, _duration),
}


def _matches(test: ast.expr, item: dict[str, Any]) -> bool:
    """Whether one record meets a ``count`` condition (a field it lacks meets none)."""
    if isinstance(test, ast.BoolOp):
        results = (_matches(v, item) for v in test.values)
        return all(results) if isinstance(test.op, ast.And) else any(results)
    if isinstance(test, ast.UnaryOp):
        return not _matches(test.operand, item)
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


# --- describing -------------------------------------------------------------------


def _operation(node: ast.expr) -> str:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return node.func.id
    if isinstance(node, ast.BinOp):
        return _OPERATIONS.get(type(node.op), "expression")
    return "value"


def _statement(node: ast.expr, evaluator: _Evaluator, written: str) -> str:
    """What the derivation computed, in words, with the values it read."""

    def named(arg: ast.expr) -> str:
        index = _cite_index(arg)
        value = evaluator.read.get(index) if index is not None else None
        return shown(value) if isinstance(value, Amount | Moment) else _piece(arg, evaluator.source)

    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        args = node.args
        if node.func.id == "elapsed" and len(args) == 2:
            return f"the time between {named(args[0])} and {named(args[1])} is {written}"
        if node.func.id == "sum":
            return f"the sum of {', '.join(named(a) for a in args)} is {written}"
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub):
        return f"{named(node.left)} minus {named(node.right)} is {written}"
    values = ", ".join(
        f"${k} = {shown(v) if isinstance(v, Amount | Moment) else kind_of(v)}"
        for k, v in sorted(evaluator.read.items())
    )
    expr = _piece(node, evaluator.source)
    return f"{expr} is {written}" + (f" ({values})" if values else "")
