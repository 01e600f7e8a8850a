"""Action arguments must be established by the claims they rest on.

A number (with the unit its tool declares) or a boolean in an action intent's
arguments must be written in a claim the intent depends on (through other intents
too) or in the evidence those claims cite; a string argument that is an identifier
(a hash, an id, a path, a host, an address) must be written whole in that evidence,
in the canonical form the effect key uses. Otherwise an agent could state the truth
in its claims and put an invented figure or commit in the call — the one that a
policy rule then approves. Identifiers inside prose arguments are left to the
identifier check. An irreversible intent must depend on at least one claim: a grant
is bound to a verified claim set, so one with none could only be refused after a
person had been asked. An argument whose tool declares its role (``x-assay-role``:
the predicate and the argument of a typed proposition it comes from) must be what
such a proposition of its claims states, and arguments of one predicate must come
from one proposition.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from assay._values import Slots, role_problems, ungrounded_values
from assay.contract import Claim, Handover
from assay.gate._records import GateFinding, path
from assay.ledger import LedgerEntry

__all__ = ["argument_value_errors", "intent_claims", "role_errors", "unsupported_intent_errors"]


def intent_claims(handover: Handover, intent_id: str) -> list[Claim]:
    """The claims an intent rests on, directly or through the intents it depends on."""
    claims = {c.id: c for c in handover.claims}
    intents = {a.id: a for a in handover.action_intents}
    seen: set[str] = set()
    todo = [intent_id]
    found: list[Claim] = []
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        if current in claims:
            found.append(claims[current])
        if current in intents:
            todo += intents[current].depends_on
    return found


def argument_value_errors(
    handover: Handover,
    index: int,
    schema: Mapping[str, Any],
    entries: Mapping[str, LedgerEntry],
    *,
    keyed: Sequence[str] = (),
) -> list[GateFinding]:
    """``ungrounded_argument`` for each value of intent ``index`` that neither its
    claims nor their cited evidence write."""
    intent = handover.action_intents[index]
    texts: list[str] = []
    evidence: list[str] = []
    for claim in intent_claims(handover, intent.id):
        texts.append(claim.text)
        for prop in claim.propositions:
            texts.append(prop.text)
            evidence += [entries[i].text for i in prop.ledger_ids if i in entries]
    ungrounded = ungrounded_values(
        intent.args, schema, [*texts, *evidence], identifier_texts=evidence, exact=keyed
    )
    return [
        GateFinding(
            code="ungrounded_argument",
            path=_json_path(index, pointer),
            message=f"{intent.tool}: {why}; an argument must come from the claims the "
            "intent depends on or their evidence",
        )
        for pointer, why in ungrounded
    ]


def role_errors(handover: Handover, index: int, schema: Mapping[str, Any]) -> list[GateFinding]:
    """``unbound_argument`` for each argument whose declared role (``x-assay-role``)
    no typed proposition of the intent's claims fills: the amount of one line's
    overage in the flag of another line, say."""
    intent = handover.action_intents[index]
    slots = [
        Slots(pred=p.pred, args=tuple(p.args or ()))
        for claim in intent_claims(handover, intent.id)
        for p in claim.propositions
    ]
    return [
        GateFinding(
            code="unbound_argument",
            path=_json_path(index, pointer),
            message=f"{intent.tool}: {why}",
        )
        for pointer, why in role_problems(intent.args, schema, slots)
    ]


def unsupported_intent_errors(handover: Handover, index: int) -> list[GateFinding]:
    """``ungrounded_intent`` for an irreversible intent that rests on no claim."""
    intent = handover.action_intents[index]
    if intent_claims(handover, intent.id):
        return []
    return [
        GateFinding(
            code="ungrounded_intent",
            path=path("action_intents", index, "depends_on"),
            message=f"{intent.tool} is irreversible and depends on no claim; a grant is "
            "bound to verified claims, so the intent must name the claims it rests on",
        )
    ]


def _json_path(index: int, pointer: str) -> str:
    parts = [p.replace("~1", "/").replace("~0", "~") for p in pointer.lstrip("/").split("/")]
    return path("action_intents", index, "args", *(int(p) if p.isdigit() else p for p in parts))
