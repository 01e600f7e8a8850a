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

``pattern`` is an ECMA-262 regular expression, as JSON Schema says (read by
``regress``, the library ``jsonschema`` itself uses for the ``regex`` format), not a
Python one: ``\\d`` is an ASCII digit and ``$`` the end of the string, so
``^INV-\\d+$`` refuses ``INV-4421\\n`` and ``INV-4421`` in fullwidth digits. A
string argument may hold no control character (``U+0000``-``U+001F``,
``U+007F``-``U+009F``) but tabs and line breaks, and those only in prose (see
:func:`argument_errors`).
"""

from __future__ import annotations

import dataclasses
import math
import secrets
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal, cast

import regress
from jsonschema import Draft202012Validator, ValidationError, validators
from jsonschema.protocols import Validator
from referencing.exceptions import Unresolvable

from assay._canonical import canonical_text, control_characters, identifier_kind
from assay._limits import (
    MAX_ARGS_BYTES,
    MAX_CALL_ID_CHARS,
    MAX_CLAIM_ID_CHARS,
    MAX_DEPENDS_ON,
    MAX_ERROR_DETAILS,
    MAX_GRANT_ID_CHARS,
    MAX_JSON_DEPTH,
    MAX_KEPT_OUTPUT_BYTES,
    MAX_MESSAGE_CHARS,
    MAX_RUN_ID_CHARS,
    MAX_TOOL_NAME_CHARS,
    MAX_VERSION_CHARS,
    bounded,
    check_text,
    safe_repr,
    visible,
)
from assay._values import MULTILINE_KEYWORD, ROLE_KEYWORD, leaf_schemas
from assay.errors import InvalidCall
from assay.ledger import canonical_json, sha256_hex
from assay.tool_bus._diff import diff_problems
from assay.tool_bus._records import ErrorDetail, ToolFailure
from assay.tool_bus._spec import ToolSpec, loads_canonical, thaw

__all__ = [
    "Call",
    "argument_errors",
    "bounded_error",
    "call_record",
    "json_problems",
    "kept_output",
    "name_refusal",
    "normalise_call",
    "output_errors",
    "pointer",
]

_MAX_INT = 2**53 - 1
_MAX_DEPTH = MAX_JSON_DEPTH
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


@lru_cache(maxsize=1024)
def _ecma(pattern: str) -> regress.Regex | str:
    """``pattern`` compiled as ECMA-262 with Unicode code points, or why it is not one."""
    try:
        return regress.Regex(pattern, "u")
    except regress.RegressError as exc:
        return str(exc)


def _ecma_pattern_keyword(
    validator: Validator, value: Any, instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if not isinstance(instance, str) or not isinstance(value, str):
        return
    compiled = _ecma(value)
    if isinstance(compiled, str):
        yield ValidationError(f"{value!r} is not an ECMA-262 regular expression: {compiled}")
    elif compiled.find(instance) is None:
        yield ValidationError(f"{instance!r} does not match {value!r}")


_Validator = validators.extend(
    Draft202012Validator,
    {"x-unified-diff": _unified_diff_keyword, "pattern": _ecma_pattern_keyword},
)
_cache: dict[tuple[str, str, str, str], Validator] = {}
_lock = threading.Lock()


def pointer(parts: Any) -> str:
    """RFC 6901 JSON pointer for a path of keys and indices (a lone surrogate in a
    key is escaped, so that the pointer can always be recorded)."""
    return bounded(
        "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts),
        MAX_MESSAGE_CHARS,
    )


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
    found = _errors(spec, "input", args)
    if found:
        return found
    return _control_problems(spec, cast(dict[str, Any], args))


def _control_problems(spec: ToolSpec, args: dict[str, Any]) -> list[ErrorDetail]:
    """Control characters in string arguments: invisible in a review, and read
    differently by different parsers (``INV-4421\\n`` passes a Python ``$``). None is
    allowed but tab and line breaks, and those only in prose: not in a value that is
    one token (an identifier, a key of the effect, a value under ``pattern``,
    ``format``, ``enum``, ``const`` or a declared role) unless its schema says
    ``"x-assay-multiline": true``."""
    keyed = set(spec.idempotency_key)
    problems: list[ErrorDetail] = []
    for where, value, schema in leaf_schemas(args, thaw(spec.input_schema)):
        if not isinstance(value, str):
            continue
        found = control_characters(value, multiline=_may_break_lines(where, value, schema, keyed))
        if found:
            problems.append(
                ErrorDetail(
                    path=where,
                    message=f"holds the control character(s) {', '.join(found)}, which "
                    "this argument may not hold",
                )
            )
    return problems


_ONE_TOKEN_KEYWORDS = ("pattern", "format", "enum", "const", ROLE_KEYWORD)


def _may_break_lines(where: str, value: str, schema: Mapping[str, Any], keyed: set[str]) -> bool:
    if schema.get(MULTILINE_KEYWORD) is True or "x-unified-diff" in schema:
        return True
    if where in keyed or any(k in schema for k in _ONE_TOKEN_KEYWORDS):
        return False
    return identifier_kind(canonical_text(value).strip()) is None


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


# --- a proposed call ------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Call:
    """A proposed call, normalised. ``tool`` and ``version`` are as proposed (the
    planner's data, checked by :func:`name_refusal`); ``args_problems`` says why the
    arguments cannot even be validated (not JSON, too large), and ``args_record`` is
    what the ``tool_call`` entry keeps of them."""

    run_id: str
    call_id: str
    fresh: bool
    tool: object
    version: object
    args: object
    args_json: Any  # the canonical arguments parsed back; None when not JSON or too large
    args_sha256: str | None
    args_problems: tuple[ErrorDetail, ...] = ()
    args_record: Any = None
    depends_on: tuple[str, ...]
    grant_id: str | None


def normalise_call(
    run_id: object,
    tool: object,
    args: object,
    version: object,
    grant_id: object,
    call_id: object,
    depends_on: object,
) -> Call:
    """The call as the bus handles it; :class:`InvalidCall` for a wiring mistake (a
    run id, call id, grant id or claim id the bus cannot store), before anything is
    written. The planner's own fields (tool, version, arguments) never raise."""
    _wiring(run_id, field="run_id", max_chars=MAX_RUN_ID_CHARS)
    if call_id is not None:
        _wiring(call_id, field="call_id", max_chars=MAX_CALL_ID_CHARS)
    if grant_id is not None:
        _wiring(grant_id, field="grant_id", max_chars=MAX_GRANT_ID_CHARS)
    claims = _depends_on(depends_on)
    problems, canonical, record = _arguments(args)
    assert isinstance(run_id, str)
    return Call(
        run_id=run_id,
        call_id=cast(str, call_id) if call_id is not None else "call_" + secrets.token_hex(12),
        fresh=call_id is None,
        tool=tool,
        version=version,
        args=args,
        args_json=None if canonical is None else record,
        args_sha256=None if canonical is None else sha256_hex(canonical),
        args_problems=tuple(problems),
        args_record=record,
        depends_on=claims,
        grant_id=cast(str | None, grant_id),
    )


def _wiring(value: object, *, field: str, max_chars: int) -> None:
    problem = check_text(value, field=field, max_chars=max_chars)
    if problem is not None:
        raise InvalidCall(problem)


def _depends_on(depends_on: object) -> tuple[str, ...]:
    if isinstance(depends_on, str | bytes) or not isinstance(depends_on, Sequence):
        raise InvalidCall("depends_on must be a sequence of claim id strings")
    claims = tuple(cast(Sequence[object], depends_on))
    if len(claims) > MAX_DEPENDS_ON:
        raise InvalidCall(
            f"depends_on names {len(claims)} claims, over the limit of {MAX_DEPENDS_ON}"
        )
    for claim in claims:
        _wiring(claim, field="a claim id in depends_on", max_chars=MAX_CLAIM_ID_CHARS)
    return cast(tuple[str, ...], claims)


def _arguments(args: object) -> tuple[list[ErrorDetail], bytes | None, Any]:
    """Problems that stop the arguments from being validated at all, their canonical
    JSON (``None`` then), and what the ``tool_call`` entry keeps of them."""
    problems = json_problems(args)
    if problems:
        return problems, None, {"$not_json": safe_repr(args)}
    try:
        canonical = canonical_json(args)
    except Exception as exc:  # a value that passed the checks yet does not serialise
        message = f"the arguments are not canonical JSON: {safe_repr(exc, 300)}"
        return [ErrorDetail(path="", message=message)], None, {"$not_json": safe_repr(args)}
    if len(canonical) > MAX_ARGS_BYTES:
        message = f"the arguments are {len(canonical)} bytes, over the limit of {MAX_ARGS_BYTES}"
        record = {"$too_large": {"bytes": len(canonical), "sha256": sha256_hex(canonical)}}
        return [ErrorDetail(path="", message=message)], None, record
    return [], canonical, loads_canonical(canonical)


def name_refusal(call: Call) -> ToolFailure | None:
    """``unknown_tool`` / ``unknown_version`` for a tool name or version that no
    registered tool can have (not a string, too long, control characters, a lone
    surrogate), without asking the registry."""
    problem = check_text(call.tool, field="the tool name", max_chars=MAX_TOOL_NAME_CHARS)
    if problem is not None:
        return ToolFailure(code="unknown_tool", message=f"no such tool: {problem}")
    if call.version is None:
        return None
    problem = check_text(call.version, field="the version", max_chars=MAX_VERSION_CHARS)
    if problem is not None:
        return ToolFailure(code="unknown_version", message=f"no such version: {problem}")
    return None


def call_record(call: Call, spec: ToolSpec | None) -> tuple[str, str, dict[str, Any]]:
    """Source, content and metadata of the call's ``tool_call`` entry: the tool and
    version as registered, or as proposed made visible and bounded when no such tool
    exists, and the arguments as :attr:`Call.args_record` keeps them."""
    if spec is not None:
        name, version = spec.name, spec.version
    else:
        tool, proposed = call.tool, call.version
        name = visible(tool, MAX_TOOL_NAME_CHARS) if isinstance(tool, str) else safe_repr(tool, 64)
        version = visible(proposed, MAX_VERSION_CHARS) if isinstance(proposed, str) else None
    content = {"tool": name, "version": version, "args": call.args_record}
    metadata: dict[str, Any] = {"call_id": call.call_id, "args_sha256": call.args_sha256}
    if call.grant_id is not None:
        metadata["grant_id"] = call.grant_id
    if call.depends_on:
        metadata["depends_on"] = list(call.depends_on)
    source = f"tool:{spec.ref}" if spec is not None else f"tool:{visible(name, 400)}"
    return source, canonical_json(content).decode("utf-8"), metadata


# --- what an error record keeps ---------------------------------------------------------


def bounded_error(error: ToolFailure) -> ToolFailure:
    """``error`` with at most ``MAX_ERROR_DETAILS`` details and every message and path
    bounded and valid Unicode, so that it can always be recorded and returned."""
    details = [
        ErrorDetail(path=bounded(d.path, MAX_MESSAGE_CHARS), message=bounded(d.message, 500))
        for d in error.details[:MAX_ERROR_DETAILS]
    ]
    extra = len(error.details) - MAX_ERROR_DETAILS
    if extra > 0:
        details.append(ErrorDetail(path="", message=f"… and {extra} more problem(s)"))
    return dataclasses.replace(
        error, message=bounded(error.message, MAX_MESSAGE_CHARS), details=details
    )


def kept_output(value: object) -> Any:
    """What an ``error`` entry keeps of a refused output: the output itself when it is
    JSON within ``MAX_KEPT_OUTPUT_BYTES``, else its size, digest and a prefix, or a
    bounded ``repr`` when it is not JSON. Never raises."""
    try:
        if json_problems(value):
            return {"$not_json": safe_repr(value)}
        text = canonical_json(value)
    except Exception:  # a value whose own methods raise while it is read
        return {"$not_json": safe_repr(value)}
    if len(text) <= MAX_KEPT_OUTPUT_BYTES:
        return loads_canonical(text)
    prefix = text[: MAX_KEPT_OUTPUT_BYTES // 2].decode("utf-8", "ignore")
    return {"$too_large": {"bytes": len(text), "sha256": sha256_hex(text), "prefix": prefix}}
