"""LangChain adapter: registered tools as ``BaseTool``s that go through the bus.

The tool's ``args_schema`` is the registered JSON Schema itself, so a tool-calling
chat model sees exactly the contract the bus enforces; LangChain does no parsing
of its own (a JSON-schema ``args_schema`` is passed through), the bus validates.
The result, errors included, is the ``ToolResult`` as canonical JSON, so the model
reads ``error.code`` and ``details`` instead of a stack trace. The id of the model's
tool call becomes the bus's call id, so a replayed step never repeats a side effect.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from langchain_core.tools import BaseTool
from pydantic import ConfigDict

from assay.tool_bus._spec import thaw

if TYPE_CHECKING:
    from assay.tool_bus._bus import ToolBus
    from assay.tool_bus._registry import ToolRegistry

__all__ = ["BusTool", "langchain_tools"]

_PAYLOAD = "assay_payload"


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
        return (), {_PAYLOAD: (tool_input, tool_call_id)}

    def _run(self, assay_payload: tuple[Any, str | None]) -> str:
        args, tool_call_id = assay_payload
        result = self.bus.call(
            self.run_id, self.name, args, version=self.version, call_id=tool_call_id
        )
        return result.to_json()

    async def _arun(self, assay_payload: tuple[Any, str | None]) -> str:
        args, tool_call_id = assay_payload
        result = await self.bus.acall(
            self.run_id, self.name, args, version=self.version, call_id=tool_call_id
        )
        return result.to_json()


def langchain_tools(bus: ToolBus, registry: ToolRegistry, run_id: str) -> list[BaseTool]:
    """The latest version of every tool this process has a handler for."""
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
