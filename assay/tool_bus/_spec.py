"""``ToolSpec``: what a tool is, in a form that can be hashed, stored and compared.

A spec is immutable: its schemas are deep-frozen copies (mappings become read-only
``MappingProxyType``, lists become tuples), so nobody can change a registered
schema from under the validators compiled for it. ``as_json()`` gives plain dicts
and lists back.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, cast, get_args

import rfc8785
import semver
from jsonpointer import JsonPointer, JsonPointerException
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from assay.errors import InvalidToolSpec
from assay.ledger import canonical_json, sha256_hex

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool
    from pydantic import BaseModel

__all__ = ["SIDE_EFFECTS", "SideEffect", "ToolSpec", "freeze", "loads_canonical", "thaw"]

SideEffect = Literal["read_only", "reversible", "irreversible"]
SIDE_EFFECTS: frozenset[str] = frozenset(get_args(SideEffect))

#: Names a tool-calling chat model accepts as a function name.
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}")
_DIALECT = "https://json-schema.org/draft/2020-12/schema"


_SAFE_INT = 2**53 - 1


def _number(text: str) -> int | float:
    value = int(text)
    return value if -_SAFE_INT <= value <= _SAFE_INT else float(text)


def loads_canonical(text: str | bytes) -> Any:
    """Parse RFC 8785 JSON back so that it canonicalises again to the same bytes.

    RFC 8785 writes ``1e20`` as ``100000000000000000000``; read as a Python int that
    would fall outside the safe integer range and no longer canonicalise, so
    integers beyond ±(2**53-1) are read back as the floats they were.
    """
    return json.loads(text, parse_int=_number)


def freeze(value: Any) -> Any:
    """A deep, read-only copy of a JSON value."""
    if isinstance(value, Mapping):
        items = cast(Mapping[Any, Any], value).items()
        return MappingProxyType({k: freeze(v) for k, v in items})
    if isinstance(value, list | tuple):
        return tuple(freeze(v) for v in cast(list[Any], value))
    return value


def thaw(value: Any) -> Any:
    """Plain dicts and lists again, from what :func:`freeze` made."""
    if isinstance(value, Mapping):
        items = cast(Mapping[Any, Any], value).items()
        return {k: thaw(v) for k, v in items}
    if isinstance(value, tuple | list):
        return [thaw(v) for v in cast(tuple[Any, ...], value)]
    return value


@dataclass(frozen=True)
class ToolSpec:
    """A versioned tool contract: names, semver, both JSON Schemas (2020-12) and the
    kind of side effect. Construction checks everything and raises
    :class:`InvalidToolSpec` listing every problem."""

    name: str
    version: str
    description: str
    input_schema: Mapping[str, Any]
    output_schema: Mapping[str, Any] | bool
    side_effect: SideEffect
    #: JSON pointers (RFC 6901) into the arguments whose values name the effect: an
    #: irreversible call with the same values is the same effect, refused in any run
    #: once one has started (``duplicate_effect``) unless its grant supersedes the
    #: earlier call. Empty: no key, every call is its own effect.
    idempotency_key: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if isinstance(self.idempotency_key, list):
            object.__setattr__(self, "idempotency_key", tuple(self.idempotency_key))
        problems = _problems(self)
        if problems:
            raise InvalidToolSpec(problems)
        object.__setattr__(self, "input_schema", freeze(self.input_schema))
        object.__setattr__(self, "output_schema", freeze(self.output_schema))

    def __hash__(self) -> int:
        return hash(self.sha256)

    @property
    def ref(self) -> str:
        """``name@version``."""
        return f"{self.name}@{self.version}"

    def as_json(self) -> dict[str, Any]:
        """The spec as plain JSON data (what the registry stores, canonicalised). A
        spec without an idempotency key has no such field, so its stored bytes and
        hash are what they were before keys existed."""
        data: dict[str, Any] = {
            "name": self.name,
            "version": self.version,
            "description": self.description,
            "input_schema": thaw(self.input_schema),
            "output_schema": thaw(self.output_schema),
            "side_effect": self.side_effect,
        }
        if self.idempotency_key:
            data["idempotency_key"] = list(self.idempotency_key)
        return data

    @cached_property
    def canonical(self) -> str:
        """RFC 8785 canonical JSON of :meth:`as_json`: the registry's stored bytes."""
        return canonical_json(self.as_json()).decode("utf-8")

    @cached_property
    def sha256(self) -> str:
        return sha256_hex(self.canonical.encode("utf-8"))

    @classmethod
    def from_tool(
        cls,
        tool: BaseTool | type[BaseModel],
        *,
        side_effect: SideEffect,
        version: str = "1.0.0",
        name: str | None = None,
        description: str | None = None,
        output_schema: Mapping[str, Any] | bool | None = None,
        units: Mapping[str, str] | None = None,
        annotations: Mapping[str, Mapping[str, Any]] | None = None,
        idempotency_key: tuple[str, ...] | list[str] = (),
    ) -> ToolSpec:
        """The spec of a LangChain tool (a ``@tool`` function, any ``BaseTool``) or of a
        pydantic model of the arguments: name, description and schemas read from it,
        the side effect, version, units (``{"amount": "USD"}``), other ``x-assay-*``
        annotations and idempotency key declared here, since a tool cannot say them.
        The argument schema is closed unless it says otherwise. Register it with the
        tool's own function as handler: ``registry.register_tool(tool, ...)``."""
        from assay.tool_bus._from_tool import spec_from_tool

        return spec_from_tool(
            tool,
            side_effect=side_effect,
            version=version,
            name=name,
            description=description,
            output_schema=output_schema,
            units=units,
            annotations=annotations,
            idempotency_key=idempotency_key,
        )

    @classmethod
    def from_json(cls, text: str) -> ToolSpec:
        data = loads_canonical(text)
        return cls(**data)


