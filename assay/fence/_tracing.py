"""OpenTelemetry spans for fenced runs: one span per node execution, named
``assay.fence.<node>``, carrying what the node decided, and a parent span per
invocation of the runner (``assay.fence.run`` / ``assay.fence.resume``).

Only the OpenTelemetry *API* is used, and only when it is installed (the ``otel``
extra): without it :func:`traced_node` hands the node back unchanged and
:func:`invocation_span` does nothing. With the API but no tracer provider configured
(the API's proxy or no-op one), no span is started and nothing is computed: an
untraced run pays one look-up of the global provider per node.

Attributes on every node span: ``assay.run_id``, ``assay.thread_id``,
``assay.graph.name``, ``assay.graph.version``, ``assay.round``; then, from what the
node returned:

- ``assay.gate.accepted``, ``assay.gate.error_codes`` (the gate's refusals, in order);
- ``assay.verdict.<label>`` (how many propositions got each label) and
  ``assay.unsupported.count``;
- ``assay.grant.tools`` / ``.decisions`` (``granted`` or ``denied``) / ``.via``
  (``policy:<rule>``, ``reviewer`` ...), parallel lists, for the decisions the node
  took, and ``assay.grant.pending`` for calls left to a person;
- ``assay.action.tools`` / ``.statuses`` (``executed``, ``failed``, ``denied``,
  ``not_run``), parallel lists, with ``assay.action.executed`` / ``.failed`` counts;
- ``assay.agent.failure`` when the agent failed, ``assay.run.status`` from ``finish``;
- ``assay.paused`` when the node paused the graph for a person (``interrupt()``).

Values come from the agents and documents only as codes, labels and tool names;
claim texts and evidence are never put on a span.
"""

from __future__ import annotations

import inspect
from collections import Counter
from collections.abc import Callable, Generator, Mapping, Sequence
from contextlib import contextmanager
from importlib import import_module
from typing import TYPE_CHECKING, Any, Literal, cast

from langchain_core.runnables import RunnableConfig, RunnableLambda
from langgraph.errors import GraphBubbleUp, GraphInterrupt

from assay.fence._state import FenceState

if TYPE_CHECKING:
    from opentelemetry.trace import Span, Tracer

    from assay.fence._result import RunResult
    from assay.fence._threads import GraphIdentity

__all__ = ["SPAN_PREFIX", "TRACER_NAME", "InvocationSpan", "invocation_span", "traced_node"]

#: The instrumentation scope of every span assay starts.
TRACER_NAME = "assay.fence"
#: A node's span is named ``SPAN_PREFIX + node``.
SPAN_PREFIX = "assay.fence."
Attributes = dict[str, str | bool | int | float | Sequence[str]]


def _otel_trace() -> Any:
    """``opentelemetry.trace``, or ``None`` where the API is not installed."""
    try:
        return import_module("opentelemetry.trace")
    except ImportError:
        return None


_TRACE = _otel_trace()
# The tracer of the provider it came from: a provider set later (or swapped in a
# test) gets its own tracer, not a stale one.
_cached: tuple[object, Tracer] | None = None


def _tracer() -> Tracer | None:
    """The tracer of the global provider; ``None`` while none is configured (the API's
    proxy or no-op provider), so that an untraced run starts no span at all."""
    global _cached
    provider = _TRACE.get_tracer_provider()
    if isinstance(provider, _TRACE.ProxyTracerProvider | _TRACE.NoOpTracerProvider):
        return None
    if _cached is None or _cached[0] is not provider:
        _cached = (provider, provider.get_tracer(TRACER_NAME))
    return _cached[1]


# --- node spans ---------------------------------------------------------------------------


def traced_node(name: str, node: Any) -> Any:
    """``node`` wrapped in a span per execution; the node itself unchanged when the
    OpenTelemetry API is not installed. Keeps what LangGraph reads of a node: a
    runnable stays a runnable with a sync and an async body, and a function that
    takes ``config`` still takes it."""
    if _TRACE is None:
        return node
    if isinstance(node, RunnableLambda):
        return _traced_runnable(name, cast(RunnableLambda[FenceState, dict[str, Any]], node))
    if "config" in inspect.signature(node).parameters:
        configured = cast(Callable[[FenceState, RunnableConfig], dict[str, Any]], node)

        def with_config(state: FenceState, config: RunnableConfig) -> dict[str, Any]:
            return _spanned(name, state, lambda: configured(state, config), config)

        return with_config
    plain = cast(Callable[[FenceState], dict[str, Any]], node)

    def traced(state: FenceState) -> dict[str, Any]:
        return _spanned(name, state, lambda: plain(state), None)

    return traced


