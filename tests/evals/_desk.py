"""A stock desk of a user's own, for the eval tests: nothing of the invoice audit.

The agent reads each document of the run's context through the bus and states every
sentence of it (verbatim, or in its own words) as an Assertion citing what the bus
returned; ``context["guess"]``
adds a claim no document supports, and ``context["order"]`` proposes the
irreversible ``place_order`` with those arguments. Factories (``graph`` and its
deliberate regressions) are module-level, so worker processes can load them.
"""

from __future__ import annotations

import re
import threading
import weakref
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from assay import ToolRegistry, ToolSpec
from assay.fence import FenceComponents, FencedGraph, FenceState, fence
from assay.ledger import canonical_json, sha256_hex
from tests.fence._orders import PLACE_ORDER  # the order desk's own tool

NAME = "stock-desk"
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_DOCS: dict[str, Mapping[str, str]] = {}
_LOCK = threading.Lock()
PLACED: list[dict[str, Any]] = []

READ_DOCUMENT = ToolSpec(
    name="read_document",
    version="1.0.0",
    side_effect="read_only",
    description="A document of the run's corpus.",
    input_schema={
        "type": "object",
        "additionalProperties": False,
        "required": ["corpus", "name"],
        "properties": {"corpus": {"type": "string"}, "name": {"type": "string"}},
    },
    output_schema={"type": "string"},
)
#: The same tool, registered as if ordering could be undone: a regression.
PLACE_ORDER_UNGUARDED = replace(PLACE_ORDER, version="2.0.0", side_effect="reversible")
_INSTALLED: weakref.WeakSet[ToolRegistry] = weakref.WeakSet()


def _read(args: dict[str, Any]) -> str:
    return _DOCS[args["corpus"]][args["name"]]


def _place(args: dict[str, Any]) -> dict[str, Any]:
    PLACED.append(dict(args))
    return {"order": len(PLACED)}


#: The order as a choice of the desk, not a fact (``x-assay-grounding: choice``):
#: what lets a policy approve it without a role, so the regression below runs twice.
PLACE_ORDER_AS_CHOSEN = replace(
    PLACE_ORDER,
    version="1.1.0",
    input_schema={
        **PLACE_ORDER.input_schema,
        "properties": {
            "sku": {"type": "string", "x-assay-grounding": "choice"},
            "units": {"type": "integer", "minimum": 1, "x-assay-grounding": "choice"},
        },
    },
)


#: The order named by its SKU (an idempotency key): ordering BT-105 twice is one
#: effect, which the bus refuses to repeat.
PLACE_ORDER_KEYED = replace(PLACE_ORDER, version="1.2.0", idempotency_key=("/sku",))


def _install(registry: ToolRegistry) -> None:
    with _LOCK:
        if registry not in _INSTALLED:
            registry.register(READ_DOCUMENT, _read)
            registry.register(PLACE_ORDER, _place)
            registry.register(PLACE_ORDER_UNGUARDED, _place)
            registry.register(PLACE_ORDER_AS_CHOSEN, _place)
            registry.register(PLACE_ORDER_KEYED, _place)
            _INSTALLED.add(registry)


def _corpus(documents: Mapping[str, str]) -> str:
    corpus = "crp_" + sha256_hex(canonical_json(dict(documents)))[:16]
    _DOCS[corpus] = dict(documents)
    return corpus


def _claim(claim_id: str, text: str, ledger_ids: list[str]) -> dict[str, Any]:
    return {
        "id": claim_id,
        "type": "Assertion",
        "text": text,
        "confidence": 0.9,
        "propositions": [{"id": f"{claim_id}.p", "text": text, "ledger_ids": ledger_ids}],
    }


def _in_own_words(sentence: str) -> str:
    return f"The documents say that {sentence[:1].lower()}{sentence[1:]}"


