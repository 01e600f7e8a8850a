"""Runs of any fenced graph: start, resume, where a thread stands, what waits.

The runner knows nothing of any application: it takes the graph ``fence()``
returned, the caller's input and a thread id. Every refusal is decided before the
graph runs, so a refused call changes nothing::

    run     unknown graph ─► UsageError      thread already used ─► ThreadInUse
    resume  no such thread ─► UnknownThread  another graph's ─► WrongGraph
            not paused, decided before ─► AlreadyDecided (names that decision)
            not a decision on the pending calls ─► InvalidDecision

A resume returns the outcome of its own invocation, not the thread's latest
checkpoint, which may be another process's when two resumed one run at once.
``status`` and ``paused`` read the database alone (``fence_threads`` and the
control plane's checkpointer), so they need no graph: they answer with
:class:`ThreadStatus` records.

The runner invokes a graph with LangGraph's ``durability="exit"`` (:data:`DURABILITY`):
the thread's checkpoint is written once, when the invocation returns, pauses for a
grant (an interrupt) or raises, rather than after every node (``"async"``, LangGraph's
default, and ``"sync"`` write a checkpoint and a set of pending writes per node,
some twenty commits a run). Those are the only checkpoints the runner reads: a
paused run is resumed from its interrupt's, and ``status`` reads a finished run's
result. A checkpoint between two nodes would only let a run that broke off (its
process killed) be continued from the middle, which the runner never does: ``run``
refuses a thread that was ever used and ``resume`` continues a paused one only.

What has to survive a crash in the middle of a run is in the database, committed
before the graph goes on, whatever the mode: the run and its ledger entries, the
thread's graph and run, each reviewer decision and grant, and each tool call's
start row, committed before its handler runs. A resume cut short (the process
killed after the irreversible call ran) leaves the thread's checkpoint paused, so
resuming again replays the grant node, which finds its stored decision and the
grant already issued, and the act node, whose calls carry ids derived from the run
and the intent: the bus answers a call that ran with its stored result; it never
runs a handler twice. A call whose handler started and never recorded a result (the
process was killed inside it) is waited for while it may still be running, then
recovered: its tool's lookup may settle it, else its action is ``unknown`` (never
``failed``), naming the call and how to settle it (``bus.settle_call``). ``status``
shows such an action as what it came to once it is settled. Whoever invokes a
fenced graph directly gets LangGraph's default, under which a run that broke off can
be continued with ``invoke(None, config)``, and may pass ``durability="exit"`` for
the runner's cost.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Awaitable, Callable, Generator, Mapping
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import merge_configs
from langgraph.types import Command, Durability, StateSnapshot
from pydantic import ValidationError

from assay.errors import (
    InvalidDecision,
    RunError,
    ThreadInUse,
    UnknownThread,
    UnreadableCheckpoint,
    UsageError,
)
from assay.fence import _threads as threads
from assay.fence._components import FenceComponents
from assay.fence._decisions import DecisionStore, already_decided
from assay.fence._fence import FencedGraph, build_result, graph_identity, prepared_input
from assay.fence._one_run import claimed
from assay.fence._result import RunResult, ThreadStatus, result_from_json
from assay.fence._review import PendingCall, parse_decision
from assay.fence._settled import with_settlements
from assay.fence._state import FenceState
from assay.fence._threads import GraphIdentity, ThreadRow
from assay.fence._tracing import invocation_span
from assay.tool_bus import json_problems

__all__ = ["aresume", "arun", "paused", "resume", "run", "status"]

_INPUT_KEYS = ("task", "context")
#: How the runner's invocations are checkpointed (see the module's docstring).
DURABILITY: Durability = "exit"


def run(
    components: FenceComponents,
    graph: FencedGraph,
    input: Mapping[str, Any],
    *,
    thread_id: str | None = None,
    config: RunnableConfig | None = None,
) -> RunResult:
    """Start ``graph`` on ``input`` (``{"task": str, "context": {...}}``, after the
    graph's ``prepare``) in a new thread (``thread_id``, or a fresh one). ``config`` is
    LangGraph's (callbacks, tags, metadata, ``recursion_limit``, ``configurable``),
    merged with the thread id the runner sets."""
    payload, config = _start(components, graph, input, thread_id, config)
    identity = graph_identity(graph)
    thread = _thread_of(config)
    with _reading(thread):
        snapshot = graph.get_state(config)
    _claim(components, identity, config, snapshot)
    with invocation_span("run", identity, thread) as span, claimed(thread):
        result = _settle(
            components, config, lambda: graph.invoke(payload, config, durability=DURABILITY)
        )
        span.finish(result)
    return result


async def arun(
    components: FenceComponents,
    graph: FencedGraph,
    input: Mapping[str, Any],
    *,
    thread_id: str | None = None,
    config: RunnableConfig | None = None,
) -> RunResult:
    """:func:`run` on the event loop (``graph.ainvoke``): the graph's async nodes and
    the checkpointer's async methods run there."""
    payload, config = _start(components, graph, input, thread_id, config)
    identity = graph_identity(graph)
    thread = _thread_of(config)
    with _reading(thread):
        snapshot = await graph.aget_state(config)
    _claim(components, identity, config, snapshot)
    with invocation_span("run", identity, thread) as span, claimed(thread):
        result = await _asettle(
            components, config, lambda: graph.ainvoke(payload, config, durability=DURABILITY)
        )
        span.finish(result)
    return result


def resume(
    components: FenceComponents,
    graph: FencedGraph,
    thread_id: str,
    decision: Mapping[str, Any],
    *,
    config: RunnableConfig | None = None,
) -> RunResult:
    """Continue the run paused on ``thread_id`` with a reviewer's ``decision``
    (``{"approve": bool, "approver": name, "reason": ...}`` or per intent); ``config``
    as for :func:`run`."""
    config = _resume_config(graph, thread_id, decision, config)
    with _reading(thread_id):
        snapshot = graph.get_state(config)
    _check_paused(components, graph, config, decision, snapshot)
    command = Command(resume=dict(decision))
    with invocation_span("resume", graph_identity(graph), thread_id) as span:
        result = _settle(
            components, config, lambda: graph.invoke(command, config, durability=DURABILITY)
        )
        _refuse_rival(components, snapshot, decision)
        span.finish(result)
    return result


async def aresume(
    components: FenceComponents,
    graph: FencedGraph,
    thread_id: str,
    decision: Mapping[str, Any],
    *,
    config: RunnableConfig | None = None,
) -> RunResult:
    """:func:`resume` on the event loop (``graph.ainvoke``)."""
    config = _resume_config(graph, thread_id, decision, config)
    with _reading(thread_id):
        snapshot = await graph.aget_state(config)
    _check_paused(components, graph, config, decision, snapshot)
    command = Command(resume=dict(decision))
    with invocation_span("resume", graph_identity(graph), thread_id) as span:
        result = await _asettle(
            components, config, lambda: graph.ainvoke(command, config, durability=DURABILITY)
        )
        _refuse_rival(components, snapshot, decision)
        span.finish(result)
    return result


def status(components: FenceComponents, thread_id: str) -> ThreadStatus:
    """Where ``thread_id`` stands: its graph, run, status and latest result."""
    row = threads.get(components.engine, threads.check_thread_id(thread_id))
    if row is None:
        raise UnknownThread(f"no fenced run on thread {thread_id!r}")
    return _thread_status(components, row)


def paused(
    components: FenceComponents, *, graph_name: str | None = None, limit: int = 100
) -> list[ThreadStatus]:
    """Threads waiting for a grant (of ``graph_name`` only, when given), the most
    recently paused first, at most ``limit``."""
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise UsageError("limit must be a positive integer")
    if graph_name is not None and not isinstance(graph_name, str):
        raise UsageError("graph_name must be a string")
    rows = threads.listed(components.engine, "awaiting_grant", graph_name, limit)
    return [_thread_status(components, row) for row in rows]


# --- starting ---------------------------------------------------------------------------


#: Keys of ``configurable`` that would point a run at another checkpoint than its
#: thread's latest (LangGraph's time travel), which the runner does not do.
_NOT_CONFIGURABLE = ("checkpoint_id", "checkpoint_ns", "checkpoint_map")


def _config(thread_id: str | None, config: RunnableConfig | None) -> RunnableConfig:
    """``config`` with the thread id set (``thread_id``, the one ``configurable``
    names, or a fresh one); :class:`UsageError` for two different thread ids, or a
    checkpoint to travel to."""
    if config is None:
        config = {}
    if not isinstance(config, Mapping):
        raise UsageError("config must be a LangGraph RunnableConfig (a mapping)")
    configurable: Any = config.get("configurable") or {}
    if not isinstance(configurable, Mapping):
        raise UsageError("config['configurable'] must be a mapping")
    travel = [k for k in _NOT_CONFIGURABLE if k in configurable]
    if travel:
        raise UsageError(f"config['configurable'] may not set {', '.join(travel)}")
    named: Any = configurable.get("thread_id")
    if thread_id is not None and named is not None and str(named) != thread_id:
        raise UsageError(
            f"two thread ids: {thread_id!r} and config['configurable']['thread_id'] {named!r}"
        )
    chosen = thread_id if thread_id is not None else named
    if chosen is None:
        chosen = "thr_" + secrets.token_hex(12)
    thread = threads.check_thread_id(str(chosen) if not isinstance(chosen, str) else chosen)
    return merge_configs(config, {"configurable": {"thread_id": thread}})


def _start(
    components: FenceComponents,
    graph: FencedGraph,
    value: Mapping[str, Any],
    thread_id: str | None,
    config: RunnableConfig | None,
) -> tuple[FenceState, RunnableConfig]:
    """The checked input and the config of a new run; nothing is written."""
    graph_identity(graph)
    if not isinstance(value, Mapping):
        raise UsageError("a run's input is a mapping: {'task': str, 'context': {...}}")
    merged = _config(thread_id, config)
    payload = _payload(components, prepared_input(graph, value))
    return payload, merged


def _payload(components: FenceComponents, value: object) -> FenceState:
    if not isinstance(value, Mapping):
        raise UsageError("a run's input is a mapping: {'task': str, 'context': {...}}")
    data = cast(Mapping[object, Any], value)
    unknown = sorted(repr(k) for k in data if k not in _INPUT_KEYS)
    if unknown:
        raise UsageError(f"a run's input takes 'task' and 'context', not {', '.join(unknown)}")
    task = data.get("task")
    if not isinstance(task, str) or not task.strip():
        raise UsageError("the input's 'task' must be a non-empty string")
    if len(task.encode("utf-8", "surrogatepass")) > components.ledger.max_content_bytes:
        raise UsageError("the input's 'task' is larger than the ledger's content limit")
    context = data.get("context", {})
    if not isinstance(context, Mapping) or json_problems(context):
        raise UsageError("the input's 'context' must be a JSON object")
    return {"task": task, "context": dict(cast(Mapping[str, Any], context))}


def _claim(
    components: FenceComponents,
    identity: GraphIdentity,
    config: RunnableConfig,
    snapshot: StateSnapshot,
) -> None:
    """Take the thread for ``identity``; :class:`ThreadInUse` if it was ever used."""
    thread_id = _thread_of(config)
    if snapshot.values or not threads.claim(components.engine, thread_id, identity):
        held = threads.get(components.engine, thread_id)
        owner = f" by graph {held.graph} ({held.status})" if held is not None else ""
        raise ThreadInUse(
            f"thread {thread_id!r} already holds a run{owner}; resume it or choose another id"
        )


# --- resuming ---------------------------------------------------------------------------


def _resume_config(
    graph: FencedGraph, thread_id: str, decision: object, config: RunnableConfig | None
) -> RunnableConfig:
    graph_identity(graph)
    merged = _config(threads.check_thread_id(thread_id), config)
    parse_decision(decision, None)  # its own shape, before anything is read
    return merged


def _check_paused(
    components: FenceComponents,
    graph: FencedGraph,
    config: RunnableConfig,
    decision: Mapping[str, Any],
    snapshot: StateSnapshot,
) -> None:
    """Refuse what may not resume: see the module's table."""
    thread_id, identity = _thread_of(config), graph_identity(graph)
    row = threads.get(components.engine, thread_id)
    values = cast(dict[str, Any], snapshot.values or {})
    if row is None and not values:
        raise UnknownThread(f"no run on thread {thread_id!r}")
    if row is not None and row.graph != identity:
        raise threads.wrong_graph(thread_id, row.graph, identity)
    if not values:
        raise UnknownThread(f"thread {thread_id!r} has no checkpoint to resume")
    if not any(task.interrupts for task in snapshot.tasks):
        raise _not_paused(components, thread_id, values, running=bool(snapshot.next))
    pending = [item.intent_id for item in _pending(thread_id, values)]
    if not pending:
        raise InvalidDecision(f"thread {thread_id!r} is paused, but not for a grant")
    parse_decision(decision, pending)


def _pending(thread_id: str, values: Mapping[str, Any]) -> list[PendingCall]:
    """The calls the checkpoint says wait for a decision; :class:`UnreadableCheckpoint`
    when they are not in a shape any version wrote."""
    try:
        return [PendingCall.model_validate(item) for item in values.get("pending") or []]
    except (ValidationError, TypeError) as exc:
        raise UnreadableCheckpoint(
            f"the checkpoint of thread {thread_id!r} cannot be read: its pending calls are "
            f"not calls ({' '.join(str(exc).split())[:300]}); nothing was changed",
            thread_id=thread_id,
        ) from exc


@contextlib.contextmanager
def _reading(thread_id: str) -> Generator[None]:
    """Name the thread in an :class:`UnreadableCheckpoint` raised while its checkpoint
    is read."""
    try:
        yield
    except UnreadableCheckpoint as exc:
        if exc.thread_id is not None:
            raise
        raise UnreadableCheckpoint(
            f"the checkpoint of thread {thread_id!r} cannot be read: {exc}; nothing was changed",
            thread_id=thread_id,
        ) from exc


def _refuse_rival(
    components: FenceComponents, snapshot: StateSnapshot, decision: Mapping[str, Any]
) -> None:
    """Raise :class:`AlreadyDecided` when the outcome this invocation got back was
    reached on another reviewer's decision: LangGraph does not re-run a grant step
    whose result was saved by a concurrent resume, it hands back where that one got."""
    values = cast(dict[str, Any], snapshot.values or {})
    items = [PendingCall.model_validate(item) for item in values.get("pending") or []]
    decisions = parse_decision(decision, [item.intent_id for item in items])
    rival = DecisionStore(components.engine).rival(
        [(item, decisions[item.intent_id]) for item in items]
    )
    if rival is not None:
        raise already_decided(rival)


def _not_paused(
    components: FenceComponents, thread_id: str, values: Mapping[str, Any], *, running: bool
) -> InvalidDecision:
    """Why a decision cannot be taken: the decision that stands, or that nothing waits."""
    run_id = values.get("run_id")
    earlier = list(DecisionStore(components.engine).for_run(str(run_id)).values()) if run_id else []
    if earlier:
        return already_decided(earlier[0])
    if running:
        return InvalidDecision(f"thread {thread_id!r} is running, not paused for a grant")
    result = _stored_result(values)
    ended = f" ended {result.status}" if result is not None else " is not paused"
    return InvalidDecision(f"thread {thread_id!r} is not waiting for a decision: its run{ended}")


# --- invoking ---------------------------------------------------------------------------


def _settle(
    components: FenceComponents, config: RunnableConfig, invoke: Callable[[], Any]
) -> RunResult:
    try:
        values = invoke()
    except Exception as exc:
        _failed(components, config, exc)
        raise
    return _outcome(values)


async def _asettle(
    components: FenceComponents, config: RunnableConfig, invoke: Callable[[], Awaitable[Any]]
) -> RunResult:
    try:
        values = await invoke()
    except Exception as exc:
        _failed(components, config, exc)
        raise
    return _outcome(values)


def _failed(components: FenceComponents, config: RunnableConfig, exc: Exception) -> None:
    """A run that broke off is ``failed``; a refusal (a usage error) changed nothing."""
    if not isinstance(exc, UsageError):
        threads.set_status(components.engine, _thread_of(config), "failed")


def _outcome(values: object) -> RunResult:
    """What this invocation came to, from the values it returned."""
    if not isinstance(values, Mapping):
        raise RunError("the fenced graph returned no state")
    state = cast(Mapping[str, Any], values)
    if state.get("__interrupt__"):
        return build_result(cast(Any, state))
    result = _stored_result(state)
    if result is not None:
        return result
    raise RunError("the fenced graph stopped without a result")


def _stored_result(values: Mapping[str, Any]) -> RunResult | None:
    """The run's result, as the graph's state holds it, or as a checkpoint's channel
    values do (its JSON; a record itself where an earlier version wrote one)."""
    result = values.get("result")
    if isinstance(result, Mapping):
        return result_from_json(dict(cast(Mapping[str, Any], result)))
    return result if isinstance(result, RunResult) else None


def _thread_of(config: RunnableConfig) -> str:
    return str(config.get("configurable", {})["thread_id"])


# --- reading without a graph --------------------------------------------------------------


def _thread_status(components: FenceComponents, row: ThreadRow) -> ThreadStatus:
    result = _checkpointed_result(components, row.thread_id)
    if result is not None and result.run_id != row.run_id:
        result = None  # the previous run's: the current one has none yet
    if result is not None:  # an action whose outcome was unknown may be settled since
        result = with_settlements(components.bus, result)
    return ThreadStatus(
        thread_id=row.thread_id,
        graph_name=row.graph.name,
        graph_version=row.graph.version,
        run_id=row.run_id,
        status=row.status,
        created_at=row.created_at,
        updated_at=row.updated_at,
        result=result,
    )


def _checkpointed_result(components: FenceComponents, thread_id: str) -> RunResult | None:
    """The ``result`` of the thread's latest checkpoint in the control plane's saver."""
    with _reading(thread_id):
        saved = components.checkpointer.get_tuple(
            {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
        )
        if saved is None:
            return None
        return _stored_result(saved.checkpoint.get("channel_values", {}))
