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
            # Each argument is read from one over_cap(invoice, line, amount, currency)
            # proposition: what a policy rule may approve (x-assay-role).
            "invoice": {"type": "string", "x-assay-role": {"pred": "over_cap", "arg": 0}},
            "line": {
                "type": "integer",
                "minimum": 1,
                "x-assay-role": {"pred": "over_cap", "arg": 1},
            },
            "amount_over_cap": {"type": "number", "x-assay-role": {"pred": "over_cap", "arg": 2}},
            "currency": {"enum": ["EUR", "USD"], "x-assay-role": {"pred": "over_cap", "arg": 3}},
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
    #: The ``(pred, args)`` of each claim's propositions, as verified.
    slots: dict[str, tuple[tuple[str | None, tuple[str, ...]], ...]] = field(
        default_factory=dict[str, tuple[tuple[str | None, tuple[str, ...]], ...]]
    )
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
                slots=self.slots.get(c, ()),
            )
            for c in claim_ids
        }


#: The typed proposition that states every value of FLAG_ARGS in its role.
OVER_CAP = ("over_cap", ("INV-7", "line 14", "EUR 120.50", "EUR"))

FLAG_ARGS: dict[str, Any] = {
    "invoice": "INV-7",
    "line": 14,
    "amount_over_cap": 120.5,
    "currency": "EUR",
}
