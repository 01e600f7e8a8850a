"""What the runner's one checkpoint per invocation (``durability="exit"``) relies on,
shown by killing a process at the worst moments.

The runner writes a thread's checkpoint when an invocation returns, pauses or raises,
not after every node. A process killed in the middle of an invocation therefore
leaves the thread's checkpoint where the invocation found it, and everything that
must not happen twice rests on rows committed before the graph went on: the
reviewer's decision, the grant, the call's start row (committed before its handler
runs) and its result. These tests kill the process (SIGKILL: nothing is cleaned up)

- while a run waits for a grant: the pause is there for another process;
- during a resume, after the irreversible call ran and was recorded: resuming again
  answers with that call's result, and the call is not made again;
- during a resume, inside the irreversible handler, after its effect and before the
  bus recorded anything: resuming again reports the action ``unknown``
  (``outcome_unknown``) and never runs the handler a second time;
- during a first run whose call a policy rule approved, after the call: the thread
  has no checkpoint, and the runner refuses to run the thread again.

The module is also the worker the tests start: ``python -m
tests.fence.test_overhead_crash_resume ACTION URL THREAD``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig

from assay import ControlPlane, ThreadInUse, ToolSpec
from assay.contract import Claim, Handover, Unsupported
from assay.fence import FencedGraph, FenceState, compose_answer, fence
from assay.verifier import LexicalNLI

ROOT = Path(__file__).resolve().parents[2]
#: Where the worker kills itself: "finish" (the fence's last node) or "handler".
DIE_AT = "ASSAY_TEST_DIE_AT"
NOTE_TEXT = "Invoice INV-7 is approved for payment of EUR 120."
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
    description="Pays an invoice.",
    input_schema={
        "type": "object",
        "required": ["invoice", "amount"],
        "additionalProperties": False,
        # A policy approves arguments bound to a verified proposition: due(invoice, amount).
        "properties": {
            "invoice": {"type": "string", "x-assay-role": {"pred": "due", "arg": 0}},
            "amount": {"type": "integer", "x-assay-role": {"pred": "due", "arg": 1}},
        },
    },
    output_schema={"type": "string"},
)
POLICY = {
    "rules": [
        {
            "name": "small-payments",
            "tool": "send_payment",
            "claims": "all_entailed",
            "args": {"amount": {"le": 500}},
            "ttl_s": 300,
        }
    ]
}


# --- the worker ---------------------------------------------------------------------------


def _die_if(point: str) -> None:
    if os.environ.get(DIE_AT) == point:
        os.kill(os.getpid(), signal.SIGKILL)


def _pay(args: dict[str, Any]) -> str:
    """The irreversible effect: one line in the outbox per payment made."""
    with Path(os.environ["ASSAY_OUTBOX"]).open("a") as out:
        out.write(json.dumps({"invoice": args["invoice"], "pid": os.getpid()}) + "\n")
    _die_if("handler")
    return f"paid {args['invoice']}"


def _writer(
    claims: Sequence[Claim], unsupported: Sequence[Unsupported], handover: Handover | None
) -> str:
    _die_if("finish")
    return compose_answer(claims, unsupported, handover)


def _graph(cp: ControlPlane, *, policy: bool) -> FencedGraph:
    cp.registry.register(NOTE, lambda _: NOTE_TEXT)
    cp.registry.register(PAY, _pay)
    cp.bus.timeout_s = 1.0  # how long a resume waits for a call another process started

    def agent(state: FenceState) -> dict[str, Any]:
        run_id = state.get("run_id", "")
        note = cp.bus.call(run_id, "read_note", {"id": "INV-7"})
        claim = {
            "id": "c1",
            "type": "Assertion",
            "text": NOTE_TEXT,
            "confidence": 0.9,
            "propositions": [
                {
                    "id": "c1.p",
                    "text": NOTE_TEXT,
                    "pred": "due",
                    "args": ["INV-7", "EUR 120"],
                    "ledger_ids": [note.ledger_id],
                }
            ],
        }
        intent = {
            "id": "a1",
            "tool": "send_payment",
            "version": "1.0.0",
            "args": {"invoice": "INV-7", "amount": 120},
            "requires_grant": True,
            "depends_on": ["c1"],
        }
        handover = {"run_id": run_id, "from_agent": "payer", "status": "ok"}
        return {"handover": {**handover, "claims": [claim], "action_intents": [intent]}}

    name = "payments-auto" if policy else "payments"
    return fence(
        agent, control_plane=cp, name=name, writer=_writer, policy=POLICY if policy else None
    )


def main(action: str, url: str, thread_id: str) -> None:
    with ControlPlane.open(url, nli=LexicalNLI()) as cp:
        graph = _graph(cp, policy=action in ("auto", "auto-again"))
        if action == "pause":
            result = cp.run(graph, {"task": "pay INV-7"}, thread_id=thread_id)
            print(result.status, flush=True)
            os.kill(os.getpid(), signal.SIGKILL)  # paused: die without closing anything
        elif action == "resume":
            result = cp.resume(graph, thread_id, {"approve": True, "approver": "alice"})
            actions = [(a.status, a.output, a.error and a.error["code"]) for a in result.actions]
            print(json.dumps([result.status, actions]), flush=True)
        elif action == "auto":
            cp.run(graph, {"task": "pay INV-7"}, thread_id=thread_id)
        else:  # "auto-again": the same thread, once more
            try:
                cp.run(graph, {"task": "pay INV-7"}, thread_id=thread_id)
            except ThreadInUse:
                print(f"thread_in_use {cp.status(thread_id).status}", flush=True)


# --- the tests ----------------------------------------------------------------------------


def _worker(*args: str, die_at: str | None = None) -> tuple[int, str, str]:
    env = {k: v for k, v in os.environ.items() if k != DIE_AT}
    if die_at is not None:
        env[DIE_AT] = die_at
    done = subprocess.run(
        [sys.executable, "-m", "tests.fence.test_overhead_crash_resume", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    return done.returncode, done.stdout.strip(), done.stderr[-3000:]


def _payments(outbox: Path) -> list[dict[str, Any]]:
    if not outbox.exists():
        return []
    return [json.loads(line) for line in outbox.read_text().splitlines()]


def _paused(db_url: str, thread: str) -> None:
    code, out, err = _worker("pause", db_url, thread)
    assert (code, out) == (-signal.SIGKILL, "awaiting_grant"), err


def test_a_pause_outlives_its_process(db_url: str, outbox: Path) -> None:
    _paused(db_url, "thr_pause")
    with ControlPlane.open(db_url, nli=LexicalNLI()) as cp:
        config: RunnableConfig = {"configurable": {"thread_id": "thr_pause"}}
        [saved] = list(cp.checkpointer.list(config))  # one checkpoint: the pause
        assert saved.pending_writes and cp.status("thr_pause").status == "awaiting_grant"
    code, out, err = _worker("resume", db_url, "thr_pause")
    assert code == 0, err
    assert json.loads(out) == ["answered", [["executed", "paid INV-7", None]]]
    assert len(_payments(outbox)) == 1


def test_a_resume_killed_after_the_call_answers_with_it_when_resumed_again(
    db_url: str, outbox: Path
) -> None:
    _paused(db_url, "thr_after_call")
    code, _, err = _worker("resume", db_url, "thr_after_call", die_at="finish")
    assert code == -signal.SIGKILL, err
    assert len(_payments(outbox)) == 1  # the call ran, and the bus recorded its result
    code, out, err = _worker("resume", db_url, "thr_after_call")
    assert code == 0, err
    assert json.loads(out) == ["answered", [["executed", "paid INV-7", None]]]
    assert len(_payments(outbox)) == 1  # and it is not made again


def test_a_resume_killed_inside_the_handler_never_runs_it_again(db_url: str, outbox: Path) -> None:
    _paused(db_url, "thr_in_call")
    code, _, err = _worker("resume", db_url, "thr_in_call", die_at="handler")
    assert code == -signal.SIGKILL, err
    assert len(_payments(outbox)) == 1  # the effect happened, its result was never stored
    code, out, err = _worker("resume", db_url, "thr_in_call")
    assert code == 0, err
    status, [(action, output, error)] = json.loads(out)
    assert (status, action, output, error) == ("incomplete", "unknown", None, "outcome_unknown")
    assert len(_payments(outbox)) == 1


def test_a_first_run_killed_after_an_approved_call_is_not_run_again(
    db_url: str, outbox: Path
) -> None:
    code, _, err = _worker("auto", db_url, "thr_auto", die_at="finish")
    assert code == -signal.SIGKILL, err
    assert len(_payments(outbox)) == 1
    with ControlPlane.open(db_url, nli=LexicalNLI()) as cp:
        assert list(cp.checkpointer.list({"configurable": {"thread_id": "thr_auto"}})) == []
    code, out, err = _worker("auto-again", db_url, "thr_auto")
    assert (code, out) == (0, "thread_in_use running"), err
    assert len(_payments(outbox)) == 1


if __name__ == "__main__":
    main(*sys.argv[1:4])
