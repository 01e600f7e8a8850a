"""Whether an action's argument values are established by text: identifiers, and
numbers with units.

An irreversible call is only as trustworthy as its arguments. A string argument
that is an identifier (a hash of 7 or more hex digits, a ticket or order id, a
path, a host name, an e-mail address: :func:`assay._canonical.identifier_kind`) is
established by a text that writes it whole, compared in the canonical form the
effect key uses (:mod:`assay._canonical`), so a value the gate grounds is the value
a repeat is recognised by. A hash may be the short form of a longer one written in
the evidence, except in an idempotency key, which must be the whole value. Prose
arguments are left to the gate's identifier check. A number is *established* by a text that writes
the same number (``875.0`` by ``EUR 875.00``, ``1917.5`` by ``1,917.50``) with the
same unit when the tool's schema declares one (``"x-assay-unit": "EUR"``, or
``{"argument": "currency"}``: the unit another argument of the call names, so an
amount is checked in the currency the call gives it), and a
boolean or number is also established by a JSON text that holds the same key with
the same value (a tool output ``{"approved": true}``).

Numbers and units are read by :mod:`assay.grounding`, as the gate reads a claim's:
``1,917.50`` and ``1.917,50``, ``EUR 610/h`` and ``EUR 610 per hour``, ``2.0 h`` and
``120 minutes``, ``129.0``, ``129`` and ``"129.00"`` are the same; a bare number of
evidence has the unit its record, field or column gives it (``{"total": 129.0,
"currency": "USD"}`` states USD 129); a declared ``$`` is the US dollar, as a
claim's is, so it is stated by an amount in USD and never by one in CAD; a declared
unit that is a thing counted (``units``, ``widget``) needs that word after the
number. A string argument that is a plain decimal number (``"129.00"``) is checked
as that number.

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

from assay._canonical import canonical_text, identifier_kind, occurs_in
from assay.grounding import (
    UNIT_KEYWORD,
    Quantity,
    evidence_index,
    find_dates,
    find_quantities,
    supports,
    unit_sources,
    with_units,
)

__all__ = [
    "CHOICE",
    "GROUNDING_KEYWORD",
    "MULTILINE_KEYWORD",
    "ROLE_KEYWORD",
    "UNIT_KEYWORD",
    "Mention",
    "Slots",
    "leaf_schemas",
    "mentions",
    "normal_unit",
    "role_of",
    "role_problems",
    "ungrounded_values",
    "unroled_arguments",
    "with_units",
]

#: Schema keyword marking how an argument is grounded; ``choice`` exempts it.
GROUNDING_KEYWORD = "x-assay-grounding"
CHOICE = "choice"
#: Schema keyword allowing tabs and line breaks in a string argument.
MULTILINE_KEYWORD = "x-assay-multiline"

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
    #: The units its record, field or column lends a bare number (``USD`` for the
    #: ``129.0`` of ``{"total": 129.0, "currency": "USD"}``).
    units: tuple[str, ...] = ()


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
    text = _scanned(text)
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


def _scanned(text: str) -> str:
    # A no-break space between digits groups them (1 000); NFKC would make it a space.
    text = _GROUPING_SPACE.sub("'", text[:_MAX_SCAN_CHARS])
    return unicodedata.normalize("NFKC", text)


def read_mentions(text: str) -> list[Mention]:
    """Every number in ``text`` as the gate reads evidence (:mod:`assay.grounding`):
    a JSON text through its view, each bare number with the units its record, field
    or column lends it, a table's cells by its header."""
    return [
        Mention(
            values=value.quantity.values,
            unit=value.quantity.unit,
            text=value.quantity.text,
            after=value.quantity.noun
            or (value.quantity.word.lower() if value.quantity.word else None),
            quantity=value.quantity,
            units=value.units,
        )
        for value in evidence_index(_scanned(text)).values
    ]


#: A string that is a plain decimal number (``"129.00"``, ``"-5"``).
_DECIMAL_STRING = re.compile(r"-?\d{1,15}(?:\.\d{1,10})?")


