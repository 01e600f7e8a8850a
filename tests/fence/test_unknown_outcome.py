"""A call cut short by a crash is reported as unknown, never as failed, and is settled.

The process resuming a run is killed (SIGKILL: nothing is cleaned up) inside the
irreversible handler, after its effect or before it, so the call's start is stored
and its result never is. Resuming the run again must not run the handler a second
time, and must not report the action ``failed`` (which invites a retry):

- with no lookup, the action is ``unknown``: its error (``outcome_unknown``) names the
  tool, the call id, the call's ``tool_call`` ledger entry and the effect's key
  values, and says how to settle it; a person's ``settle_call`` then records what
  happened, and the thread's status shows the action as what it came to;
- with a lookup registered with the handler, the recovery asks it and records what
  it said: an effect it finds is ``executed``; one it does not find is ``not_run``,
  and that releases nothing (the effect's key stays held, so a repeat needs a grant
  that supersedes the call).

The module is also the worker the tests start: ``python -m
tests.fence.test_unknown_outcome URL THREAD`` resumes THREAD and dies in the handler.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from assay import ControlPlane, ToolSpec
from assay.fence import FencedGraph, FenceState, fence
from assay.fence._nodes import intent_call_id
from assay.tool_bus import LookupAnswer
from assay.verifier import LexicalNLI

ROOT = Path(__file__).resolve().parents[2]
#: "after" (kill after the effect), "before" (kill before it) or unset (no kill).
DIE = "ASSAY_TEST_DIE"
#: Set: the payment tool is registered with a lookup that reads the outbox.
LOOKUP = "ASSAY_TEST_LOOKUP"
NOTE_TEXT = "Invoice INV-9 is approved for payment of EUR 80."
NOTE = ToolSpec(
    name="read_note",
    version="1.0.0",
    side_effect="read_only",
    description="The approval note of an invoice.",
    input_schema={
        "type": "object",
        "required": ["id"],
        "additionalProperties": False,
        "properties": {"id": {"type": "string"}},
    },
    output_schema={"type": "string"},
)
PAY = ToolSpec(
    name="send_payment",
    version="1.0.0",
    side_effect="irreversible",
    description="Pays an invoice, once per invoice.",
    input_schema={
        "type": "object",
        "required": ["invoice", "amount"],
        "additionalProperties": False,
        "properties": {"invoice": {"type": "string"}, "amount": {"type": "integer"}},
    },
    output_schema={"type": "string"},
    idempotency_key=("/invoice",),
)
ARGS = {"invoice": "INV-9", "amount": 80}


# --- the worker ---------------------------------------------------------------------------


def _outbox() -> Path:
    return Path(os.environ["ASSAY_OUTBOX"])


def _pay(args: dict[str, Any]) -> str:
    """The irreversible effect: one line in the outbox per payment made."""
    if os.environ.get(DIE) == "before":
        os.kill(os.getpid(), signal.SIGKILL)
    with _outbox().open("a") as out:
        out.write(json.dumps({"invoice": args["invoice"], "pid": os.getpid()}) + "\n")
    if os.environ.get(DIE) == "after":
        os.kill(os.getpid(), signal.SIGKILL)
    return f"paid {args['invoice']}"


def _find_payment(key: dict[str, Any]) -> LookupAnswer:
    """The payment system's own record, by the effect's key values."""
    found = [p for p in _payments(_outbox()) if p["invoice"] == key["/invoice"]]
    return LookupAnswer(performed=bool(found), detail={"payments": len(found)})


def _graph(cp: ControlPlane) -> FencedGraph:
    cp.registry.register(NOTE, lambda _: NOTE_TEXT)
    lookup = _find_payment if os.environ.get(LOOKUP) else None
    cp.registry.register(PAY, _pay, lookup=lookup)

    def agent(state: FenceState) -> dict[str, Any]:
        run_id = state.get("run_id", "")
        note = cp.bus.call(run_id, "read_note", {"id": "INV-9"})
        claim = {
            "id": "c1",
            "type": "Assertion",
            "text": NOTE_TEXT,
            "confidence": 0.9,
            "propositions": [{"id": "c1.p", "text": NOTE_TEXT, "ledger_ids": [note.ledger_id]}],
        }
        intent = {
            "id": "a1",
            "tool": "send_payment",
            "version": "1.0.0",
            "args": ARGS,
            "requires_grant": True,
            "depends_on": ["c1"],
        }
        handover = {"run_id": run_id, "from_agent": "payer", "status": "ok"}
        return {"handover": {**handover, "claims": [claim], "action_intents": [intent]}}

    return fence(agent, control_plane=cp, name="payments-unknown")


def main(url: str, thread_id: str) -> None:
    with ControlPlane.open(url, nli=LexicalNLI()) as cp:
        cp.resume(_graph(cp), thread_id, {"approve": True, "approver": "alice"})


# --- the tests ----------------------------------------------------------------------------


def _payments(outbox: Path) -> list[dict[str, Any]]:
    if not outbox.exists():
        return []
    return [json.loads(line) for line in outbox.read_text().splitlines()]


def _killed_in_the_handler(db_url: str, thread: str, die: str) -> None:
    """Pause the run here, then resume it in a worker killed inside the handler."""
    with ControlPlane.open(db_url, nli=LexicalNLI()) as cp:
        assert cp.run(_graph(cp), {"task": "pay INV-9"}, thread_id=thread).status == (
            "awaiting_grant"
        )
    done = subprocess.run(
        [sys.executable, "-m", "tests.fence.test_unknown_outcome", db_url, thread],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, DIE: die},
        timeout=300,
    )
    assert done.returncode == -signal.SIGKILL, done.stderr[-3000:]


def _resume_again(cp: ControlPlane, thread: str) -> Any:
    cp.bus.timeout_s = 0.5  # the limit a handler of this process would have had
    return cp.resume(_graph(cp), thread, {"approve": True, "approver": "alice"})


def _details(error: dict[str, Any]) -> dict[str, str]:
    return {d["path"]: d["message"] for d in error["details"]}


def test_a_call_killed_after_its_effect_is_unknown_until_a_person_settles_it(
    db_url: str, outbox: Path
) -> None:
    _killed_in_the_handler(db_url, "thr_unknown", die="after")
    assert len(_payments(outbox)) == 1  # the effect happened; its result was never stored
    with ControlPlane.open(db_url, nli=LexicalNLI()) as cp:
        result = _resume_again(cp, "thr_unknown")
        [action] = result.actions
        assert (result.status, action.status, action.output) == ("incomplete", "unknown", None)
        assert action.error is not None and action.error["code"] == "outcome_unknown"
        call_id = intent_call_id(result.run_id, "a1")
        details = _details(action.error)
        call_entry = cp.ledger.get(details["/call_ledger_id"])
        assert call_entry.kind == "tool_call" and call_entry.metadata["call_id"] == call_id
        assert details["/tool"] == "send_payment@1.0.0" and details["/call_id"] == call_id
        assert details["/key/invoice"] == '"INV-9"'
        assert action.reason is not None and "settle_call" in action.reason
        assert "unknown" in action.reason and "failed" not in action.reason
        error_entry = cp.ledger.get(action.ledger_id or "")
        assert (error_entry.kind, error_entry.metadata["code"]) == ("error", "outcome_unknown")
        assert cp.status("thr_unknown").result.actions[0].status == "unknown"  # type: ignore[union-attr]

        settled = cp.bus.settle_call(
            result.run_id, call_id, outcome="performed", by="bob", note="on the bank statement"
        )
        assert settled.call_ledger_id == call_entry.id
        assert settled.key_values == {"/invoice": "INV-9"}
        entry = cp.ledger.get(settled.ledger_id)
        assert (entry.kind, entry.source) == ("settlement", "reviewer:bob")
        assert not entry.is_evidence  # a person's word is audit trail, never evidence
        shown = cp.status("thr_unknown").result.actions[0]  # type: ignore[union-attr]
        assert (shown.status, shown.ledger_id, shown.error) == ("executed", entry.id, None)
        assert shown.reason is not None and "bob" in shown.reason
        replay = cp.bus.call(result.run_id, "send_payment", ARGS, call_id=call_id)
        assert replay.error is not None and replay.error.code == "outcome_settled"
        assert replay.ledger_id == entry.id
        assert cp.ledger.verify(result.run_id).ok
    assert len(_payments(outbox)) == 1  # and the effect never happened twice


@pytest.mark.parametrize(
    ("die", "status", "payments"), [("after", "executed", 1), ("before", "not_run", 0)]
)
def test_a_lookup_settles_a_call_killed_in_its_handler(
    db_url: str, outbox: Path, monkeypatch: pytest.MonkeyPatch, die: str, status: str, payments: int
) -> None:
    monkeypatch.setenv(LOOKUP, "1")
    _killed_in_the_handler(db_url, "thr_lookup", die=die)
    with ControlPlane.open(db_url, nli=LexicalNLI()) as cp:
        result = _resume_again(cp, "thr_lookup")
        [action] = result.actions
        assert (action.status, action.error) == (status, None)
        entry = cp.ledger.get(action.ledger_id or "")
        assert (entry.kind, entry.source) == ("settlement", "lookup:send_payment@1.0.0")
        said = json.loads(entry.content)
        assert said["detail"] == {"payments": payments} and said["via"] == "lookup"
        holder = cp.bus.prior_effect("send_payment", ARGS)
        assert holder is not None and holder.call_ledger_id == said["call_ledger_id"]
        assert action.reason is not None
        if status == "not_run":  # nothing released: a repeat needs a superseding grant
            assert "Nothing is released" in action.reason
            assert said["call_ledger_id"] in action.reason
    assert len(_payments(outbox)) == payments


if __name__ == "__main__":
    main(*sys.argv[1:3])
