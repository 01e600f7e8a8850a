"""Whatever a handler does after it started is settled into a stored, bounded result.

A handler that returns too much, returns something too deep, raises with a huge or
non-Unicode message, raises an exception that cannot be printed, raises
``KeyboardInterrupt`` or ``SystemExit``, or is cancelled: the call id then answers
``invalid_output`` or ``tool_failed`` for ever after, never ``call_in_progress``, the
handler never runs twice, and the error entry is small, valid JSON naming the
exception's type, message and traceback. Sync ``call`` and async ``acall`` alike.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Mapping
from typing import Any

import pytest
import sqlalchemy as sa

from assay import ControlPlane
from assay.tool_bus import ToolFailure, ToolResult, ToolSpec
from assay.tool_bus import _tables as t

#: An error entry, exception and traceback included, stays well below this.
_SMALL = 64 * 1024


def _spec(name: str, output_schema: Any = True) -> ToolSpec:
    return ToolSpec(
        name, "1.0.0", f"The {name} tool.", {"type": "object"}, output_schema, "read_only"
    )


def _nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


class Unprintable(Exception):
    def __str__(self) -> str:
        raise ValueError("__str__ refuses")


class HostileDict(dict[str, Any]):
    def items(self) -> Any:
        raise RuntimeError("items() refuses")

    def __getitem__(self, key: str) -> Any:
        raise RuntimeError("__getitem__ refuses")


def _raises(error: BaseException) -> Callable[[dict[str, Any]], Any]:
    def handler(args: dict[str, Any]) -> Any:
        raise error

    return handler


def _recurse(args: dict[str, Any]) -> Any:
    return _recurse(args)


#: name -> (handler, expected code, text the result's message must contain)
CASES: dict[str, tuple[Callable[[dict[str, Any]], Any], str, str]] = {
    "huge_output": (lambda a: "x" * (11 * 1024 * 1024), "invalid_output", "schema"),
    "deep_output": (lambda a: _nested(1000), "invalid_output", "schema"),
    "hostile_output": (lambda a: HostileDict(a=1), "invalid_output", "schema"),
    "huge_message": (_raises(RuntimeError("m" * 6_000_000)), "tool_failed", "RuntimeError: mmm"),
    "surrogate_message": (_raises(RuntimeError("bad \ud800 text")), "tool_failed", "\\ud800"),
    "unprintable": (_raises(Unprintable()), "tool_failed", "Unprintable"),
    "recursion": (_recurse, "tool_failed", "RecursionError"),
    "system_exit": (_raises(SystemExit(3)), "tool_failed", "SystemExit: 3"),
    "generator_exit": (_raises(GeneratorExit()), "tool_failed", "GeneratorExit"),
}


def _run(plane: ControlPlane, mode: str, run: str, tool: str, call_id: str) -> ToolResult:
    if mode == "call":
        return plane.bus.call(run, tool, {}, call_id=call_id)
    return asyncio.run(plane.bus.acall(run, tool, {}, call_id=call_id))


def _unsettled(plane: ControlPlane, run: str) -> list[str]:
    """Call ids that started in ``run`` and have no stored result."""
    with plane.engine.connect() as conn:
        started = set(
            conn.execute(sa.select(t.calls.c.call_id).where(t.calls.c.run_id == run)).scalars()
        )
        done = set(
            conn.execute(sa.select(t.results.c.call_id).where(t.results.c.run_id == run)).scalars()
        )
    return sorted(started - done)


def _error_body(plane: ControlPlane, result: ToolResult) -> dict[str, Any]:
    entry = plane.ledger.get(result.ledger_id or "")
    assert entry.kind == "error" and len(entry.content_bytes) < _SMALL
    return json.loads(entry.content)


@pytest.mark.parametrize("mode", ["call", "acall"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_every_handler_outcome_is_settled_and_bounded(
    plane: ControlPlane, case: str, mode: str
) -> None:
    handler, code, text = CASES[case]
    runs: list[int] = []

    def counted(args: dict[str, Any]) -> Any:
        runs.append(1)
        return handler(args)

    plane.registry.register(_spec(case), counted)
    run = plane.ledger.start_run()
    result = _run(plane, mode, run, case, "c1")
    assert result.error is not None and result.error.code == code
    assert text in result.error.message and len(result.error.message) < 3_000
    assert _run(plane, mode, run, case, "c1") == result  # settled: not call_in_progress
    assert runs == [1] and _unsettled(plane, run) == []
    body = _error_body(plane, result)
    assert body["code"] == code
    if code == "tool_failed":
        assert set(body["exception"]) == {"type", "message", "traceback"}
        assert "Traceback" in body["exception"]["traceback"]
    assert plane.ledger.verify(run).ok


def test_the_error_entry_names_type_message_and_traceback(plane: ControlPlane) -> None:
    def lookup(args: dict[str, Any]) -> Any:
        raise Unprintable()

    plane.registry.register(_spec("lookup"), lookup)
    run = plane.ledger.start_run()
    result = plane.bus.call(run, "lookup", {})
    exception = _error_body(plane, result)["exception"]
    assert exception["type"] == f"{__name__}.Unprintable"
    assert "str() of the exception raised ValueError" in exception["message"]
    assert "in lookup" in exception["traceback"] and "raise Unprintable()" in exception["traceback"]


def test_a_huge_traceback_keeps_its_head_and_tail(plane: ControlPlane) -> None:
    plane.registry.register(_spec("recurse"), _recurse)
    run = plane.ledger.start_run()
    exception = _error_body(plane, plane.bus.call(run, "recurse", {}))["exception"]
    assert exception["type"] == "RecursionError"
    assert exception["traceback"].startswith("Traceback")
    assert exception["traceback"].rstrip().endswith("maximum recursion depth exceeded")


def test_keyboard_interrupt_in_a_handler_thread_is_only_settled(plane: ControlPlane) -> None:
    plane.registry.register(_spec("ctrl_c"), _raises(KeyboardInterrupt()), timeout_s=5)
    run = plane.ledger.start_run()
    result = plane.bus.call(run, "ctrl_c", {}, call_id="c1")
    assert result.error is not None and result.error.code == "tool_failed"  # not tool_timeout
    assert "KeyboardInterrupt" in result.error.message
    assert _unsettled(plane, run) == []


def test_keyboard_interrupt_in_the_callers_thread_is_settled_then_re_raised(
    plane: ControlPlane,
) -> None:
    runs: list[int] = []

    def interrupted(args: dict[str, Any]) -> Any:
        runs.append(1)
        raise KeyboardInterrupt

    plane.registry.register(_spec("ctrl_c"), interrupted, timeout_s=None)
    plane.bus.timeout_s = None  # the handler runs in the caller's own thread
    run = plane.ledger.start_run()
    with pytest.raises(KeyboardInterrupt):
        plane.bus.call(run, "ctrl_c", {}, call_id="c1")
    again = plane.bus.call(run, "ctrl_c", {}, call_id="c1")
    assert again.error is not None and again.error.code == "tool_failed"
    assert "KeyboardInterrupt" in again.error.message and runs == [1]


def test_system_exit_in_the_callers_thread_is_only_settled(plane: ControlPlane) -> None:
    plane.registry.register(_spec("exits"), _raises(SystemExit(2)), timeout_s=None)
    plane.bus.timeout_s = None
    run = plane.ledger.start_run()
    result = plane.bus.call(run, "exits", {})
    assert result.error is not None and result.error.code == "tool_failed"
    assert "SystemExit: 2" in result.error.message


def test_async_handlers_raising_base_exceptions_are_settled(plane: ControlPlane) -> None:
    async def interrupted(args: dict[str, Any]) -> Any:
        raise KeyboardInterrupt

    async def cancels_itself(args: dict[str, Any]) -> Any:
        raise asyncio.CancelledError

    plane.registry.register(_spec("interrupted"), interrupted)
    plane.registry.register(_spec("cancels_itself"), cancels_itself)
    run = plane.ledger.start_run()
    for tool, name in [("interrupted", "KeyboardInterrupt"), ("cancels_itself", "CancelledError")]:
        result = asyncio.run(plane.bus.acall(run, tool, {}))
        assert result.error is not None and result.error.code == "tool_failed"
        assert name in result.error.message
        assert plane.bus.call(run, tool, {}).error is not None  # sync path settles too
    assert _unsettled(plane, run) == []


def test_a_cancelled_acall_is_settled_and_the_cancellation_goes_on(plane: ControlPlane) -> None:
    started = threading.Event()
    runs: list[int] = []

    async def waits(args: dict[str, Any]) -> Any:
        runs.append(1)
        started.set()
        await asyncio.sleep(30)
        return "late"

    plane.registry.register(_spec("waits"), waits)
    run = plane.ledger.start_run()

    async def scenario() -> None:
        task = asyncio.create_task(plane.bus.acall(run, "waits", {}, call_id="c1"))
        while not started.is_set():
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    result = plane.bus.call(run, "waits", {}, call_id="c1")
    assert result.error is not None and result.error.code == "tool_failed"
    assert "CancelledError" in result.error.message and runs == [1]
    assert _unsettled(plane, run) == []


def test_a_cancellation_between_start_and_handler_is_settled(plane: ControlPlane) -> None:
    checking, release = threading.Event(), threading.Event()
    runs: list[int] = []

    def slow_precheck(args: Mapping[str, Any]) -> ToolFailure | None:
        checking.set()
        release.wait(10)  # the caller is cancelled while the call is being prepared
        return None

    plane.registry.register(_spec("prepared"), lambda a: runs.append(1), precheck=slow_precheck)
    run = plane.ledger.start_run()

    async def scenario() -> None:
        task = asyncio.create_task(plane.bus.acall(run, "prepared", {}, call_id="c1"))
        while not checking.is_set():
            await asyncio.sleep(0.01)
        task.cancel()
        await asyncio.sleep(0.05)
        release.set()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    result = plane.bus.call(run, "prepared", {}, call_id="c1")
    assert result.error is not None and result.error.code == "tool_failed"
    assert "CancelledError" in result.error.message and runs == []
    assert _unsettled(plane, run) == []


def test_a_ledger_smaller_than_the_error_record_still_settles(db_url: str) -> None:
    with ControlPlane.open(db_url, max_content_bytes=2_000) as plane:
        plane.registry.register(_spec("noisy"), _raises(RuntimeError("n" * 100_000)))
        run = plane.ledger.start_run()
        result = plane.bus.call(run, "noisy", {}, call_id="c1")
        assert result.error is not None and result.error.code == "tool_failed"
        assert plane.bus.call(run, "noisy", {}, call_id="c1") == result
        assert _unsettled(plane, run) == []
