"""An action intent's id names its call for the whole run: the bus call id of an
intent is derived from the run and the intent id (:func:`intent_call_id`), so that a
replayed step finds the first call's result instead of running it again.

A hand-over that reuses the id of an intent the run already decided would therefore
be answered with that decision (a denial, or the stored result of a call that ran),
whatever the new intent asks: it is refused at the gate instead, with
``intent_id_reused``. Decided means the ledger records it: a reviewer's denial, a
grant issued for its call, or its call reaching the bus. An intent whose hand-over
was refused, or whose claims were not entailed, was never decided, and its id may
be handed over again.
"""

from __future__ import annotations

import json
from typing import Any

from assay.contract import Handover
from assay.gate._records import GateFinding
from assay.ledger import Ledger, LedgerEntry

__all__ = ["intent_call_id", "reused_intent_ids"]

_PREFIX = "intent:"


def intent_call_id(run_id: str, intent_id: str) -> str:
    """The bus call id of an intent's call: derived from the run and the intent, so a
    replayed step finds the first result. The ``intent:`` prefix is the fence's own;
    call ids that come from a model (LangChain tool calls) never carry it."""
    return f"{_PREFIX}{run_id}/{intent_id}"


def reused_intent_ids(ledger: Ledger, run_id: str, handover: Handover) -> list[GateFinding]:
    """An ``intent_id_reused`` finding for each intent of ``handover`` whose id an
    intent of the same run already decided."""
    if not handover.action_intents:
        return []
    decided = _decided(ledger.entries(run_id, kinds=["tool_call", "grant"]), run_id)
    findings: list[GateFinding] = []
    for i, intent in enumerate(handover.action_intents):
        how = decided.get(intent.id)
        if how is None:
            continue
        findings.append(
            GateFinding(
                code="intent_id_reused",
                path=f"$.action_intents[{i}].id",
                message=(
                    f"action intent id {intent.id!r} was already decided in this run "
                    f"({how}): an intent's id names its call for the whole run, so a new "
                    "call needs an id of its own, and a decided call is not proposed again"
                ),
            )
        )
    return findings


def _decided(entries: list[LedgerEntry], run_id: str) -> dict[str, str]:
    """The run's decided intent ids, each with what decided it (the first record)."""
    prefix = intent_call_id(run_id, "")
    decided: dict[str, str] = {}
    for entry in entries:
        if entry.kind == "tool_call":
            call_id: Any = entry.metadata.get("call_id")
            how = "its call reached the tool bus"
        else:
            body = _json(entry.text)
            call_id = body.get("call_id")
            how = "denied by a reviewer" if body.get("decision") == "denied" else "granted"
        if isinstance(call_id, str) and call_id.startswith(prefix):
            decided.setdefault(call_id[len(prefix) :], how)
    return decided


def _json(text: str) -> dict[str, Any]:
    try:
        body: Any = json.loads(text)
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}
