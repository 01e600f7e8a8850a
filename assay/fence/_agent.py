"""The fence's agent node: runs the wrapped agent and keeps whatever it raised.

An agent is a callable, an ``async def`` callable, or a runnable (a compiled
LangGraph graph included, whose nodes and subgraphs may be async). The node has a
synchronous and an asynchronous body (a LangChain ``RunnableLambda`` with both), so
the fenced graph runs under ``invoke`` / ``stream`` and under ``ainvoke`` /
``astream``: under the latter an async agent is awaited on the caller's loop, a
runnable is run with ``ainvoke``, and a plain callable runs in LangGraph's executor
as a sync node would.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import Any, cast

from langchain_core.runnables import RunnableConfig, RunnableLambda
from langchain_core.runnables.config import run_in_executor
from langgraph.errors import GraphBubbleUp
from pydantic import BaseModel

from assay.fence._components import FenceComponents
from assay.fence._state import FenceState
from assay.ledger import canonical_json
from assay.tool_bus import describe_exception

__all__ = ["Agent", "AgentNode", "agent_node"]

_log = logging.getLogger("assay.fence")

Agent = Callable[[FenceState], dict[str, Any] | Awaitable[dict[str, Any]]] | Any
#: The agent node as the graph holds it: one runnable, with a sync and an async body.
AgentNode = RunnableLambda[FenceState, FenceState]

_NOT_A_DICT = "the agent must return a dict with a 'handover' key"
_ASYNC_UNDER_INVOKE = (
    "the agent is asynchronous ({what}): run the fenced graph with ainvoke or astream, "
    "not invoke or stream"
)


def agent_node(agent: Agent, control_plane: FenceComponents) -> AgentNode:
    """Run the agent; an exception becomes a ``failed`` run, not a crashed graph. Its
    type, message and formatted traceback (bounded) are kept in the run's ledger as an
    ``error`` entry (code ``agent_failed``) and logged, so the cause is never lost,
    whether the agent is sync or async, and wherever inside it (a subgraph's node
    included) it was raised. LangGraph's own signals (an ``interrupt()`` inside the
    agent, a ``Command`` to the parent graph) pass through untouched."""

    def run_sync(state: FenceState) -> FenceState:
        try:
            out = _call_sync(agent, state)
        except GraphBubbleUp:
            raise
        except Exception as exc:
            return _failed(control_plane, state, exc)
        return _fresh_round(out)

    async def run_async(state: FenceState, config: RunnableConfig) -> FenceState:
        try:
            out = await _call_async(agent, state, config)
        except GraphBubbleUp:
            raise
        except Exception as exc:
            # The ledger write is blocking database work: off the event loop.
            return await asyncio.to_thread(_failed, control_plane, state, exc)
        return _fresh_round(out)

    return RunnableLambda(run_sync, afunc=run_async, name="agent")


class _AsyncUnderInvoke(Exception):
    """An async agent reached under ``invoke``: reported as the run's failure."""


def _call_sync(agent: Any, state: FenceState) -> Any:
    if callable(getattr(agent, "invoke", None)):
        return agent.invoke(state)
    if _is_async_callable(agent):
        raise _AsyncUnderInvoke(_ASYNC_UNDER_INVOKE.format(what=_name(agent)))
    out = agent(state)
    if inspect.isawaitable(out):
        _discard(out)  # never awaited, and never warned about as if it were forgotten
        raise _AsyncUnderInvoke(_ASYNC_UNDER_INVOKE.format(what=f"{_name(agent)} returned {out!r}"))
    return out


async def _call_async(agent: Any, state: FenceState, config: RunnableConfig) -> Any:
    if callable(getattr(agent, "ainvoke", None)):
        return await agent.ainvoke(state)
    if callable(getattr(agent, "invoke", None)):
        return await run_in_executor(config, agent.invoke, state)
    if _is_async_callable(agent):
        return await agent(state)
    out = await run_in_executor(config, agent, state)
    return await out if inspect.isawaitable(out) else out


def _is_async_callable(agent: Any) -> bool:
    """``async def`` functions, partials of them, and objects whose ``__call__`` is one."""
    return inspect.iscoroutinefunction(agent) or inspect.iscoroutinefunction(type(agent).__call__)


def _discard(awaitable: Awaitable[Any]) -> None:
    close = getattr(awaitable, "close", None)
    if callable(close):
        close()


def _name(agent: Any) -> str:
    return str(getattr(agent, "__qualname__", None) or type(agent).__qualname__)


def _fresh_round(out: Any) -> FenceState:
    """Each round is judged on its own hand-over: nothing carries over silently. A
    hand-over given as a model is kept as its dict (what the gate reads of it), so
    the state stays plain data."""
    fresh: FenceState = {
        "accepted": None,
        "accepted_handover": None,
        "verified": None,
        "verified_handover": None,
        "unsupported": [],
        "gate_errors": [],
        "continuation": None,
        "returned": [],
    }
    if not isinstance(out, dict) or "handover" not in out:
        return {**fresh, "handover": None, "failure": _NOT_A_DICT}
    handover: Any = out["handover"]
    if isinstance(handover, BaseModel):
        handover = handover.model_dump()
    continuation: Any = out.get("continuation")
    kept = cast(dict[str, Any], continuation) if isinstance(continuation, dict) else None
    return {**fresh, "handover": handover, "failure": None, "continuation": kept}


def _failed(control_plane: FenceComponents, state: FenceState, exc: Exception) -> FenceState:
    """The round's outcome when the agent raised: a failure, an ``error`` ledger entry
    with the exception's type, message and traceback, and a log record."""
    fresh = _fresh_round(None)
    if isinstance(exc, _AsyncUnderInvoke):
        return {**fresh, "failure": str(exc)}
    info = describe_exception(exc)
    _log.error("the agent raised %s\n%s", info.summary, info.traceback)
    control_plane.ledger.append(
        state["run_id"],  # pyright: ignore[reportTypedDictNotRequiredAccess]
        kind="error",
        source="agent",
        content=canonical_json({"code": "agent_failed", **info.as_json()}).decode(),
        metadata={"code": "agent_failed", "type": info.type},
    )
    return {**fresh, "failure": f"the agent raised {info.summary}"}
