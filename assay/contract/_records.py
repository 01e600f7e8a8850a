"""The hand-over contract: what one agent may pass to the next, as pydantic models.

These models are a validation boundary, so they are strict (no coercion: ``"1"`` is
not a number, ``"true"`` is not a boolean) and closed (``extra="forbid"``: there is
no free ``summary`` field to quote prose through). The JSON Schema derived from
them is versioned and shipped as ``assay/gate/handover.schema.json``.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, JsonValue, StrictInt, model_validator

HANDOVER_SCHEMA_VERSION = "1.0"
HANDOVER_SCHEMA_ID = (
    f"https://assay.dev/schemas/handover/{HANDOVER_SCHEMA_VERSION}/handover.schema.json"
)

ClaimType = Literal["Assertion", "Conjecture", "Quote", "ActionIntent"]
VerdictLabel = Literal["entailment", "neutral", "contradiction", "missing_evidence"]

_STRICT = ConfigDict(extra="forbid", strict=True)
NonEmpty = Annotated[str, Field(min_length=1)]


class PropositionVerdict(BaseModel):
    """The verifier's verdict on one proposition; only the verifier writes it."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    label: VerdictLabel
    score: Annotated[float, Field(ge=0.0, le=1.0)]
    ledger_id: str | None = None
    # Spans travel through JSON as arrays, so a list of two ints is accepted here.
    span: Annotated[tuple[StrictInt, StrictInt], Field(strict=False)] | None = None
    model: NonEmpty


class Proposition(BaseModel):
    """One checkable statement and the ledger entries that are its evidence."""

    model_config = _STRICT

    id: NonEmpty
    text: NonEmpty
    pred: str | None = None
    args: list[str] | None = None
    ledger_ids: list[str] = Field(default_factory=list[str])
    entailment: PropositionVerdict | None = None


class Claim(BaseModel):
    """A typed claim: an Assertion or Quote needs evidence, a Conjecture says it has none."""

    model_config = _STRICT

    id: NonEmpty
    type: ClaimType
    text: NonEmpty
    propositions: list[Proposition] = Field(default_factory=list[Proposition])
    confidence: Annotated[float, Field(ge=0.0, le=1.0)]


class OpenQuestion(BaseModel):
    """Something the author could not settle; ``forwarded`` names who will."""

    model_config = _STRICT

    id: NonEmpty
    text: NonEmpty
    status: Literal["open", "resolved", "forwarded"] = "open"
    forwarded_to: NonEmpty | None = None

    @model_validator(mode="after")
    def _forwarded_names_a_receiver(self) -> Self:
        if self.status == "forwarded" and self.forwarded_to is None:
            raise ValueError("a forwarded question must name forwarded_to")
        if self.status != "forwarded" and self.forwarded_to is not None:
            raise ValueError("forwarded_to is only allowed when status is 'forwarded'")
        return self


class ActionIntent(BaseModel):
    """A tool call the author wants made; it runs only through the tool bus."""

    model_config = _STRICT

    id: NonEmpty
    tool: NonEmpty
    version: NonEmpty | None = None
    args: dict[str, JsonValue] = Field(default_factory=dict[str, JsonValue])
    requires_grant: bool
    depends_on: list[str] = Field(default_factory=list[str])


class Handover(BaseModel):
    """Everything one agent hands on: typed claims, open questions, intended actions."""

    model_config = _STRICT

    run_id: NonEmpty
    from_agent: NonEmpty
    status: Literal["ok", "failed"]
    claims: list[Claim] = Field(default_factory=list[Claim])
    open_questions: list[OpenQuestion] = Field(default_factory=list[OpenQuestion])
    action_intents: list[ActionIntent] = Field(default_factory=list[ActionIntent])
    errors: list[NonEmpty] = Field(default_factory=list[str])

    @model_validator(mode="after")
    def _ids_are_unique(self) -> Self:
        """Ids are how checks, verdicts and dependencies point at things: no two alike."""
        seen: dict[str, str] = {}
        items: list[tuple[str, str]] = [(c.id, "claim") for c in self.claims]
        items += [(p.id, "proposition") for c in self.claims for p in c.propositions]
        items += [(q.id, "open question") for q in self.open_questions]
        items += [(a.id, "action intent") for a in self.action_intents]
        for ident, what in items:
            if ident in seen:
                raise ValueError(f"id {ident!r} is used by a {seen[ident]} and a {what}")
            seen[ident] = what
        return self


def handover_json_schema() -> dict[str, Any]:
    """The versioned JSON Schema (draft 2020-12) of :class:`Handover`."""
    schema = Handover.model_json_schema()
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": HANDOVER_SCHEMA_ID,
        "version": HANDOVER_SCHEMA_VERSION,
        **schema,
    }


def handover_json_schema_text() -> str:
    """The schema as the exact text of the shipped file (sorted keys, two-space indent)."""
    return json.dumps(handover_json_schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
