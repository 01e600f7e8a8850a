"""LangGraph's conventions hold for a fenced graph: ``config`` (callbacks, tags,
metadata, ``recursion_limit``) reaches every run and resume the runner starts; a
second run on a used thread is refused the same way through the runner and through
``graph.invoke``; and a saver of the user's own stores the state without reviving a
class of assay's, under LangGraph's strict msgpack setting. Storage tests run on a
real SQLite file and a real PostgreSQL database."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from typing import Any
from uuid import UUID

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.errors import GraphRecursionError
from langgraph.types import Command

from assay import ControlPlane, ThreadInUse, UsageError
from assay.fence import FenceState, RunResult, fence
from assay.verifier import LexicalNLI
from tests.fence import _orders

TASK: FenceState = {"task": "Order what the warehouse holds of BT-105."}
APPROVE = {"approve": True, "approver": "alice"}


@pytest.fixture
def cp(db_url: str) -> Iterator[ControlPlane]:
    _orders.PLACED.clear()
    with ControlPlane.open(db_url, nli=LexicalNLI()) as plane:
        yield plane


class Recorder(BaseCallbackHandler):
    """What a tracer (LangSmith, Langfuse) is handed: each chain start, its name,
    tags and metadata."""

    def __init__(self) -> None:
        self.starts: list[tuple[str, list[str], dict[str, Any]]] = []

    def on_chain_start(
        self,
        serialized: dict[str, Any] | None,
        inputs: Any,
        *,
        run_id: UUID,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        self.starts.append((str(kwargs.get("name")), list(tags or []), dict(metadata or {})))

    def names(self) -> list[str]:
        return [name for name, _, _ in self.starts]


def _config(recorder: Recorder, step: str) -> RunnableConfig:
    return {"callbacks": [recorder], "tags": ["refunds"], "metadata": {"step": step}}


def test_callbacks_tags_and_metadata_reach_the_run_and_the_resume(cp: ControlPlane) -> None:
    graph = _orders.graph(cp)
    started, resumed = Recorder(), Recorder()

    paused = cp.run(graph, TASK, thread_id="conf-1", config=_config(started, "run"))
    done = cp.resume(graph, "conf-1", APPROVE, config=_config(resumed, "resume"))

    assert (paused.status, done.status) == ("awaiting_grant", "answered")
    assert {"begin", "agent", "gate", "verify", "policy", "grant"} <= set(started.names())
    assert {"grant", "act", "finish"} <= set(resumed.names())
    for recorder, step in ((started, "run"), (resumed, "resume")):
        assert all("refunds" in tags for _, tags, _ in recorder.starts)
        assert all(meta.get("step") == step for _, _, meta in recorder.starts)
        assert all(meta.get("thread_id") == "conf-1" for _, _, meta in recorder.starts)


def test_arun_and_aresume_take_the_config_too(cp: ControlPlane) -> None:
    graph = _orders.graph(cp)
    started, resumed = Recorder(), Recorder()

    async def scenario() -> RunResult:
        await cp.arun(graph, TASK, thread_id="conf-2", config=_config(started, "run"))
        return await cp.aresume(graph, "conf-2", APPROVE, config=_config(resumed, "resume"))

    assert asyncio.run(scenario()).status == "answered"
    assert "agent" in started.names() and "act" in resumed.names()


def test_the_recursion_limit_is_langgraphs(cp: ControlPlane) -> None:
    with pytest.raises(GraphRecursionError):
        cp.run(_orders.graph(cp), TASK, thread_id="conf-3", config={"recursion_limit": 2})
    assert cp.status("conf-3").status == "failed" and _orders.PLACED == []


def test_the_thread_id_may_come_from_the_config_but_not_twice(cp: ControlPlane) -> None:
    graph = _orders.graph(cp)

    paused = cp.run(graph, TASK, config={"configurable": {"thread_id": "conf-4"}})

    assert paused.thread_id == "conf-4"
    with pytest.raises(UsageError, match="two thread ids"):
        cp.run(graph, TASK, thread_id="conf-5", config={"configurable": {"thread_id": "x"}})
    with pytest.raises(UsageError, match="checkpoint_id"):
        cp.resume(graph, "conf-4", APPROVE, config={"configurable": {"checkpoint_id": "1"}})
    assert cp.resume(graph, "conf-4", APPROVE).status == "answered"


def test_new_input_on_a_used_thread_is_refused_both_ways_and_the_run_still_resumes(
    cp: ControlPlane,
) -> None:
    graph = _orders.graph(cp)
    paused = cp.run(graph, TASK, thread_id="conf-6")
    config: RunnableConfig = {"configurable": {"thread_id": "conf-6"}}

    with pytest.raises(ThreadInUse):
        cp.run(graph, TASK, thread_id="conf-6")
    with pytest.raises(ThreadInUse, match="already holds a run"):
        graph.invoke(TASK, config)
    with pytest.raises(ThreadInUse, match="already holds a run"):
        asyncio.run(graph.ainvoke(TASK, config))

    # Nothing was written: one run on the thread, still paused for its grant.
    assert [r.run_id for r in cp.ledger.runs()] == [paused.run_id]
    state = graph.invoke(Command(resume=APPROVE), config)
    assert state["result"].status == "answered" and len(_orders.PLACED) == 1


def _strict_saver() -> InMemorySaver:
    """LangGraph's in-memory saver, blocking every type not on its allowlist (what
    ``LANGGRAPH_STRICT_MSGPACK=true`` makes the default)."""
    return InMemorySaver(serde=JsonPlusSerializer(allowed_msgpack_modules=None))


@pytest.mark.parametrize("saver", [_strict_saver, InMemorySaver], ids=["strict", "default"])
def test_a_saver_of_the_users_own_keeps_the_state_as_plain_data(
    cp: ControlPlane, saver: Any, caplog: pytest.LogCaptureFixture
) -> None:
    _orders._install(cp.registry)  # pyright: ignore[reportPrivateUsage]
    mine = saver()
    graph = fence(_orders._desk(cp), control_plane=cp, name="mine", checkpointer=mine)  # pyright: ignore[reportPrivateUsage]
    config: RunnableConfig = {"configurable": {"thread_id": "conf-7"}}

    with caplog.at_level(logging.DEBUG):
        paused = graph.invoke(TASK, config)
        done = graph.invoke(Command(resume=APPROVE), config)
        read_back = graph.get_state(config).values["result"]

    assert paused["__interrupt__"] and done["result"].status == "answered"
    assert read_back == done["result"] and isinstance(read_back, RunResult)
    stored = mine.get_tuple(config)
    assert stored is not None
    assert isinstance(stored.checkpoint["channel_values"]["result"], dict)
    noted = [r.getMessage() for r in caplog.records if "serializ" in r.getMessage().lower()]
    assert noted == []
