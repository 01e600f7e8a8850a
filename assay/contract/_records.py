"""The contract's records; see :mod:`assay.contract`."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, Self, cast, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    JsonValue,
    StrictInt,
    Tag,
    model_validator,
)

HANDOVER_SCHEMA_VERSION = "1.0"
HANDOVER_SCHEMA_ID = (
    f"https://assay.dev/schemas/handover/{HANDOVER_SCHEMA_VERSION}/handover.schema.json"
)

__all__ = [
    "HANDOVER_SCHEMA_ID",
    "HANDOVER_SCHEMA_VERSION",
    "NLI_LABELS",
    "ActionIntent",
    "Citation",
    "Claim",
    "ClaimType",
    "Derivation",
    "Handover",
    "NLILabel",
    "OpenQuestion",
    "PointerCitation",
    "Proposition",
    "PropositionVerdict",
    "QuoteCitation",
    "Unsupported",
    "UnsupportedLabel",
    "VerdictLabel",
    "handover_author_properties",
    "handover_json_schema",
    "handover_json_schema_text",
]

ClaimType = Literal["Assertion", "Conjecture", "Quote", "ActionIntent"]
#: What the verifier may write into a proposition's ``entailment``.
VerdictLabel = Literal["entailment", "neutral", "contradiction", "missing_evidence"]
#: The three labels an NLI model emits, in the order the shipped model emits them.
NLILabel = Literal["entailment", "neutral", "contradiction"]
NLI_LABELS: tuple[NLILabel, ...] = get_args(NLILabel)
#: Why a proposition was not accepted: every verdict label but ``entailment``.
UnsupportedLabel = Literal["neutral", "contradiction", "missing_evidence"]

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
    #: What decided the verdict: a deterministic check's id (``unstated_values``,
    #: ``opposite``, ... see :mod:`assay.verifier.checks`) or ``model``.
    check: str | None = None


#: An RFC 6901 JSON Pointer: empty (the whole document) or ``/``-separated tokens
#: in which ``~`` is written only as ``~0`` (a ``~``) or ``~1`` (a ``/``).
JSON_POINTER_PATTERN = r"^(/([^~/]|~[01])*)*$"


class QuoteCitation(BaseModel):
    """A verbatim span of a ledger entry: ``quote`` occurs in the entry's stored text,
    or in one decoded string of a JSON entry, character for character after NFKC."""

    model_config = _STRICT

    ledger_id: NonEmpty
    quote: NonEmpty


class PointerCitation(BaseModel):
    """A field of a JSON ledger entry, named by an RFC 6901 JSON Pointer
    (``/order/total``, ``/lines/2/hours``; ``~1`` is a ``/`` in a key, ``~0`` a ``~``)."""

    model_config = _STRICT

    ledger_id: NonEmpty
    pointer: Annotated[str, Field(pattern=JSON_POINTER_PATTERN)]


def _citation_kind(value: Any) -> str | None:
    """Which citation a raw value is: ``quote`` or ``pointer`` by the key it carries."""
    if isinstance(value, QuoteCitation | PointerCitation):
        return "quote" if isinstance(value, QuoteCitation) else "pointer"
    if not isinstance(value, Mapping):
        return None
    keys = cast(Mapping[str, Any], value)
    if "quote" in keys:
        return "quote"
    return "pointer" if "pointer" in keys else None


#: Where a proposition's evidence says it: a quoted span or a JSON field of one entry.
Citation = Annotated[
    Annotated[QuoteCitation, Tag("quote")] | Annotated[PointerCitation, Tag("pointer")],
    Discriminator(
        _citation_kind,
        custom_error_type="citation_kind",
        custom_error_message="a citation is {ledger_id, quote} or {ledger_id, pointer}",
    ),
]


class Derivation(BaseModel):
    """A value the proposition computes from its cited values, as code can redo it:
    ``expr`` in the derivation language over ``$0``, ``$1``, … (its citations in
    ``cites``, by index), and ``result``, the value it states (``37 minutes``,
    ``EUR 1,246.50``, ``2025-04-13``). See :func:`assay.grounding.derive`."""

    model_config = _STRICT

    expr: NonEmpty
    result: NonEmpty


class Proposition(BaseModel):
    """One checkable statement and the ledger entries that are its evidence.

    ``cites`` points, optionally, at where in those entries the statement is made. An
    entry a citation names is cited: where ``ledger_ids`` leaves it out it is added
    there, in the order of ``cites``, so ``ledger_ids`` may be omitted when every
    entry is cited by a span or a field. ``derivation`` states how a value of the
    proposition is computed from what ``cites`` names, for code to check."""

    model_config = _STRICT

    id: NonEmpty
    text: NonEmpty
    pred: str | None = None
    args: list[str] | None = None
    ledger_ids: list[str] = Field(default_factory=list[str])
    # Left out of a dump where absent, so that a hand-over without citations is
    # recorded, hashed and shown exactly as it was before citations existed.
    cites: list[Citation] | None = Field(default=None, exclude_if=lambda v: v is None)
    derivation: Derivation | None = Field(default=None, exclude_if=lambda v: v is None)
    entailment: PropositionVerdict | None = None

    @model_validator(mode="after")
    def _cited_entries_are_cited(self) -> Self:
        if self.cites:
            held = set(self.ledger_ids)
            added = [c.ledger_id for c in self.cites if c.ledger_id not in held]
            self.ledger_ids = [*self.ledger_ids, *dict.fromkeys(added)]
        return self


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


def handover_author_properties(keys: Sequence[str]) -> dict[str, Any]:
    """The hand-over schema's properties ``keys`` as an agent writes them: ``$ref``s
    inlined (some model providers refuse them in tool parameters) and without
    ``entailment``, which only the verifier writes."""
    full = Handover.model_json_schema()
    defs: dict[str, Any] = full.get("$defs", {})
    return {key: _inline_for_author(full["properties"][key], defs) for key in keys}


def _inline_for_author(node: Any, defs: Mapping[str, Any]) -> Any:
    if isinstance(node, list):
        return [_inline_for_author(item, defs) for item in cast(list[Any], node)]
    if not isinstance(node, dict):
        return node
    named = cast(dict[str, Any], node)
    ref = named.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        rest = {k: v for k, v in named.items() if k != "$ref"}
        return _inline_for_author({**defs[ref.removeprefix("#/$defs/")], **rest}, defs)
    out: dict[str, Any] = {}
    for key, value in named.items():
        if key == "properties" and isinstance(value, dict):
            fields = cast(dict[str, Any], value)
            out[key] = {
                k: _inline_for_author(v, defs) for k, v in fields.items() if k != "entailment"
            }
        else:
            out[key] = _inline_for_author(value, defs)
    return out


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
