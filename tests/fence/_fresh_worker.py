"""A process of the fresh-database test: it waits for the others, then opens the
database (migrations and checkpoint tables included) and runs a fenced graph with
the durable checkpointer, so that every process sets the schema up at once."""

from __future__ import annotations

from multiprocessing.synchronize import Event
from typing import Any

from assay import ControlPlane, ToolSpec
from assay.fence import FenceState, fence
from assay.verifier import LexicalNLI

LETTER = "Senior associates are capped at EUR 380 per hour."
LETTER_TOOL = ToolSpec(
    name="letter",
    version="1.0.0",
    side_effect="read_only",
    description="The engagement letter.",
    input_schema={"type": "object", "additionalProperties": False},
    output_schema={"type": "string"},
)


def thread_id(worker: int) -> str:
    return f"fresh-{worker}"


def open_and_run(url: str, worker: int, start: Event) -> None:
    """Open a fresh database the moment ``start`` is set and answer one task."""
    start.wait()
    with ControlPlane.open(url, nli=LexicalNLI()) as cp:
        cp.registry.register(LETTER_TOOL, lambda _args: LETTER)

        def agent(state: FenceState) -> dict[str, Any]:
            out = cp.bus.call(state["run_id"], "letter", {})  # type: ignore[typeddict-item]
            return {"handover": handover(state["run_id"], out.ledger_id or "")}  # type: ignore[typeddict-item]

        graph = fence(agent, control_plane=cp, name="fresh")
        config: Any = {"configurable": {"thread_id": thread_id(worker)}}
        state = graph.invoke({"task": "What is the cap?"}, config)
        if state["result"].status != "answered":
            raise SystemExit(f"worker {worker}: {state['result'].status} {state['result'].errors}")


def handover(run_id: str, ledger_id: str) -> dict[str, Any]:
    return {
        "run_id": run_id,
        "from_agent": "worker",
        "status": "ok",
        "claims": [
            {
                "id": "c1",
                "type": "Assertion",
                "text": LETTER,
                "confidence": 0.9,
                "propositions": [{"id": "c1.p", "text": LETTER, "ledger_ids": [ledger_id]}],
            }
        ],
    }
