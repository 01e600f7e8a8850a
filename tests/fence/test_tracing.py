"""OpenTelemetry spans of fenced runs: one per node execution with what it decided,
under the span of the invocation, read back from the SDK's in-memory exporter."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from assay import ControlPlane, ToolSpec
from assay.fence import FencedGraph, FenceState, fence
from assay.verifier import LexicalNLI

LETTER = "Senior associates are capped at EUR 380 per hour."
LETTER_TOOL = ToolSpec(
    name="letter",
    version="1.0.0",
    side_effect="read_only",
    description="The letter.",
    input_schema={"type": "object", "additionalProperties": False},
    output_schema={"type": "string"},
)
PAY_TOOL = ToolSpec(
    name="pay",
    version="1.0.0",
    side_effect="irreversible",
    description="Pay an amount.",
    input_schema={
        "type": "object",
        "additionalProperties": False,
        "required": ["eur"],
        "properties": {"eur": {"type": "integer"}},
    },
    output_schema={"type": "object"},
)


@pytest.fixture
def spans(monkeypatch: pytest.MonkeyPatch) -> Iterator[InMemorySpanExporter]:
    """An SDK tracer provider exporting into memory, installed as the global one for
    this test only (the API allows setting it once per process, so the fixture swaps
    the global and puts the previous one back)."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(trace, "_TRACER_PROVIDER", provider)
    yield exporter
    provider.shutdown()


@pytest.fixture
def cp(sqlite_url: str) -> Iterator[ControlPlane]:
    with ControlPlane.open(sqlite_url, nli=LexicalNLI()) as plane:
        plane.registry.register(LETTER_TOOL, lambda _args: LETTER)
        plane.registry.register(PAY_TOOL, lambda args: {"paid": args["eur"]})
        yield plane


def _agent(cp: ControlPlane, *, pay: bool) -> Any:
    """Cites nothing in its first round (the gate refuses it), then cites the letter;
    with ``pay``, also asks to pay the cap."""

    def agent(state: FenceState) -> dict[str, Any]:
        ids: list[str] = []
        if state.get("round", 0) > 0:
            out = cp.bus.call(state.get("run_id", ""), "letter", {})
            ids = [out.ledger_id or ""]
        handover: dict[str, Any] = {
            "run_id": state.get("run_id", ""),
            "from_agent": "me",
            "status": "ok",
            "claims": [
                {
                    "id": "c1",
                    "type": "Assertion",
                    "text": LETTER,
                    "confidence": 0.8,
                    "propositions": [{"id": "c1.p", "text": LETTER, "ledger_ids": ids}],
                }
            ],
        }
        if pay:
            handover["action_intents"] = [
                {
                    "id": "a1",
                    "tool": "pay",
                    "args": {"eur": 380},
                    "requires_grant": True,
                    "depends_on": ["c1"],
                }
            ]
        return {"handover": handover}

    return agent


def _graph(cp: ControlPlane, *, pay: bool) -> FencedGraph:
    return fence(_agent(cp, pay=pay), control_plane=cp, name="cap-reader", version="3")


def _named(exporter: InMemorySpanExporter, name: str) -> list[ReadableSpan]:
    return [s for s in exporter.get_finished_spans() if s.name == name]


def test_each_node_execution_is_a_span_with_the_run_and_what_it_decided(
    cp: ControlPlane, spans: InMemorySpanExporter
) -> None:
    graph = _graph(cp, pay=False)
    result = cp.run(graph, {"task": "What is the cap?"}, thread_id="t-answer")
    assert result.status == "answered" and result.rounds == 1

    names = [s.name for s in spans.get_finished_spans()]
    assert names == [
        "assay.fence.begin",
        "assay.fence.agent",
        "assay.fence.gate",
        "assay.fence.abstain",
        "assay.fence.agent",
        "assay.fence.gate",
        "assay.fence.verify",
        "assay.fence.finish",
        "assay.fence.run",  # the runner's span, the parent of the nodes', ends last
    ]
    for span in spans.get_finished_spans():
        attrs = span.attributes or {}
        assert attrs["assay.run_id"] == result.run_id
        assert attrs["assay.thread_id"] == "t-answer"
        assert (attrs["assay.graph.name"], attrs["assay.graph.version"]) == ("cap-reader", "3")
    refused, accepted = _named(spans, "assay.fence.gate")
    assert refused.attributes is not None and accepted.attributes is not None
    assert refused.attributes["assay.gate.accepted"] is False
    assert "missing_ledger_ids" in tuple(refused.attributes["assay.gate.error_codes"])  # type: ignore[arg-type]
    assert accepted.attributes["assay.gate.accepted"] is True
    assert tuple(accepted.attributes["assay.gate.error_codes"]) == ()  # type: ignore[arg-type]
    [verify] = _named(spans, "assay.fence.verify")
    assert verify.attributes is not None
    assert verify.attributes["assay.verdict.entailment"] == 1
    assert verify.attributes["assay.unsupported.count"] == 0
    [finish] = _named(spans, "assay.fence.finish")
    assert finish.attributes is not None and finish.attributes["assay.run.status"] == "answered"


