"""A reviewer's decision on paused irreversible calls, parsed in one place.

``Command(resume=...)`` carries whatever the caller put in it; the grant node reads
it only through :func:`parse_decision`, which either returns one
:class:`IntentDecision` per pending intent or raises :class:`InvalidDecision`
before anything is written. Two shapes are accepted::

    {"approve": true, "approver": "alice", "reason": "..."}          # every intent
    {"decisions": {"flag3": {"approve": false, "approver": "bob"}}}  # one by one

An approver is printable text (no control characters, no lone surrogates, at most
200 characters), ``approve`` is a real boolean (``1`` and ``"yes"`` are refused, not
coerced), and a per-intent decision must cover every pending intent: a call that
nobody decided on is never treated as denied or approved by default.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from assay.errors import UsageError
from assay.tool_bus import approver_problems

__all__ = ["IntentDecision", "InvalidDecision", "parse_decision"]

_MAX_REASON = 2_000
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_SHAPE = "{'approve': true|false, 'approver': name} or {'decisions': {intent_id: {...}}}"


class InvalidDecision(UsageError):
    """A resume value that is not a decision on the pending calls; nothing was done."""


@dataclass(frozen=True, kw_only=True)
class IntentDecision:
    """What the reviewer decided for one pending intent."""

    intent_id: str
    approve: bool
    approver: str
    reason: str | None = None


def parse_decision(value: object, pending: Sequence[str] | None) -> dict[str, IntentDecision]:
    """One decision per id in ``pending``, or :class:`InvalidDecision` naming what is
    wrong with ``value``. With ``pending=None`` (the pending calls are not known yet)
    only the decision's own shape is checked, and the decisions it states returned."""
    if not isinstance(value, Mapping):
        raise InvalidDecision(f"a decision is a mapping, {_SHAPE}; got {type(value).__name__}")
    data = cast(Mapping[str, Any], value)
    per_intent = data.get("decisions")
    if per_intent is None:
        ids = ["*"] if pending is None else pending
        return {i: _one(i, data, "decision") for i in ids}
    if not isinstance(per_intent, Mapping):
        raise InvalidDecision(f"'decisions' must map intent ids to decisions, {_SHAPE}")
    decisions = cast(Mapping[object, Any], per_intent)
    if pending is None:
        return {str(k): _one(str(k), v, f"decisions[{k!r}]") for k, v in decisions.items()}
    missing = [i for i in pending if i not in decisions]
    if missing:
        raise InvalidDecision(f"no decision for pending intent(s) {', '.join(map(repr, missing))}")
    unknown = [k for k in decisions if k not in pending]
    if unknown:
        raise InvalidDecision(
            f"decisions name intent(s) that are not pending: {', '.join(map(repr, unknown))}"
        )
    return {i: _one(i, decisions[i], f"decisions[{i!r}]") for i in pending}


def _one(intent_id: str, item: object, where: str) -> IntentDecision:
    if not isinstance(item, Mapping):
        raise InvalidDecision(f"{where} must be a mapping, {_SHAPE}")
    data = cast(Mapping[str, Any], item)
    approve = data.get("approve")
    if not isinstance(approve, bool):
        raise InvalidDecision(f"{where} needs 'approve': true or false, not {approve!r}")
    approver = data.get("approver")
    problems = approver_problems(approver)
    if problems:
        raise InvalidDecision(f"{where}: {problems[0]}")
    reason = data.get("reason")
    if reason is not None and (
        not isinstance(reason, str)
        or len(reason) > _MAX_REASON
        or _CONTROL.search(reason)
        or any(0xD800 <= ord(c) <= 0xDFFF for c in reason)
    ):
        raise InvalidDecision(
            f"{where}: 'reason' must be text of at most {_MAX_REASON} characters "
            "without control characters"
        )
    assert isinstance(approver, str)
    return IntentDecision(intent_id=intent_id, approve=approve, approver=approver, reason=reason)
