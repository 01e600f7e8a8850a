"""The review protocol between a paused fenced graph and a person: typed, versioned,
parsed in one place.

Before an irreversible call the grant node pauses with ``interrupt()`` and hands out
a :class:`ReviewRequest`: each pending call exactly as it would run (tool, version,
arguments and their sha256, call id) and every claim it rests on, with the
verifier's verdicts and the exact ledger spans behind them. The interrupt carries
the request's JSON-mode dump, plain data, so a checkpoint written here reads back in
another process (or another language) without importing these classes;
:meth:`ReviewRequest.from_interrupt` reads it back.

The reviewer answers with ``Command(resume=...)`` holding a :class:`ReviewDecision`,
in one of two shapes::

    {"approve": true, "approver": "alice", "reason": "..."}          # every intent
    {"decisions": {"flag3": {"approve": false, "approver": "bob"}}}  # one by one

:func:`parse_decision` is the only reader of that value: it returns one
:class:`IntentDecision` per pending intent or raises
:class:`~assay.errors.InvalidDecision` before anything is written. ``approve`` is a
real boolean (``1`` and ``"yes"`` are refused, not coerced), an approver is printable
text (no control characters or lone surrogates, at most 200 characters), and a
per-intent decision covers every pending intent: a call nobody decided on is never
taken as approved or denied by default.

Both shapes are published as JSON Schemas (draft 2020-12), shipped beside this
module as ``review_request.schema.json`` and ``review_decision.schema.json``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal, Self, TypeVar, cast

from langgraph.types import Interrupt
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    RootModel,
    ValidationError,
    model_validator,
)

from assay.contract import ActionIntent, Claim, ClaimType, PropositionVerdict
from assay.errors import InvalidDecision
from assay.ledger import LedgerEntry
from assay.tool_bus import GrantRequest, approver_problems

__all__ = [
    "REVIEW_DECISION_SCHEMA_ID",
    "REVIEW_REQUEST_SCHEMA_ID",
    "REVIEW_SCHEMA_VERSION",
    "EvidenceSpan",
    "IntentDecision",
    "PendingCall",
    "Refusal",
    "ReviewClaim",
    "ReviewDecision",
    "ReviewProposition",
    "ReviewRequest",
    "parse_decision",
    "pending_call",
    "review_decision_json_schema",
    "review_decision_json_schema_text",
    "review_request_json_schema",
    "review_request_json_schema_text",
]

REVIEW_SCHEMA_VERSION = "1.0"
_SCHEMAS = f"https://assay.dev/schemas/review/{REVIEW_SCHEMA_VERSION}"
REVIEW_REQUEST_SCHEMA_ID = f"{_SCHEMAS}/review_request.schema.json"
REVIEW_DECISION_SCHEMA_ID = f"{_SCHEMAS}/review_decision.schema.json"

MAX_REASON_CHARS = 2_000
_SHAPE = "{'approve': true|false, 'approver': name} or {'decisions': {intent_id: {...}}}"
# What the validators below enforce, written for other readers of the schema. No "$"
# anchor: Python's matches before a final newline, ECMAScript's does not.
_APPROVER_PATTERN = r"^(?![\s\S]*[\u0000-\u001f\u007f-\u009f\u2028\u2029])(?=[\s\S]*\S)"
_REASON_PATTERN = r"^(?![\s\S]*[\u0000-\u0008\u000b-\u001f\u007f-\u009f])"

_MODEL = ConfigDict(extra="forbid", strict=True, frozen=True)
_M = TypeVar("_M", bound=BaseModel)
NonEmpty = Annotated[str, Field(min_length=1)]


# --- the request: what a reviewer is shown -----------------------------------------


class EvidenceSpan(BaseModel):
    """The exact ledger text a verdict rests on: ``text`` is the entry's content from
    ``start`` to ``end`` (character offsets), ``source`` where the entry came from."""

    model_config = _MODEL

    ledger_id: NonEmpty
    start: Annotated[int, Field(ge=0)]
    end: Annotated[int, Field(ge=0)]
    text: str
    source: str

    @model_validator(mode="after")
    def _ordered(self) -> Self:
        if self.end < self.start:
            raise ValueError("a span ends where it starts or after")
        return self


class ReviewProposition(BaseModel):
    """One proposition of a claim, the verifier's verdict on it and its evidence."""

    model_config = _MODEL

    id: NonEmpty
    text: NonEmpty
    verdict: PropositionVerdict | None
    evidence: EvidenceSpan | None


