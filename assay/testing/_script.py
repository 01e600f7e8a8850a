"""The steps of a scripted chat model: tool calls to make, then a hand-over to write.

A script is data: :func:`call` asks for tool calls, :func:`hand_over` ends a round
with claims, open questions and action intents. A claim's text, and an intent's
arguments, may be written from what the tools returned (a template or a function of
the results), and each proposition cites the ledger ids of the results it names, so
a test never has to know an id in advance.
"""

from __future__ import annotations

import json
import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "Call",
    "ClaimStep",
    "HandOver",
    "IntentStep",
    "ScriptError",
    "Seen",
    "Step",
    "call",
    "claim",
    "hand_over",
    "intent",
]

#: What a claim's text or an intent's arguments may be computed from: each tool's
#: latest output, by tool name (a JSON object output as a dict).
Results = Mapping[str, Any]
ClaimType = Literal["Assertion", "Conjecture", "Quote"]


class ScriptError(AssertionError):
    """The script cannot go on: it ran out, or a step names a result nobody returned.

    An ``AssertionError``, since it is a mistake in a test, not in the code tested."""


@dataclass(frozen=True, kw_only=True)
class Seen:
    """One tool result the model was sent: the tool, its output and its ledger id."""

    tool: str
    output: Any
    ledger_id: str | None
    ok: bool


@dataclass(frozen=True, kw_only=True)
class Call:
    """One turn of tool calls (several run in parallel, as a model may ask)."""

    calls: tuple[tuple[str, Mapping[str, Any]], ...]


@dataclass(frozen=True, kw_only=True)
class ClaimStep:
    """A claim to hand over; ``text`` and ``propositions`` are templates
    (``str.format`` fields name tools: ``{lookup_order[total]}``) or functions of the
    results."""

    text: str | Callable[[Results], str]
    cites: tuple[str, ...] | None
    type: ClaimType
    confidence: float
    propositions: tuple[str | Callable[[Results], str], ...]
    id: str | None
    optional: bool = False


@dataclass(frozen=True, kw_only=True)
class IntentStep:
    """An action intent to hand over; ``args`` may be a function of the results."""

    tool: str
    args: Mapping[str, Any] | Callable[[Results], Mapping[str, Any]]
    requires_grant: bool
    depends_on: tuple[str, ...] | None
    id: str | None


@dataclass(frozen=True, kw_only=True)
class HandOver:
    """The end of a round: the hand-over the model writes as its structured output."""

    claims: tuple[ClaimStep, ...] = ()
    open_questions: tuple[str, ...] = ()
    action_intents: tuple[IntentStep, ...] = field(default=())


Step = Call | HandOver


def call(tool: str, args: Mapping[str, Any] | None = None, /, **kwargs: Any) -> Call:
    """A turn that calls ``tool`` with ``args`` (or keyword arguments)."""
    return Call(calls=((tool, {**(args or {}), **kwargs}),))


def claim(
    text: str | Callable[[Results], str],
    *,
    cites: str | Sequence[str] | None = None,
    type: ClaimType = "Assertion",
    confidence: float = 0.9,
    propositions: Sequence[str | Callable[[Results], str]] = (),
    id: str | None = None,
    optional: bool = False,
) -> ClaimStep:
    """A claim whose propositions cite the latest result of each tool ``cites``
    names (default: every result of the round). Without ``propositions`` the claim
    is its one proposition. An ``optional`` claim is left out when a result it names
    or cites is not there (a refund that was denied), where another would raise
    :class:`ScriptError`."""
    named = (cites,) if isinstance(cites, str) else None if cites is None else tuple(cites)
    return ClaimStep(
        text=text,
        cites=named,
        type=type,
        confidence=confidence,
        propositions=tuple(propositions),
        id=id,
        optional=optional,
    )


