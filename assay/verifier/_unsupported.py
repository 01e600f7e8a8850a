"""Abstention records: what could not be verified, and what would settle it."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

UnsupportedLabel = Literal["neutral", "contradiction", "missing_evidence"]


@dataclass(frozen=True, kw_only=True)
class Unsupported:
    """A proposition the evidence does not entail.

    ``missing_evidence`` says concretely what would settle it: the unmatched number or
    name, the contradicting span, or that no ledger entry supports it. The planner
    answers an ``Unsupported`` by finding evidence, never by rewording the claim.
    """

    proposition: str
    missing_evidence: str
    claim_id: str
    proposition_id: str
    label: UnsupportedLabel
    ledger_ids: tuple[str, ...] = ()
    contradicting_ledger_id: str | None = None
    contradicting_span: tuple[int, int] | None = None
    ledger_id: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        # Read back from a checkpoint, sequences arrive as lists.
        object.__setattr__(self, "ledger_ids", tuple(self.ledger_ids))
        if self.contradicting_span is not None:
            object.__setattr__(self, "contradicting_span", tuple(self.contradicting_span))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form (what the ledger stores and the planner receives)."""
        return {
            "proposition": self.proposition,
            "missing_evidence": self.missing_evidence,
            "claim_id": self.claim_id,
            "proposition_id": self.proposition_id,
            "label": self.label,
            "ledger_ids": list(self.ledger_ids),
            "contradicting_ledger_id": self.contradicting_ledger_id,
            "contradicting_span": list(self.contradicting_span)
            if self.contradicting_span
            else None,
        }

    @classmethod
    def from_dict(cls, raw: dict[str, Any], *, ledger_id: str | None = None) -> Unsupported:
        """Read back what :meth:`to_dict` produced (from the ledger or a graph state)."""
        span = raw.get("contradicting_span")
        return cls(
            proposition=raw["proposition"],
            missing_evidence=raw["missing_evidence"],
            claim_id=raw["claim_id"],
            proposition_id=raw["proposition_id"],
            label=raw["label"],
            ledger_ids=tuple(raw.get("ledger_ids", ())),
            contradicting_ledger_id=raw.get("contradicting_ledger_id"),
            contradicting_span=(span[0], span[1]) if span else None,
            ledger_id=ledger_id if ledger_id is not None else raw.get("ledger_id"),
        )

    @classmethod
    def from_json(cls, text: str, *, ledger_id: str | None = None) -> Unsupported:
        """Read back what the ledger stored as an ``unsupported`` entry."""
        return cls.from_dict(json.loads(text), ledger_id=ledger_id)
