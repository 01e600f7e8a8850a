"""LangChain adapter: registered tools as ``BaseTool``s that go through the bus.

The tool's ``args_schema`` is the registered JSON Schema itself, so a tool-calling
chat model sees exactly the contract the bus enforces; LangChain does no parsing
of its own (a JSON-schema ``args_schema`` is passed through), the bus validates.
The result, errors included, is the ``ToolResult`` as canonical JSON, so the model
reads ``error.code`` and ``details`` instead of a stack trace, and reads the
``ledger_id`` it must cite. The id of the model's tool call becomes the bus's call
id, so a replayed step never repeats a side effect, under the prefix ``lc:``: a
model chooses these ids, and must not be able to choose one that the fence uses
itself (an intent's call is ``intent:<run>/<intent>``). An id that is too long or
not printable becomes ``lc:sha256:<digest of it>``.

Which run a call belongs to is decided in one of two ways:

- **bound**: ``langchain_tools(bus, registry, run_id)`` (or ``bus_tool(bus, spec,
  run_id=...)``) builds tools for one run;
- **read at call time**: a tool built without a run id (``bus_tool(bus, spec)``) is
  built once and shared by every run. A LangGraph ``ToolNode`` hands it a
  ``ToolRuntime`` (the tool declares one, hidden from the model), and the tool reads
  ``run_id`` from the graph's state; failing that, ``configurable["assay_run_id"]``
  (:data:`RUN_ID_KEY`) from the ``RunnableConfig``. The state wins: it belongs to
  the graph that runs the tool, while configuration is inherited from every graph
  around it. Neither can come from the model: the runtime is an object no tool-call
  JSON can forge, and the config never passes through the model. A call with no run
  id is answered with a ``no_run`` error for the model, and nothing is recorded.

Arguments nested deeper than ``MAX_JSON_DEPTH`` are carried past LangChain's own
``str(tool_input)`` (for its callbacks, which would exhaust the recursion limit)
inside a wrapper that prints as a bounded ``repr``; the bus refuses them as
``invalid_arguments`` like any other.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, InjectedToolArg
from langchain_core.utils.pydantic import TypeBaseModel
from pydantic import ConfigDict, create_model

from assay._limits import MAX_JSON_DEPTH, MAX_RUN_ID_CHARS, check_text, json_depth_ok, safe_repr
from assay.errors import InvalidCall
from assay.ledger import canonical_json
from assay.tool_bus._spec import ToolSpec, thaw

if TYPE_CHECKING:
    from assay.tool_bus._bus import ToolBus
    from assay.tool_bus._registry import ToolRegistry

__all__ = ["RUN_ID_KEY", "BusTool", "bus_call_id", "bus_tool", "langchain_tools"]

#: The ``configurable`` key a tool built without a run id reads its run id from.
RUN_ID_KEY = "assay_run_id"
#: The state key it reads first (the fence's state carries the run id there).
_STATE_KEY = "run_id"
_PAYLOAD = "assay_payload"
_RUNTIME = "assay_runtime"


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


@functools.cache
def _wants_runtime() -> TypeBaseModel:
    """What a ``ToolNode`` reads to decide what to inject: a ``ToolRuntime``, under a
    name no registered argument is likely to have (a model's value for it is dropped,
    and one that is not a ``ToolRuntime`` is never taken for one). LangGraph's prebuilt
    package is imported here, when a shared tool is first put in a graph, not when
    assay is imported."""
    from langgraph.prebuilt import ToolRuntime

    injected = Annotated[Any, ToolRuntime, InjectedToolArg]
    return create_model(
        "AssayRuntime",
        __config__=ConfigDict(arbitrary_types_allowed=True),
        assay_runtime=(injected, None),
    )


def _runtime_in(args: object) -> Any:
    """The ``ToolRuntime`` a ``ToolNode`` injected into ``args``, if any."""
    if not isinstance(args, dict) or _RUNTIME not in args:
        return None
    from langgraph.prebuilt import ToolRuntime

    value = args[_RUNTIME]
    return value if isinstance(value, ToolRuntime) else None


class BusTool(BaseTool):
    """One registered ``name@version`` whose calls go through the bus, for the run it
    is bound to or, when ``run_id`` is ``None``, the run its graph is executing."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    bus: Any
    run_id: str | None = None
    version: str

    def get_input_schema(self, config: RunnableConfig | None = None) -> TypeBaseModel:
        if self.run_id is None:
            return _wants_runtime()
        return super().get_input_schema(config)

    def _to_args_and_kwargs(
        self, tool_input: str | dict[str, Any], tool_call_id: str | None
    ) -> tuple[tuple[str, ...], dict[str, Any]]:
        # Hand the model's arguments to the bus untouched (the bus validates them,
        # without coercion) together with the tool call id and the injected runtime.
        args: Any = tool_input.value if isinstance(tool_input, _Opaque) else tool_input
        runtime = _runtime_in(args)
        if runtime is not None:
            args = {k: v for k, v in args.items() if k != _RUNTIME}
        return (), {_PAYLOAD: (args, tool_call_id), _RUNTIME: runtime}

    def run(self, tool_input: str | dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        return super().run(_shielded(tool_input), *args, **kwargs)

    async def arun(self, tool_input: str | dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        return await super().arun(_shielded(tool_input), *args, **kwargs)

    def _run(
        self,
        assay_payload: tuple[Any, str | None],
        config: RunnableConfig,
        assay_runtime: Annotated[Any, InjectedToolArg] = None,
    ) -> str:
        args, tool_call_id = assay_payload
        run_id = self._run_id(assay_runtime, config)
        if run_id is None:
            return _no_run(self.name)
        result = self.bus.call(
            run_id, self.name, args, version=self.version, call_id=bus_call_id(tool_call_id)
        )
        return result.to_json()

    async def _arun(
        self,
        assay_payload: tuple[Any, str | None],
        config: RunnableConfig,
        assay_runtime: Annotated[Any, InjectedToolArg] = None,
    ) -> str:
        args, tool_call_id = assay_payload
        run_id = self._run_id(assay_runtime, config)
        if run_id is None:
            return _no_run(self.name)
        result = await self.bus.acall(
            run_id, self.name, args, version=self.version, call_id=bus_call_id(tool_call_id)
        )
        return result.to_json()

    def _run_id(self, runtime: Any, config: RunnableConfig | None) -> str | None:
        """The bound run, else the graph state's ``run_id``, else the config's; a value
        that is there but not a usable run id is a wiring mistake, raised as such."""
        if self.run_id is not None:
            return self.run_id
        state: Any = runtime.state if runtime is not None else None
        if isinstance(state, Mapping):
            found = state.get(_STATE_KEY)
        else:
            found = getattr(state, _STATE_KEY, None)  # a pydantic or dataclass state
        where = "the graph state's run_id"
        if found is None or found == "":
            configurable = (config or {}).get("configurable") or {}
            found, where = configurable.get(RUN_ID_KEY), f"configurable[{RUN_ID_KEY!r}]"
        if found is None or found == "":
            return None
        problem = check_text(found, field=where, max_chars=MAX_RUN_ID_CHARS)
        if problem is not None:
            raise InvalidCall(problem)
        return str(found)


def _no_run(tool: str) -> str:
    """The answer to a call made outside any run: data for the model, not a crash."""
    message = (
        f"{tool} can only be called inside a fenced run: the graph's state has no "
        f"'{_STATE_KEY}' and its config no configurable[{RUN_ID_KEY!r}]; nothing was "
        "called or recorded"
    )
    failure = {"code": "no_run", "message": message, "details": [], "request": None}
    body = {"ok": False, "output": None, "ledger_id": None, "error": failure}
    return canonical_json(body).decode("utf-8")


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


def bus_tool(bus: ToolBus, spec: ToolSpec, *, run_id: str | None = None) -> BusTool:
    """``spec`` as a LangChain tool whose calls go through ``bus``: for ``run_id``, or,
    when it is ``None``, for the run of the graph that calls it (read at call time,
    so the tool is built once and shared by every run).

    Raises :class:`~assay.errors.InvalidCall` for a run id the bus cannot store.
    """
    _check_run_id(run_id)
    return BusTool(
        name=spec.name,
        description=spec.description,
        args_schema=thaw(spec.input_schema),
        bus=bus,
        run_id=run_id,
        version=spec.version,
    )


def langchain_tools(bus: ToolBus, registry: ToolRegistry, run_id: str) -> list[BaseTool]:
    """The latest version of every tool this process has a handler for, bound to
    ``run_id``; :class:`~assay.errors.InvalidCall` for a run id the bus cannot store
    (``None`` included: tools shared by every run are built with :func:`bus_tool`)."""
    problem = check_text(run_id, field="run_id", max_chars=MAX_RUN_ID_CHARS)
    if problem is not None:
        raise InvalidCall(problem)
    latest: dict[str, ToolSpec] = {}
    for spec in registry.list():
        if registry.binding(spec.name, spec.version) is not None:
            latest[spec.name] = spec  # list() is in semver order: the last one wins
    return [bus_tool(bus, spec, run_id=run_id) for spec in latest.values()]


def _check_run_id(run_id: str | None) -> None:
    if run_id is not None:
        problem = check_text(run_id, field="run_id", max_chars=MAX_RUN_ID_CHARS)
        if problem is not None:
            raise InvalidCall(problem)
