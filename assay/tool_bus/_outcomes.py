"""Calls whose outcome is unknown, and how they are settled.

A call's start is committed before its handler runs and its result after, so a
process killed in between (SIGKILL, a power cut, a database that failed while the
result was recorded) leaves a call that started and never settled. Its handler may or
may not have done its effect; the bus never runs that call id again. Such a call is
reported as *unknown* (``outcome_unknown``), never as failed: a failure invites a
retry, and a retry of an effect that happened is what the bus exists to prevent.

It is settled in one of two ways, each recorded as a ``settlement`` ledger entry (a
record kind, never evidence) and as the call's stored result, in one transaction, so
that every later replay of the call id answers ``outcome_settled``:

- a person checks the effect and says what happened:
  ``bus.settle_call(run_id, call_id, outcome="performed" | "not_performed", by=...)``;
- the tool's own lookup (``registry.register(..., lookup=...)``), asked by
  :meth:`CallSettling.recover` with the effect's key values, says it.

Only one settlement of a call is ever stored (the result row's primary key), and a
call that may still be running (started less than its handler's time limit, plus a
margin, ago) is not settled. Settling ``not_performed`` releases nothing: the call
still holds its effect's key, so a repeat needs a person's grant that supersedes it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, cast

import sqlalchemy as sa
from jsonpointer import JsonPointerException, resolve_pointer
from sqlalchemy.engine import Engine

from assay._db import InsertIfAbsent
from assay._limits import (
    MAX_APPROVER_CHARS,
    MAX_CALL_ID_CHARS,
    MAX_MESSAGE_CHARS,
    MAX_RUN_ID_CHARS,
    check_text,
    safe_repr,
)
from assay.errors import AssayError, InvalidCall, ToolNotFound
from assay.ledger import Ledger, canonical_json
from assay.tool_bus import _tables as t
from assay.tool_bus._records import (
    LookupAnswer,
    SettledOutcome,
    ToolResult,
)
from assay.tool_bus._registry import ToolRegistry
from assay.tool_bus._results import in_progress, stored_result
from assay.tool_bus._run import describe, run_sync
from assay.tool_bus._spec import loads_canonical
from assay.tool_bus._unsettled import (
    Settlement,
    UnsettledCall,
    settled_result,
    unknown_failure,
)
from assay.tool_bus._validation import kept_output

__all__ = ["SETTLE_MARGIN_S", "CallSettling"]

#: Seconds past a handler's time limit after which a call without a result cannot
#: still be running: its process would have recorded the timeout by then.
SETTLE_MARGIN_S = 5.0
_OUTCOMES = ("performed", "not_performed")
_INSERT_RESULT_IF_ABSENT = InsertIfAbsent(t.results)


class CallSettling:
    """The part of :class:`~assay.tool_bus.ToolBus` that reads, recovers and settles
    calls cut short (see the module's docstring)."""

    _engine: Engine
    _ledger: Ledger
    _registry: ToolRegistry
    timeout_s: float | None

    def unsettled(self, run_id: str, call_id: str) -> UnsettledCall | None:
        """The call ``call_id`` of ``run_id`` if it started and has no result."""
        _check_ids(run_id, call_id)
        with self._engine.connect() as conn:
            row = conn.execute(
                sa.select(t.calls).where(t.calls.c.run_id == run_id, t.calls.c.call_id == call_id)
            ).first()
            if row is None or _has_result(conn, run_id, call_id):
                return None
        args = self._call_args(run_id, call_id, row.call_ledger_id)
        started = _utc(row.started_at)
        limit = self._limit(row.tool, row.version)
        return UnsettledCall(
            run_id=run_id,
            call_id=call_id,
            tool=row.tool,
            version=row.version,
            args_sha256=row.args_sha256,
            call_ledger_id=row.call_ledger_id,
            grant_id=row.grant_id,
            started_at=started,
            args=args,
            key_values=self._key_values(row.tool, row.version, args),
            may_run_until=None
            if limit is None
            else started + timedelta(seconds=limit + SETTLE_MARGIN_S),
        )

    def settlement(self, run_id: str, call_id: str) -> Settlement | None:
        """How the call was settled, if a person or its lookup settled it."""
        _check_ids(run_id, call_id)
        result = stored_result(self._engine, self._ledger, run_id, call_id)
        if result is None or result.error is None or result.error.code != "outcome_settled":
            return None
        try:
            entry = self._ledger.get(result.ledger_id or "")
            return Settlement.from_json(loads_canonical(cast(str, entry.content)), entry.id)
        except (AssayError, ValueError, TypeError, KeyError):
            return None

    def settle_call(
        self,
        run_id: str,
        call_id: str,
        *,
        outcome: SettledOutcome,
        by: str,
        note: str | None = None,
    ) -> Settlement:
        """Record what a person found of a call whose outcome is unknown: its effect
        was ``performed`` or ``not_performed``. Every later replay of the call id
        answers ``outcome_settled``; ``not_performed`` releases nothing (see
        :attr:`Settlement.message`).

        Raises :class:`~assay.errors.InvalidCall`, writing nothing, for an outcome,
        a name or a note it cannot record, a call that never started, one that has a
        result (settled or not), and one that may still be running.
        """
        _check_settle(outcome, by, note)
        call = self._open_call(run_id, call_id)
        if call.within_limit():
            raise InvalidCall(
                f"call {call_id!r} started at {call.started_at.isoformat()} and may still be "
                f"running; settle it after {cast(datetime, call.may_run_until).isoformat()}"
            )
        return self._record_settlement(call, outcome, by=by, via="person", note=note)

    def recover(self, run_id: str, call_id: str) -> ToolResult:
        """What to report for a call that started and may never settle by itself.

        Its stored result when it has one; ``call_in_progress`` while its handler may
        still run within its time limit; else the tool's lookup is asked (with the
        effect's key values) and what it says is recorded as a settlement
        (``outcome_settled``). Without an answer the call is ``outcome_unknown``: an
        ``error`` entry names the call, its ``tool_call`` entry, the key values and
        how to settle it. A ``not_performed`` answer about a call with no time limit
        here is not recorded (its handler may still be running). Raises
        :class:`~assay.errors.InvalidCall` for a call that never started.
        """
        call = self.unsettled(run_id, call_id)
        if call is None:
            return self._stored(run_id, call_id)
        if call.within_limit():
            return in_progress(call_id, call.call_ledger_id, call.started_at)
        answer = self._ask_lookup(call)
        if isinstance(answer, LookupAnswer) and (answer.performed or call.past_limit()):
            outcome: SettledOutcome = "performed" if answer.performed else "not_performed"
            by = f"lookup:{call.tool}@{call.version}"
            try:
                settled = self._record_settlement(
                    call, outcome, by=by, via="lookup", detail=answer.detail
                )
            except InvalidCall:  # settled, or finished, in the meantime
                return self._stored(run_id, call_id)
            return settled_result(settled)
        if isinstance(answer, LookupAnswer):
            answer = "the lookup found no effect, but the call has no time limit here"
        return self._record_unknown(call, answer)

    # --- reading ----------------------------------------------------------------------

    def _open_call(self, run_id: str, call_id: str) -> UnsettledCall:
        call = self.unsettled(run_id, call_id)
        if call is not None:
            return call
        stored = stored_result(self._engine, self._ledger, run_id, call_id)
        if stored is None:
            raise InvalidCall(f"no call {call_id!r} started in run {run_id!r}: nothing to settle")
        code = "ok" if stored.error is None else stored.error.code
        raise InvalidCall(f"call {call_id!r} already has a result ({code}): nothing to settle")

    def _stored(self, run_id: str, call_id: str) -> ToolResult:
        stored = stored_result(self._engine, self._ledger, run_id, call_id)
        if stored is None:
            raise InvalidCall(f"no call {call_id!r} started in run {run_id!r}")
        return stored

    def _call_args(self, run_id: str, call_id: str, call_ledger_id: str) -> Any:
        """The arguments the call's ``tool_call`` entry records, if it vouches for it."""
        try:
            entry = self._ledger.get(call_ledger_id)
            if (entry.run_id, entry.kind) != (run_id, "tool_call"):
                return None
            if entry.metadata.get("call_id") != call_id:
                return None
            return loads_canonical(cast(str, entry.content)).get("args")
        except (AssayError, ValueError, TypeError, AttributeError):
            return None

    def _key_values(self, tool: str, version: str, args: Any) -> dict[str, Any]:
        try:
            pointers = self._registry.get(tool, version).idempotency_key
        except ToolNotFound:
            return {}
        if not isinstance(args, Mapping):
            return {}
        values: dict[str, Any] = {}
        for pointer in pointers:
            try:
                values[pointer] = resolve_pointer(dict(cast(Mapping[str, Any], args)), pointer)
            except JsonPointerException:
                continue
        return values

    def _limit(self, tool: str, version: str) -> float | None:
        binding = self._registry.binding(tool, version)
        if binding is not None and binding.timeout_s is not None:
            return binding.timeout_s
        return self.timeout_s

    # --- asking and recording ---------------------------------------------------------

    def _ask_lookup(self, call: UnsettledCall) -> LookupAnswer | str:
        """What the tool's lookup says of the call's effect, or why it says nothing."""
        binding = self._registry.binding(call.tool, call.version)
        lookup = binding.lookup if binding is not None else None
        if lookup is None:
            return f"{call.tool}@{call.version} has no lookup in this process"
        if not call.key_values:
            return "the call's idempotency key values could not be read"
        limit = self._limit(call.tool, call.version)
        ended = run_sync(lookup, dict(call.key_values), limit)
        if ended.reraise and ended.error is not None:
            raise ended.error
        if ended.kind == "timeout":
            return f"the lookup did not answer within {limit} s"
        if ended.kind == "raised":
            assert ended.error is not None
            return f"the lookup raised {describe(ended.error).summary}"
        value: Any = ended.value
        if isinstance(value, bool):
            return LookupAnswer(performed=value)
        if isinstance(value, LookupAnswer):
            return value
        if value is None:
            return "the lookup could not tell"
        return f"the lookup returned {safe_repr(value, 200)}, not a LookupAnswer, bool or None"

    def _record_settlement(
        self,
        call: UnsettledCall,
        outcome: SettledOutcome,
        *,
        by: str,
        via: Literal["person", "lookup"],
        note: str | None = None,
        detail: Any = None,
    ) -> Settlement:
        """The settlement's ledger entry and the call's result row, in one
        transaction; :class:`InvalidCall` (and nothing written) when the call got a
        result first."""
        settlement = Settlement(
            run_id=call.run_id,
            call_id=call.call_id,
            tool=call.tool,
            version=call.version,
            call_ledger_id=call.call_ledger_id,
            outcome=outcome,
            by=by,
            via=via,
            note=note,
            detail=None if detail is None else kept_output(detail),
            key_values=dict(call.key_values),
            settled_at=datetime.now(UTC),
            ledger_id="",
        )
        source = f"reviewer:{by}" if via == "person" else by
        metadata = {"call_id": call.call_id, "call_ledger_id": call.call_ledger_id}
        try:
            with self._ledger.batch(call.run_id) as batch:
                entry = batch.append(
                    kind="settlement",
                    source=source,
                    content=canonical_json(settlement.as_json()).decode("utf-8"),
                    metadata={**metadata, "outcome": outcome, "via": via},
                )
                settlement = replace(settlement, ledger_id=entry.id)
                row = {
                    "run_id": call.run_id,
                    "call_id": call.call_id,
                    "result_json": settled_result(settlement).to_json(),
                    "finished_at": settlement.settled_at,
                }
                if not _INSERT_RESULT_IF_ABSENT(batch.connection, row):
                    raise _ResultFirst
        except _ResultFirst:
            raise InvalidCall(
                f"call {call.call_id!r} got a result while it was being settled: nothing to settle"
            ) from None
        return settlement

    def _record_unknown(self, call: UnsettledCall, why: str) -> ToolResult:
        """An ``error`` entry naming the call whose outcome is unknown (the same
        content each time, so a replay finds the entry already written)."""
        failure = unknown_failure(call, why)
        body = {**failure.as_json(), "call_id": call.call_id}
        with self._ledger.batch(call.run_id) as batch:
            entry = batch.append(
                kind="error",
                source="tool_bus",
                content=canonical_json(body).decode("utf-8"),
                metadata={
                    "call_id": call.call_id,
                    "call_ledger_id": call.call_ledger_id,
                    "code": "outcome_unknown",
                },
            )
        return ToolResult(ok=False, ledger_id=entry.id, error=failure)


class _ResultFirst(Exception):
    """The call's result row was written before its settlement's."""


def _check_ids(run_id: object, call_id: object) -> None:
    for value, name, limit in (
        (run_id, "run_id", MAX_RUN_ID_CHARS),
        (call_id, "call_id", MAX_CALL_ID_CHARS),
    ):
        problem = check_text(value, field=name, max_chars=limit)
        if problem is not None:
            raise InvalidCall(problem)


def _check_settle(outcome: object, by: object, note: object) -> None:
    if not isinstance(outcome, str) or outcome not in _OUTCOMES:
        raise InvalidCall(f"outcome must be 'performed' or 'not_performed', not {outcome!r}")
    problem = check_text(by, field="by (who settles the call)", max_chars=MAX_APPROVER_CHARS)
    if problem is None and note is not None:
        problem = check_text(note, field="note", max_chars=MAX_MESSAGE_CHARS, allow_newlines=True)
    if problem is not None:
        raise InvalidCall(problem)


def _has_result(conn: sa.Connection, run_id: str, call_id: str) -> bool:
    query = sa.select(t.results.c.call_id).where(
        t.results.c.run_id == run_id, t.results.c.call_id == call_id
    )
    return conn.execute(query).first() is not None


def _utc(stamp: datetime) -> datetime:
    """SQLite hands back naive datetimes; they were written in UTC."""
    return stamp if stamp.tzinfo is not None else stamp.replace(tzinfo=UTC)
