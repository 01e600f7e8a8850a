"""``fence()`` around agents a user wrote: the control flow of the control plane."""

from __future__ import annotations

import json
import runpy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from assay import ControlPlane, ToolSpec, UsageError
from assay.fence import Feedback, FenceState, GraphIdentity, fence, graph_identity
from assay.verifier import LexicalNLI

ROOT = Path(__file__).resolve().parents[2]
LETTER = "Senior associates are capped at EUR 380 per hour."
RATE_TOOL = ToolSpec(
    name="letter",
    version="1.0.0",
    side_effect="read_only",
    description="The letter.",
    input_schema={"type": "object", "additionalProperties": False},
    output_schema={"type": "string"},
)


@pytest.fixture
def cp(db_url: str) -> Iterator[ControlPlane]:
    with ControlPlane.open(db_url, nli=LexicalNLI()) as plane:
        plane.registry.register(RATE_TOOL, lambda _args: LETTER)
        yield plane


def _handover(state: FenceState, text: str, ledger_ids: list[str]) -> dict[str, Any]:
    return {
        "handover": {
            "run_id": state.get("run_id", ""),
            "from_agent": "me",
            "status": "ok",
            "claims": [
                {
                    "id": "c1",
                    "type": "Assertion",
                    "text": text,
                    "confidence": 0.8,
                    "propositions": [{"id": "c1.p", "text": text, "ledger_ids": ledger_ids}],
                }
            ],
        }
    }


def _invoke(cp: ControlPlane, agent: Any, **options: Any) -> Any:
    graph = fence(
        agent, control_plane=cp, name="cap-reader", checkpointer=InMemorySaver(), **options
    )
    return graph.invoke({"task": "What is the cap?"}, {"configurable": {"thread_id": "t"}})


def test_an_agent_that_cites_what_the_bus_returned_is_answered(cp: ControlPlane) -> None:
    def agent(state: FenceState) -> dict[str, Any]:
        out = cp.bus.call(state["run_id"], "letter", {})  # type: ignore[typeddict-item]
        return _handover(
            state, "Senior associates are capped at EUR 380 per hour.", [out.ledger_id or ""]
        )

    result = _invoke(cp, agent)["result"]
    assert result.status == "answered"
    [claim] = result.claims
    assert claim.propositions[0].entailment.label == "entailment"
    assert result.answer.startswith("- Senior associates are capped")


def test_feedback_reaches_the_agent_and_evidence_settles_it(cp: ControlPlane) -> None:
    seen: list[list[Feedback]] = []

    def agent(state: FenceState) -> dict[str, Any]:
        seen.append(state.get("feedback", []))
        if state.get("round", 0) == 0:  # first round: cites nothing at all
            return _handover(state, "Senior associates are capped at EUR 380 per hour.", [])
        out = cp.bus.call(state["run_id"], "letter", {})  # type: ignore[typeddict-item]
        return _handover(
            state, "Senior associates are capped at EUR 380 per hour.", [out.ledger_id or ""]
        )

    result = _invoke(cp, agent)["result"]
    assert result.status == "answered" and result.rounds == 1
    assert seen[0] == []
    assert "missing_ledger_ids" in {f["code"] for f in seen[1] if f["kind"] == "gate_error"}


def test_rounds_are_bounded_then_the_fence_abstains(cp: ControlPlane) -> None:
    calls: list[int] = []

    def stubborn(state: FenceState) -> dict[str, Any]:
        calls.append(state.get("round", 0))
        out = cp.bus.call(state["run_id"], "letter", {})  # type: ignore[typeddict-item]
        return _handover(
            state, "Partners were approved by the board in March.", [out.ledger_id or ""]
        )

    result = _invoke(cp, stubborn, max_evidence_rounds=1)["result"]
    assert calls == [0, 1]
    assert result.status == "abstained" and result.claims == ()
    assert result.answer.startswith("I don't know")


def test_an_agent_that_raises_ends_failed_not_crashed(cp: ControlPlane) -> None:
    def broken(state: FenceState) -> dict[str, Any]:
        raise KeyError("no model configured")

    result = _invoke(cp, broken)["result"]
    assert result.status == "failed" and result.answer is None
    assert any("KeyError" in e["message"] for e in result.errors)


def test_an_agents_exception_keeps_its_traceback_in_the_ledger(
    cp: ControlPlane, caplog: pytest.LogCaptureFixture
) -> None:
    def dividing(state: FenceState) -> dict[str, Any]:
        return {"handover": 1 / 0}

    state = _invoke(cp, dividing)
    assert state["result"].status == "failed"
    [entry] = cp.ledger.entries(state["run_id"], kinds=["error"])
    body = json.loads(entry.text)
    assert (body["code"], body["type"]) == ("agent_failed", "ZeroDivisionError")
    assert 'return {"handover": 1 / 0}' in body["traceback"]
    assert "ZeroDivisionError" in caplog.text


def test_a_fenced_graph_records_its_name_and_version(cp: ControlPlane) -> None:
    def agent(state: FenceState) -> dict[str, Any]:
        out = cp.bus.call(state["run_id"], "letter", {})  # type: ignore[typeddict-item]
        return _handover(state, LETTER, [out.ledger_id or ""])

    graph = fence(agent, control_plane=cp, name="cap-reader", version="2024.1")
    assert graph_identity(graph) == GraphIdentity(name="cap-reader", version="2024.1")
    state = graph.invoke({"task": "What is the cap?"}, {"configurable": {"thread_id": "cap-1"}})
    assert state["graph"] == {"name": "cap-reader", "version": "2024.1"}
    metadata = cp.ledger.run(state["run_id"]).metadata
    assert (metadata["graph"], metadata["graph_version"], metadata["thread_id"]) == (
        "cap-reader",
        "2024.1",
        "cap-1",
    )
    status = cp.status("cap-1")
    assert (status.graph_name, status.graph_version, status.status) == (
        "cap-reader",
        "2024.1",
        "answered",
    )
    assert status.run_id == state["run_id"] and status.result == state["result"]


@pytest.mark.parametrize(
    ("name", "version", "problem"),
    [
        ("", "1", "non-empty"),
        ("x" * 201, "1", "longer than 200"),
        ("bad\nname", "1", "printable"),
        (" padded", "1", "printable"),
        ("ok", "v" * 65, "longer than 64"),
        ("ok", "", "non-empty"),
        (None, "1", "non-empty"),
    ],
)
def test_a_graph_name_and_version_are_printable_and_bounded(
    cp: ControlPlane, name: Any, version: Any, problem: str
) -> None:
    with pytest.raises(UsageError, match=problem):
        fence(lambda _s: {}, control_plane=cp, name=name, version=version)


def test_the_readme_example_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    runpy.run_path(str(ROOT / "examples" / "fence_your_agent.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert out.startswith("answered | - The ECB reference rate for EURUSD")
    assert "c1 ['entailment']" in out
