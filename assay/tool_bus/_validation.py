"""Argument and output validation: JSON Schema 2020-12, no coercion, JSON pointers.

Values are first checked to be JSON data at all (dict with str keys, list, str, int
within the RFC 8785 safe range, finite float, bool, None): anything else cannot be
recorded canonically, so it is refused before the schema is consulted.

An input schema that says nothing about extra properties is closed: the bus adds
``unevaluatedProperties: false`` to each object schema reached through
``properties``, ``items`` and ``prefixItems`` (not inside ``allOf``/``anyOf``/``$defs``,
whose properties the outer ``unevaluatedProperties`` already sees). A schema that
sets ``additionalProperties`` or ``unevaluatedProperties`` itself keeps its choice.
Output schemas are applied as written.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterator, Mapping
from typing import Any, Literal, cast

from jsonschema import Draft202012Validator, ValidationError, validators
from jsonschema.protocols import Validator
from referencing.exceptions import Unresolvable

from assay.tool_bus._diff import diff_problems
from assay.tool_bus._records import ErrorDetail
from assay.tool_bus._spec import ToolSpec, thaw

__all__ = ["argument_errors", "json_problems", "output_errors", "pointer"]

_MAX_INT = 2**53 - 1
_MAX_DEPTH = 64
_MAX_MESSAGE = 300
_OPEN_KEYS = ("additionalProperties", "unevaluatedProperties")


def _unified_diff_keyword(
    validator: Validator, value: Any, instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if value is False or not isinstance(instance, str):
        return
    roots = value.get("allowed_roots") if isinstance(value, dict) else None
    for code, message in diff_problems(instance, allowed_roots=roots):
        yield ValidationError(f"{code}: {message}")


_Validator = validators.extend(Draft202012Validator, {"x-unified-diff": _unified_diff_keyword})
_cache: dict[tuple[str, str, str, str], Validator] = {}
_lock = threading.Lock()


def pointer(parts: Any) -> str:
    """RFC 6901 JSON pointer for a path of keys and indices."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def json_problems(value: object, path: str = "", depth: int = 0) -> list[ErrorDetail]:
    """Every place where ``value`` is not JSON data that canonical JSON can hold."""
    if depth > _MAX_DEPTH:
        return [ErrorDetail(path=path, message=f"nested deeper than {_MAX_DEPTH} levels")]
    if value is None or isinstance(value, bool):
        return []
    if isinstance(value, int):
        ok = -_MAX_INT <= value <= _MAX_INT
        return [] if ok else [ErrorDetail(path=path, message="integer outside ±(2**53-1)")]
    if isinstance(value, float):
        ok = math.isfinite(value)
        return [] if ok else [ErrorDetail(path=path, message="NaN and infinity are not JSON")]
    if isinstance(value, str):
        return _str_problems(value, path)
    if isinstance(value, list):
        return [
            p
            for i, v in enumerate(cast(list[Any], value))
            for p in json_problems(v, f"{path}/{i}", depth + 1)
        ]
    if isinstance(value, dict):
        return _dict_problems(cast(dict[Any, Any], value), path, depth)
    return [ErrorDetail(path=path, message=f"{type(value).__name__} is not a JSON value")]


def _str_problems(value: str, path: str) -> list[ErrorDetail]:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return [ErrorDetail(path=path, message="string is not valid Unicode (lone surrogate)")]
    return []


def _dict_problems(value: dict[Any, Any], path: str, depth: int) -> list[ErrorDetail]:
    problems: list[ErrorDetail] = []
    for key, item in value.items():
        if not isinstance(key, str):
            problems.append(ErrorDetail(path=path, message=f"key {key!r} is not a string"))
            continue
        problems += _str_problems(key, path)
        problems += json_problems(item, path + pointer([key]), depth + 1)
    return problems


def argument_errors(spec: ToolSpec, args: object) -> list[ErrorDetail]:
    """Every violation of ``spec.input_schema`` by ``args`` (empty when valid).

    Pure: no coercion (``"5"`` is not ``5``), unknown properties refused unless the
    schema allows them, each violation with the JSON pointer of the offending value.
    """
    if not isinstance(args, dict):
        return [
            ErrorDetail(path="", message=f"arguments must be an object, not {_json_type(args)}")
        ]
    return _errors(spec, "input", args)


def output_errors(spec: ToolSpec, output: object) -> list[ErrorDetail]:
    """Every violation of ``spec.output_schema`` by ``output`` (empty when valid)."""
    return _errors(spec, "output", output)


def _errors(spec: ToolSpec, which: Literal["input", "output"], value: object) -> list[ErrorDetail]:
    problems = json_problems(value)
    if problems:
        return problems
    try:
        errors = _compiled(spec, which).iter_errors(cast(Any, value))
        found = [d for e in errors for d in _details(e)]
    except Unresolvable as exc:
        return [ErrorDetail(path="", message=f"the schema has an unresolvable $ref: {exc}")]
    except RecursionError:
        return [ErrorDetail(path="", message="the value is too deeply nested to validate")]
    return sorted(set(found), key=lambda d: (d.path, d.message))


def _compiled(spec: ToolSpec, which: Literal["input", "output"]) -> Validator:
    key = (spec.name, spec.version, spec.sha256, which)
    found = _cache.get(key)
    if found is not None:
        return found
    schema = thaw(spec.input_schema if which == "input" else spec.output_schema)
    compiled = _Validator(_closed(schema) if which == "input" else schema)
    with _lock:
        return _cache.setdefault(key, compiled)


def _closed(schema: Any) -> Any:
    if not isinstance(schema, dict):
        return schema
    node = cast(dict[str, Any], dict(schema))
    is_object = node.get("type") == "object" or "properties" in node
    if is_object and not any(k in node for k in _OPEN_KEYS):
        node["unevaluatedProperties"] = False
    if isinstance(node.get("properties"), dict):
        node["properties"] = {k: _closed(v) for k, v in node["properties"].items()}
    if isinstance(node.get("items"), dict):
        node["items"] = _closed(node["items"])
    if isinstance(node.get("prefixItems"), list):
        node["prefixItems"] = [_closed(v) for v in node["prefixItems"]]
    return node


def _details(error: ValidationError) -> list[ErrorDetail]:
    """One detail per offending value; a missing or unexpected property is pointed at
    by its own path, so the planner sees exactly which name to add or drop."""
    base = list(error.absolute_path)
    instance = error.instance
    if error.validator == "required" and isinstance(instance, dict):
        missing = [n for n in cast(list[str], error.validator_value) if n not in instance]
        return [
            ErrorDetail(path=pointer([*base, n]), message="required property is missing")
            for n in missing
        ]
    if (
        error.validator in _OPEN_KEYS
        and error.validator_value is False
        and isinstance(instance, dict)
    ):
        return [_unexpected(base, error)]
    return [ErrorDetail(path=pointer(base), message=_short(error.message))]


def _unexpected(base: list[Any], error: ValidationError) -> ErrorDetail:
    return ErrorDetail(
        path=pointer(base),
        message=_short(error.message.replace("Unevaluated properties", "Unknown properties")),
    )


def _short(message: str) -> str:
    return message if len(message) <= _MAX_MESSAGE else message[: _MAX_MESSAGE - 1] + "…"


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return type(value).__name__
