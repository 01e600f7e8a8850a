"""Bad calls are refused before anything runs, as data or as a documented error.

The planner's own fields (tool name, version, arguments) come back as a structured
``ToolFailure``; the wiring fields (run id, call id, grant id, claim ids) raise
``InvalidCall`` (``UnknownRun`` for a run the ledger lacks) before anything is
written. A lone surrogate, a NUL (which PostgreSQL text cannot hold), a newline,
a huge or a deeply nested value: every one is handled the same on both engines.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assay import ControlPlane
from assay.errors import InvalidCall
from assay.tool_bus import ToolResult, ToolSpec
from assay.tool_bus import _tables as t
from tests.tool_bus._tools import ADD, Counter


def _nested(depth: int, leaf: Any = 1) -> Any:
    value: Any = leaf
    for _ in range(depth):
        value = {"a": value}
    return value


def _echo() -> ToolSpec:
    return ToolSpec(
        "echo",
        "1.0.0",
        "Echo the arguments.",
        {"type": "object", "additionalProperties": True},
        True,
        "read_only",
    )


@pytest.fixture
def counter(plane: ControlPlane) -> Counter:
    found = Counter()
    plane.registry.register(ADD, found.add)
    return found


@pytest.mark.parametrize(
    "tool",
    ["ad\ud800d", "add\x00", "add\nrm -rf /", "a" * 100_000, "", " ", 42, None, ["add"]],
    ids=["surrogate", "nul", "newline", "huge", "empty", "blank", "int", "none", "list"],
)
def test_a_tool_name_that_cannot_exist_is_unknown_tool(
    plane: ControlPlane, counter: Counter, tool: Any
) -> None:
    run = plane.ledger.start_run()
    result = plane.bus.call(run, tool, {"a": 1, "b": 2}, call_id="c1")
    assert result.error is not None and result.error.code == "unknown_tool"
    call, error = plane.ledger.entries(run)
    assert (call.kind, error.kind) == ("tool_call", "error")
    assert len(call.source) < 2_000 and "\n" not in call.source and "\x00" not in call.source
    assert counter.calls == [] and plane.ledger.verify(run).ok
    assert plane.bus.call(run, "add", {"a": 1, "b": 2}, call_id="c1").ok  # may retry the id


@pytest.mark.parametrize(
    "version",
    ["1.0.0\ud800", "1.0.0\x00", "1.0.0\n", "9" * 10_000, "", 1],
    ids=["surrogate", "nul", "newline", "huge", "empty", "int"],
)
def test_a_version_that_cannot_exist_is_unknown_version(
    plane: ControlPlane, counter: Counter, version: Any
) -> None:
    run = plane.ledger.start_run()
    result = plane.bus.call(run, "add", {"a": 1, "b": 2}, version=version)
    assert result.error is not None and result.error.code == "unknown_version"
    assert counter.calls == [] and plane.ledger.verify(run).ok


@pytest.mark.parametrize(
    "field",
    [
        {"call_id": "c\ud800"},
        {"call_id": "c\x00"},
        {"call_id": "c\n1"},
        {"call_id": "c" * 201},
        {"call_id": 7},
        {"grant_id": "g\ud800"},
        {"grant_id": "g\x00"},
        {"grant_id": "g" * 5_000},
        {"grant_id": 7},
        {"depends_on": ["claim\ud800"]},
        {"depends_on": ["claim\x00"]},
        {"depends_on": [f"c{i}" for i in range(5_000)]},
        {"depends_on": [None]},
        {"depends_on": "c1"},
    ],
    ids=[
        *(f"call_id-{x}" for x in ["surrogate", "nul", "newline", "long", "int"]),
        *(f"grant_id-{x}" for x in ["surrogate", "nul", "long", "int"]),
        *(f"depends_on-{x}" for x in ["surrogate", "nul", "many", "none", "str"]),
    ],
)
def test_wiring_fields_the_bus_cannot_store_raise_invalid_call_before_any_write(
    plane: ControlPlane, counter: Counter, field: dict[str, Any]
) -> None:
    run = plane.ledger.start_run()
    with pytest.raises(InvalidCall):
        plane.bus.call(run, "add", {"a": 1, "b": 2}, **field)
    assert plane.ledger.entries(run) == [] and counter.calls == []


@pytest.mark.parametrize(
    "run_id",
    ["run_\ud800", "run_\x00", "r" * 10_000, 5, None],
    ids=["surrogate", "nul", "long", "int", "none"],
)
def test_a_run_id_that_cannot_exist_is_refused_before_any_write(
    plane: ControlPlane, counter: Counter, run_id: Any
) -> None:
    with pytest.raises(InvalidCall):
        plane.bus.call(run_id, "add", {"a": 1, "b": 2})
    with pytest.raises(InvalidCall):
        plane.bus.as_langchain_tools(run_id)
    assert counter.calls == []


@pytest.mark.parametrize(
    "args",
    [
        _nested(995),
        _nested(5_000),
        {"\ud800": {1, 2}},
        {"k\ud800": 1},
        {"text": "x" * (2 * 1024 * 1024)},
        {f"k{i}": {i} for i in range(5_000)},
    ],
    ids=["deep995", "deep5000", "surrogate-key-not-json", "surrogate-key", "huge", "many"],
)
def test_arguments_that_cannot_be_validated_are_invalid_arguments(
    plane: ControlPlane, args: Any
) -> None:
    runs: list[int] = []
    plane.registry.register(_echo(), lambda a: runs.append(1) or a)
    run = plane.ledger.start_run()
    result = plane.bus.call(run, "echo", args)
    assert result.error is not None and result.error.code == "invalid_arguments"
    assert 1 <= len(result.error.details) <= 101 and runs == []
    call, error = plane.ledger.entries(run)
    assert len(call.content_bytes) < 64 * 1024 and len(error.content_bytes) < 256 * 1024
    assert plane.ledger.verify(run).ok


def test_self_referencing_arguments_are_invalid_arguments(plane: ControlPlane) -> None:
    plane.registry.register(_echo(), lambda a: a)
    loop: dict[str, Any] = {}
    loop["self"] = loop
    run = plane.ledger.start_run()
    result = plane.bus.call(run, "echo", loop)
    assert result.error is not None and result.error.code == "invalid_arguments"


def test_deep_arguments_through_langchain_come_back_as_a_tool_error(plane: ControlPlane) -> None:
    runs: list[int] = []
    plane.registry.register(_echo(), lambda a: runs.append(1) or a)
    run = plane.ledger.start_run()
    (tool,) = plane.bus.as_langchain_tools(run)
    message = tool.invoke({"name": "echo", "args": _nested(995), "id": "tc-1", "type": "tool_call"})
    result = ToolResult.from_json(str(message.content))
    assert result.error is not None and result.error.code == "invalid_arguments"
    assert runs == []


# --- the fuzz loop --------------------------------------------------------------------

_WEIRD = st.sampled_from(
    [
        "\ud800",
        "\udfff",
        "\x00",
        "\n",
        "\r",
        "\x1b[31m",
        "\u202e",  # right-to-left override
        "\u200b",  # zero-width space
        "\ufeff",
        "\x85",
        "\u2028",
        "add",
        "echo",
        "1.0.0",
        "",
    ]
)
_TEXT = st.one_of(
    st.lists(_WEIRD | st.text(max_size=4), max_size=6).map("".join),
    st.integers(0, 300).map(lambda n: "x" * n),
    st.just("y" * 3_000_000),
)
_LEAF = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), _TEXT)
_VALUE = st.recursive(
    _LEAF,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
    max_leaves=8,
) | st.integers(60, 3_000).map(_nested)
_FUZZ = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)


def test_fuzzed_calls_raise_only_documented_errors_and_settle(plane: ControlPlane) -> None:
    ran: list[int] = []

    def add(a: dict[str, Any]) -> int:
        ran.append(1)
        return a["a"] + a["b"]

    def echo(a: dict[str, Any]) -> Any:
        ran.append(1)
        return a

    plane.registry.register(ADD, add)
    plane.registry.register(_echo(), echo)
    run = plane.ledger.start_run()

    @_FUZZ
    @given(
        tool=st.one_of(st.sampled_from(["add", "echo"]), _TEXT),
        version=st.one_of(st.none(), st.just("1.0.0"), _TEXT),
        call_id=st.one_of(st.none(), st.sampled_from(["c1", "c2"]), _TEXT),
        args=st.one_of(
            st.fixed_dictionaries({"a": st.integers(0, 3), "b": st.integers(0, 3)}), _VALUE
        ),
    )
    def one_call(tool: Any, version: Any, call_id: Any, args: Any) -> None:
        try:
            result = plane.bus.call(run, tool, args, version=version, call_id=call_id)
        except InvalidCall:
            assert call_id is not None  # only the wiring field in play may raise
        else:
            assert result.ok or result.error is not None
            assert json.loads(result.to_json())["ok"] is result.ok
        with plane.engine.connect() as conn:
            started = _count(conn, t.calls, run)
            done = _count(conn, t.results, run)
        assert started == done  # every started call has its stored result
        assert len(ran) == started  # one handler run per started call id, never two

    one_call()
    assert plane.ledger.verify(run).ok


def _count(conn: sa.Connection, table: sa.Table, run: str) -> int:
    query = sa.select(sa.func.count()).select_from(table).where(table.c.run_id == run)
    return int(conn.execute(query).scalar() or 0)