class ReviewClaim(BaseModel):
    """A claim a pending call depends on, as the verifier left it."""

    model_config = _MODEL

    id: NonEmpty
    type: ClaimType
    text: NonEmpty
    propositions: list[ReviewProposition]


class PendingCall(BaseModel):
    """One irreversible call waiting for a decision, exactly as it would run."""

    model_config = _MODEL

    intent_id: NonEmpty
    tool: NonEmpty
    version: NonEmpty
    args: dict[str, JsonValue]
    args_sha256: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
    call_id: NonEmpty
    depends_on: list[str]
    claims: list[ReviewClaim]
    #: Why no policy rule approved the call, one line per rule (or why none applies).
    policy: list[str] = Field(default_factory=list[str])


class Refusal(BaseModel):
    """Why the previous resume value was not a decision (nothing was done with it)."""

    model_config = _MODEL

    code: Literal["invalid_decision"]
    message: str


class ReviewRequest(BaseModel):
    """The interrupt payload of the grant node: the calls a reviewer decides on."""

    model_config = _MODEL

    run_id: NonEmpty
    thread_id: str | None
    pending: Annotated[list[PendingCall], Field(min_length=1)]
    refused: Refusal | None = None

    def to_interrupt(self) -> dict[str, Any]:
        """The payload handed to ``interrupt()``: plain JSON data."""
        return self.model_dump(mode="json")

    @classmethod
    def from_interrupt(cls, value: object) -> ReviewRequest:
        """Read a request back from an ``Interrupt``, its ``value`` or JSON text;
        pydantic's ``ValidationError`` says what does not fit."""
        if isinstance(value, Interrupt):
            value = value.value
        if isinstance(value, str | bytes):
            return cls.model_validate_json(value)
        return cls.model_validate(value)


def pending_call(
    intent: ActionIntent,
    request: GrantRequest,
    claims: Sequence[Claim],
    entries: Mapping[str, LedgerEntry],
    *,
    policy: Sequence[str] = (),
) -> PendingCall:
    """What a reviewer sees of ``intent``: the exact call ``request`` grants, each of
    ``claims`` it rests on, with verdicts and the spans of ``entries`` (the ledger
    entries the verdicts cite) that support them, and why no policy rule approved it
    (``policy``)."""
    return PendingCall(
        intent_id=intent.id,
        tool=request.tool,
        version=request.version,
        args=cast(dict[str, JsonValue], json.loads(json.dumps(dict(request.args)))),
        args_sha256=request.args_sha256,
        call_id=request.call_id or "",
        depends_on=list(request.depends_on),
        claims=[_review_claim(c, entries) for c in claims if c.id in request.depends_on],
        policy=list(policy),
    )


def _review_claim(claim: Claim, entries: Mapping[str, LedgerEntry]) -> ReviewClaim:
    propositions = [
        ReviewProposition(
            id=prop.id,
            text=prop.text,
            verdict=prop.entailment,
            evidence=_evidence(prop.entailment, entries),
        )
        for prop in claim.propositions
    ]
    return ReviewClaim(id=claim.id, type=claim.type, text=claim.text, propositions=propositions)


def _evidence(
    verdict: PropositionVerdict | None, entries: Mapping[str, LedgerEntry]
) -> EvidenceSpan | None:
    """The exact text of the ledger span a verdict cites, if it cites one."""
    entry = entries.get(verdict.ledger_id or "") if verdict is not None else None
    if verdict is None or verdict.span is None or entry is None:
        return None
    start, end = verdict.span
    return EvidenceSpan(
        ledger_id=entry.id, start=start, end=end, text=entry.text[start:end], source=entry.source
    )


# --- the decision: what a reviewer answers -----------------------------------------


def _printable_approver(value: str) -> str:
    problems = approver_problems(value)
    if problems:
        raise ValueError(problems[0])
    return value


def _printable_reason(value: str) -> str:
    if any(ord(c) < 0x09 or 0x0B <= ord(c) <= 0x1F or 0x7F <= ord(c) <= 0x9F for c in value) or any(
        0xD800 <= ord(c) <= 0xDFFF for c in value
    ):
        raise ValueError("reason must not contain control characters or lone surrogates")
    return value


Approver = Annotated[
    str,
    Field(min_length=1, max_length=200, json_schema_extra={"pattern": _APPROVER_PATTERN}),
    AfterValidator(_printable_approver),
]
Reason = Annotated[
    str,
    Field(max_length=MAX_REASON_CHARS, json_schema_extra={"pattern": _REASON_PATTERN}),
    AfterValidator(_printable_reason),
]


class IntentDecision(BaseModel):
    """What a reviewer decided for one pending intent, and who."""

    model_config = _MODEL

    approve: bool
    approver: Approver
    reason: Reason | None = None


