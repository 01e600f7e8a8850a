"""How the act node calls the bus, and reports a call whose outcome a crash left
unknown, or settled since.

An intent's call id is derived from the run and the intent, so a replayed act node
finds the call it made before. When that call has started and has no result, the
node waits while its handler may still be running (another process resumed the same
run), then asks the bus to recover it (the tool's lookup may settle it).

A call whose handler started and whose result was never recorded (its process was
killed in between) may or may not have done its effect. Its action is ``unknown``,
never ``failed``: a failure invites a retry, and the effect must not happen twice.
The action's ``error`` (code ``outcome_unknown``) names the call in its details (the
tool, the run, the call id, the call's ``tool_call`` ledger entry and the effect's
key values), and its ``reason`` says how to settle it. Once a person
(``bus.settle_call``) or the tool's lookup settled it, the action is what the call
came to: ``executed`` (performed) or ``not_run`` (not performed), with the
``settlement`` ledger entry and what the settlement means as its ``reason``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, TypedDict, cast

from assay.contract import ActionIntent
from assay.fence._components import FenceComponents
from assay.fence._result import ActionRecord, ActionStatus, RunResult
from assay.tool_bus import Settlement, ToolBus, ToolResult

__all__ = ["UnsettledFields", "call_and_wait", "unsettled_action", "with_settlements"]

_POLL_S = 0.2
#: Seconds past a handler's time limit that its process has to record the result.
_MARGIN_S = 5.0

#: Codes of a call that started and has no result of its own.
_UNKNOWN = frozenset({"outcome_unknown", "call_in_progress"})


def call_and_wait(
    control_plane: FenceComponents,
    run_id: str,
    intent: ActionIntent,
    granted: Mapping[str, Any],
    call_id: str,
) -> ToolResult:
    """The intent's call through the bus. When another process is running the same
    call (two processes resumed one run), wait for its result while its handler may
    still be running (within its time limit and a margin; for a tool without one,
    the bus's timeout and the margin), rather than report a call that is under way.
    A call still without a result then is recovered: its tool's lookup may settle
    it, else it is reported ``outcome_unknown`` (and never run again)."""

    def once() -> ToolResult:
        return control_plane.bus.call(
            run_id,
            intent.tool,
            intent.args,
            version=intent.version,
            grant_id=granted.get("grant_id"),
            call_id=call_id,
            depends_on=intent.depends_on,
        )

    result = once()
    fallback = time.monotonic() + (control_plane.bus.timeout_s or 30.0) + _MARGIN_S
    while _in_progress(result) and _may_still_run(control_plane.bus, run_id, call_id, fallback):
        time.sleep(_POLL_S)
        result = once()
    if _in_progress(result):
        result = control_plane.bus.recover(run_id, call_id)
    return result


def _in_progress(result: ToolResult) -> bool:
    return result.error is not None and result.error.code == "call_in_progress"


def _may_still_run(bus: ToolBus, run_id: str, call_id: str, fallback: float) -> bool:
    """Whether the call's handler may still be running: within its time limit here,
    or, for a tool without one, until ``fallback`` (a ``time.monotonic()`` value)."""
    call = bus.unsettled(run_id, call_id)
    if call is None:
        return True  # its result has just been recorded: the next call returns it
    if call.may_run_until is None:
        return time.monotonic() < fallback
    return call.within_limit()


class UnsettledFields(TypedDict):
    """What an action of a call whose outcome was unknown came to, and why."""

    status: ActionStatus
    ledger_id: str | None
    error: dict[str, Any] | None
    reason: str | None


def unsettled_action(
    bus: ToolBus, run_id: str, call_id: str, result: ToolResult
) -> UnsettledFields | None:
    """The action's fields for a call whose outcome is unknown or was settled;
    ``None`` for any other result."""
    error = result.error
    if error is None:
        return None
    settled = bus.settlement(run_id, call_id) if error.code == "outcome_settled" else None
    if settled is not None:
        return _settled_fields(settled)
    if error.code in _UNKNOWN or error.code == "outcome_settled":
        return {
            "status": "unknown",
            "ledger_id": result.ledger_id,
            "error": error.as_json(),
            "reason": error.message,
        }
    return None


def with_settlements(bus: ToolBus, result: RunResult) -> RunResult:
    """``result`` with each ``unknown`` action that was settled since shown as what
    it came to, and the run's status with them (an ``incomplete`` run whose every
    action is now settled as performed reads ``answered``); a run's stored result is
    read back, never rewritten."""
    if not any(a.status == "unknown" for a in result.actions):
        return result
    actions = tuple(_refreshed(bus, result.run_id, a) for a in result.actions)
    status = result.status
    if status == "incomplete" and all(a.status in ("executed", "denied") for a in actions):
        status = "denied" if any(a.status == "denied" for a in actions) else "answered"
    return replace(result, actions=actions, status=status)


def _refreshed(bus: ToolBus, run_id: str, action: ActionRecord) -> ActionRecord:
    call_id = _call_id(action.error) if action.status == "unknown" else None
    settled = bus.settlement(run_id, call_id) if call_id is not None else None
    if settled is None:
        return action
    fields = _settled_fields(settled)
    return replace(
        action,
        status=fields["status"],
        ledger_id=fields["ledger_id"],
        error=None,
        reason=fields["reason"],
    )


def _settled_fields(settled: Settlement) -> UnsettledFields:
    return {
        "status": "executed" if settled.outcome == "performed" else "not_run",
        "ledger_id": settled.ledger_id,
        "error": None,
        "reason": settled.message,
    }


def _call_id(error: Mapping[str, Any] | None) -> str | None:
    """The call id an ``outcome_unknown`` error names in its details."""
    details: Any = (error or {}).get("details") or []
    for detail in cast(list[Any], details if isinstance(details, list) else []):
        if isinstance(detail, Mapping):
            item = cast(Mapping[str, Any], detail)
            if item.get("path") == "/call_id" and isinstance(item.get("message"), str):
                return cast(str, item["message"])
    return None
