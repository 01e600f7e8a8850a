"""Reviewer decisions, stored once: the first decision on a paused call stands.

A decision is a row of ``fence_decisions`` keyed by the call id of the intent it
decides. The table is append-only and the key is the database's, so of two reviewers
(or two processes) deciding one intent at once exactly one insert succeeds, on SQLite
and on PostgreSQL alike; the other is refused with
:class:`~assay.errors.AlreadyDecided`, which names the decision that stands. Nothing
about a decision is ever overwritten, so the row is also the audit answer to "who
decided this call, when, and why".
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import IntegrityError

from assay._db import driver_errors, write_transaction
from assay.errors import AlreadyDecided, DatabaseError
from assay.fence import _tables as t
from assay.fence._review import IntentDecision, PendingCall

__all__ = ["DecisionStore", "StoredDecision"]


@dataclass(frozen=True, kw_only=True)
class StoredDecision:
    """A decision as stored: which call of which run, what was decided, by whom, when."""

    call_id: str
    run_id: str
    intent_id: str
    tool: str
    version: str
    args_sha256: str
    approve: bool
    approver: str
    reason: str | None
    decided_at: datetime

    def as_dict(self) -> dict[str, Any]:
        """The plain form :class:`~assay.errors.AlreadyDecided` carries."""
        return {
            "intent_id": self.intent_id,
            "call_id": self.call_id,
            "approve": self.approve,
            "approver": self.approver,
            "reason": self.reason,
            "decided_at": _iso(self.decided_at),
        }

    def describe(self) -> str:
        """Who decided what, when and why, in one line."""
        what = "approved" if self.approve else "denied"
        why = f"reason: {self.reason!r}" if self.reason else "no reason given"
        return f"{what} by {self.approver!r} at {_iso(self.decided_at)} ({why})"

    def is_decision(self, call: PendingCall, decision: IntentDecision) -> bool:
        """Whether this row records ``decision`` on ``call``: the same call and the same
        approve, approver and reason. A replay of a decision finds itself this way;
        any other row is a rival decision."""
        return (
            self.call_id == call.call_id
            and self.args_sha256 == call.args_sha256
            and self.approve == decision.approve
            and self.approver == decision.approver
            and self.reason == decision.reason
        )


class DecisionStore:
    """Records and reads reviewer decisions on paused calls (``fence_decisions``)."""

    def __init__(
        self, engine: Engine, *, clock: Callable[[], datetime] = lambda: datetime.now(UTC)
    ) -> None:
        self._engine = engine
        self.clock = clock

    def record(
        self, run_id: str, request_item: PendingCall, decision: IntentDecision
    ) -> StoredDecision:
        """Store ``decision`` on ``request_item``'s call. When the call was decided
        before (earlier, or by a concurrent reviewer who got there first), nothing is
        written and :class:`~assay.errors.AlreadyDecided` names the decision that
        stands, even if it says the same."""
        row = self._row(run_id, request_item, decision)
        with driver_errors("could not record the decision"):
            try:
                with write_transaction(self._engine) as conn:
                    conn.execute(t.decisions.insert().values(**row))
            except IntegrityError as exc:
                refused = exc
            else:
                return _stored(row)
        earlier = self.for_calls([request_item.call_id]).get(request_item.call_id)
        if earlier is None:  # refused for a reason other than the key
            raise DatabaseError(f"could not record the decision: {refused.orig}") from refused
        raise already_decided(earlier)

    def record_all(
        self, run_id: str, decided: Sequence[tuple[PendingCall, IntentDecision]]
    ) -> list[StoredDecision]:
        """Store a decision on each call at once, or none of them.

        A call whose stored row already holds the same decision (a replay of this
        one, or the same decision sent twice) keeps that row, which is returned. A
        call decided otherwise raises :class:`~assay.errors.AlreadyDecided` naming
        that decision, and none of ``decided`` is written: a reviewer's decision on
        several calls never half stands beside another's.
        """
        # Each insert refused by a key leaves one more row to find, so at most
        # len(decided) attempts are refused; one more means the refusal was not a key.
        raced = _Raced()
        for _ in range(len(decided) + 1):
            try:
                with driver_errors("could not record the decisions"):
                    return self._record_all(run_id, decided)
            except _Raced as exc:
                raced = exc
        raise DatabaseError(f"could not record the decisions: {raced.__cause__}") from (
            raced.__cause__
        )

    def _record_all(
        self, run_id: str, decided: Sequence[tuple[PendingCall, IntentDecision]]
    ) -> list[StoredDecision]:
        ordered = sorted(decided, key=lambda pair: pair[0].call_id)  # one lock order
        try:
            with write_transaction(self._engine) as conn:
                found = _rows(conn, [call.call_id for call, _ in ordered])
                out: dict[str, StoredDecision] = {}
                for call, decision in ordered:
                    earlier = found.get(call.call_id)
                    if earlier is not None and not earlier.is_decision(call, decision):
                        raise already_decided(earlier)
                    if earlier is None:
                        row = self._row(run_id, call, decision)
                        conn.execute(t.decisions.insert().values(**row))
                        earlier = _stored(row)
                    out[call.call_id] = earlier
        except IntegrityError as exc:  # another transaction inserted a key first
            raise _Raced from exc
        return [out[call.call_id] for call, _ in decided]

    def rival(self, decided: Sequence[tuple[PendingCall, IntentDecision]]) -> StoredDecision | None:
        """The first stored decision on one of these calls that is not the one given
        for it, if any. A caller whose invocation found the run already past its pause
        (LangGraph hands back the outcome another invocation reached) learns this way
        whether that outcome was its own decision or another's."""
        stored = self.for_calls(call.call_id for call, _ in decided)
        for call, decision in decided:
            earlier = stored.get(call.call_id)
            if earlier is not None and not earlier.is_decision(call, decision):
                return earlier
        return None

    def for_run(self, run_id: str) -> dict[str, StoredDecision]:
        """Every decision taken in ``run_id``, by intent id."""
        with driver_errors("could not read decisions"), self._engine.connect() as conn:
            rows = conn.execute(
                sa.select(t.decisions)
                .where(t.decisions.c.run_id == run_id)
                .order_by(t.decisions.c.decided_at, t.decisions.c.call_id)
            ).all()
        return {row.intent_id: _from_row(row) for row in rows}

    def for_calls(self, call_ids: Iterable[str]) -> dict[str, StoredDecision]:
        """The decisions stored for ``call_ids``, by call id (undecided ones absent)."""
        ids = list(dict.fromkeys(call_ids))
        if not ids:
            return {}
        with driver_errors("could not read decisions"), self._engine.connect() as conn:
            return _rows(conn, ids)

    def _row(self, run_id: str, call: PendingCall, decision: IntentDecision) -> dict[str, Any]:
        return {
            "call_id": call.call_id,
            "run_id": run_id,
            "intent_id": call.intent_id,
            "tool": call.tool,
            "version": call.version,
            "args_sha256": call.args_sha256,
            "approve": decision.approve,
            "approver": decision.approver,
            "reason": decision.reason,
            "decided_at": self.clock().astimezone(UTC),
        }