def _problems(spec: ToolSpec) -> list[str]:
    problems: list[str] = []
    if not isinstance(spec.name, str) or not _NAME.fullmatch(spec.name):
        problems.append(
            f"name {spec.name!r} must be 1-64 characters of letters, digits, _ or -, "
            "starting with a letter"
        )
    if (
        not isinstance(spec.version, str)
        or len(spec.version) > 64
        or not (semver.Version.is_valid(spec.version))
    ):
        problems.append(f"version {spec.version!r} is not a semantic version (MAJOR.MINOR.PATCH)")
    if not isinstance(spec.description, str) or not spec.description.strip():
        problems.append("description must be a non-empty string")
    if spec.side_effect not in SIDE_EFFECTS:
        problems.append(
            f"side_effect {spec.side_effect!r} must be one of {', '.join(sorted(SIDE_EFFECTS))}"
        )
    problems += _schema_problems("input_schema", spec.input_schema, need_object=True)
    problems += _schema_problems("output_schema", spec.output_schema, need_object=False)
    problems += _key_problems(spec)
    return problems


_MAX_KEY_POINTERS = 16


def _key_problems(spec: ToolSpec) -> list[str]:
    key: object = spec.idempotency_key
    if not isinstance(key, tuple):
        return ["idempotency_key must be a list of JSON pointers (e.g. ['/invoice', '/line'])"]
    pointers = cast(tuple[object, ...], key)
    if not pointers:
        return []
    problems: list[str] = []
    if spec.side_effect != "irreversible":
        problems.append(
            "idempotency_key is for irreversible tools: only their effects are refused twice"
        )
    if len(pointers) > _MAX_KEY_POINTERS:
        problems.append(f"idempotency_key names at most {_MAX_KEY_POINTERS} pointers")
    for pointer in pointers:
        if not isinstance(pointer, str) or not pointer.startswith("/") or len(pointer) > 200:
            problems.append(
                f"idempotency_key entry {pointer!r} is not a JSON pointer into the arguments "
                "(it starts with '/', e.g. '/invoice')"
            )
            continue
        try:
            JsonPointer(pointer)
        except JsonPointerException as exc:
            problems.append(f"idempotency_key entry {pointer!r} is not a JSON pointer: {exc}")
    if len(set(pointers)) != len(pointers):
        problems.append("idempotency_key names a pointer twice")
    return problems


def _schema_problems(field: str, schema: object, *, need_object: bool) -> list[str]:
    plain = thaw(schema)
    if need_object and not (isinstance(plain, dict) and plain.get("type") == "object"):
        return [f'{field} must be a JSON Schema with "type": "object" (arguments are one dict)']
    if not isinstance(plain, dict | bool):
        return [f"{field} must be a JSON Schema (an object or a boolean)"]
    if isinstance(plain, dict) and plain.get("$schema", _DIALECT) != _DIALECT:
        return [f"{field} declares $schema {plain['$schema']!r}; only {_DIALECT} is accepted"]
    try:
        canonical_json(plain)
    except (rfc8785.CanonicalizationError, TypeError, ValueError) as exc:
        return [f"{field} is not expressible as canonical JSON: {exc}"]
    try:
        Draft202012Validator.check_schema(plain)
    except SchemaError as exc:
        where = "/".join(str(p) for p in exc.absolute_path)
        return [f"{field} is not valid JSON Schema 2020-12 at /{where}: {exc.message}"]
    return []
