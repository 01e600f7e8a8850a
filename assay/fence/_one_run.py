"""One run per thread, whichever way a fenced graph is started.

``cp.run`` refuses a thread that was ever used (:class:`~assay.errors.ThreadInUse`);
so does the graph itself under LangGraph's own calls (``invoke``, ``stream``,
``ainvoke``, ``astream``): new input on a thread that holds a checkpoint is refused
before anything is written, where LangGraph would otherwise start a second run on
the first one's state (and drop its pending grant). Continuing a thread is what
``Command(resume=...)`` and ``invoke(None, config)`` are for, and they pass. A fenced
graph inside a graph of the user's (a subgraph, with a checkpoint namespace) is
checked by its parent, not here.
"""

from __future__ import annotations

import contextvars
from collections.abc import AsyncIterator, Generator, Mapping
from contextlib import contextmanager
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command

from assay.errors import ThreadInUse
from assay.fence._state import FenceState

__all__ = ["OneRunGraph", "claimed"]

#: The thread the runner claimed for the invocation under way in this context.
_CLAIMED: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "assay_claimed_thread", default=None
)


@contextmanager
def claimed(thread_id: str) -> Generator[None]:
    """Mark ``thread_id`` as claimed by the runner (which checked it) while invoking."""
    token = _CLAIMED.set(thread_id)
    try:
        yield
    finally:
        _CLAIMED.reset(token)


class OneRunGraph(CompiledStateGraph[FenceState, None, FenceState, FenceState]):
    """The compiled graph ``fence()`` returns: LangGraph's, refusing new input on a
    thread that already holds a run."""

    def stream(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        thread = _new_run_on(input, config)
        if thread is not None and self.checkpointer:
            saver: Any = self.checkpointer
            _refuse(thread, saver.get_tuple(_head(thread)) is not None)
        return super().stream(input, config, **kwargs)

    async def astream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[Any]:
        thread = _new_run_on(input, config)
        if thread is not None and self.checkpointer:
            saver: Any = self.checkpointer
            _refuse(thread, await saver.aget_tuple(_head(thread)) is not None)
        async for chunk in super().astream(input, config, **kwargs):
            yield chunk


def _new_run_on(value: Any, config: RunnableConfig | None) -> str | None:
    """The thread new input would start a run on, unless the runner claimed it, the
    input continues a run, or the graph runs inside another."""
    if value is None or isinstance(value, Command) or not isinstance(value, Mapping):
        return None
    configurable: Mapping[str, Any] = (config or {}).get("configurable") or {}
    thread = configurable.get("thread_id")
    if thread is None or configurable.get("checkpoint_ns") or configurable.get("checkpoint_id"):
        return None
    text = str(thread)
    return None if _CLAIMED.get() == text else text


def _head(thread: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}


def _refuse(thread: str, used: bool) -> None:
    if used:
        raise ThreadInUse(
            f"thread {thread!r} already holds a run: continue it with "
            "Command(resume=...) (cp.resume), or start a new run on another thread id"
        )