def _traced_runnable(
    name: str, node: RunnableLambda[FenceState, dict[str, Any]]
) -> RunnableLambda[FenceState, dict[str, Any]]:
    """The runnable's own bodies in a span: called directly, not through another
    ``invoke``, so that callbacks (LangSmith, astream_events) see one run per node."""
    sync_body: Callable[..., Any] | None = getattr(node, "func", None)
    async_body: Callable[..., Any] | None = getattr(node, "afunc", None)

    def call(state: FenceState, config: RunnableConfig) -> dict[str, Any]:
        if sync_body is None:
            return node.invoke(state, config)
        return _with_config(sync_body, state, config)

    async def acall(state: FenceState, config: RunnableConfig) -> dict[str, Any]:
        if async_body is None:
            return await node.ainvoke(state, config)
        return await _with_config(async_body, state, config)

    def run_sync(state: FenceState, config: RunnableConfig) -> dict[str, Any]:
        return _spanned(name, state, lambda: call(state, config), config)

    async def run_async(state: FenceState, config: RunnableConfig) -> dict[str, Any]:
        tracer = _tracer()
        if tracer is None:
            return await acall(state, config)
        with (
            tracer.start_as_current_span(
                SPAN_PREFIX + name, record_exception=False, set_status_on_exception=False
            ) as span,
            _outcome(span, state, config),
        ):
            update = await acall(state, config)
            _describe(span, state, update)
            return update

    return RunnableLambda(run_sync, afunc=run_async, name=node.name)


def _with_config(body: Callable[..., Any], state: FenceState, config: RunnableConfig) -> Any:
    return body(state, config) if "config" in inspect.signature(body).parameters else body(state)


def _spanned(
    name: str,
    state: FenceState,
    body: Callable[[], dict[str, Any]],
    config: RunnableConfig | None,
) -> dict[str, Any]:
    tracer = _tracer()
    if tracer is None:
        return body()
    with (
        tracer.start_as_current_span(
            SPAN_PREFIX + name, record_exception=False, set_status_on_exception=False
        ) as span,
        _outcome(span, state, config),
    ):
        update = body()
        _describe(span, state, update)
        return update


@contextmanager
def _outcome(span: Span, state: FenceState, config: RunnableConfig | None) -> Generator[None]:
    """Mark a pause as a pause and any other exception as the span's error."""
    try:
        yield
    except GraphBubbleUp as exc:
        if span.is_recording():
            span.set_attributes(_run_attributes(state, {}, config))
            span.set_attribute("assay.paused", isinstance(exc, GraphInterrupt))
        raise
    except BaseException as exc:
        if span.is_recording():
            span.set_attributes(_run_attributes(state, {}, config))
            span.record_exception(exc)
            span.set_status(_TRACE.Status(_TRACE.StatusCode.ERROR, type(exc).__name__))
        raise


def _describe(span: Span, state: FenceState, update: Mapping[str, Any]) -> None:
    if span.is_recording():
        span.set_attributes({**_run_attributes(state, update, None), **_decided(state, update)})


def _run_attributes(
    state: Mapping[str, Any], update: Mapping[str, Any], config: RunnableConfig | None
) -> Attributes:
    """Which run, thread and graph: from the state, or from what ``begin`` returned."""
    merged = {**state, **update}
    thread = merged.get("thread_id") or (config or {}).get("configurable", {}).get("thread_id")
    graph = merged.get("graph")
    named = cast(Mapping[str, Any], graph) if isinstance(graph, Mapping) else {}
    out: Attributes = {
        "assay.run_id": str(merged.get("run_id") or ""),
        "assay.thread_id": str(thread or ""),
        "assay.graph.name": str(named.get("name", "")),
        "assay.graph.version": str(named.get("version", "")),
    }
    round_ = merged.get("round")
    if isinstance(round_, int):
        out["assay.round"] = round_
    return out


