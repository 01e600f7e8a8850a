"""Tools the way LangChain users write them: a ``ToolSpec`` from a ``@tool`` function
(any ``langchain_core`` ``BaseTool``) or from a pydantic model of the arguments.

What the tool says is read from it: its name, its description, the JSON Schema of
its arguments (``tool_call_schema``: the arguments a model fills, without injected
ones) and of its output (the function's return annotation, when it has one). What a
``@tool`` cannot say is the caller's to declare: the kind of side effect, the
version, the unit of a number (``units={"amount": "USD"}``, written as
``x-assay-unit``), other ``x-assay-*`` annotations, and the idempotency key of an
irreversible effect.

The argument schema is closed (``additionalProperties: false``) unless it says
otherwise: a handler receives what the schema names and nothing a model made up.
:func:`tool_handler` calls the tool's own function with the validated arguments as
keywords (and the call's ``ToolContext`` when the function declares one), returning
a pydantic model's JSON form.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, cast

from pydantic import BaseModel, TypeAdapter
from pydantic.errors import PydanticUserError

from assay.errors import InvalidToolSpec
from assay.tool_bus._context import ToolContext, context_parameter
from assay.tool_bus._spec import SideEffect, ToolSpec

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

__all__ = ["spec_from_tool", "tool_handler"]


def spec_from_tool(
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
    """The ``ToolSpec`` of a LangChain tool, or of a pydantic model of the arguments
    (its class name and docstring are the name and description unless given)."""
    found_name, found_description, schema, returned = _read(tool)
    properties = dict(schema.get("properties") or {})
    for key, extra in {
        **{k: {"x-assay-unit": u} for k, u in (units or {}).items()},
        **(annotations or {}),
    }.items():
        if key not in properties:
            raise InvalidToolSpec([f"{key!r} is not an argument of {found_name}"])
        properties[key] = {**properties[key], **extra}
    input_schema = {"additionalProperties": False, **schema, "properties": properties}
    input_schema.pop("title", None)
    return ToolSpec(
        name=name or found_name,
        version=version,
        description=description or found_description,
        input_schema=input_schema,
        output_schema=_output_schema(returned) if output_schema is None else output_schema,
        side_effect=side_effect,
        idempotency_key=tuple(idempotency_key),
    )


def _read(tool: object) -> tuple[str, str, dict[str, Any], Any]:
    """Name, description, argument schema and return annotation of ``tool``."""
    if isinstance(tool, type) and issubclass(tool, BaseModel):
        schema = tool.model_json_schema()
        return tool.__name__, inspect.getdoc(tool) or "", schema, inspect.Signature.empty
    from langchain_core.tools import BaseTool

    if not isinstance(tool, BaseTool):
        raise InvalidToolSpec(
            [f"expected a LangChain tool (@tool) or a pydantic model, got {type(tool).__name__}"]
        )
    call_schema: Any = tool.tool_call_schema
    if isinstance(call_schema, dict):
        schema = dict(cast(dict[str, Any], call_schema))
    else:
        schema = cast(type[BaseModel], call_schema).model_json_schema()
    schema.setdefault("type", "object")
    function = _function(tool)
    returned = _return_annotation(function) if function is not None else inspect.Signature.empty
    return tool.name, tool.description, schema, returned


def _function(tool: BaseTool) -> Callable[..., Any] | None:
    found = getattr(tool, "func", None) or getattr(tool, "coroutine", None)
    return found if callable(found) else None


def _return_annotation(function: Callable[..., Any]) -> Any:
    try:
        return typing.get_type_hints(function).get("return", inspect.Signature.empty)
    except Exception:  # an annotation naming something not importable here
        return inspect.Signature.empty


def _output_schema(returned: Any) -> Mapping[str, Any] | bool:
    """The JSON Schema of what the function returns, or ``true`` (anything) when it
    does not say or says ``Any``."""
    if returned is inspect.Signature.empty or returned is Any:
        return True
    try:
        schema = TypeAdapter(returned).json_schema(mode="serialization")
    except (PydanticUserError, TypeError, ValueError):
        return True
    return schema or True


def tool_handler(tool: BaseTool) -> Callable[..., Any]:
    """The handler that runs ``tool``'s own function on the validated arguments; the
    function's ``ToolContext`` parameter, if it has one, receives the call's."""
    function = _function(tool)
    if function is None:
        raise InvalidToolSpec([f"{tool.name} has no function to call (func or coroutine)"])
    wanted = context_parameter(function)
    if inspect.iscoroutinefunction(function):

        async def run_async(args: dict[str, Any], context: ToolContext) -> Any:
            extra = {wanted: context} if wanted else {}
            return _plain(await function(**args, **extra))

        return run_async

    def run(args: dict[str, Any], context: ToolContext) -> Any:
        extra = {wanted: context} if wanted else {}
        return _plain(function(**args, **extra))

    return run


def _plain(value: Any) -> Any:
    return value.model_dump(mode="json") if isinstance(value, BaseModel) else value
