"""The citations a careful agent would write for a claim: a deterministic function of
the claim and its evidence, never of the item's label.

For a JSON entry: a pointer to each leaf whose value the claim states (a string it
writes, a number it writes by value, a date or amount it writes in any form the
grounding accepts, a true/false field whose name it writes), and a pointer to the
record where a value of the claim is only read across the record's fields (an amount
and its currency). For a text entry: a quote of each sentence that holds one of the
claim's values or shares three of its content words, or, for a claim that matches
none, the sentence that shares most of its words. A claim that states a value
falsely cites, by the same rule, what it is about: the fields and sentences of
everything else it states.

Where the claim states a value computed from its evidence (a sum, a difference, an
elapsed time, a product, ratio or percentage, as the checked arithmetic reads its
cue), :func:`derivation_for` also writes the derivation: the operands cited (a
pointer to each field, a quote of each value in text) and the expression over them,
with the claim's own value as the result. For a claim whose value is wrong, that is
the operation its cue describes over the values it names, stating the wrong result,
as an agent that miscalculated would. A count of a text table's rows has no citation
to point at, and is not written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from decimal import Decimal
from typing import Any, cast

from assay.contract import PointerCitation, QuoteCitation
from assay.gate import cited_value, evaluate_derivation
from assay.grounding import (
    Computation,
    Derived,
    EvidenceView,
    Operand,
    check_values,
    extract_identifiers,
    find_numbers,
    ground,
    identifier_in_evidence,
    view_of,
)

_NUMBER = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?![\w])")
_SENTENCE_END = re.compile(r"(?<=[.!?])[ \t]+|\n+")
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]{2,}")
_STOP = frozenset(
    re.findall(
        r"\w+",
        "the and for with was were has have had its that this from are but not than into "
        "over under after before which who what when where been being will would",
    )
)


def cites_for(claim: str, entries: list[tuple[str, str]]) -> list[dict[str, str]]:
    """The citations of ``claim`` over ``entries`` (ledger id, stored text)."""
    cites: list[dict[str, str]] = []
    for ledger_id, text in entries:
        if view_of(text).is_json:
            cites += [{"ledger_id": ledger_id, "pointer": p} for p in pointers(claim, text)]
        else:
            cites += [{"ledger_id": ledger_id, "quote": q} for q in quotes(claim, text)]
    return cites


# --- JSON --------------------------------------------------------------------------

_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _paths(value: Any, path: str = "", pointer: str = "") -> Iterator[tuple[str, str, Any]]:
    """Each leaf's view path (as :func:`assay.grounding.view_of` writes it), pointer
    and value."""
    if isinstance(value, dict):
        for key, child in cast(dict[str, Any], value).items():
            named = (
                (f"{path}.{key}" if path else key)
                if _PLAIN_KEY.fullmatch(key)
                else (f"{path}[{json.dumps(key, ensure_ascii=False)}]")
            )
            escaped = key.replace("~", "~0").replace("/", "~1")
            yield from _paths(child, named, f"{pointer}/{escaped}")
    elif isinstance(value, list):
        for i, child in enumerate(cast(list[Any], value)):
            yield from _paths(child, f"{path}[{i}]", f"{pointer}/{i}")
    else:
        yield path, pointer, value


def _numbers(text: str) -> set[Decimal]:
    return {v.normalize() for n in find_numbers(text) for v in n.values}


def _states(claim: str, key: str, value: Any, numbers: set[Decimal]) -> bool:
    """Whether the claim writes a leaf's number, string or true/false field's name."""
    if isinstance(value, bool):
        words = [w for w in re.split(r"[_\W]+", key.lower()) if len(w) > 2]
        return bool(words) and all(w[:5] in claim.lower() for w in words)
    if isinstance(value, int | float):
        return Decimal(str(value)).normalize() in numbers
    if isinstance(value, str) and len(value.strip()) >= 3:
        return value.strip().casefold() in claim.casefold()
    return False


def pointers(claim: str, stored: str) -> list[str]:
    """Pointers to the leaves of the JSON entry ``stored`` whose values the claim
    states: where the grounding finds a value of the claim in the entry's view (in
    any written form), an identifier of the claim, a number it writes by value, a
    string it writes, a true/false field it names."""
    view = view_of(stored)
    by_path = {path: pointer for path, pointer, _ in _paths(json.loads(stored))}
    lines = view.lines
    chosen: list[str] = []
    for check in check_values(claim, [view.text]):
        occurrence = check.occurrence
        if check.status != "found" or occurrence is None:
            continue
        for line in lines:
            if line.start < occurrence.end and occurrence.start < line.end:
                chosen.append(by_path.get(line.path, ""))
    idents = list(extract_identifiers(claim))
    numbers = _numbers(claim)
    for _, pointer, value in _paths(json.loads(stored)):
        key = pointer.rsplit("/", 1)[-1]
        line = f"{key}: {json.dumps(value) if not isinstance(value, str) else value}"
        if any(identifier_in_evidence(i, line) for i in idents) or _states(
            claim, key, value, numbers
        ):
            chosen.append(pointer)
    return [p for p in dict.fromkeys(chosen) if p]


# --- text --------------------------------------------------------------------------


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def _content(text: str) -> set[str]:
    return {w.lower()[:6] for w in _WORD.findall(text) if w.lower() not in _STOP}


def quotes(claim: str, text: str) -> list[str]:
    """The sentences (or lines) of ``text`` that hold a value of the claim, or share
    at least three of its content words; for a claim that matches none, the one that
    shares most of its words."""
    idents = list(extract_identifiers(claim))
    numbers = _numbers(claim)
    words = _content(claim)
    sentences = [s for s in _sentences(text) if s in text]
    chosen = [
        s
        for s in sentences
        if any(identifier_in_evidence(i, s) for i in idents)
        or any(n >= 10 or n != n.to_integral_value() for n in numbers & _numbers(s))
        or any(c.status == "found" for c in check_values(claim, [s]))
        or len(words & _content(s)) >= 3
    ]
    if chosen:
        return list(dict.fromkeys(chosen))
    ranked = sorted(sentences, key=lambda s: -len(words & _content(s)))
    return ranked[:1] if ranked and words & _content(ranked[0]) else []


# --- derivations -------------------------------------------------------------------

_FORMS = {
    "sum": ("sum({})",),
    "difference": ("{0} - {1}", "{1} - {0}"),
    "elapsed": ("elapsed({0}, {1})", "elapsed({1}, {0})"),
    "product": ("{0} * {1}",),
    "ratio": ("{0} / {1}",),
    "percentage": ("percent({0}, {1})", "percent({1}, {0})"),
    "percent_of": ("{0} * {1}",),
}


def derivation_for(
    claim: str, entries: list[tuple[str, str]], cites: list[dict[str, str]]
) -> dict[str, str] | None:
    """The derivation of the first value of ``claim`` that the checked arithmetic
    reads as computed from ``entries`` (rightly or not), with the citations of its
    operands added to ``cites``; ``None`` where it reads none."""
    views = [view_of(text) for _, text in entries]
    for grounded in ground(claim, [v.text for v in views]).values:
        wrong = grounded.miscalculation
        computation = grounded.computation or (wrong.expected if wrong else None)
        if grounded.found_in or computation is None or computation.operation not in _FORMS:
            continue
        names = _operand_names(computation, entries, views, cites)
        if names:
            found = _written(claim, computation, names, grounded.identifier.value, entries, cites)
            if found is not None:
                return found
    return None


def _operand_names(
    computation: Computation,
    entries: list[tuple[str, str]],
    views: list[EvidenceView],
    cites: list[dict[str, str]],
) -> list[str]:
    names: list[str] = []
    for operand in computation.operands:
        cite = _operand_cite(entries[operand.document], views[operand.document], operand)
        if cite is None:
            return []
        if cite not in cites:
            cites.append(cite)
        names.append(f"${cites.index(cite)}")
    return names


def _operand_cite(
    entry: tuple[str, str], view: EvidenceView, operand: Operand
) -> dict[str, str] | None:
    ledger_id, stored = entry
    if not view.is_json:
        start, end = view.to_stored(operand.start, operand.end)
        return {"ledger_id": ledger_id, "quote": stored[start:end]}
    by_path = {path: pointer for path, pointer, _ in _paths(json.loads(stored))}
    for line in view.lines:
        if line.start <= operand.start and operand.end <= line.end and line.path in by_path:
            return {"ledger_id": ledger_id, "pointer": by_path[line.path]}
    return None


def _written(
    claim: str,
    computation: Computation,
    names: list[str],
    result: str,
    entries: list[tuple[str, str]],
    cites: list[dict[str, str]],
) -> dict[str, str] | None:
    """The first form of the operation whose value is the result; else the first
    that evaluates to a value that is not negative (a wrong result stays wrong). A
    form the gate would refuse (a hedged result, "just under two days") is not
    written: a careful agent states a derivation's result exactly."""
    forms = _FORMS[computation.operation]
    if computation.operation == "sum":
        exprs = [forms[0].format(", ".join(names))]
    elif len(names) == 2:
        exprs = [form.format(*names) for form in forms]
    else:
        return None
    stored = dict(entries)
    cited = [
        cited_value(
            stored[c["ledger_id"]],
            QuoteCitation(ledger_id=c["ledger_id"], quote=c["quote"])
            if "quote" in c
            else PointerCitation(ledger_id=c["ledger_id"], pointer=c["pointer"]),
        )
        for c in cites
    ]
    derived = [(expr, evaluate_derivation(claim, expr, result, cited)) for expr in exprs]
    evaluated = [(expr, d) for expr, d in derived if isinstance(d, Derived)]
    chosen = next((expr for expr, d in evaluated if d.holds), None) or next(
        (expr for expr, d in evaluated if not d.value.lstrip().startswith("-")), None
    )
    return {"expr": chosen, "result": result} if chosen else None
