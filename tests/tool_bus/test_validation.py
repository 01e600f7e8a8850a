"""Validation under generated input: the bus never crashes, and an invalid call or
output never reaches (or leaves) a handler as a success."""

from __future__ import annotations

import itertools
import unicodedata
from typing import Any, cast

import jsonschema
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from assay import ControlPlane
from assay.tool_bus import ErrorDetail, ToolSpec, argument_errors, json_problems

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 8},
        "count": {"type": "integer", "minimum": 0},
        "tags": {"type": "array", "items": {"enum": ["a", "b"]}, "maxItems": 3},
        "ratio": {"type": "number", "exclusiveMaximum": 1},
    },
    "required": ["name", "count"],
    "additionalProperties": False,
}
OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {"id": {"type": "integer"}},
    "required": ["id"],
}
SPEC = ToolSpec("gen", "1.0.0", "A tool for generated input.", SCHEMA, OUTPUT, "reversible")
REFERENCE = jsonschema.Draft202012Validator(SCHEMA)
REFERENCE_OUT = jsonschema.Draft202012Validator(OUTPUT)

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53) + 1, 2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)
near_valid = st.fixed_dictionaries(
    {"name": st.text(max_size=10) | st.integers(), "count": st.integers(-3, 3) | st.text()},
    optional={
        "tags": st.lists(st.sampled_from(["a", "b", "c"]), max_size=4),
        "ratio": st.floats(allow_nan=False, allow_infinity=False),
        "extra": json_values,
    },
)
anything = st.recursive(
    st.none()
    | st.integers()
    | st.floats()
    | st.text(max_size=5)
    | st.binary(max_size=3)
    | st.sets(st.integers(), max_size=2),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.tuples(inner)
        | st.dictionaries(st.text(max_size=3) | st.integers(), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=150, deadline=None)
@given(args=near_valid | st.dictionaries(st.text(max_size=5), json_values, max_size=4))
def test_argument_errors_agree_with_the_reference_validator(args: dict[str, Any]) -> None:
    """Where no string holds a control character (which the bus refuses beyond the
    schema: see the tests below), the bus and the reference validator agree."""
    assume(not _controls(args))
    assert (argument_errors(SPEC, args) == []) == REFERENCE.is_valid(args)


def _controls(value: Any) -> bool:
    if isinstance(value, str):
        return any(unicodedata.category(c) == "Cc" for c in value)
    if isinstance(value, dict):
        items = cast(dict[Any, Any], value).items()
        return any(_controls(k) or _controls(v) for k, v in items)
    if isinstance(value, list):
        return any(_controls(v) for v in cast(list[Any], value))
    return False


@settings(max_examples=150, deadline=None)
@given(value=anything)
def test_argument_errors_never_crash(value: Any) -> None:
    found = argument_errors(SPEC, value)
    assert all(
        isinstance(d, ErrorDetail) and (d.path == "" or d.path.startswith("/")) for d in found
    )
    if json_problems(value):
        assert found


def test_unknown_properties_are_closed_by_default_even_through_allof() -> None:
    spec = ToolSpec(
        "comp",
        "1.0.0",
        "Composed.",
        {
            "type": "object",
            "allOf": [{"properties": {"a": {"type": "integer"}}}],
            "properties": {"b": {"type": "integer"}},
        },
        True,
        "read_only",
    )
    assert argument_errors(spec, {"a": 1, "b": 2}) == []
    assert [d.path for d in argument_errors(spec, {"a": 1, "z": 2})] == [""]


def test_pointers_escape_slash_and_tilde() -> None:
    spec = ToolSpec(
        "esc",
        "1.0.0",
        "Escapes.",
        {"type": "object", "properties": {"a/b~c": {"type": "integer"}}},
        True,
        "read_only",
    )
    assert argument_errors(spec, {"a/b~c": "x"})[0].path == "/a~1b~0c"


_ids = itertools.count()


@pytest.fixture
def generated(plane: ControlPlane) -> tuple[ControlPlane, str, list[Any]]:
    seen: list[Any] = []
    outputs: list[Any] = []

    def handler(args: dict[str, Any]) -> Any:
        seen.append(args)
        return outputs.pop() if outputs else {"id": 1}

    plane.registry.register(SPEC, handler)
    return plane, plane.ledger.start_run(), [seen, outputs]


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(args=near_valid | anything, output=json_values | anything)
def test_the_bus_never_crashes_and_never_runs_an_invalid_call(
    generated: tuple[ControlPlane, str, list[Any]], args: Any, output: Any
) -> None:
    plane, run, (seen, outputs) = generated
    before = len(seen)
    outputs.append(output)
    result = plane.bus.call(run, "gen", args, call_id=f"h{next(_ids)}")
    valid_args = not json_problems(args) and REFERENCE.is_valid(args) and not _controls(args)
    if not valid_args:
        assert result.error is not None and result.error.code == "invalid_arguments"
        assert len(seen) == before
        outputs.clear()
        return
    assert len(seen) == before + 1
    valid_output = not json_problems(output) and REFERENCE_OUT.is_valid(output)
    assert result.ok == valid_output
    if not valid_output:
        assert result.error is not None and result.error.code == "invalid_output"


def test_control_characters_are_refused_and_line_breaks_only_in_prose(
    plane: ControlPlane,
) -> None:
    spec = ToolSpec(
        "notify",
        "1.0.0",
        "Sends a note about a ticket.",
        {
            "type": "object",
            "properties": {
                "ticket": {"type": "string"},
                "code": {"type": "string", "pattern": "^[A-Z]+$"},
                "body": {"type": "string"},
                "block": {"type": "string", "x-assay-multiline": True},
            },
        },
        {"type": "boolean"},
        "reversible",
    )
    refused = [
        {"ticket": "OPS-1234\n"},  # one token: a line break is not part of it
        {"ticket": "OPS-1234\t"},
        {"code": "ABC\n"},  # a value under a pattern is one token
        {"body": "Restarted.\x1b[2J"},  # an escape sequence, even in prose
        {"body": "nul\x00"},
    ]
    for args in refused:
        assert [d.path for d in argument_errors(spec, args)] == [f"/{next(iter(args))}"], args
    allowed = [{"body": "Restarted the worker.\nNo data lost.\n"}, {"block": "OPS-1\nOPS-2"}]
    for args in allowed:
        assert argument_errors(spec, args) == [], args


def test_patterns_are_ecma_262_full_strings_and_ascii_classes() -> None:
    """JSON Schema patterns are ECMA-262: ``$`` is the end, ``\\d`` an ASCII digit."""
    spec = ToolSpec(
        "flag",
        "1.0.0",
        "Flags.",
        {
            "type": "object",
            "properties": {"invoice": {"type": "string", "pattern": "^INV-\\d+$"}},
            "x-assay-multiline": True,
        },
        {"type": "boolean"},
        "reversible",
    )
    assert argument_errors(spec, {"invoice": "INV-4421"}) == []
    for bad in ("INV-4421\n", "INV-\uff14\uff14\uff12\uff11", "INV-\u0664\u0664", "xINV-1x"):
        assert [d.path for d in argument_errors(spec, {"invoice": bad})] == ["/invoice"], bad


def test_large_integral_floats_survive_the_canonical_round_trip(plane: ControlPlane) -> None:
    spec = ToolSpec(
        "big",
        "1.0.0",
        "Large bounds.",
        {"type": "object", "properties": {"x": {"type": "number", "maximum": 1e20}}},
        {"type": "number"},
        "read_only",
    )
    plane.registry.register(spec, lambda a: a["x"] * 2)
    assert ToolSpec.from_json(spec.canonical) == spec
    run = plane.ledger.start_run()
    result = plane.bus.call(run, "big", {"x": 2.0**53}, call_id="big-1")
    assert result.ok and result.output == 2.0**54
    assert plane.bus.call(run, "big", {"x": 2.0**53}, call_id="big-1") == result
