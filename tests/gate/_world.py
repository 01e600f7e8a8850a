"""A small run with real evidence, a foreign run and a registered tool, shared by the
gate tests, and the clean hand-over every rejected case is a one-change twin of."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from assay import ControlPlane
from assay.tool_bus import ToolSpec

CRM = '{"invoice": "INV-4421", "customer": "CUST-7781", "total": "EUR 500", "line": 14}'
CONTRACT = (
    "The agreement caps consulting fees at EUR 380 per day. Travel is billed at cost. "
    "Invoice INV-4421 line 14 exceeds the cap by EUR 120.00."
)
GIT = "commit 9fceb02d0ae598e95dc970b74767f19372d61af8\nAuthor: Dana\n\n    Fix rounding"
USER = "My customer id is CUST-7781; please check invoice INV-4421."

FLAG = ToolSpec(
    "flag_invoice_line",
    "1.0.0",
    "Flag an invoice line as over the contractual cap.",
    {
        "type": "object",
        "properties": {
            "invoice": {"type": "string"},
            "line": {"type": "integer", "minimum": 1},
            "amount_over_cap": {"type": "number"},
        },
        "required": ["invoice", "line", "amount_over_cap"],
        "additionalProperties": False,
    },
    {"type": "object"},
    "irreversible",
)


@dataclass
class World:
    plane: ControlPlane
    run: str
    crm: str
    contract: str
    git: str
    user: str
    foreign: str
    record: str

    def handover(self) -> dict[str, Any]:
        """A hand-over that passes every check; each test changes one thing."""
        return copy.deepcopy(
            {
                "run_id": self.run,
                "from_agent": "auditor",
                "status": "ok",
                "claims": [
                    {
                        "id": "c1",
                        "type": "Assertion",
                        "confidence": 0.9,
                        "text": "Invoice INV-4421 belongs to customer CUST-7781.",
                        "propositions": [
                            {
                                "id": "p1",
                                "text": "The CRM lookup returned invoice INV-4421 for CUST-7781.",
                                "ledger_ids": [self.crm],
                            }
                        ],
                    },
                    {
                        "id": "c2",
                        "type": "Quote",
                        "confidence": 1.0,
                        "text": "The contract caps consulting fees.",
                        "propositions": [
                            {
                                "id": "p2",
                                "text": "caps consulting fees at EUR 380 per day",
                                "ledger_ids": [self.contract],
                            }
                        ],
                    },
                    {
                        "id": "c3",
                        "type": "Conjecture",
                        "confidence": 0.3,
                        "text": "The overcharge may be a data-entry slip.",
                        "propositions": [],
                    },
                ],
                "open_questions": [
                    {"id": "q1", "text": "Was a discount agreed?", "status": "resolved"},
                ],
                "action_intents": [
                    {
                        "id": "a1",
                        "tool": "flag_invoice_line",
                        "requires_grant": True,
                        "args": {"invoice": "INV-4421", "line": 14, "amount_over_cap": 120.0},
                        "depends_on": ["c1", "c2"],
                    }
                ],
                "errors": [],
            }
        )


def make_world(plane: ControlPlane) -> World:
    run = plane.ledger.start_run(metadata={"task": "audit invoice"})
    other = plane.ledger.start_run()
    ledger = plane.ledger
    crm = ledger.append(run, kind="tool_output", source="crm.lookup@1.0.0", content=CRM)
    contract = ledger.append(run, kind="retrieval", source="contract.md", content=CONTRACT)
    git = ledger.append(run, kind="tool_output", source="git.log@1.0.0", content=GIT)
    user = ledger.append(run, kind="human_fact", source="user", content=USER)
    foreign = ledger.append(other, kind="tool_output", source="crm.lookup@1.0.0", content=CRM)
    record = ledger.append(
        run,
        kind="handover",
        source="researcher",
        content='{"claims": ["INV-4421 belongs to CUST-7781"]}',
    )
    plane.registry.register(FLAG, lambda args: {"flag_id": "F-1"})
    return World(
        plane=plane,
        run=run,
        crm=crm.id,
        contract=contract.id,
        git=git.id,
        user=user.id,
        foreign=foreign.id,
        record=record.id,
    )