def intent(
    tool: str,
    args: Mapping[str, Any] | Callable[[Results], Mapping[str, Any]],
    *,
    requires_grant: bool = True,
    depends_on: Sequence[str] | None = None,
    id: str | None = None,
) -> IntentStep:
    """An action intent; it depends on every claim of the hand-over unless
    ``depends_on`` names others."""
    deps = None if depends_on is None else tuple(depends_on)
    return IntentStep(tool=tool, args=args, requires_grant=requires_grant, depends_on=deps, id=id)


def hand_over(
    *claims: ClaimStep,
    open_questions: Sequence[str] = (),
    action_intents: Sequence[IntentStep] = (),
) -> HandOver:
    """The hand-over that ends a round."""
    return HandOver(
        claims=claims, open_questions=tuple(open_questions), action_intents=tuple(action_intents)
    )


# --- writing a hand-over from the results ----------------------------------------------


def draft(step: HandOver, round_results: Sequence[Seen], every_result: Sequence[Seen]) -> Any:
    """The hand-over ``step`` stands for, written from the results seen: templates
    filled from each tool's latest output, citations from their ledger ids."""
    latest = {seen.tool: seen for seen in every_result if seen.ok}
    values = {tool: seen.output for tool, seen in latest.items()}
    written = [_claim(c, i, values, latest, round_results) for i, c in enumerate(step.claims, 1)]
    claims = [c for c in written if c is not None]
    claim_ids = [c["id"] for c in claims]
    intents = [_intent(a, i, values, claim_ids) for i, a in enumerate(step.action_intents, 1)]
    questions = [{"id": f"q{i}", "text": q} for i, q in enumerate(step.open_questions, 1)]
    return {"claims": claims, "open_questions": questions, "action_intents": intents}


def _claim(
    step: ClaimStep,
    number: int,
    values: Results,
    latest: Mapping[str, Seen],
    round_results: Sequence[Seen],
) -> dict[str, Any] | None:
    claim_id = step.id or f"c{number}"
    try:
        text = _written(step.text, values)
        texts = [_written(p, values) for p in step.propositions] or [text]
        ids = _cited(step.cites, latest, round_results) if step.type != "Conjecture" else []
    except ScriptError:
        if step.optional:
            return None
        raise
    propositions = [
        {"id": f"{claim_id}.p{k}", "text": t, "ledger_ids": ids} for k, t in enumerate(texts, 1)
    ]
    return {
        "id": claim_id,
        "type": step.type,
        "text": text,
        "confidence": step.confidence,
        "propositions": propositions,
    }


def _intent(
    step: IntentStep, number: int, values: Results, claim_ids: Sequence[str]
) -> dict[str, Any]:
    args = step.args(values) if callable(step.args) else step.args
    return {
        "id": step.id or f"a{number}",
        "tool": step.tool,
        "args": dict(args),
        "requires_grant": step.requires_grant,
        "depends_on": list(claim_ids if step.depends_on is None else step.depends_on),
    }


def _written(text: str | Callable[[Results], str], values: Results) -> str:
    if callable(text):
        return text(values)
    try:
        return string.Formatter().vformat(text, (), dict(values))
    except (KeyError, IndexError, AttributeError, TypeError, ValueError) as exc:
        raise ScriptError(
            f"the script's text {text!r} names a result that is not there ({exc!r}); "
            f"the tools returned: {json.dumps(dict(values), default=str)}"
        ) from None


def _cited(
    cites: tuple[str, ...] | None, latest: Mapping[str, Seen], round_results: Sequence[Seen]
) -> list[str]:
    if cites is None:
        return list(dict.fromkeys(s.ledger_id for s in round_results if s.ok and s.ledger_id))
    missing = [tool for tool in cites if tool not in latest]
    if missing:
        raise ScriptError(
            f"the script cites {', '.join(missing)}, which returned no result "
            f"(results came from: {', '.join(latest) or 'no tool'})"
        )
    return [i for i in (latest[tool].ledger_id for tool in cites) if i]