class _Raced(Exception):
    """A concurrent transaction stored a decision on one of the calls first."""


def already_decided(earlier: StoredDecision) -> AlreadyDecided:
    """The refusal of a decision on a call that ``earlier`` decided."""
    return AlreadyDecided(
        f"intent {earlier.intent_id!r} ({earlier.tool}@{earlier.version}, call "
        f"{earlier.call_id!r}) was already decided: {earlier.describe()}; that decision "
        "stands and this one was not applied",
        decision=earlier.as_dict(),
    )


def _rows(conn: Connection, call_ids: list[str]) -> dict[str, StoredDecision]:
    rows = conn.execute(sa.select(t.decisions).where(t.decisions.c.call_id.in_(call_ids))).all()
    return {row.call_id: _from_row(row) for row in rows}


def _stored(row: dict[str, Any]) -> StoredDecision:
    return StoredDecision(**row)


def _from_row(row: Any) -> StoredDecision:
    return StoredDecision(
        call_id=row.call_id,
        run_id=row.run_id,
        intent_id=row.intent_id,
        tool=row.tool,
        version=row.version,
        args_sha256=row.args_sha256,
        approve=bool(row.approve),
        approver=row.approver,
        reason=row.reason,
        decided_at=_utc(row.decided_at),
    )


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _iso(value: datetime) -> str:
    """ISO 8601 in UTC, with the ``Z`` designator."""
    return _utc(value).isoformat().replace("+00:00", "Z")