def test_an_irreversible_call_records_the_grant_decision_and_the_action(
    cp: ControlPlane, spans: InMemorySpanExporter
) -> None:
    graph = _graph(cp, pay=True)
    paused = cp.run(graph, {"task": "Pay the cap."}, thread_id="t-pay")
    assert paused.status == "awaiting_grant"
    [pause] = _named(spans, "assay.fence.grant")
    assert pause.attributes is not None and pause.attributes["assay.paused"] is True
    [policy] = _named(spans, "assay.fence.policy")
    assert policy.attributes is not None and policy.attributes["assay.grant.pending"] == 1
    [run_span] = _named(spans, "assay.fence.run")
    assert run_span.attributes is not None
    assert run_span.attributes["assay.run.status"] == "awaiting_grant"
    assert run_span.context is not None
    for span in spans.get_finished_spans():
        if span is not run_span:
            assert span.parent is not None and span.parent.span_id == run_span.context.span_id
    spans.clear()

    decision = {"approve": True, "approver": "ana", "reason": "within the cap"}
    done = cp.resume(graph, "t-pay", decision)
    assert done.status == "answered" and [a.status for a in done.actions] == ["executed"]
    [grant] = _named(spans, "assay.fence.grant")
    assert grant.attributes is not None
    assert tuple(grant.attributes["assay.grant.tools"]) == ("pay",)  # type: ignore[arg-type]
    assert tuple(grant.attributes["assay.grant.decisions"]) == ("granted",)  # type: ignore[arg-type]
    assert tuple(grant.attributes["assay.grant.via"]) == ("human",)  # type: ignore[arg-type]
    [act] = _named(spans, "assay.fence.act")
    assert act.attributes is not None
    assert tuple(act.attributes["assay.action.tools"]) == ("pay",)  # type: ignore[arg-type]
    assert tuple(act.attributes["assay.action.statuses"]) == ("executed",)  # type: ignore[arg-type]
    assert act.attributes["assay.action.executed"] == 1
    assert act.attributes["assay.action.failed"] == 0
    [resume_span] = _named(spans, "assay.fence.resume")
    assert resume_span.attributes is not None and resume_span.context is not None
    assert resume_span.attributes["assay.run_id"] == paused.run_id
    assert resume_span.attributes["assay.thread_id"] == "t-pay"
    assert all(
        s.parent is not None and s.parent.span_id == resume_span.context.span_id
        for s in spans.get_finished_spans()
        if s is not resume_span
    )


def test_a_denied_call_is_a_denied_decision_and_a_denied_action(
    cp: ControlPlane, spans: InMemorySpanExporter
) -> None:
    graph = _graph(cp, pay=True)
    cp.run(graph, {"task": "Pay the cap."}, thread_id="t-deny")
    done = cp.resume(graph, "t-deny", {"approve": False, "approver": "ana", "reason": "no"})
    assert [a.status for a in done.actions] == ["denied"]
    decided = [s for s in _named(spans, "assay.fence.grant") if s.attributes]
    decisions = [tuple(s.attributes.get("assay.grant.decisions", ())) for s in decided]  # type: ignore[union-attr, arg-type]
    assert ("denied",) in decisions
    [act] = _named(spans, "assay.fence.act")
    assert act.attributes is not None
    assert tuple(act.attributes["assay.action.statuses"]) == ("denied",)  # type: ignore[arg-type]


def test_an_async_run_has_the_same_spans(cp: ControlPlane, spans: InMemorySpanExporter) -> None:
    graph = _graph(cp, pay=False)
    result = asyncio.run(cp.arun(graph, {"task": "What is the cap?"}, thread_id="t-async"))
    assert result.status == "answered"
    names = {s.name for s in spans.get_finished_spans()}
    assert {"assay.fence.agent", "assay.fence.gate", "assay.fence.finish"} <= names
    [first, _] = _named(spans, "assay.fence.agent")
    assert first.attributes is not None and first.attributes["assay.run_id"] == result.run_id


def test_without_a_provider_the_run_is_the_same_and_nothing_records(cp: ControlPlane) -> None:
    graph = _graph(cp, pay=False)
    span = trace.get_current_span()
    assert not span.is_recording()
    result = cp.run(graph, {"task": "What is the cap?"}, thread_id="t-quiet")
    assert result.status == "answered"


def test_without_the_opentelemetry_api_nodes_are_left_as_they_are() -> None:
    """assay runs without the ``otel`` extra: the nodes are not wrapped at all."""
    script = (
        "import sys\n"
        "sys.modules['opentelemetry'] = None\n"
        "sys.modules['opentelemetry.trace'] = None\n"
        "from assay.fence import traced_node, invocation_span\n"
        "node = lambda state: {}\n"
        "assert traced_node('gate', node) is node\n"
        "with invocation_span('run', None, 't') as span:\n"
        "    span.finish(None)\n"
        "print('untraced')\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip() == "untraced"
