"""Running a handler: sync or async, with a timeout, never letting its exception out.

A sync handler under a timeout runs on a daemon thread so that a hung handler
cannot keep the process alive; the thread cannot be killed, so a handler that
times out may still finish its work later (the bus has by then recorded
``tool_timeout`` and will never run that call id again).
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import threading
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any, Literal

from assay.tool_bus._registry import Handler

__all__ = ["Outcome", "run_async", "run_sync"]


@dataclass(frozen=True, kw_only=True)
class Outcome:
    """How a handler ended: it returned ``value``, raised ``error``, or timed out."""

    kind: Literal["ok", "raised", "timeout"]
    value: Any = None
    error: Exception | None = None


async def _awaited(value: Awaitable[Any]) -> Any:
    return await value


def _invoke(handler: Handler, args: dict[str, Any]) -> Outcome:
    try:
        value = handler(args)
        if inspect.isawaitable(value):
            value = asyncio.run(_awaited(value))
        return Outcome(kind="ok", value=value)
    except Exception as exc:
        return Outcome(kind="raised", error=exc)


def run_sync(handler: Handler, args: dict[str, Any], timeout_s: float | None) -> Outcome:
    """Run ``handler`` from synchronous code."""
    if timeout_s is None and not inspect.iscoroutinefunction(handler):
        return _invoke(handler, args)
    box: list[Outcome] = []
    context = contextvars.copy_context()

    def target() -> None:
        box.append(context.run(_invoke, handler, args))

    thread = threading.Thread(target=target, daemon=True, name="assay-tool-handler")
    thread.start()
    thread.join(timeout_s)
    return box[0] if box else Outcome(kind="timeout")


async def run_async(handler: Handler, args: dict[str, Any], timeout_s: float | None) -> Outcome:
    """Run ``handler`` from a coroutine; a sync handler runs in a worker thread.

    An exception the handler raises (even its own ``TimeoutError``) is ``raised``;
    only the expiry of ``timeout_s`` (which cancels the handler) is ``timeout``.
    """
    try:
        async with asyncio.timeout(timeout_s):
            try:
                if inspect.iscoroutinefunction(handler):
                    value = await handler(args)
                else:
                    value = await asyncio.to_thread(handler, args)
                    if inspect.isawaitable(value):
                        value = await value
            except Exception as exc:
                return Outcome(kind="raised", error=exc)
    except TimeoutError:
        return Outcome(kind="timeout")
    return Outcome(kind="ok", value=value)
