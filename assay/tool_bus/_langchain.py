"""LangChain adapter: registered tools as ``BaseTool``s that go through the bus.

The tool's ``args_schema`` is the registered JSON Schema itself, so a tool-calling
chat model sees exactly the contract the bus enforces; LangChain does no parsing
of its own (a JSON-schema ``args_schema`` is passed through), the bus validates.
The result, errors included, is the ``ToolResult`` as canonical JSON, so the model
reads ``error.code`` and ``details`` instead of a stack trace. The id of the model's
tool call becomes the bus's call id, so a replayed step never repeats a side effect,
under the prefix ``lc:``: a model chooses these ids, and must not be able to choose
one that the fence uses itself (an intent's call is ``intent:<run>/<intent>``). An
id that is too long or not printable becomes ``lc:sha256:<digest of it>``.

Arguments nested deeper than ``MAX_JSON_DEPTH`` are carried past LangChain's own
``str(tool_input)`` (for its callbacks, which would exhaust the recursion limit)
inside a wrapper that prints as a bounded ``repr``; the bus refuses them as
``invalid_arguments`` like any other.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from langchain_core.tools import BaseTool
from pydantic import ConfigDict

from assay._limits import MAX_JSON_DEPTH, MAX_RUN_ID_CHARS, check_text, json_depth_ok, safe_repr
from assay.tool_bus._errors import InvalidCall
from assay.tool_bus._spec import thaw

if TYPE_CHECKING:
    from assay.tool_bus._bus import ToolBus
    from assay.tool_bus._registry import ToolRegistry

__all__ = ["BusTool", "bus_call_id", "langchain_tools"]

_PAYLOAD = "assay_payload"


class _Opaque:
    """Arguments too deep to print, carried through LangChain to the bus untouched."""

    __slots__ = ("value",)

    def __init__(self, value: object) -> None:
        self.value = value

    def __repr__(self) -> str:
        return safe_repr(self.value)

    __str__ = __repr__


def _shielded(tool_input: Any) -> Any:
    if isinstance(tool_input, str) or json_depth_ok(tool_input, MAX_JSON_DEPTH):
        return tool_input
    return _Opaque(tool_input)


class BusTool(BaseTool):
    """One registered ``name@version``, bound to a run; calls go through the bus."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    bus: Any
    run_id: str
    version: str

    def _to_args_and_kwargs(
        self, tool_input: str | dict[str, Any], tool_call_id: str | None
    ) -> tuple[tuple[str, ...], dict[str, Any]]:
        # Hand the model's arguments to the bus untouched (the bus validates them,
        # without coercion) together with the tool call id.
        args = tool_input.value if isinstance(tool_input, _Opaque) else tool_input
        return (), {_PAYLOAD: (args, tool_call_id)}

    def run(self, tool_input: str | dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        return super().run(_shielded(tool_input), *args, **kwargs)

    async def arun(self, tool_input: str | dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        return await super().arun(_shielded(tool_input), *args, **kwargs)

    def _run(self, assay_payload: tuple[Any, str | None]) -> str:
        args, tool_call_id = assay_payload
        result = self.bus.call(
            self.run_id, self.name, args, version=self.version, call_id=bus_call_id(tool_call_id)
        )
        return result.to_json()

    async def _arun(self, assay_payload: tuple[Any, str | None]) -> str:
        args, tool_call_id = assay_payload
        result = await self.bus.acall(
            self.run_id, self.name, args, version=self.version, call_id=bus_call_id(tool_call_id)
        )
        return result.to_json()


_PREFIX = "lc:"
_MAX_PLAIN_ID = 160


def bus_call_id(tool_call_id: object) -> str | None:
    """The bus call id for a model's tool-call id (``None``: the bus picks one)."""
    if tool_call_id is None:
        return None
    text = tool_call_id if isinstance(tool_call_id, str) else repr(tool_call_id)
    if check_text(text, field="tool_call_id", max_chars=_MAX_PLAIN_ID) is None:
        return _PREFIX + text
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{_PREFIX}sha256:{digest}"


def langchain_tools(bus: ToolBus, registry: ToolRegistry, run_id: str) -> list[BaseTool]:
    """The latest version of every tool this process has a handler for;
    :class:`~assay.tool_bus.InvalidCall` for a run id the bus cannot store."""
    problem = check_text(run_id, field="run_id", max_chars=MAX_RUN_ID_CHARS)
    if problem is not None:
        raise InvalidCall(problem)
    latest: dict[str, Any] = {}
    for spec in registry.list():
        if registry.binding(spec.name, spec.version) is not None:
            latest[spec.name] = spec  # list() is in semver order: the last one wins
    return [
        BusTool(
            name=spec.name,
            description=spec.description,
            args_schema=thaw(spec.input_schema),
            bus=bus,
            run_id=run_id,
            version=spec.version,
        )
        for spec in latest.values()
    ]
