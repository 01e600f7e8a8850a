"""What a handler may know of the call it serves: ``ToolContext``, given on request.

A handler receives the validated arguments as one dict. One that also declares a
parameter annotated :class:`ToolContext` (``def refund(args, context: ToolContext)``,
``Annotated`` or a string annotation alike) receives the call's context under that
parameter's name: the run and call ids, the ``tool_call`` ledger entry, the grant it
runs under, and an idempotency key to hand to the system the effect happens in (a
payment provider's ``Idempotency-Key``). Handlers that declare none are called as
they always were.

The key names the effect, not the attempt: for a tool with an ``idempotency_key``
it is the digest of the effect's key values and its generation (the same effect
asked again is the same key, a repeat a grant allowed on purpose is the next
generation, so a new key); for any other tool it is the digest of the run and call
ids (the bus never runs a call id twice, so the key is that call's alone).
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from assay.ledger import canonical_json
from assay.tool_bus._effects import EffectHolder, EffectKey

__all__ = ["ToolContext", "call_context", "context_parameter", "with_context"]


@dataclass(frozen=True, kw_only=True)
class ToolContext:
    """The call a handler serves (see the module's docstring for ``idempotency_key``)."""

    run_id: str
    call_id: str
    tool: str
    version: str
    #: The ``tool_call`` ledger entry that records the call.
    call_ledger_id: str
    #: The grant an irreversible call runs under (``None`` for other tools).
    grant_id: str | None
    #: 64 hex digits; stable for one effect, new for a repeat a grant allowed.
    idempotency_key: str


def context_parameter(handler: Callable[..., Any]) -> str | None:
    """The name of ``handler``'s parameter annotated :class:`ToolContext`, if any."""
    try:
        parameters = inspect.signature(handler).parameters
    except (TypeError, ValueError):  # a builtin or a C callable: no annotations to read
        return None
    hints = _hints(handler)
    for name, parameter in parameters.items():
        annotation = hints.get(name, parameter.annotation)
        if _is_context(annotation):
            return name
    return None


def _hints(handler: Callable[..., Any]) -> dict[str, Any]:
    target = handler.__call__ if not inspect.isroutine(handler) else handler
    try:
        return typing.get_type_hints(target, include_extras=True)
    except Exception:  # an annotation that names something not importable here
        return {}


def _is_context(annotation: object) -> bool:
    if annotation is ToolContext or annotation == "ToolContext":
        return True
    if typing.get_origin(annotation) is typing.Annotated:
        return _is_context(typing.get_args(annotation)[0])
    return False


def call_context(
    start: Mapping[str, Any], *, effect: EffectKey | None, after: EffectHolder | None
) -> ToolContext:
    """The context of the call whose start row is ``start`` (its run and call ids,
    tool, version, ``tool_call`` entry and grant); ``effect`` and ``after`` are the
    effect it holds and the call that held it before, when its tool names effects."""
    if effect is not None:
        generation = 0 if after is None else after.generation + 1
        named: dict[str, Any] = {"effect": effect.sha256, "generation": generation}
    else:
        named = {"run_id": start["run_id"], "call_id": start["call_id"]}
    return ToolContext(
        run_id=start["run_id"],
        call_id=start["call_id"],
        tool=start["tool"],
        version=start["version"],
        call_ledger_id=start["call_ledger_id"],
        grant_id=start["grant_id"],
        idempotency_key=hashlib.sha256(canonical_json(named)).hexdigest(),
    )


def with_context(
    handler: Callable[..., Any], parameter: str | None, context: ToolContext
) -> Callable[..., Any]:
    """``handler`` with ``context`` bound to ``parameter`` (unchanged without one)."""
    if parameter is None:
        return handler
    return functools.partial(handler, **{parameter: context})
