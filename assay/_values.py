"""Whether an action's argument values are established by text: numbers with units.

An irreversible call is only as trustworthy as its arguments. Identifiers in string
arguments are checked against evidence by the gate; this module does the same for
the values that are not strings: a number is *established* by a text that writes
the same number (``875.0`` by ``EUR 875.00``, ``1917.5`` by ``1,917.50``) with the
same unit when the tool's schema declares one (``"x-assay-unit": "EUR"``), and a
boolean or number is also established by a JSON text that holds the same key with
the same value (a tool output ``{"approved": true}``).

Numbers and units are read by :mod:`assay.grounding`: ``1,917.50`` and ``1.917,50``,
``EUR 610/h`` and ``EUR 610 per hour``, ``2.0 h`` and ``120 minutes`` are the same;
``$`` is not USD; a declared unit that is a thing counted (``units``, ``widget``)
needs that word after the number.

A tool author may mark an argument as the agent's own choice, not a fact, with
``"x-assay-grounding": "choice"`` in its property schema (a priority, a dry-run
switch); such a value needs no evidence. The agent cannot mark anything: the
annotation is part of the registered, content-hashed tool spec.

Scanning is linear (see :mod:`assay.grounding`).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from decimal import Decimal, InvalidOperation
from typing import Any, cast

from assay.grounding import Quantity, find_dates, find_quantities, supports

__all__ = [
    "CHOICE",
    "GROUNDING_KEYWORD",
    "UNIT_KEYWORD",
    "Mention",
    "leaf_schemas",
    "mentions",
    "normal_unit",
    "ungrounded_values",
]

#: Schema keyword naming the unit of a numeric argument (``EUR``, ``h``, ``%``).
UNIT_KEYWORD = "x-assay-unit"
#: Schema keyword marking how an argument is grounded; ``choice`` exempts it.
GROUNDING_KEYWORD = "x-assay-grounding"
CHOICE = "choice"

_MAX_SCAN_CHARS = 2_000_000  # evidence beyond this is not scanned for numbers
_GROUPING_SPACE = re.compile(r"(?<=\d)[\u00a0\u202f](?=\d)")
#: Words for "a thing counted" that name no particular thing.
_GENERIC_COUNTS = frozenset({"unit", "units", "item", "items", "piece", "pieces", "pcs"})


@dataclass(frozen=True, kw_only=True)
class Mention:
    """A number written in a text: every value it can be read as, and its unit."""

    values: frozenset[Decimal]
    unit: str | None
    text: str
    #: The word written right after the number, lower-cased (``widgets`` in
    #: ``12 widgets``): what a unit this module does not know is compared with.
    after: str | None = None
    quantity: Quantity | None = None


def normal_unit(unit: str | None) -> str | None:
    """One spelling per unit, as :mod:`assay.grounding` names it: ``€`` and ``EUR``
    alike, ``hours`` and ``h`` alike (``hour``), ``EUR / hour`` for a rate,
    ``percent`` for ``%``; ``None`` for a word that is not a unit."""
    declared = _declared(unit) if unit is not None else None
    return declared.unit if declared is not None else None


def _declared(unit: str) -> Quantity | None:
    """A declared unit read as the quantity ``1 <unit>``."""
    found = find_quantities("1 " + unit.strip())
    return found[0] if len(found) == 1 and found[0].kind != "number" else None


def mentions(text: str) -> list[Mention]:
    """Every number in ``text`` (NFKC-normalised), with the unit written next to it."""
    # A no-break space between digits groups them (1 000); NFKC would make it a space.
    text = _GROUPING_SPACE.sub("'", text[:_MAX_SCAN_CHARS])
    text = unicodedata.normalize("NFKC", text)
    dates = [(d.start, d.end) for d in find_dates(text)]
    return [
        Mention(
            values=q.values,
            unit=q.unit,
            text=q.text,
            after=q.noun or (q.word.lower() if q.word else None),
            quantity=q,
        )
        for q in find_quantities(text, skip=dates)
    ]


def as_decimal(value: object) -> Decimal | None:
    """A JSON number as a Decimal (``875.0`` → 875.0, exactly as written by ``repr``)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
    except InvalidOperation:
        return None
    return number if number.is_finite() else None


# --- arguments ------------------------------------------------------------------------