def _decided(state: Mapping[str, Any], update: Mapping[str, Any]) -> Attributes:
    """What a node decided, as span attributes, from the state it read and the keys it
    returned (see the module's docstring for the names)."""
    out: Attributes = {}
    if "gate_errors" in update and "accepted" in update and "handover" not in update:
        errors = cast(list[Mapping[str, Any]], update.get("gate_errors") or [])
        out["assay.gate.accepted"] = update.get("accepted") is not None
        out["assay.gate.error_codes"] = [str(e.get("code", "")) for e in errors]
    if "verified" in update and "handover" not in update:
        out.update(_verdicts(update.get("verified")))
        out["assay.unsupported.count"] = len(update.get("unsupported") or [])
    if ("granted" in update or "denied" in update) and "run_id" not in update:
        out.update(_grants(state, update))
    if "actions" in update and "run_id" not in update:
        out.update(_actions(cast(list[Mapping[str, Any]], update.get("actions") or [])))
    if update.get("failure"):
        out["assay.agent.failure"] = str(update["failure"])[:200]
    result: RunResult | None = update.get("result")
    if result is not None and "pending" not in update:
        out["assay.run.status"] = result.status
        out["assay.unsupported.count"] = len(result.unsupported)
    return out


def _verdicts(verified: object) -> Attributes:
    labels: Counter[str] = Counter()
    if isinstance(verified, Mapping):
        for claim in cast(list[Mapping[str, Any]], verified.get("claims") or []):
            for prop in cast(list[Mapping[str, Any]], claim.get("propositions") or []):
                found = prop.get("entailment")
                if isinstance(found, Mapping):
                    labels[str(cast(Mapping[str, Any], found).get("label"))] += 1
    return {f"assay.verdict.{label}": count for label, count in sorted(labels.items())}


def _grants(state: Mapping[str, Any], update: Mapping[str, Any]) -> Attributes:
    """The decisions this node added (not those the state already held)."""
    tools = _intent_tools(state)
    rows: list[tuple[str, str, str]] = []
    for key, decision in (("granted", "granted"), ("denied", "denied")):
        before = cast(Mapping[str, Any], state.get(key) or {})
        for intent_id, raw in cast(Mapping[str, Any], update.get(key) or {}).items():
            if intent_id in before:
                continue
            item = cast(Mapping[str, Any], raw)
            refused = decision == "granted" and item.get("refused")
            via = str(item.get("via") or ("reviewer" if item.get("approver") else ""))
            tool = str(item.get("tool") or tools.get(intent_id, ""))
            rows.append((tool, "refused" if refused else decision, via))
    out: Attributes = {
        "assay.grant.tools": [r[0] for r in rows],
        "assay.grant.decisions": [r[1] for r in rows],
        "assay.grant.via": [r[2] for r in rows],
    }
    if "pending" in update:
        out["assay.grant.pending"] = len(update.get("pending") or [])
    return out


def _intent_tools(state: Mapping[str, Any]) -> dict[str, str]:
    verified = state.get("verified")
    if not isinstance(verified, Mapping):
        return {}
    intents = cast(list[Mapping[str, Any]], verified.get("action_intents") or [])
    return {str(i.get("id")): str(i.get("tool")) for i in intents}


def _actions(actions: Sequence[Mapping[str, Any]]) -> Attributes:
    statuses = [str(a.get("status", "")) for a in actions]
    return {
        "assay.action.tools": [str(a.get("tool", "")) for a in actions],
        "assay.action.statuses": statuses,
        "assay.action.executed": statuses.count("executed"),
        "assay.action.failed": statuses.count("failed"),
    }


# --- the invocation's span ----------------------------------------------------------------


class InvocationSpan:
    """The parent span of one ``run`` or ``resume``: :meth:`finish` records what it
    came to. Does nothing when tracing is off."""

    def __init__(self, span: Span | None) -> None:
        self._span = span

    def finish(self, result: RunResult) -> None:
        if self._span is not None and self._span.is_recording():
            self._span.set_attributes(
                {
                    "assay.run_id": result.run_id,
                    "assay.run.status": result.status,
                    "assay.round": result.rounds,
                    "assay.unsupported.count": len(result.unsupported),
                    "assay.grant.pending": len(result.pending_grants),
                }
            )


@contextmanager
def invocation_span(
    kind: Literal["run", "resume"], identity: GraphIdentity, thread_id: str
) -> Generator[InvocationSpan]:
    """The span ``assay.fence.run`` (or ``.resume``) around one invocation of a fenced
    graph, the parent of its node spans; an exception is recorded on it."""
    tracer = _tracer() if _TRACE is not None else None
    if tracer is None:
        yield InvocationSpan(None)
        return
    with tracer.start_as_current_span(SPAN_PREFIX + kind) as span:
        if span.is_recording():
            span.set_attributes(
                {
                    "assay.thread_id": thread_id,
                    "assay.graph.name": identity.name,
                    "assay.graph.version": identity.version,
                }
            )
        yield InvocationSpan(span)
