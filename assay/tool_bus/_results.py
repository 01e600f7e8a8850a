"""Stored call results, read back with suspicion.

A result row is what a replay of the call returns, so a row written into
``tool_call_results`` by hand would decide what the planner is told about a call
that did, or did not, happen. A stored result is returned only when it parses and
points at a ledger entry of the same run that records the same call id (the
``tool_output`` or ``error`` entry the bus wrote, or the ``settlement`` entry of a
call whose outcome was unknown until a person or the tool's lookup settled it);
otherwise the replay answers ``stored_result_invalid`` and the handler is still
never run again.

A call that started and has no result is ``call_in_progress``: its handler may still
be running, or the process running it stopped before the result was recorded, and
then whether its effect happened is unknown (see :mod:`assay.tool_bus._outcomes`).
"""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from assay.errors import AssayError
from assay.ledger import Ledger
from assay.tool_bus import _tables as t
from assay.tool_bus._records import ToolFailure, ToolResult
from assay.tool_bus._validation import Call

__all__ = [
    "RESULT_KINDS",
    "checked_result",
    "conflict_body",
    "earlier_result",
    "in_progress",
    "started",
    "stored_result",
]

#: The ledger kinds a stored result may point at.
RESULT_KINDS = frozenset({"tool_output", "error", "settlement"})


def checked_result(ledger: Ledger, run_id: str, call_id: str, text: str) -> ToolResult:
    """The stored result of ``call_id``, if the ledger vouches for it."""
    try:
        result = ToolResult.from_json(text)
        entry = ledger.get(result.ledger_id or "")
    except (AssayError, ValueError, TypeError, KeyError, AttributeError):
        entry, result = None, None
    if (
        result is not None
        and entry is not None
        and entry.run_id == run_id
        and entry.kind in RESULT_KINDS
        and entry.metadata.get("call_id") == call_id
    ):
        return result
    return ToolResult(
        ok=False,
        error=ToolFailure(
            code="stored_result_invalid",
            message=(
                f"the stored result of call {call_id!r} is not one this bus recorded (no "
                "matching ledger entry); it is not returned, and the call is not run again"
            ),
        ),
    )


def conflict_body(call_id: str, result: ToolResult) -> dict[str, object]:
    """The ``error`` entry written when a result row for the call already existed
    when the handler finished: that row was not written by this bus."""
    return {
        "code": "result_conflict",
        "call_id": call_id,
        "message": "a result row for this call existed before the handler finished; "
        "it was not written by this bus, and this entry records what the call came to",
        "result": result.as_json(),
    }


def earlier_result(engine: Engine, ledger: Ledger, call: Call) -> ToolResult | None:
    """What an earlier start of ``call``'s id came to: ``None`` if it never started,
    ``call_id_conflict`` if it was another call, ``call_in_progress`` without a result."""
    with engine.connect() as conn:
        row = conn.execute(
            sa.select(t.calls).where(
                t.calls.c.run_id == call.run_id, t.calls.c.call_id == call.call_id
            )
        ).first()
        if row is None:
            return None
        done = conn.execute(
            sa.select(t.results.c.result_json).where(
                t.results.c.run_id == call.run_id, t.results.c.call_id == call.call_id
            )
        ).scalar()
    same_version = call.version is None or call.version == row.version
    if row.tool != call.tool or not same_version or row.args_sha256 != call.args_sha256:
        return ToolResult(
            ok=False,
            error=ToolFailure(
                code="call_id_conflict",
                message=(
                    f"call id {call.call_id!r} was used for another call "
                    f"({row.tool}@{row.version}, arguments sha256 {row.args_sha256[:12]}…)"
                ),
            ),
        )
    if done is None:
        return in_progress(call.call_id, row.call_ledger_id, row.started_at)
    return checked_result(ledger, call.run_id, call.call_id, done)


def in_progress(call_id: str, call_ledger_id: str, started_at: datetime) -> ToolResult:
    """``call_in_progress``: the call started and has no result. Nothing here can tell
    a handler still running from one whose process stopped, so the message says both,
    and that the call is never run again either way."""
    return ToolResult(
        ok=False,
        ledger_id=call_ledger_id,
        error=ToolFailure(
            code="call_in_progress",
            message=(
                f"call {call_id!r} started at {started_at} and has no result yet: its "
                "handler is still running, or its process stopped and whether it took "
                "effect is unknown (ToolBus.recover reports which, settle_call settles it); "
                "it will not be run again under this call id"
            ),
        ),
    )


def stored_result(engine: Engine, ledger: Ledger, run_id: str, call_id: str) -> ToolResult | None:
    """The stored result of ``call_id`` in ``run_id``, checked; ``None`` without one."""
    with engine.connect() as conn:
        done = conn.execute(
            sa.select(t.results.c.result_json).where(
                t.results.c.run_id == run_id, t.results.c.call_id == call_id
            )
        ).scalar()
    return None if done is None else checked_result(ledger, run_id, call_id, done)


def started(engine: Engine, run_id: str, call_id: str) -> bool:
    with engine.connect() as conn:
        row = conn.execute(
            sa.select(t.calls.c.call_id).where(
                t.calls.c.run_id == run_id, t.calls.c.call_id == call_id
            )
        ).first()
    return row is not None