def leaf_schemas(
    value: Any, schema: Mapping[str, Any] | None, pointer: str = ""
) -> Iterator[tuple[str, Any, Mapping[str, Any]]]:
    """Each scalar leaf of ``value`` with its JSON pointer and the property schema
    that describes it (``{}`` where the schema says nothing). Iterative, so a
    deeply nested value cannot exhaust the stack."""
    stack: list[tuple[str, Any, Mapping[str, Any]]] = [(pointer, value, schema or {})]
    while stack:
        where, node, node_schema = stack.pop()
        if isinstance(node, Mapping):
            props = node_schema.get("properties")
            props = cast(Mapping[str, Any], props) if isinstance(props, Mapping) else {}
            for key, item in cast(Mapping[str, Any], node).items():
                sub = props.get(key)
                escaped = str(key).replace("~", "~0").replace("/", "~1")
                stack.append((f"{where}/{escaped}", item, sub if isinstance(sub, Mapping) else {}))
        elif isinstance(node, list):
            items = node_schema.get("items")
            sub = cast(Mapping[str, Any], items) if isinstance(items, Mapping) else {}
            for index, item in enumerate(cast(list[Any], node)):
                stack.append((f"{where}/{index}", item, sub))
        else:
            yield where, node, node_schema


def ungrounded_values(
    args: Mapping[str, Any],
    schema: Mapping[str, Any] | None,
    texts: Iterable[str],
    *,
    only: Iterable[str] | None = None,
) -> list[tuple[str, str]]:
    """``(pointer, why)`` for each number or boolean in ``args`` that ``texts`` do
    not establish (strings are the gate's identifier check's business). ``only``
    limits the check to these JSON pointers (a policy rule's conditions)."""
    wanted = None if only is None else set(only)
    corpus = list(texts)
    written: list[Mention] | None = None
    keyed: set[tuple[str, str]] | None = None
    problems: list[tuple[str, str]] = []
    for pointer, value, leaf_schema in leaf_schemas(args, schema):
        if wanted is not None and pointer not in wanted:
            continue
        if leaf_schema.get(GROUNDING_KEYWORD) == CHOICE or value is None:
            continue
        if isinstance(value, str):
            continue
        if keyed is None:
            keyed = _json_leaves(corpus)
        key = pointer.rsplit("/", 1)[-1]
        if (key, json.dumps(value)) in keyed:
            continue
        if isinstance(value, bool):
            problems.append((pointer, f"{json.dumps(value)} is not stated by any cited evidence"))
            continue
        if written is None:
            written = [m for text in corpus for m in mentions(text)]
        problem = _number_problem(value, leaf_schema, written)
        if problem is not None:
            problems.append((pointer, problem))
    return sorted(problems)


def _number_problem(value: Any, schema: Mapping[str, Any], written: list[Mention]) -> str | None:
    number = as_decimal(value)
    if number is None:
        return f"{value!r} is not a finite number"
    declared = schema.get(UNIT_KEYWORD)
    same_value = [m for m in written if number in m.values]
    if not isinstance(declared, str):
        return None if same_value else f"{value!r} occurs in none of its claims or evidence"
    if any(_states(m, number, declared) for m in written):
        return None
    if same_value:
        units = sorted({m.unit or m.after or "no unit" for m in same_value})
        return f"{value!r} {declared} is written only as {', '.join(units)}, not {declared}"
    return f"{value!r} {declared} occurs in none of its claims or evidence"


def _states(mention: Mention, number: Decimal, declared: str) -> bool:
    """Whether ``mention`` writes ``number`` in the ``declared`` unit (in any form:
    ``120 minutes`` states 2 hours); a counted thing must be named after it."""
    unit = _declared(declared)
    if unit is None or mention.quantity is None:
        word = declared.strip().lower()
        return number in mention.values and mention.after in (word, word + "s")
    claim = replace(unit, values=frozenset({number}), decimals=_decimals(number))
    if claim.kind == "count":
        noun = (claim.noun or "").lower()
        after = mention.after or ""
        generic = noun in _GENERIC_COUNTS and after in _GENERIC_COUNTS
        named = generic or after in (noun, noun + "s") or noun in (after, after + "s")
        return named and number in mention.values
    return supports(mention.quantity, claim)


def _decimals(number: Decimal) -> int:
    exponent = number.as_tuple().exponent
    return max(0, -exponent) if isinstance(exponent, int) else 0


def _json_leaves(texts: list[str]) -> set[tuple[str, str]]:
    """``(key, JSON value)`` of every scalar under a key in the JSON texts."""
    found: set[tuple[str, str]] = set()
    for text in texts:
        stripped = text.lstrip()
        if not stripped.startswith(("{", "[")) or len(text) > _MAX_SCAN_CHARS:
            continue
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):
            continue
        for pointer, value, _ in leaf_schemas(data, None):
            if pointer and not isinstance(value, str):
                found.add((pointer.rsplit("/", 1)[-1], json.dumps(value)))
    return found
