"""Whether an action's argument values are established by text: numbers with units.

An irreversible call is only as trustworthy as its arguments. Identifiers in string
arguments are checked against evidence by the gate; this module does the same for
the values that are not strings: a number is *established* by a text that writes
the same number (``875.0`` by ``EUR 875.00``, ``1917.5`` by ``1,917.50``) with the
same unit when the tool's schema declares one (``"x-assay-unit": "EUR"``), and a
boolean or number is also established by a JSON text that holds the same key with
the same value (a tool output ``{"approved": true}``).

A tool author may mark an argument as the agent's own choice, not a fact, with
``"x-assay-grounding": "choice"`` in its property schema (a priority, a dry-run
switch); such a value needs no evidence. The agent cannot mark anything: the
annotation is part of the registered, content-hashed tool spec.

Scanning is linear: a number is one greedy run of digits and separators, and units
are read from a few characters on either side of it, never by backtracking.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, cast

__all__ = [
    "CHOICE",
    "GROUNDING_KEYWORD",
    "UNIT_KEYWORD",
    "Mention",
    "leaf_schemas",
    "mentions",
    "ungrounded_values",
]

#: Schema keyword naming the unit of a numeric argument (``EUR``, ``h``, ``%``).
UNIT_KEYWORD = "x-assay-unit"
#: Schema keyword marking how an argument is grounded; ``choice`` exempts it.
GROUNDING_KEYWORD = "x-assay-grounding"
CHOICE = "choice"

_MAX_SCAN_CHARS = 2_000_000  # evidence beyond this is not scanned for numbers
_GROUPING_SPACE = re.compile(r"(?<=\d)[\u00a0\u202f](?=\d)")
_TOKEN = re.compile(r"\d[\d,.'\u00a0\u202f]*")
_UNIT_AFTER = re.compile(r"[ \u00a0\u202f]?([A-Za-z%°µ€£$¥₹][A-Za-z°µ]{0,11})")
_PER = re.compile(r"[ \u00a0\u202f]?(?:/|per[ \u00a0\u202f]+)([A-Za-z]{1,8})(?![A-Za-z])")
_UNIT_BEFORE = re.compile(r"([A-Z]{3}|[€£$¥₹])[ \u00a0\u202f]?$")
_CURRENCY_SYMBOLS = {"€": "EUR", "£": "GBP", "¥": "JPY", "₹": "INR"}
_UNIT_ALIASES = {
    "h": "h",
    "hr": "h",
    "hrs": "h",
    "hour": "h",
    "hours": "h",
    "min": "min",
    "mins": "min",
    "minute": "min",
    "minutes": "min",
    "s": "s",
    "sec": "s",
    "secs": "s",
    "second": "s",
    "seconds": "s",
    "ms": "ms",
    "day": "d",
    "days": "d",
    "d": "d",
    "%": "%",
    "percent": "%",
    "pct": "%",
    "unit": "units",
    "units": "units",
    "pcs": "units",
    "pieces": "units",
    "item": "units",
    "items": "units",
}


@dataclass(frozen=True, kw_only=True)
class Mention:
    """A number written in a text: every value it can be read as, and its unit."""

    values: frozenset[Decimal]
    unit: str | None
    text: str
    #: The word written right after the number, lower-cased (``widgets`` in
    #: ``12 widgets``): what a unit this module does not know is compared with.
    after: str | None = None


def normal_unit(unit: str | None) -> str | None:
    """One spelling per unit: ``€`` and ``EUR`` alike, ``hours`` and ``h`` alike,
    ``EUR/h`` for a rate; ``None`` for a word that is not a unit."""
    if unit is None:
        return None
    unit = unit.strip()
    if "/" in unit:
        head, _, tail = unit.partition("/")
        base, per = normal_unit(head), _UNIT_ALIASES.get(tail.strip().lower())
        return f"{base}/{per}" if base is not None and per is not None else None
    if unit in _CURRENCY_SYMBOLS:
        return _CURRENCY_SYMBOLS[unit]
    if unit == "$":
        return "$"  # dollars of some country: never USD, which says which
    if re.fullmatch(r"[A-Z]{3}", unit):
        return unit
    return _UNIT_ALIASES.get(unit.lower())


def mentions(text: str) -> list[Mention]:
    """Every number in ``text`` (NFKC-normalised), with the unit written next to it."""
    # A no-break space between digits groups them (1 000); NFKC would make it a space.
    text = _GROUPING_SPACE.sub("'", text[:_MAX_SCAN_CHARS])
    text = unicodedata.normalize("NFKC", text)
    found: list[Mention] = []
    for match in _TOKEN.finditer(text):
        raw = match.group().rstrip(",.'\u00a0\u202f")
        start, end = match.start(), match.start() + len(raw)
        if start > 0 and (text[start - 1].isalpha() or text[start - 1] == "_"):
            continue  # part of an identifier such as v2
        if start > 1 and text[start - 1] == "-" and text[start - 2].isalpha():
            continue  # the number of a key such as INV-4421 or W-12
        negative = start > 0 and text[start - 1] in "-\u2212" and not _alnum_before(text, start - 1)
        values = _readings(raw)
        if negative:
            values = frozenset(-v for v in values)
        word = _UNIT_AFTER.match(text, end)
        found.append(
            Mention(
                values=values,
                unit=_unit_near(text, start, end),
                text=raw,
                after=word.group(1).lower() if word is not None else None,
            )
        )
    return found


def _alnum_before(text: str, index: int) -> bool:
    return index > 0 and text[index - 1].isalnum()


def _unit_near(text: str, start: int, end: int) -> str | None:
    """The unit written right after the number, else the currency right before it;
    ``/h`` or ``per hour`` after either makes it a rate (``EUR/h``)."""
    unit: str | None = None
    after = _UNIT_AFTER.match(text, end)
    if after is not None:
        stop = end + len(after.group(0))
        if not (stop < len(text) and text[stop].isalnum()):
            unit = normal_unit(after.group(1))
            end = stop if unit is not None else end
    if unit is None:
        before = _UNIT_BEFORE.search(text[max(0, start - 4) : start])
        unit = normal_unit(before.group(1)) if before is not None else None
    rate = _PER.match(text, end)
    if rate is not None and unit is not None:
        return normal_unit(f"{unit}/{rate.group(1)}")
    return unit


def _readings(raw: str) -> frozenset[Decimal]:
    """Every value ``raw`` can mean: ``1,200`` is 1200 in English and 1.2 in German."""
    text = raw
    for sep in ("'", "\u00a0", "\u202f"):
        text = text.replace(sep, "")
    candidates: set[str] = set()
    commas, dots = text.count(","), text.count(".")
    if commas and dots:
        group, decimal = (",", ".") if text.rfind(".") > text.rfind(",") else (".", ",")
        candidates.add(text.replace(group, "").replace(decimal, "."))
    elif commas > 1 or dots > 1:
        candidates.add(text.replace("," if commas else ".", ""))
    elif commas + dots == 1:
        head, tail = text.split("," if commas else ".")
        candidates.add(f"{head}.{tail}")
        if len(tail) == 3:
            candidates.add(head + tail)
    else:
        candidates.add(text)
    values: set[Decimal] = set()
    for candidate in candidates:
        try:
            values.add(Decimal(candidate))
        except InvalidOperation:
            continue
    return frozenset(values)


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
    unit = normal_unit(declared)
    word = declared.strip().lower()
    if any(
        (m.unit == unit) if unit is not None else (m.after in (word, word + "s"))
        for m in same_value
    ):
        return None
    if same_value:
        units = sorted({m.unit or "no unit" for m in same_value})
        return f"{value!r} {declared} is written only as {', '.join(units)}, not {declared}"
    return f"{value!r} {declared} occurs in none of its claims or evidence"


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
