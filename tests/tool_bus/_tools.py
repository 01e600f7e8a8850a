"""Specs, handlers and a stand-in claim-status source shared by the tool bus tests."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from assay.tool_bus import ClaimStatus, ToolSpec

ADD = ToolSpec(
    "add",
    "1.0.0",
    "Add two integers.",
    {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
    {"type": "integer"},
    "read_only",
)

FLAG = ToolSpec(
    "flag_invoice_line",
    "1.0.0",
    "Flag an invoice line as over the contractual cap (sends a notice).",
    {
        "type": "object",
        "properties": {
            "invoice": {"type": "string"},
            "line": {"type": "integer", "minimum": 1},
            "amount_over_cap": {"type": "number"},
            "currency": {"enum": ["EUR", "USD"]},
        },
        "required": ["invoice", "line", "amount_over_cap"],
    },
    {
        "type": "object",
        "properties": {"flag_id": {"type": "string"}},
        "required": ["flag_id"],
        "additionalProperties": False,
    },
    "irreversible",
)


@dataclass
class Counter:
    """A handler that counts its calls and returns what ``result`` computes."""

    calls: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])

    def add(self, args: dict[str, Any]) -> int:
        self.calls.append(args)
        return args["a"] + args["b"]

    def flag(self, args: dict[str, Any]) -> dict[str, str]:
        self.calls.append(args)
        return {"flag_id": f"F-{args['invoice']}-{args['line']}"}


@dataclass
class StandInClaims:
    """A claim-status source with statuses set by the test (the verifier's stand-in)."""

    labels: dict[str, tuple[str, ...]] = field(default_factory=dict[str, tuple[str, ...]])
    #: What each claim's propositions say, as verified (what a policy rule relies on).
    texts: dict[str, tuple[str, ...]] = field(default_factory=dict[str, tuple[str, ...]])
    asked: list[tuple[str, tuple[str, ...]]] = field(
        default_factory=list[tuple[str, tuple[str, ...]]]
    )

    def claim_status(self, run_id: str, claim_ids: Sequence[str]) -> Mapping[str, ClaimStatus]:
        self.asked.append((run_id, tuple(claim_ids)))
        return {
            c: ClaimStatus(
                claim_id=c,
                known=c in self.labels,
                labels=self.labels.get(c, ()),
                texts=self.texts.get(c, ()),
            )
            for c in claim_ids
        }


FLAG_ARGS: dict[str, Any] = {
    "invoice": "INV-7",
    "line": 14,
    "amount_over_cap": 120.5,
    "currency": "EUR",
}
