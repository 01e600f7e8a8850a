"""Running a handler: sync or async, with a timeout, never letting its exception out.

A sync handler under a timeout runs on a daemon thread so that a hung handler
cannot keep the process alive; the thread cannot be killed, so a handler that
times out may still finish its work later (the bus has by then recorded
``tool_timeout`` and will never run that call id again).

Whatever a handler raises is caught, ``BaseException`` included (``SystemExit``,
``KeyboardInterrupt``, ``GeneratorExit``), and comes back as a ``raised``
:class:`Outcome` for the bus to settle as ``tool_failed``. Two of them must still
reach the caller once the call is settled, and are marked ``reraise``: a
``KeyboardInterrupt`` in the caller's own thread (the person at the terminal pressed
Ctrl-C while the handler ran, or while the caller waited for it), and the
cancellation of the calling asyncio task.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import threading
import traceback
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any, Literal

from assay._limits import MAX_MESSAGE_CHARS, MAX_TRACEBACK_CHARS, bounded
from assay.tool_bus._registry import Handler

__all__ = ["ExceptionInfo", "Outcome", "describe", "run_async", "run_sync"]


@dataclass(frozen=True, kw_only=True)
class Outcome:
    """How a handler ended: it returned ``value``, raised ``error``, or timed out.

    ``reraise`` marks an ``error`` that must be raised to the caller after the call
    is settled (an interrupt or a cancellation of the caller itself).
    """

    kind: Literal["ok", "raised", "timeout"]
    value: Any = None
    error: BaseException | None = None
    reraise: bool = False


@dataclass(frozen=True, kw_only=True)
class ExceptionInfo:
    """An exception as the ledger keeps it: bounded, valid Unicode, never raising.

    ``name`` is the class name, ``type`` the qualified one (``module.Class``; builtins
    bare), ``message`` is ``str(exc)`` cut to ``MAX_MESSAGE_CHARS``, ``traceback`` the
    formatted traceback (head and tail kept) within ``MAX_TRACEBACK_CHARS``.
    """

    name: str
    type: str
    message: str
    traceback: str

    @property
    def summary(self) -> str:
        """``Name: message`` (just ``Name`` when the message is empty)."""
        return f"{self.name}: {self.message}" if self.message else self.name

    def as_json(self) -> dict[str, str]:
        return {"type": self.type, "message": self.message, "traceback": self.traceback}


def describe(error: BaseException) -> ExceptionInfo:
    """The bounded record of ``error``; an ``__str__`` that raises, a message of
    megabytes or with lone surrogates, a hostile class name: none of them raise here."""
    cls = type(error)
    name = _text(getattr(cls, "__name__", None), "exception")
    module = _text(getattr(cls, "__module__", None), "")
    qualname = _text(getattr(cls, "__qualname__", None), name)
    try:
        message = str(error)
    except Exception as exc:
        message = f"<str() of the exception raised {_text(type(exc).__name__, 'an exception')}>"
    try:
        formatted = "".join(traceback.format_exception(error))
    except Exception:
        formatted = "<the traceback could not be formatted>"
    return ExceptionInfo(
        name=bounded(name, 200),
        type=bounded(qualname if module in ("", "builtins") else f"{module}.{qualname}", 400),
        message=bounded(message, MAX_MESSAGE_CHARS),
        traceback=_clip(formatted, MAX_TRACEBACK_CHARS),
    )


#: The public name: agents' exceptions are recorded the same way (see the fence).
describe_exception = describe


def _text(value: object, default: str) -> str:
    return value if isinstance(value, str) else default


def _clip(text: str, max_chars: int) -> str:
    """``text`` within about ``max_chars``: its head and its tail (where a traceback
    names the failing line and the exception) around a marker."""
    if len(text) > max_chars:
        half = max_chars // 2
        text = f"{text[:half]}\n… [{len(text) - 2 * half} characters omitted] …\n{text[-half:]}"
    return bounded(text, max_chars + 100)


async def _awaited(value: Awaitable[Any]) -> Any:
    return await value


def _invoke(handler: Handler, args: dict[str, Any], *, in_caller_thread: bool) -> Outcome:
    try:
        value = handler(args)
        if inspect.isawaitable(value):
            value = asyncio.run(_awaited(value))
        return Outcome(kind="ok", value=value)
    except Exception as exc:
        return Outcome(kind="raised", error=exc)
    except BaseException as exc:  # SystemExit, KeyboardInterrupt, GeneratorExit, ...
        interrupted = in_caller_thread and isinstance(exc, KeyboardInterrupt)
        return Outcome(kind="raised", error=exc, reraise=interrupted)


def _returned(handler: Handler, args: dict[str, Any]) -> Outcome:
    """``handler(args)`` as an outcome; whatever it returns is not awaited here."""
    try:
        return Outcome(kind="ok", value=handler(args))
    except BaseException as exc:
        return Outcome(kind="raised", error=exc)


def run_sync(handler: Handler, args: dict[str, Any], timeout_s: float | None) -> Outcome:
    """Run ``handler`` from synchronous code."""
    if timeout_s is None and not inspect.iscoroutinefunction(handler):
        return _invoke(handler, args, in_caller_thread=True)
    box: list[Outcome] = []
    context = contextvars.copy_context()

    def target() -> None:
        box.append(context.run(_invoke, handler, args, in_caller_thread=False))

    thread = threading.Thread(target=target, daemon=True, name="assay-tool-handler")
    thread.start()
    try:
        thread.join(timeout_s)
    except KeyboardInterrupt as exc:  # Ctrl-C while the caller waits for the handler
        return Outcome(kind="raised", error=exc, reraise=True)
    return box[0] if box else Outcome(kind="timeout")


async def run_async(handler: Handler, args: dict[str, Any], timeout_s: float | None) -> Outcome:
    """Run ``handler`` from a coroutine; a sync handler runs in a worker thread.

    An exception the handler raises (even its own ``TimeoutError`` or
    ``CancelledError``) is ``raised``; only the expiry of ``timeout_s`` (which
    cancels the handler) is ``timeout``. The cancellation of the calling task is
    ``raised`` with ``reraise`` set, so that the bus settles the call and then lets
    the cancellation go on.
    """
    try:
        async with asyncio.timeout(timeout_s):
            try:
                if inspect.iscoroutinefunction(handler):
                    value = await handler(args)
                else:
                    # Caught in the worker thread: a BaseException crossing the
                    # thread's future does not always reach the except clauses here.
                    ended = await asyncio.to_thread(_returned, handler, args)
                    if ended.kind == "raised":
                        return ended
                    value = ended.value
                    if inspect.isawaitable(value):
                        value = await value
            except asyncio.CancelledError:
                raise  # the timeout's own cancellation, or the caller's: decided below
            except BaseException as exc:
                return Outcome(kind="raised", error=exc)
    except TimeoutError:
        return Outcome(kind="timeout")
    except asyncio.CancelledError as exc:
        task = asyncio.current_task()
        return Outcome(kind="raised", error=exc, reraise=task is not None and task.cancelling() > 0)
    return Outcome(kind="ok", value=value)
