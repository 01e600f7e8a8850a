"""A user's own fenced graph, nothing of the invoice audit: an order desk that reads
the stock of a SKU and proposes to order it with the irreversible ``place_order``.

``graph`` is a factory as ``assay run --graph tests.fence._orders:graph`` loads it;
``graph_v2`` is the same desk at another version. Orders placed by the handler are
kept in ``PLACED`` (in this process) so a test sees the side effect itself.
"""

from __future__ import annotations

import weakref
from typing import Any

from assay import ToolRegistry, ToolSpec
from assay.fence import FenceComponents, FencedGraph, FenceState, fence

NAME = "order-desk"
STOCK = "Warehouse W-12 holds 120 units of SKU BT-105."
PLACED: list[dict[str, Any]] = []

READ_STOCK = ToolSpec(
    name="read_stock",
    version="1.0.0",
    side_effect="read_only",
    description="Stock on hand of the warehouse.",
    input_schema={"type": "object", "additionalProperties": False},
    output_schema={"type": "string"},
)
PLACE_ORDER = ToolSpec(
    name="place_order",
    version="1.0.0",
    side_effect="irreversible",
    description="Order units of a SKU from the supplier.",
    input_schema={
        "type": "object",
        "additionalProperties": False,
        "required": ["sku", "units"],
        "properties": {
            "sku": {"type": "string"},
            "units": {"type": "integer", "minimum": 1, "x-assay-unit": "units"},
        },
    },
    output_schema={
        "type": "object",
        "required": ["order"],
        "properties": {"order": {"type": "integer"}},
    },
)

_INSTALLED: weakref.WeakSet[ToolRegistry] = weakref.WeakSet()


def _place(args: dict[str, Any]) -> dict[str, Any]:
    PLACED.append(dict(args))
    return {"order": len(PLACED)}


def _install(registry: ToolRegistry) -> None:
    if registry not in _INSTALLED:
        registry.register(READ_STOCK, lambda _args: STOCK)
        registry.register(PLACE_ORDER, _place)
        _INSTALLED.add(registry)


def _desk(components: FenceComponents) -> Any:
    def agent(state: FenceState) -> dict[str, Any]:
        run_id = state.get("run_id", "")
        read = components.bus.call(run_id, "read_stock", {})
        units = int(state.get("context", {}).get("units", 120))
        return {
            "handover": {
                "run_id": run_id,
                "from_agent": "buyer",
                "status": "ok",
                "claims": [
                    {
                        "id": "stock",
                        "type": "Quote",
                        "text": STOCK,
                        "confidence": 0.9,
                        "propositions": [
                            {"id": "stock.p", "text": STOCK, "ledger_ids": [read.ledger_id]}
                        ],
                    }
                ],
                "action_intents": [
                    {
                        "id": "order1",
                        "tool": "place_order",
                        "version": "1.0.0",
                        "requires_grant": True,
                        "args": {"sku": "BT-105", "units": units},
                        "depends_on": ["stock"],
                    }
                ],
            }
        }

    return agent


def graph(components: FenceComponents) -> FencedGraph:
    """The order desk, version 1."""
    _install(components.registry)
    return fence(_desk(components), control_plane=components, name=NAME, version="1")


def graph_v2(components: FenceComponents) -> FencedGraph:
    """The same desk, fenced as version 2: a thread of version 1 is not its to resume."""
    _install(components.registry)
    return fence(_desk(components), control_plane=components, name=NAME, version="2")
