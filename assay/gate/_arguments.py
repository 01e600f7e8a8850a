"""Action arguments must be established by the claims they rest on.

The identifier check covers identifiers inside string arguments. This check covers
every other value: a number (with the unit its tool declares) or a boolean in an
action intent's arguments must be written in a claim the intent depends on (through
other intents too) or in the evidence those claims cite. Otherwise an agent could
state the truth in its claims and put an invented figure in the call — the figure
that a policy rule then approves.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from assay._values import ungrounded_values
from assay.contract import Claim, Handover
from assay.gate._checks import path
from assay.gate._records import GateFinding
from assay.ledger import LedgerEntry

__all__ = ["argument_value_errors", "intent_claims"]


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
) -> list[GateFinding]:
    """``ungrounded_argument`` for each value of intent ``index`` that neither its
    claims nor their cited evidence write."""
    intent = handover.action_intents[index]
    texts: list[str] = []
    for claim in intent_claims(handover, intent.id):
        texts.append(claim.text)
        for prop in claim.propositions:
            texts.append(prop.text)
            texts += [entries[i].text for i in prop.ledger_ids if i in entries]
    return [
        GateFinding(
            code="ungrounded_argument",
            path=_json_path(index, pointer),
            message=f"{intent.tool}: {why}; an argument must come from the claims the "
            "intent depends on or their evidence",
        )
        for pointer, why in ungrounded_values(intent.args, schema, texts)
    ]


def _json_path(index: int, pointer: str) -> str:
    parts = [p.replace("~1", "/").replace("~0", "~") for p in pointer.lstrip("/").split("/")]
    return path("action_intents", index, "args", *(int(p) if p.isdigit() else p for p in parts))