class IntentDecisions(BaseModel):
    """A decision for each pending intent, by intent id."""

    model_config = _MODEL

    decisions: Annotated[dict[str, IntentDecision], Field(min_length=1)]


class ReviewDecision(RootModel[IntentDecision | IntentDecisions]):
    """The resume value: one decision for every pending intent, or one per intent."""

    model_config = ConfigDict(strict=True, frozen=True)


def parse_decision(value: object, pending: Sequence[str] | None) -> dict[str, IntentDecision]:
    """One decision per id in ``pending``, or :class:`~assay.errors.InvalidDecision`
    naming what is wrong with ``value``. With ``pending=None`` (the pending calls are
    not known yet) only the value's own shape is checked and the decisions it states
    are returned (a decision for every intent under the id ``"*"``)."""
    if not isinstance(value, Mapping):
        raise InvalidDecision(f"a decision is a mapping, {_SHAPE}; got {type(value).__name__}")
    data = dict(cast(Mapping[Any, Any], value))
    if "decisions" not in data:
        one = _validated(IntentDecision, data)
        return dict.fromkeys(["*"] if pending is None else pending, one)
    raw = data["decisions"]
    if pending is not None and isinstance(raw, Mapping):
        _check_coverage(list(cast(Mapping[object, Any], raw)), pending)
    decided = _validated(IntentDecisions, data).decisions
    if pending is None:
        return dict(decided)
    return {i: decided[i] for i in pending}


def _check_coverage(named: list[object], pending: Sequence[str]) -> None:
    missing = [i for i in pending if i not in named]
    if missing:
        raise InvalidDecision(f"no decision for pending intent(s) {', '.join(map(repr, missing))}")
    unknown = [k for k in named if k not in pending]
    if unknown:
        raise InvalidDecision(
            "decisions name intent(s) that are not pending: "
            + ", ".join(_show(k) for k in unknown[:10])
        )


def _validated(model: type[_M], data: dict[Any, Any]) -> _M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise InvalidDecision(_message(exc)) from None


def _message(exc: ValidationError) -> str:
    """The first problem pydantic found, told in the decision's own terms."""
    error = exc.errors(include_url=False)[0]
    loc, kind, given = error["loc"], error["type"], error.get("input")
    where, field = "decision", loc
    if loc and loc[0] == "decisions":
        if len(loc) == 1:
            if kind == "too_short":
                return "'decisions' names no intent: it must decide every pending intent"
            return f"'decisions' must map intent ids to decisions, {_SHAPE}"
        if loc[-1] == "[key]":
            return f"'decisions' keys are intent ids (text), not {_show(loc[1])}"
        where, field = f"decisions[{loc[1]!r}]", loc[2:]
    if not field:
        return f"{where} must be a mapping, {_SHAPE}"
    name = field[0]
    if kind == "extra_forbidden":
        return f"{where}: unexpected field {_show(name)}; a decision is {_SHAPE}"
    if name == "approve":
        shown = "" if kind == "missing" else f", not {_show(given)}"
        return f"{where} needs 'approve': true or false{shown}"
    if name == "approver":
        problems = approver_problems(None if kind == "missing" else given)
        return f"{where}: {problems[0] if problems else error['msg']}"
    if name == "reason":
        return (
            f"{where}: 'reason' must be text of at most {MAX_REASON_CHARS} characters "
            "without control characters"
        )
    return f"{where}: {error['msg']}"


def _show(value: object) -> str:
    """A bounded, escaped rendering of a value the caller sent."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


# --- the published schemas ----------------------------------------------------------


def _versioned(schema: dict[str, Any], schema_id: str) -> dict[str, Any]:
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": schema_id,
        "version": REVIEW_SCHEMA_VERSION,
        **schema,
    }


def _text(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def review_request_json_schema() -> dict[str, Any]:
    """The versioned JSON Schema (draft 2020-12) of the interrupt payload."""
    return _versioned(ReviewRequest.model_json_schema(), REVIEW_REQUEST_SCHEMA_ID)


def review_decision_json_schema() -> dict[str, Any]:
    """The versioned JSON Schema (draft 2020-12) of the resume decision."""
    return _versioned(ReviewDecision.model_json_schema(), REVIEW_DECISION_SCHEMA_ID)


def review_request_json_schema_text() -> str:
    """The request schema as the exact text of the shipped file."""
    return _text(review_request_json_schema())


def review_decision_json_schema_text() -> str:
    """The decision schema as the exact text of the shipped file."""
    return _text(review_decision_json_schema())