def as_decimal(value: object) -> Decimal | None:
    """A JSON number as a Decimal (``875.0`` → 875.0, exactly as written by ``repr``),
    or a string that is a plain decimal number (``"129.00"``)."""
    if isinstance(value, str) and _DECIMAL_STRING.fullmatch(value.strip()):
        return Decimal(value.strip())  # "129.00": a number, checked as one
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
    identifier_texts: Iterable[str] | None = None,
    exact: Iterable[str] = (),
) -> list[tuple[str, str]]:
    """``(pointer, why)`` for each number, boolean or identifier in ``args`` that
    the texts do not establish. Numbers and booleans are looked for in ``texts``;
    a string that is an identifier (:func:`assay._canonical.identifier_kind`: a hash,
    an id, a path, a host, an address) in ``identifier_texts`` (``texts`` when not
    given), whole and in canonical form; other strings (prose) are the gate's
    identifier check's business. A hash at a pointer in ``exact`` (an idempotency
    key's) must be written whole, not as the prefix of a longer one. ``only`` limits
    the check to these JSON pointers (a policy rule's conditions)."""
    wanted = None if only is None else set(only)
    schema = with_units(args, schema)
    corpus = list(texts)
    strings = _StringEvidence(corpus if identifier_texts is None else list(identifier_texts))
    keyed_exactly = set(exact)
    written: list[Mention] | None = None
    keyed: set[tuple[str, str]] | None = None
    problems: list[tuple[str, str]] = []
    for pointer, value, leaf_schema in leaf_schemas(args, schema):
        if wanted is not None and pointer not in wanted:
            continue
        if leaf_schema.get(GROUNDING_KEYWORD) == CHOICE or value is None:
            continue
        if isinstance(value, str) and not _DECIMAL_STRING.fullmatch(value.strip()):
            problem = strings.problem(value, exact=pointer in keyed_exactly)
            if problem is not None:
                problems.append((pointer, problem))
            continue
        if keyed is None:
            keyed = _json_leaves(corpus)
        key = pointer.rsplit("/", 1)[-1]
        if (key, _keyed_form(value)) in keyed:
            continue
        if isinstance(value, bool):
            problems.append((pointer, f"{json.dumps(value)} is not stated by any cited evidence"))
            continue
        if written is None:
            written = [m for text in corpus for m in read_mentions(text)]
        problem = _number_problem(value, leaf_schema, written)
        if problem is not None:
            problems.append((pointer, problem))
    return sorted(problems)


#: Punctuation that ends a sentence, never an identifier given as an argument.
_SENTENCE_PUNCTUATION = ".,;:!?"


class _StringEvidence:
    """The texts an identifier argument must occur in, each read once: as written,
    and, for a JSON text, its string values decoded (so an escaped character is
    compared as the character it stands for)."""

    def __init__(self, texts: list[str]) -> None:
        self._texts = texts
        self._read: list[str] | None = None

    def _all(self) -> list[str]:
        if self._read is None:
            self._read = [*self._texts, *(_json_strings(t) for t in self._texts)]
        return self._read

    def problem(self, value: str, *, exact: bool) -> str | None:
        text = canonical_text(value).strip()
        kind = identifier_kind(text)
        if kind is None and exact and text:
            # A key's value names the effect: prose there must be written whole too.
            phrase = " ".join(text.split())
            if any(occurs_in(phrase, " ".join(t.split())) for t in self._all()):
                return None
            return f"{value!r} (the value of an idempotency key) occurs in none of its evidence"
        if kind is None:
            return None
        if text[-1] in _SENTENCE_PUNCTUATION or text[0] in _SENTENCE_PUNCTUATION:
            return (
                f"{value!r} has sentence punctuation at an edge; an identifier argument "
                "is the identifier alone"
            )
        if any(occurs_in(text, t, kind=kind, prefix_ok=not exact) for t in self._all()):
            return None
        what = "whole " if kind == "hash" and exact else ""
        return f"{value!r} ({what}{_KIND_NAMES[kind]}) occurs in none of its evidence"


_KIND_NAMES = {
    "hash": "a hash",
    "email": "an e-mail address",
    "host": "a host name",
    "path": "a path",
    "id": "an identifier",
}


def _json_strings(text: str) -> str:
    """The string values (and keys) of a JSON text, one per line; empty otherwise."""
    stripped = text.lstrip()
    if not stripped.startswith(("{", "[")) or len(text) > _MAX_SCAN_CHARS:
        return ""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return ""
    found: list[str] = []
    for pointer, value, _ in leaf_schemas(data, None):
        found.append(pointer.rsplit("/", 1)[-1].replace("~1", "/").replace("~0", "~"))
        if isinstance(value, str):
            found.append(value)
    return "\n".join(found)


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
        units = sorted({_written_unit(m) for m in same_value})
        return f"{value!r} {declared} is written only as {', '.join(units)}, not {declared}"
    return f"{value!r} {declared} occurs in none of its claims or evidence"


def _written_unit(mention: Mention) -> str:
    """The unit a mention writes or its record lends it, for a message."""
    return mention.unit or next(iter(mention.units), None) or mention.after or "no unit"


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
    return supports(mention.quantity, claim, units=mention.units)


