"""The bus's contract on SQLite and PostgreSQL: every error code, the ledger record,
idempotent call ids (also across control planes), sync and async handlers."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from typing import Any

import pytest

from assay import ControlPlane, UnknownRun
from assay.errors import InvalidCall
from assay.tool_bus import ErrorDetail, ToolResult, ToolSpec
from tests.tool_bus._tools import ADD, Counter


@pytest.fixture
def counter(plane: ControlPlane) -> Counter:
    found = Counter()
    plane.registry.register(ADD, found.add)
    return found


def _spec(name: str, output_schema: Any = True, **extra: Any) -> ToolSpec:
    return ToolSpec(
        name, "1.0.0", f"The {name} tool.", {"type": "object", **extra}, output_schema, "read_only"
    )


def test_a_valid_call_is_recorded_and_its_output_is_citable(
    plane: ControlPlane, counter: Counter
) -> None:
    run = plane.ledger.start_run()
    result = plane.bus.call(run, "add", {"b": 2, "a": 40})
    assert result == ToolResult(ok=True, output=42, ledger_id=result.ledger_id)
    call, output = plane.ledger.entries(run)
    assert call.kind == "tool_call" and call.source == "tool:add@1.0.0"
    assert call.content == '{"args":{"a":40,"b":2},"tool":"add","version":"1.0.0"}'
    assert output.kind == "tool_output" and output.id == result.ledger_id and output.is_evidence
    assert output.content == "42" and output.metadata["call_ledger_id"] == call.id
    assert counter.calls == [{"a": 40, "b": 2}]


def test_unknown_tool_and_version(plane: ControlPlane, counter: Counter) -> None:
    run = plane.ledger.start_run()
    tool = plane.bus.call(run, "ad", {"a": 1, "b": 2})
    version = plane.bus.call(run, "add", {"a": 1, "b": 2}, version="1.1.0")
    assert tool.error is not None and tool.error.code == "unknown_tool"
    assert tool.error.details == [ErrorDetail(path="", message="did you mean 'add'?")]
    assert version.error is not None and version.error.code == "unknown_version"
    assert "1.0.0" in version.error.message
    assert counter.calls == []
    kinds = [e.kind for e in plane.ledger.entries(run)]
    assert kinds == ["tool_call", "error", "tool_call", "error"]


def test_invalid_arguments_list_every_violation_without_coercion(
    plane: ControlPlane, counter: Counter
) -> None:
    run = plane.ledger.start_run()
    result = plane.bus.call(run, "add", {"a": "5", "c": True})
    assert result.error is not None and result.error.code == "invalid_arguments"
    assert result.error.details == [
        ErrorDetail(path="", message="Unknown properties are not allowed ('c' was unexpected)"),
        ErrorDetail(path="/a", message="'5' is not of type 'integer'"),
        ErrorDetail(path="/b", message="required property is missing"),
    ]
    assert plane.bus.call(run, "add", {"a": True, "b": 1}).ok is False  # a bool is no integer
    assert plane.bus.call(run, "add", [1, 2]).ok is False  # type: ignore[arg-type]
    assert counter.calls == []
    error = plane.ledger.get(result.ledger_id or "")
    assert error.kind == "error" and json.loads(error.content)["code"] == "invalid_arguments"


def test_a_schema_may_allow_extra_properties(plane: ControlPlane) -> None:
    plane.registry.register(_spec("echo", additionalProperties=True), lambda a: a)
    plane.registry.register(
        _spec(
            "strict", properties={"n": {"type": "object", "properties": {"x": {"type": "integer"}}}}
        ),
        lambda a: a,
    )
    run = plane.ledger.start_run()
    assert plane.bus.call(run, "echo", {"anything": [1, 2]}).output == {"anything": [1, 2]}
    nested = plane.bus.call(run, "strict", {"n": {"x": 1, "y": 2}})
    assert nested.error is not None and nested.error.details[0].path == "/n"


def test_values_that_are_not_json_are_refused_with_their_pointer(
    plane: ControlPlane, counter: Counter
) -> None:
    run = plane.ledger.start_run()
    result = plane.bus.call(run, "add", {"a": 2**60, "b": float("nan")})
    assert result.error is not None and result.error.code == "invalid_arguments"
    assert [d.path for d in result.error.details] == ["/a", "/b"]
    assert counter.calls == []


def test_no_handler_in_this_process(db_url: str) -> None:
    with ControlPlane.open(db_url) as first:
        first.registry.register(ADD, Counter().add)
    with ControlPlane.open(db_url) as second:
        run = second.ledger.start_run()
        result = second.bus.call(run, "add", {"a": 1, "b": 2})
        assert result.error is not None and result.error.code == "no_handler"


def test_handler_exception_becomes_tool_failed(plane: ControlPlane) -> None:
    def boom(args: dict[str, Any]) -> Any:
        raise KeyError("ledger line 14")

    plane.registry.register(_spec("boom"), boom)
    run = plane.ledger.start_run()
    result = plane.bus.call(run, "boom", {})
    assert result.error is not None and result.error.code == "tool_failed"
    assert result.error.details == [ErrorDetail(path="", message="KeyError: 'ledger line 14'")]


def test_a_slow_handler_times_out(plane: ControlPlane) -> None:
    release = threading.Event()
    plane.registry.register(_spec("slow"), lambda a: release.wait(5), timeout_s=0.2)
    run = plane.ledger.start_run()
    started = time.monotonic()
    result = plane.bus.call(run, "slow", {})
    release.set()
    assert result.error is not None and result.error.code == "tool_timeout"
    assert time.monotonic() - started < 4


def test_invalid_output_is_refused_but_kept_for_the_audit(plane: ControlPlane) -> None:
    plane.registry.register(_spec("liar", output_schema={"type": "integer"}), lambda a: "42")
    run = plane.ledger.start_run()
    result = plane.bus.call(run, "liar", {})
    assert result.error is not None and result.error.code == "invalid_output"
    assert result.error.details == [ErrorDetail(path="", message="'42' is not of type 'integer'")]
    kept = json.loads(plane.ledger.get(result.ledger_id or "").content)
    assert kept["output"] == "42" and kept["code"] == "invalid_output"
    assert plane.ledger.evidence(run) == []


def test_non_json_output_is_invalid_output(plane: ControlPlane) -> None:
    plane.registry.register(_spec("sets"), lambda a: {1, 2})
    run = plane.ledger.start_run()
    result = plane.bus.call(run, "sets", {})
    assert result.error is not None and result.error.code == "invalid_output"
    assert "$not_json" in plane.ledger.get(result.ledger_id or "").text


def test_same_call_id_returns_the_first_result(plane: ControlPlane, counter: Counter) -> None:
    run = plane.ledger.start_run()
    first = plane.bus.call(run, "add", {"a": 1, "b": 2}, call_id="step-7")
    again = plane.bus.call(run, "add", {"a": 1, "b": 2}, call_id="step-7")
    assert first == again and first.ok and len(counter.calls) == 1
    other_run = plane.ledger.start_run()
    assert plane.bus.call(other_run, "add", {"a": 1, "b": 2}, call_id="step-7").ok
    assert len(counter.calls) == 2  # call ids are scoped to their run


def test_failed_handler_result_is_also_replayed(plane: ControlPlane) -> None:
    calls: list[int] = []

    def flaky(args: dict[str, Any]) -> Any:
        calls.append(1)
        raise RuntimeError("sent half the batch")

    plane.registry.register(_spec("flaky"), flaky)
    run = plane.ledger.start_run()
    first = plane.bus.call(run, "flaky", {}, call_id="c1")
    assert plane.bus.call(run, "flaky", {}, call_id="c1") == first and len(calls) == 1


def test_refusals_before_the_handler_can_be_retried_under_the_same_id(
    plane: ControlPlane, counter: Counter
) -> None:
    run = plane.ledger.start_run()
    bad = plane.bus.call(run, "add", {"a": 1}, call_id="c1")
    assert bad.error is not None and bad.error.code == "invalid_arguments"
    conflict = plane.bus.call(run, "add", {"a": 1, "b": 2}, call_id="c1")
    assert conflict.ok and counter.calls == [{"a": 1, "b": 2}]


def test_call_id_reused_for_another_call_is_a_conflict(
    plane: ControlPlane, counter: Counter
) -> None:
    run = plane.ledger.start_run()
    plane.bus.call(run, "add", {"a": 1, "b": 2}, call_id="c1")
    result = plane.bus.call(run, "add", {"a": 1, "b": 3}, call_id="c1")
    assert result.error is not None and result.error.code == "call_id_conflict"
    assert len(counter.calls) == 1


def test_idempotency_survives_a_new_control_plane(db_url: str) -> None:
    with ControlPlane.open(db_url) as first:
        first.registry.register(ADD, Counter().add)
        run = first.ledger.start_run()
        original = first.bus.call(run, "add", {"a": 1, "b": 2}, call_id="c1")
    with ControlPlane.open(db_url) as second:
        fresh = Counter()
        second.registry.register(ADD, fresh.add)
        assert second.bus.call(run, "add", {"a": 1, "b": 2}, call_id="c1") == original
        assert fresh.calls == []
        assert [e.kind for e in second.ledger.entries(run)] == ["tool_call", "tool_output"]


def test_a_call_still_running_is_not_started_twice(plane: ControlPlane) -> None:
    started, release = threading.Event(), threading.Event()
    calls: list[int] = []

    def slow(args: dict[str, Any]) -> int:
        calls.append(1)
        started.set()
        release.wait(10)
        return 1

    plane.registry.register(_spec("slow"), slow)
    run = plane.ledger.start_run()
    results: list[ToolResult] = []
    worker = threading.Thread(
        target=lambda: results.append(plane.bus.call(run, "slow", {}, call_id="c1"))
    )
    worker.start()
    assert started.wait(10)
    second = plane.bus.call(run, "slow", {}, call_id="c1")
    release.set()
    worker.join(10)
    assert second.error is not None and second.error.code == "call_in_progress"
    assert results[0].ok and len(calls) == 1
    assert plane.bus.call(run, "slow", {}, call_id="c1") == results[0]


def test_wiring_mistakes_raise(plane: ControlPlane, counter: Counter) -> None:
    with pytest.raises(UnknownRun):
        plane.bus.call("run_missing", "add", {"a": 1, "b": 2})
    run = plane.ledger.start_run()
    with pytest.raises(InvalidCall):
        plane.bus.call(run, "add", {"a": 1, "b": 2}, call_id="")
    with pytest.raises(InvalidCall):
        plane.bus.call(run, "add", {"a": 1, "b": 2}, depends_on="claim-1")


def test_acall_runs_async_and_sync_handlers(plane: ControlPlane) -> None:
    async def double(args: dict[str, Any]) -> int:
        await asyncio.sleep(0)
        return args["n"] * 2

    async def hang(args: dict[str, Any]) -> int:
        await asyncio.sleep(10)
        return 0

    number = {"properties": {"n": {"type": "integer"}}, "required": ["n"]}
    plane.registry.register(_spec("double", {"type": "integer"}, **number), double)
    plane.registry.register(_spec("hang"), hang, timeout_s=0.1)
    plane.registry.register(ADD, Counter().add)
    run = plane.ledger.start_run()

    async def scenario() -> list[ToolResult]:
        return [
            await plane.bus.acall(run, "double", {"n": 21}),
            await plane.bus.acall(run, "add", {"a": 1, "b": 1}),
            await plane.bus.acall(run, "hang", {}),
            await plane.bus.acall(run, "double", {"n": "21"}),
        ]

    doubled, added, hung, bad = asyncio.run(scenario())
    assert (doubled.output, added.output) == (42, 2)
    assert hung.error is not None and hung.error.code == "tool_timeout"
    assert bad.error is not None and bad.error.code == "invalid_arguments"
    assert plane.bus.call(run, "double", {"n": 4}).output == 8  # async handler, sync call
