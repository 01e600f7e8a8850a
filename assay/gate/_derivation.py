"""Derivations at the gate: a computation a proposition states over its citations
must be one code can evaluate.

A proposition's ``derivation`` (``{"expr": "elapsed($0, $1)", "result": "37
minutes"}``) is refused with ``bad_derivation``, at
``$.claims[i].propositions[j].derivation``, where its expression does not parse or
uses what the language has not (:func:`assay.grounding.derive`), names a citation
the proposition does not have, applies a function to the wrong kind of value (a
count of a number, an elapsed time between amounts), or states a result that is
not a value of the proposition's text. A derivation that evaluates to another value
than its stated result is not refused here: that is a miscalculation, which the
verifier answers (check ``derivation``) with the right value.

A derivation over a citation the gate refuses for another reason (an entry that is
not evidence of this run, a quote it does not hold) is left to that refusal.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from decimal import Decimal
from functools import lru_cache
from typing import Any

from jsonpointer import JsonPointer

from assay.contract import Handover, PointerCitation, Proposition, QuoteCitation
from assay.gate._citations import locate
from assay.gate._records import GateFinding, path
from assay.grounding import CitedValue, Derived, convention_of, derive, states_result
from assay.ledger import LedgerEntry

__all__ = ["check_derivations", "cited_value", "evaluate_derivation", "holding_derivation"]


def cited_value(text: str, cite: QuoteCitation | PointerCitation) -> CitedValue | None:
    """What ``cite`` names in the stored entry ``text``, as a derivation reads it (a
    JSON value with exact decimals and its key, or a quote's text), or ``None`` where
    it names nothing."""
    if isinstance(locate(text, cite), str):
        return None
    convention = convention_of(text)
    if isinstance(cite, QuoteCitation):
        return CitedValue(quote=cite.quote, convention=convention)
    pointer = JsonPointer(cite.pointer)
    value = pointer.resolve(_exact(text))
    key = pointer.parts[-1] if pointer.parts else None
    return CitedValue(field=value, key=key, convention=convention)


@lru_cache(maxsize=16)
def _exact(text: str) -> Any:
    """A JSON entry decoded with its numbers as written (``18342.6`` exactly)."""
    return json.loads(text, parse_float=Decimal)


def evaluate_derivation(
    text: str, expr: str, result: str, cited: Sequence[CitedValue | None]
) -> Derived | str:
    """The derivation evaluated, or why it is refused: also where its stated result
    is not a value the proposition's ``text`` writes."""
    derived = derive(expr, result, cited)
    if isinstance(derived, str):
        return derived
    if not states_result(text, derived):
        return f"the result {result!r} is not a value the proposition states"
    return derived


def check_derivations(
    run_id: str, handover: Handover, entries: dict[str, LedgerEntry]
) -> list[GateFinding]:
    """Every derivation evaluates over its proposition's citations and states a value
    of the proposition; what it evaluates to is the verifier's to compare."""
    errors: list[GateFinding] = []
    for i, claim in enumerate(handover.claims):
        for j, prop in enumerate(claim.propositions):
            if prop.derivation is None:
                continue
            cited = _cited_values(run_id, prop, entries)
            if cited is None:
                continue  # refused where the entry or the citation is
            derivation = prop.derivation
            why = evaluate_derivation(prop.text, derivation.expr, derivation.result, cited)
            if isinstance(why, str):
                errors.append(
                    GateFinding(
                        code="bad_derivation",
                        path=path("claims", i, "propositions", j, "derivation"),
                        message=why,
                    )
                )
    return errors


def holding_derivation(
    run_id: str, prop: Proposition, entries: dict[str, LedgerEntry]
) -> Derived | None:
    """The proposition's derivation, where it evaluates over its citations to the
    result it states and the proposition writes that result; else ``None``. A value
    of the proposition that is this result is established by the computation, not
    by being written in the evidence."""
    if prop.derivation is None:
        return None
    cited = _cited_values(run_id, prop, entries)
    if cited is None:
        return None
    derivation = prop.derivation
    derived = evaluate_derivation(prop.text, derivation.expr, derivation.result, cited)
    return derived if isinstance(derived, Derived) and derived.holds else None


def _cited_values(
    run_id: str, prop: Proposition, entries: dict[str, LedgerEntry]
) -> list[CitedValue | None] | None:
    """What each citation of ``prop`` names, or ``None`` where one cites an entry
    that is not evidence of this run or names nothing (refused for that)."""
    cited: list[CitedValue | None] = []
    for cite in prop.cites or ():
        entry = entries.get(cite.ledger_id)
        if entry is None or entry.run_id != run_id or not entry.is_evidence:
            return None  # reported where the entry is cited
        found = cited_value(entry.text, cite)
        if found is None:
            return None  # fabricated_citation
        cited.append(found)
    return cited
