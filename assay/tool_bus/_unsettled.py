"""The records of calls whose outcome a crash left unknown, and of their settlement.

:class:`UnsettledCall` is what a person needs to check an effect; :class:`Settlement`
is what they (or the tool's lookup) found, as its ``settlement`` ledger entry holds it.
The two failures built here are what the bus answers for such a call:
``outcome_unknown`` (names the call, its ``tool_call`` entry and its effect's key
values, and says how to settle it) and ``outcome_settled`` (its stored result once
settled, pointing at the ``settlement`` entry).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from assay._limits import safe_repr
from assay.ledger import canonical_json
from assay.tool_bus._records import ErrorDetail, SettledOutcome, ToolFailure, ToolResult

__all__ = ["Settlement", "UnsettledCall", "settled_result", "unknown_failure"]


@dataclass(frozen=True, kw_only=True)
class UnsettledCall:
    """A call whose handler started and whose result was never recorded: what a
    person needs to check whether its effect happened."""

    run_id: str
    call_id: str
    tool: str
    version: str
    args_sha256: str
    #: The call's ``tool_call`` ledger entry: what a superseding grant names.
    call_ledger_id: str
    grant_id: str | None
    started_at: datetime
    #: The arguments as the ``tool_call`` entry holds them (``None`` if unreadable).
    args: Any = None
    #: ``{pointer: value}`` of the tool's idempotency key, as the arguments give them.
    key_values: Mapping[str, Any] = field(default_factory=dict[str, Any])
    #: When the handler must have ended if its process lived (its time limit in this
    #: process plus ``SETTLE_MARGIN_S``); ``None`` when the tool has no limit here.
    may_run_until: datetime | None = None

    def within_limit(self, now: datetime | None = None) -> bool:
        """Whether the handler may still be running within its known time limit."""
        return self.may_run_until is not None and _now(now) < self.may_run_until

    def past_limit(self, now: datetime | None = None) -> bool:
        """Whether its known time limit has passed: its process is gone."""
        return self.may_run_until is not None and _now(now) >= self.may_run_until


@dataclass(frozen=True, kw_only=True)
class Settlement:
    """What a call whose outcome was unknown came to, as a person or the tool's
    lookup said, and the ``settlement`` ledger entry that records it."""

    run_id: str
    call_id: str
    tool: str
    version: str
    call_ledger_id: str
    outcome: SettledOutcome
    #: Who said so: the person's name, or ``lookup:<tool>@<version>``.
    by: str
    via: Literal["person", "lookup"]
    note: str | None
    #: What the lookup said of the effect (JSON), ``None`` for a person.
    detail: Any
    key_values: Mapping[str, Any]
    settled_at: datetime
    ledger_id: str

    @property
    def message(self) -> str:
        """What the settlement means, and what it does not release."""
        said = f"settled as {self.outcome.replace('_', ' ')} by {self.by}"
        said += f": {self.note}" if self.note else ""
        head = f"{self.tool}@{self.version} call {self.call_id!r}"
        if self.outcome == "performed":
            return f"{head} took effect ({said}); it is not run again"
        if self.key_values:
            repeat = (
                f"the call still holds its effect ({_named(self.key_values)}), so a repeat "
                f"needs a person's grant that supersedes ledger entry {self.call_ledger_id}"
            )
        else:
            repeat = "a repeat is a new call, under a new call id and its own grant"
        return f"{head} did not take effect ({said}). Nothing is released: {repeat}"

    def as_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "call_id": self.call_id,
            "tool": self.tool,
            "version": self.version,
            "call_ledger_id": self.call_ledger_id,
            "outcome": self.outcome,
            "by": self.by,
            "via": self.via,
            "note": self.note,
            "detail": self.detail,
            "key": dict(self.key_values),
            "settled_at": self.settled_at.isoformat(),
        }

    @classmethod
    def from_json(cls, body: Mapping[str, Any], ledger_id: str) -> Settlement:
        """The settlement a ``settlement`` entry's content holds."""
        return cls(
            run_id=body["run_id"],
            call_id=body["call_id"],
            tool=body["tool"],
            version=body["version"],
            call_ledger_id=body["call_ledger_id"],
            outcome=body["outcome"],
            by=body["by"],
            via=body["via"],
            note=body["note"],
            detail=body["detail"],
            key_values=dict(body["key"]),
            settled_at=datetime.fromisoformat(body["settled_at"]),
            ledger_id=ledger_id,
        )


def unknown_failure(call: UnsettledCall, why: str) -> ToolFailure:
    """``outcome_unknown``: names the call and its effect, and says how to settle it."""
    effect = f" ({_named(call.key_values)})" if call.key_values else ""
    stopped = (
        "its process stopped before the result was recorded"
        if call.may_run_until is not None
        else "no result was recorded (with no time limit here, a handler still running "
        "cannot be told from one whose process stopped)"
    )
    message = (
        f"{call.tool}@{call.version} call {call.call_id!r} started at "
        f"{call.started_at.isoformat()} and {stopped}: whether its effect{effect} "
        "happened is unknown, and it is not run again under this call id. Check the "
        "effect, then settle it with "
        f"settle_call({call.run_id!r}, {call.call_id!r}, outcome='performed' or "
        f"'not_performed', by=<who checked>). Not settled automatically: {why}"
    )
    details = [
        ErrorDetail(path="/tool", message=f"{call.tool}@{call.version}"),
        ErrorDetail(path="/run_id", message=call.run_id),
        ErrorDetail(path="/call_id", message=call.call_id),
        ErrorDetail(path="/call_ledger_id", message=call.call_ledger_id),
        ErrorDetail(path="/started_at", message=call.started_at.isoformat()),
    ]
    details += [
        ErrorDetail(path=f"/key{pointer}", message=_shown(value))
        for pointer, value in call.key_values.items()
    ]
    return ToolFailure(code="outcome_unknown", message=message, details=details)


def settled_result(settlement: Settlement) -> ToolResult:
    """The stored result of a settled call: ``outcome_settled``, pointing at its
    ``settlement`` entry."""
    details = [
        ErrorDetail(path="/outcome", message=settlement.outcome),
        ErrorDetail(path="/by", message=settlement.by),
        ErrorDetail(path="/call_id", message=settlement.call_id),
        ErrorDetail(path="/call_ledger_id", message=settlement.call_ledger_id),
    ]
    failure = ToolFailure(code="outcome_settled", message=settlement.message, details=details)
    return ToolResult(ok=False, ledger_id=settlement.ledger_id, error=failure)


def _named(values: Mapping[str, Any]) -> str:
    return ", ".join(f"{pointer}={_shown(value)}" for pointer, value in values.items())


def _shown(value: Any) -> str:
    try:
        return canonical_json(value).decode("utf-8")
    except Exception:  # a value the stored arguments hold cannot fail, but never raise
        return safe_repr(value, 200)


def _now(now: datetime | None) -> datetime:
    return now if now is not None else datetime.now(UTC)
