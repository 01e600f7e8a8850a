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
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal, DecimalException, localcontext
from typing import Any, cast

from assay.grounding._derivation_calls import (
    CALLS,
    OPERATIONS,
    as_amount,
    binary,
    matches,
    negated,
)
from assay.grounding._derived_values import (
    Amount,
    CitedValue,
    Items,
    Moment,
    Refused,
    Stated,
    Value,
    holds,
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
#: ``$N`` outside a text literal (a literal is matched first, and kept).
_CITE = re.compile(r"(\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*')|\$(\d{1,4})")
_CITE_NAME = re.compile(r"_cite(\d{1,4})")
_COMPARISONS = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE)


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
    elif isinstance(node, ast.BinOp) and type(node.op) in OPERATIONS and not condition:
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
            return negated(self.value(node.operand), isinstance(node.op, ast.USub))
        if isinstance(node, ast.BinOp):
            return binary(type(node.op), self.value(node.left), self.value(node.right))
        call = cast(ast.Call, node)
        name = cast(ast.Name, call.func).id
        if name == "count":
            return self._count(call)
        if name == "to":
            unit = unit_named(str(cast(ast.Constant, call.args[1]).value))
            amount = as_amount(self.value(call.args[0]), "to()")
            return Amount(value=to_unit(amount, unit, "convert between"), unit=unit)
        return CALLS[name](name, [self.value(a) for a in call.args])

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
            counted += matches(test, cast(dict[str, Any], item))
        return Amount(value=Decimal(counted))


def _cite_index(node: ast.expr) -> int | None:
    if isinstance(node, ast.Name) and (found := _CITE_NAME.fullmatch(node.id)):
        return int(found.group(1))
    return None


# --- describing -------------------------------------------------------------------


def _operation(node: ast.expr) -> str:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return node.func.id
    if isinstance(node, ast.BinOp):
        return OPERATIONS.get(type(node.op), "expression")
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