def _keyed_form(value: Any) -> str:
    """A JSON scalar as a key's value is compared: a number by its value (``129.0``,
    ``129`` and ``"129.00"`` alike), anything else as JSON writes it."""
    number = as_decimal(value)
    if number is None:
        return json.dumps(value)
    return format(number.normalize(), "f")


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
                found.add((pointer.rsplit("/", 1)[-1], _keyed_form(value)))
    return found


# --- roles: which proposition slot an argument comes from -----------------------------

#: Schema keyword binding an argument to a slot of a typed proposition:
#: ``{"pred": "over_cap", "arg": 1}`` — the value must be what argument 1 of a
#: ``over_cap`` proposition of the claims the call rests on states.
ROLE_KEYWORD = "x-assay-role"


@dataclass(frozen=True, kw_only=True)
class Slots:
    """A typed proposition as roles read it: its predicate and its arguments."""

    pred: str | None
    args: tuple[str, ...]


def role_of(schema: Mapping[str, Any]) -> tuple[str, int] | None:
    """The ``(pred, arg)`` a property schema binds its argument to, if it declares one."""
    role = schema.get(ROLE_KEYWORD)
    if not isinstance(role, Mapping):
        return None
    role = cast(Mapping[str, Any], role)
    pred, arg = role.get("pred"), role.get("arg")
    if not isinstance(pred, str) or isinstance(arg, bool) or not isinstance(arg, int):
        return None
    return pred, arg


def role_problems(
    args: Mapping[str, Any], schema: Mapping[str, Any] | None, propositions: Iterable[Slots]
) -> list[tuple[str, str]]:
    """``(pointer, why)`` for each argument whose declared role no proposition fills.

    Arguments that name the same predicate must all come from one proposition: the
    overage and the line of a flag from the same ``over_cap(line, amount)``, never the
    line of one and the amount of another. A proposition fills a slot when its
    argument there states the value: an identifier written whole (canonical form), a
    number with the same value (and the unit the schema declares)."""
    by_pred: dict[str, list[tuple[str, int, Any, Mapping[str, Any]]]] = {}
    for pointer, value, leaf_schema in leaf_schemas(args, with_units(args, schema)):
        role = role_of(leaf_schema)
        if role is not None and value is not None:
            by_pred.setdefault(role[0], []).append((pointer, role[1], value, leaf_schema))
    typed = [p for p in propositions if p.pred is not None]
    problems: list[tuple[str, str]] = []
    for pred, wanted in sorted(by_pred.items()):
        candidates = [p for p in typed if p.pred == pred]
        if not candidates:
            why = f"the claims the call rests on have no {pred} proposition to read it from"
            problems += [(ptr, why) for ptr, _, _, _ in wanted]
            continue
        filled = [[_fills(p, arg, v, s) for _, arg, v, s in wanted] for p in candidates]
        best = max(range(len(candidates)), key=lambda i: sum(filled[i]))
        shown = f"{pred}({', '.join(candidates[best].args)})"
        problems += [
            (
                ptr,
                f"{value!r} is not argument {arg} of {shown}, the {pred} proposition "
                "of the claims the call rests on that states most of its arguments",
            )
            for (ptr, arg, value, _), ok in zip(wanted, filled[best], strict=True)
            if not ok
        ]
    return problems


def unroled_arguments(args: Mapping[str, Any], schema: Mapping[str, Any] | None) -> list[str]:
    """The pointers of arguments that declare no role and are not the agent's choice:
    what a policy rule may not approve on its own. An argument that gives the unit of
    an argument with a role is bound through it: the amount must be stated in it."""
    props = cast(Mapping[str, Any], (schema or {}).get("properties") or {})
    units = {f"/{arg}" for key, arg in unit_sources(schema).items() if role_of(props[key])}
    return sorted(
        pointer
        for pointer, value, leaf_schema in leaf_schemas(args, schema)
        if value is not None
        and role_of(leaf_schema) is None
        and leaf_schema.get(GROUNDING_KEYWORD) != CHOICE
        and pointer not in units
    )


def _fills(prop: Slots, arg: int, value: Any, schema: Mapping[str, Any]) -> bool:
    if not 0 <= arg < len(prop.args):
        return False
    slot = prop.args[arg]
    if isinstance(value, str):
        text = canonical_text(value).strip()
        kind = identifier_kind(text)
        if kind is None:
            return " ".join(text.casefold().split()) == " ".join(
                canonical_text(slot).casefold().split()
            )
        return occurs_in(text, slot, kind=kind)
    if isinstance(value, bool):
        return json.dumps(value) == slot.strip().lower()
    return _number_problem(value, schema, mentions(slot)) is None