def _desk(
    cp: FenceComponents,
    *,
    drop_last: bool = False,
    twice: bool = False,
    unguarded: bool = False,
    own_words: bool = False,
    order_version: str = "1.0.0",
) -> Any:
    def agent(state: FenceState) -> dict[str, Any]:
        run_id = state.get("run_id", "")
        context = state.get("context", {})
        documents: Mapping[str, str] = context.get("documents", {})
        corpus = _corpus(documents)
        claims: list[dict[str, Any]] = []
        cited: list[str] = []
        for name in sorted(documents):
            out = cp.bus.call(run_id, "read_document", {"corpus": corpus, "name": name})
            cited.append(out.ledger_id or "")
            for sentence in _SENTENCE.split(documents[name].strip()):
                text = _in_own_words(sentence) if own_words else sentence
                claims.append(_claim(f"c{len(claims) + 1}", text, [cited[-1]]))
        if drop_last:
            claims = claims[:-1]
        if context.get("guess"):
            claims.append(_claim("guess", context["guess"], cited[:1]))
        intents: list[dict[str, Any]] = []
        order = context.get("order")
        if order and unguarded:
            cp.bus.call(run_id, "place_order", order, version="2.0.0")
        elif order:
            depends = [c["id"] for c in claims]
            intents = [
                _intent(f"o{n}", order, depends, order_version) for n in range(1, 3 if twice else 2)
            ]
        handover = {"run_id": run_id, "from_agent": "desk", "status": "ok", "claims": claims}
        return {"handover": {**handover, "action_intents": intents}}

    return agent


def _intent(
    intent_id: str, args: dict[str, Any], depends_on: list[str], version: str
) -> dict[str, Any]:
    return {
        "id": intent_id,
        "tool": "place_order",
        "version": version,
        "requires_grant": True,
        "args": args,
        "depends_on": depends_on,
    }


#: Auto-approves small orders whose claims are all entailed: no reviewer is asked.
AUTO_APPROVE_ORDERS = {
    "rules": [
        {
            "name": "small-orders",
            "tool": "place_order",
            "claims": "all_entailed",
            "args": {"units": {"le": 100}},
            "ttl_s": 300,
        }
    ]
}


def _fenced(
    cp: FenceComponents,
    *,
    policy: Mapping[str, Any] | None = None,
    order_version: str = "1.0.0",
    **regression: bool,
) -> FencedGraph:
    _install(cp.registry)
    return fence(
        _desk(cp, order_version=order_version, **regression),
        control_plane=cp,
        name=NAME,
        max_evidence_rounds=1,
        policy=policy,
    )


def graph(cp: FenceComponents) -> FencedGraph:
    """The desk as it should be."""
    return _fenced(cp)


def graph_in_own_words(cp: FenceComponents) -> FencedGraph:
    """The desk stating each sentence in its own words ("The documents say that
    ..."): no claim is verbatim, so the verifier's model decides each one."""
    return _fenced(cp, own_words=True)


def graph_drops_claim(cp: FenceComponents) -> FencedGraph:
    """A regression: the last sentence of the documents is never stated."""
    return _fenced(cp, drop_last=True)


def graph_orders_twice(cp: FenceComponents) -> FencedGraph:
    """A regression: the same order proposed twice, so an approval runs it twice."""
    return _fenced(cp, twice=True)


def graph_unguarded(cp: FenceComponents) -> FencedGraph:
    """A regression: the order tool registered as reversible and called directly,
    with no grant."""
    return _fenced(cp, unguarded=True)


def graph_policy_orders_twice(cp: FenceComponents) -> FencedGraph:
    """A regression: an auto-approval policy, and the same order proposed twice, so
    the policy runs it twice with no reviewer asked."""
    return _fenced(cp, policy=AUTO_APPROVE_ORDERS, twice=True, order_version="1.1.0")


def graph_keyed(cp: FenceComponents) -> FencedGraph:
    """The desk ordering with the keyed tool: a second order of the same SKU repeats
    an effect."""
    return _fenced(cp, order_version="1.2.0")
