"""A call that started and has no result is settled by a person or by its tool's lookup,
on SQLite and PostgreSQL.

The stored state of a call cut short by a crash (a start row, no result) is made
here with a handler that has not returned yet, on a bus without a time limit, where
nothing can tell it from a handler whose process is gone. A call that may still run
within its limit is neither settled nor recovered; a settlement is recorded as a
``settlement`` entry and as the call's result, once, and every replay answers it,
even after the handler's own late result; ``not_performed`` releases nothing; a
lookup's answer is recorded, and a lookup that cannot tell leaves the call
``outcome_unknown``, naming it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import pytest

from assay import ControlPlane, InvalidToolSpec
from assay.errors import InvalidCall
from assay.tool_bus import GrantRequest, LookupAnswer, ToolResult
from tests.tool_bus._tools import ADD, FLAG, FLAG_ARGS, StandInClaims

KEYED = replace(FLAG, version="1.1.0", idempotency_key=("/invoice", "/line"))
KEY = {"/invoice": "INV-7", "/line": 14}
CLAIMS = ("claim-1",)


class Stuck:
    """A flag handler that does not return until released: its call has started and
    has no result, as a call whose process was killed inside the handler."""

    def __init__(self, plane: ControlPlane) -> None:
        self.plane = plane
        self.started, self.release = threading.Event(), threading.Event()
        self.calls: list[dict[str, Any]] = []
        self.results: list[ToolResult] = []
        self.threads: list[threading.Thread] = []

    def handler(self, args: dict[str, Any]) -> dict[str, str]:
        self.calls.append(args)
        self.started.set()
        self.release.wait(30)
        return {"flag_id": "F-INV-7-14"}

    def start(self, run: str, call_id: str = "flag-1") -> None:
        """Grant the call, start it in a thread, and return once its handler runs."""
        request = GrantRequest.for_call(
            run, KEYED.name, KEYED.version, FLAG_ARGS, CLAIMS, call_id=call_id
        )
        grant = self.plane.grants.issue(run, request, approver="alice")

        def call() -> None:
            bus, claims = self.plane.bus, CLAIMS
            result = bus.call(
                run, KEYED.name, FLAG_ARGS, grant_id=grant.id, call_id=call_id, depends_on=claims
            )
            self.results.append(result)

        thread = threading.Thread(target=call)
        self.threads.append(thread)
        thread.start()
        assert self.started.wait(10)

    def finish(self) -> None:
        self.release.set()
        for thread in self.threads:
            thread.join(30)


def _stuck(plane: ControlPlane, *, timeout_s: float | None, lookup: Any = None) -> Stuck:
    stuck = Stuck(plane)
    plane.bus.timeout_s = timeout_s
    plane.registry.register(KEYED, stuck.handler, lookup=lookup)
    plane.grants.claim_status_source = StandInClaims(
        labels={"claim-1": ("entailment",)},
        texts={"claim-1": ("Line 14 of invoice INV-7 is billed EUR 120.50 above its cap.",)},
    )
    return stuck


@pytest.fixture
def stuck(plane: ControlPlane) -> Iterator[Stuck]:
    """A call without a result, on a bus with no time limit."""
    found = _stuck(plane, timeout_s=None)
    yield found
    found.finish()


def _kinds(plane: ControlPlane, run: str) -> list[str]:
    return [e.kind for e in plane.ledger.entries(run)]


def test_a_call_within_its_time_limit_is_neither_settled_nor_recovered(
    plane: ControlPlane,
) -> None:
    stuck = _stuck(plane, timeout_s=30.0)
    run = plane.ledger.start_run()
    try:
        stuck.start(run)
        call = plane.bus.unsettled(run, "flag-1")
        assert call is not None and call.within_limit() and not call.past_limit()
        assert (call.tool, call.version, call.args, dict(call.key_values)) == (
            KEYED.name,
            KEYED.version,
            FLAG_ARGS,
            KEY,
        )
        assert plane.ledger.get(call.call_ledger_id).kind == "tool_call"
        before = _kinds(plane, run)
        with pytest.raises(InvalidCall, match="may still be running"):
            plane.bus.settle_call(run, "flag-1", outcome="performed", by="bob")
        recovered = plane.bus.recover(run, "flag-1")
        assert recovered.error is not None and recovered.error.code == "call_in_progress"
        assert _kinds(plane, run) == before  # nothing written
    finally:
        stuck.finish()
    assert stuck.results[0].ok and plane.bus.unsettled(run, "flag-1") is None
    with pytest.raises(InvalidCall, match=r"already has a result \(ok\)"):
        plane.bus.settle_call(run, "flag-1", outcome="performed", by="bob")
    assert plane.bus.recover(run, "flag-1") == stuck.results[0]
    assert len(stuck.calls) == 1


def test_a_persons_settlement_stands_for_every_replay(plane: ControlPlane, stuck: Stuck) -> None:
    run = plane.ledger.start_run()
    stuck.start(run)
    call = plane.bus.unsettled(run, "flag-1")
    assert call is not None and call.may_run_until is None  # no limit: cannot tell
    settled = plane.bus.settle_call(
        run, "flag-1", outcome="performed", by="bob", note="the notice is in the outbox"
    )
    assert (settled.outcome, settled.by, settled.via) == ("performed", "bob", "person")
    assert settled.call_ledger_id == call.call_ledger_id and dict(settled.key_values) == KEY
    assert plane.bus.settlement(run, "flag-1") == settled
    entry = plane.ledger.get(settled.ledger_id)
    assert (entry.kind, entry.is_evidence, entry.source) == ("settlement", False, "reviewer:bob")
    replay = plane.bus.call(run, KEYED.name, FLAG_ARGS, call_id="flag-1", depends_on=CLAIMS)
    assert replay.error is not None and replay.error.code == "outcome_settled"
    assert replay.ledger_id == settled.ledger_id and "took effect" in replay.error.message
    before = _kinds(plane, run)
    with pytest.raises(InvalidCall, match=r"already has a result \(outcome_settled\)"):
        plane.bus.settle_call(run, "flag-1", outcome="not_performed", by="carol")
    assert _kinds(plane, run) == before
    stuck.finish()  # the handler's own result arrives late: the settlement stands
    codes = [e.metadata.get("code") for e in plane.ledger.entries(run) if e.kind == "error"]
    assert codes == ["result_conflict"]
    assert plane.bus.call(run, KEYED.name, FLAG_ARGS, call_id="flag-1") == replay
    assert len(stuck.calls) == 1 and plane.ledger.verify(run).ok


def test_not_performed_releases_nothing(plane: ControlPlane, stuck: Stuck) -> None:
    run = plane.ledger.start_run()
    stuck.start(run)
    settled = plane.bus.settle_call(run, "flag-1", outcome="not_performed", by="bob")
    assert "Nothing is released" in settled.message
    assert f"supersedes ledger entry {settled.call_ledger_id}" in settled.message
    holder = plane.bus.prior_effect(KEYED.name, FLAG_ARGS)
    assert holder is not None and holder.call_ledger_id == settled.call_ledger_id
    other = plane.ledger.start_run()
    request = GrantRequest.for_call(
        other, KEYED.name, KEYED.version, FLAG_ARGS, CLAIMS, call_id="flag-2"
    )
    grant = plane.grants.issue(other, request, approver="alice")
    repeat = plane.bus.call(
        other, KEYED.name, FLAG_ARGS, grant_id=grant.id, call_id="flag-2", depends_on=CLAIMS
    )
    assert repeat.error is not None and repeat.error.code == "duplicate_effect"
    assert len(stuck.calls) == 1


def _raises(args: dict[str, Any]) -> Any:
    raise RuntimeError("the bank is down")


#: name -> (lookup, settled outcome or None, text the failure's message holds)
LOOKUPS: dict[str, tuple[Callable[[dict[str, Any]], Any], str | None, str]] = {
    "found": (lambda k: LookupAnswer(performed=True, detail={"ref": "N-1"}), "performed", ""),
    "true": (lambda k: True, "performed", ""),
    "not_found": (lambda k: False, None, "no time limit here"),
    "cannot_tell": (lambda k: None, None, "the lookup could not tell"),
    "raises": (_raises, None, "the lookup raised RuntimeError: the bank is down"),
    "junk": (lambda k: "yes", None, "not a LookupAnswer"),
}


@pytest.mark.parametrize("case", sorted(LOOKUPS))
def test_a_lookup_settles_what_it_can_tell(plane: ControlPlane, case: str) -> None:
    lookup, outcome, text = LOOKUPS[case]
    asked: list[dict[str, Any]] = []

    def counted(key: dict[str, Any]) -> Any:
        asked.append(key)
        return lookup(key)

    stuck = _stuck(plane, timeout_s=None, lookup=counted)
    run = plane.ledger.start_run()
    try:
        stuck.start(run)
        result = plane.bus.recover(run, "flag-1")
        assert asked == [KEY] and result.error is not None
        if outcome is not None:
            settled = plane.bus.settlement(run, "flag-1")
            assert settled is not None and (settled.outcome, settled.via) == (outcome, "lookup")
            assert result.error.code == "outcome_settled"
            assert result.ledger_id == settled.ledger_id
            entry = plane.ledger.get(settled.ledger_id)
            assert (entry.kind, entry.source) == ("settlement", "lookup:flag_invoice_line@1.1.0")
        else:
            assert result.error.code == "outcome_unknown" and text in result.error.message
            details = {d.path: d.message for d in result.error.details}
            assert details["/call_id"] == "flag-1" and details["/key/line"] == "14"
            assert plane.bus.unsettled(run, "flag-1") is not None  # still unsettled
            assert plane.bus.recover(run, "flag-1").ledger_id == result.ledger_id  # one entry
    finally:
        stuck.finish()
    assert len(stuck.calls) == 1


def test_settle_call_refuses_what_it_cannot_record(plane: ControlPlane, stuck: Stuck) -> None:
    run = plane.ledger.start_run()
    stuck.start(run)
    before = _kinds(plane, run)
    bad: list[dict[str, Any]] = [
        {"outcome": "maybe", "by": "bob"},
        {"outcome": ["performed"], "by": "bob"},
        {"outcome": "performed", "by": "  "},
        {"outcome": "performed", "by": "bob\x1b[2J"},
        {"outcome": "performed", "by": "bob", "note": "x" * 5000},
        {"outcome": "performed", "by": "bob", "note": "bad \ud800"},
    ]
    for kwargs in bad:
        with pytest.raises(InvalidCall):
            plane.bus.settle_call(run, "flag-1", **kwargs)
    with pytest.raises(InvalidCall, match="nothing to settle"):
        plane.bus.settle_call(run, "flag-9", outcome="performed", by="bob")
    with pytest.raises(InvalidCall):
        plane.bus.settle_call("", "flag-1", outcome="performed", by="bob")
    with pytest.raises(InvalidCall):
        plane.bus.recover(run, "flag-9")
    assert _kinds(plane, run) == before
    assert plane.bus.unsettled(run, "flag-1") is not None


def test_a_lookup_needs_a_tool_that_names_its_effect(plane: ControlPlane) -> None:
    with pytest.raises(InvalidToolSpec, match="idempotency_key"):
        plane.registry.register(ADD, lambda a: 0, lookup=lambda k: True)
    with pytest.raises(InvalidToolSpec, match="callable"):
        plane.registry.register(KEYED, lambda a: {}, lookup="not callable")  # type: ignore[arg-type]
