"""How many transactions the fence's steps take, and that taking fewer changed
nothing they guarantee.

The begin node opens the run, binds the thread and records the task in one write
transaction; a tool call is two (its start, committed before the handler runs, and
its result); the finish node one. A hand-over with nothing to act on goes from the
verifier straight to ``finish``. A read of one statement opens no transaction on
SQLite. The counts come from the engine's own events, per graph node.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Generator, Iterator, Mapping
from contextlib import contextmanager
from typing import Any
from uuid import UUID

import pytest
import sqlalchemy as sa
from langchain_core.callbacks import BaseCallbackHandler
from sqlalchemy import event

from assay import ControlPlane, ThreadInUse, ToolSpec
from assay.fence import FenceState, fence
from assay.tool_bus import ToolFailure
from assay.verifier import LexicalNLI

LINE = "Invoice line 4 bills 2.5 h at EUR 310/h."


def _reader(name: str) -> ToolSpec:
    return ToolSpec(
        name=name,
        version="1.0.0",
        side_effect="read_only",
        description="An invoice line.",
        input_schema={
            "type": "object",
            "required": ["line"],
            "additionalProperties": False,
            "properties": {"line": {"type": "integer"}},
        },
        output_schema={"type": "string"},
    )


READ = _reader("read_line")


class Commits(BaseCallbackHandler):
    """Commits and statements on the engine, by the graph node that issued them."""

    def __init__(self) -> None:
        self.node = "outside"
        self.commits: Counter[str] = Counter()
        self.statements: Counter[str] = Counter()
        self._nodes: dict[UUID, str] = {}

    def on_chain_start(
        self, serialized: Any, inputs: Any, *, run_id: UUID, metadata: Any = None, **kw: Any
    ) -> None:
        name = kw.get("name")
        if not isinstance(name, str) or not metadata or metadata.get("langgraph_node") != name:
            return
        if kw.get("parent_run_id") not in self._nodes:  # a node, not a runnable inside one
            self._nodes[run_id] = self.node = name

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kw: Any) -> None:
        if self._nodes.pop(run_id, None) is not None:
            self.node = "outside"

    def commit(self, *_: Any) -> None:
        self.commits[self.node] += 1

    def statement(self, *_: Any) -> None:
        self.statements[self.node] += 1


@contextmanager
def counted(engine: sa.Engine) -> Generator[Commits, None, None]:
    probe = Commits()
    event.listen(engine, "commit", probe.commit)
    event.listen(engine, "before_cursor_execute", probe.statement)
    try:
        yield probe
    finally:
        event.remove(engine, "commit", probe.commit)
        event.remove(engine, "before_cursor_execute", probe.statement)


@pytest.fixture
def cp(db_url: str) -> Iterator[ControlPlane]:
    with ControlPlane.open(db_url, nli=LexicalNLI()) as plane:
        plane.registry.register(READ, lambda _: LINE)
        yield plane


def _agent(cp: ControlPlane, *, act: bool = False) -> Any:
    def agent(state: FenceState) -> dict[str, Any]:
        run_id = state.get("run_id", "")
        line = cp.bus.call(run_id, "read_line", {"line": 4})
        proposition = {"id": "c1.p", "text": LINE, "ledger_ids": [line.ledger_id]}
        claim = {"id": "c1", "type": "Assertion", "text": LINE, "confidence": 0.9}
        handover: dict[str, Any] = {
            "run_id": run_id,
            "from_agent": "auditor",
            "status": "ok",
            "claims": [{**claim, "propositions": [proposition]}],
        }
        if act:
            intent = {"id": "a1", "tool": "read_line", "args": {"line": 4}, "depends_on": ["c1"]}
            handover["action_intents"] = [{**intent, "requires_grant": False}]
        return {"handover": handover}

    return agent


def _config(thread: str, probe: Commits | None = None) -> Any:
    return {"configurable": {"thread_id": thread}, "callbacks": [probe] if probe else []}


def test_begin_and_finish_commit_once_and_a_tool_call_twice(cp: ControlPlane) -> None:
    graph = fence(_agent(cp), control_plane=cp, name="counted")
    with counted(cp.engine) as probe:
        state = graph.invoke({"task": "check line 4"}, _config("t-count", probe))
    assert state["result"].status == "answered"
    assert (probe.commits["begin"], probe.commits["finish"]) == (1, 1)
    assert probe.commits["agent"] == 2  # one call: its start and its result
    assert [e.kind for e in cp.ledger.entries(state["run_id"])][:3] == [
        "human_fact",
        "tool_call",
        "tool_output",
    ]
    assert cp.status("t-count").run_id == state["run_id"]


def test_nothing_to_act_on_goes_from_verify_to_finish(cp: ControlPlane) -> None:
    plain = fence(_agent(cp), control_plane=cp, name="no-actions")
    acting = fence(_agent(cp, act=True), control_plane=cp, name="actions")
    steps = [next(iter(c)) for c in plain.stream({"task": "t"}, _config("t-plain"))]
    assert steps == ["begin", "agent", "gate", "verify", "finish"]
    steps = [next(iter(c)) for c in acting.stream({"task": "t"}, _config("t-acting"))]
    assert steps == ["begin", "agent", "gate", "verify", "policy", "grant", "act", "finish"]
    [action] = acting.get_state(_config("t-acting")).values["result"].actions
    assert (action.status, action.output) == ("executed", LINE)


def test_a_thread_of_another_graph_is_refused_before_anything_is_kept(cp: ControlPlane) -> None:
    first = fence(_agent(cp), control_plane=cp, name="first")
    second = fence(_agent(cp), control_plane=cp, name="second")
    first.invoke({"task": "t"}, _config("t-owned"))
    runs = cp.ledger.runs()
    with pytest.raises(ThreadInUse):  # a used thread: refused before any node runs
        second.invoke({"task": "t"}, _config("t-owned"))
    assert cp.ledger.runs() == runs  # the run the refused begin opened was rolled back
    assert cp.status("t-owned").graph_name == "first"


def test_a_read_of_one_statement_is_one_statement(cp: ControlPlane) -> None:
    run = cp.ledger.start_run()
    entry = cp.ledger.append(run, kind="human_fact", source="user", content="x")
    with counted(cp.engine) as probe:
        assert cp.ledger.get_many([entry.id]) == {entry.id: entry}
        assert cp.ledger.entries(run, kinds=["human_fact"]) == [entry]
    assert probe.statements["outside"] == 2  # no BEGIN or ROLLBACK around either


def test_a_call_started_by_another_caller_in_between_runs_once(cp: ControlPlane) -> None:
    """The call's start row decides: a caller that found no earlier start but lost
    the insert to another one returns that one's result, its handler never run."""
    spec = _reader("raced")
    ran: list[int] = []
    run = cp.ledger.start_run()

    def precheck(_: Mapping[str, Any]) -> ToolFailure | None:
        if not ran:  # the first caller, between its check for an earlier start and its own
            ran.append(0)
            assert cp.bus.call(run, "raced", {"line": 4}, call_id="c1").ok
        return None

    cp.registry.register(spec, lambda _: ran.append(1) or LINE, precheck=precheck)
    result = cp.bus.call(run, "raced", {"line": 4}, call_id="c1")
    assert result.ok and result.output == LINE
    assert ran == [0, 1]  # the handler ran once, for the caller that started first
    kinds = [e.kind for e in cp.ledger.entries(run)]
    assert kinds == ["tool_call", "tool_output"]  # the same call record, deduplicated
    assert cp.ledger.verify(run).ok


def test_a_result_row_written_outside_the_bus_is_recorded_as_a_conflict(
    cp: ControlPlane,
) -> None:
    run = cp.ledger.start_run()
    spec = _reader("forged")

    def handler(_: dict[str, Any]) -> str:
        with cp.engine.begin() as conn:  # someone else stores a result for the call
            conn.execute(
                sa.text(
                    "INSERT INTO tool_call_results (run_id, call_id, result_json, finished_at) "
                    "VALUES (:run, 'c1', '{}', CURRENT_TIMESTAMP)"
                ),
                {"run": run},
            )
        return LINE

    cp.registry.register(spec, handler)
    result = cp.bus.call(run, "forged", {"line": 4}, call_id="c1")
    assert result.ok and result.output == LINE
    entries = cp.ledger.entries(run)
    assert [e.kind for e in entries] == ["tool_call", "tool_output", "error"]
    assert entries[-1].metadata == {"call_id": "c1", "code": "result_conflict"}
    assert cp.ledger.verify(run).ok
