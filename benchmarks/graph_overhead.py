"""The fence's overhead per agent step, against the same graph without it, and where
that overhead goes.

Both graphs run the same agent (it calls a read-only tool through the bus and hands
over claims citing the outputs) on SQLite with LangGraph's SQLite checkpointer. The
fenced graph adds the gate, the verifier (deterministic checks and the NLI model),
the policy/grant/act nodes and the ledger records; the baseline ends right after the
agent. The NLI model's own time is measured separately, inside the model. Claims
change every iteration so the entailment cache never hits. Steps of the two graphs
alternate, so that both see the same machine, and the paired overhead (each fenced
step less its model time and the plain step just before it) is reported beside the
difference of the medians, in wall time and in the process's CPU time (the figure a
machine shared with other work distorts least). Both graphs are invoked as the runner (``cp.run``,
``cp.resume``) invokes a fenced graph, with LangGraph's ``durability="exit"`` (one
checkpoint per invocation, see ``assay/fence/_runner.py``), so that the difference is
the fence's own work and not two ways of checkpointing.

The timed steps run without instrumentation. A second, instrumented series then says
where a step's time goes: per fence node its wall time and the database transactions
and statements it issues (SQLite's trace callback, BEGIN and COMMIT included; a
trigger's re-report of its statement not counted), per component its exclusive time
(ledger writes and reads, gate, verifier, the NLI model and its cache, the tool bus,
the checkpointer), and the checkpointer's own statements and commits (its SQLite
connection's trace callback). ``--nli standin`` swaps the model for the
deterministic stand-in, for quick comparisons of everything but the model.

``langgraph_shape`` is LangGraph's own share: two graphs of the fenced and the plain
step's shape (the nodes a fenced step passes through, the plain graph's two) on the
fence's state and the same checkpointer, whose nodes do nothing, timed the same way.

    python benchmarks/graph_overhead.py [--runs 30] [--claims 5] [--nli model|standin]
"""

from __future__ import annotations

import argparse
import functools
import itertools
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Generator, Iterable
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from uuid import UUID

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langchain_core.callbacks import BaseCallbackHandler
from langgraph.graph import END, START, StateGraph
from sqlalchemy import event

from assay import ControlPlane, ToolSpec
from assay.fence import FenceState, fence
from assay.gate import Gate
from assay.ledger import Ledger, LedgerBatch
from assay.tool_bus import ToolBus
from assay.verifier import (
    Entailment,
    EntailmentCache,
    LedgerVerifier,
    LexicalNLI,
    NLIModel,
    SqlEntailmentCache,
    Verifier,
)
from benchmarks._common import write_result

TOOL = ToolSpec(
    name="line_item",
    version="1.0.0",
    side_effect="read_only",
    description="An invoice line.",
    input_schema={
        "type": "object",
        "required": ["line", "rate"],
        "additionalProperties": False,
        "properties": {"line": {"type": "integer"}, "rate": {"type": "integer"}},
    },
    output_schema={"type": "string"},
)
NODES = ("begin", "agent", "gate", "verify", "abstain", "policy", "grant", "act", "finish")
#: The runner's durability mode (``assay.fence._runner.DURABILITY``).
DURABILITY = "exit"


class TimedModel:
    """Wraps the NLI model and adds up the time spent inside it: wall time, and the
    process's CPU time (all its threads, the model's own included)."""

    def __init__(self, inner: NLIModel) -> None:
        self.inner = inner
        self.seconds = 0.0
        self.cpu_seconds = 0.0

    @property
    def threshold(self) -> float:
        return self.inner.threshold

    @property
    def model_id(self) -> str:
        return str(getattr(self.inner, "model_id", type(self.inner).__name__))

    def check_many(
        self, pairs: Iterable[tuple[str, str]], *, cache: EntailmentCache | None = None
    ) -> list[Entailment]:
        began, began_cpu = time.perf_counter(), time.process_time()
        try:
            return self.inner.check_many(pairs, cache=cache)
        finally:
            self.seconds += time.perf_counter() - began
            self.cpu_seconds += time.process_time() - began_cpu


def make_agent(cp: ControlPlane, claims: int) -> Any:
    def agent(state: FenceState) -> dict[str, Any]:
        run_id = state["run_id"]  # type: ignore[typeddict-item]
        seed = int(state["task"].split()[-1])  # type: ignore[typeddict-item]
        items = []
        for line in range(1, claims + 1):
            rate = 300 + seed * 7 + line
            out = cp.bus.call(run_id, "line_item", {"line": line, "rate": rate})
            text = f"Line {line} bills 2.5 h at EUR {rate}/h for a senior associate."
            items.append(
                {
                    "id": f"c{line}",
                    "type": "Assertion",
                    "text": text,
                    "confidence": 0.9,
                    "propositions": [
                        {"id": f"c{line}.p", "text": text, "ledger_ids": [out.ledger_id]}
                    ],
                }
            )
        return {
            "handover": {"run_id": run_id, "from_agent": "bench", "status": "ok", "claims": items}
        }

    return agent


def baseline_graph(cp: ControlPlane, agent: Any) -> Any:
    def start(state: FenceState) -> dict[str, Any]:
        return {"run_id": state.get("run_id") or cp.ledger.start_run()}

    builder = StateGraph(FenceState)
    builder.add_node("start", start)
    builder.add_node("agent", agent)
    builder.add_edge(START, "start")
    builder.add_edge("start", "agent")
    builder.add_edge("agent", END)
    return builder.compile(checkpointer=cp.checkpointer)


#: The nodes a fenced step of this agent passes through (no action intents), and the
#: plain graph's.
FENCED_PATH = ("begin", "agent", "gate", "verify", "finish")
PLAIN_PATH = ("start", "agent")


def shape_graph(cp: ControlPlane, nodes: Iterable[str]) -> Any:
    """``nodes`` in a row, each doing nothing but write one key, on the fence's state
    and the control plane's checkpointer: what LangGraph alone costs for a graph of
    that shape."""
    names = list(nodes)
    builder = StateGraph(FenceState)
    for name in names:
        builder.add_node(name, _nothing)
    builder.add_edge(START, names[0])
    for before, after in itertools.pairwise(names):
        builder.add_edge(before, after)
    builder.add_edge(names[-1], END)
    return builder.compile(checkpointer=cp.checkpointer)


def _nothing(state: FenceState) -> dict[str, Any]:
    return {"round": state.get("round", 0)}  # a node that writes, as every fence node does


def measure_shape(cp: ControlPlane, runs: int) -> dict[str, Any]:
    """LangGraph's own cost of the fenced step's extra nodes (see ``shape_graph``)."""
    fenced, plain = shape_graph(cp, FENCED_PATH), shape_graph(cp, PLAIN_PATH)
    for i in range(3):
        step(plain, 400_000 + i, None)
        step(fenced, 410_000 + i, None)
    plain_ms: list[float] = []
    fenced_ms: list[float] = []
    for i in range(runs):
        plain_ms.append(step(plain, 420_000 + i, None).wall)
        fenced_ms.append(step(fenced, 430_000 + i, None).wall)
    return {
        "fenced_nodes": list(FENCED_PATH),
        "plain_nodes": list(PLAIN_PATH),
        "fenced_median_ms": round(statistics.median(fenced_ms), 2),
        "plain_median_ms": round(statistics.median(plain_ms), 2),
        "paired_overhead_median_ms": round(
            statistics.median(f - p for f, p in zip(fenced_ms, plain_ms, strict=True)), 2
        ),
    }


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, int(q * len(ordered)) - 1)] if ordered else 0.0


@dataclass(frozen=True, kw_only=True)
class Step:
    """One invocation, in ms: wall time and the process's CPU time, and the model's
    share of each."""

    wall: float
    model: float
    cpu: float
    model_cpu: float


def step(graph: Any, number: int, model: TimedModel | None) -> Step:
    """One invocation of ``graph`` on a thread of its own."""
    before = (model.seconds, model.cpu_seconds) if model else (0.0, 0.0)
    began, began_cpu = time.perf_counter(), time.process_time()
    graph.invoke(
        {"task": f"audit {number}"},
        {"configurable": {"thread_id": f"t{number}"}},
        durability=DURABILITY,
    )
    wall, cpu = time.perf_counter() - began, time.process_time() - began_cpu
    after = (model.seconds, model.cpu_seconds) if model else (0.0, 0.0)
    return Step(
        wall=wall * 1000,
        model=(after[0] - before[0]) * 1000,
        cpu=cpu * 1000,
        model_cpu=(after[1] - before[1]) * 1000,
    )


def summary(totals: list[float], model_ms: list[float]) -> dict[str, Any]:
    return {
        "median_ms": round(statistics.median(totals), 1),
        "p95_ms": round(_p(totals, 0.95), 1),
        "model_median_ms": round(statistics.median(model_ms), 1),
        "model_p95_ms": round(_p(model_ms, 0.95), 1),
        "samples_ms": [round(t, 1) for t in totals],
    }


def measure(
    plain: Any, fenced: Any, runs: int, model: TimedModel, *, offset: int = 0
) -> dict[str, Any]:
    """``runs`` steps of each graph, alternating, so that both see the same machine;
    the paired overhead is each fenced step less its model time and the plain step
    run just before it, in wall time and in the process's CPU time (which other
    work on a shared machine inflates less)."""
    plain_steps: list[Step] = []
    fenced_steps: list[Step] = []
    for i in range(runs):
        plain_steps.append(step(plain, offset + i, None))
        fenced_steps.append(step(fenced, offset + 100_000 + i, model))
    pairs = list(zip(fenced_steps, plain_steps, strict=True))
    return {
        "baseline": summary([p.wall for p in plain_steps], [0.0] * runs),
        "fenced": summary([f.wall for f in fenced_steps], [f.model for f in fenced_steps]),
        "paired_overhead_without_model_ms": [f.wall - f.model - p.wall for f, p in pairs],
        "paired_cpu_overhead_without_model_ms": [f.cpu - f.model_cpu - p.cpu for f, p in pairs],
    }


# --- where the time goes ------------------------------------------------------------

#: (class, method, component): exclusive time of each is charged to its component.
_TIMED: list[tuple[type, str, str]] = [
    (Ledger, "append", "ledger_write"),
    (Ledger, "append_many", "ledger_write"),
    (LedgerBatch, "append", "ledger_write"),
    (Ledger, "start_run", "ledger_write"),
    (Ledger, "get_many", "ledger_read"),
    (Ledger, "entries", "ledger_read"),
    (Ledger, "run", "ledger_read"),
    (Ledger, "require_run", "ledger_read"),
    (Gate, "check", "gate"),
    (LedgerVerifier, "verify", "verifier"),
    (TimedModel, "check_many", "nli_model"),
    (Verifier, "_forward", "nli_forward"),
    (SqlEntailmentCache, "get", "nli_cache"),
    (SqlEntailmentCache, "put", "nli_cache"),
    (SqlEntailmentCache, "get_many", "nli_cache"),
    (SqlEntailmentCache, "put_many", "nli_cache"),
    (ToolBus, "call", "tool_bus"),
]


#: Methods that return a context manager (a transaction): its entry and exit are timed.
_TIMED_CONTEXTS: list[tuple[type, str, str]] = [(Ledger, "batch", "ledger_write")]


class Probe(BaseCallbackHandler):
    """Per step: node wall times, statements and transactions by node, exclusive time
    by component, and the checkpointer's calls, statements and commits."""

    def __init__(self) -> None:
        self.node: str = "outside"
        self._started: dict[UUID, tuple[str, float]] = {}
        self._stacks = threading.local()
        self._lock = threading.Lock()
        self.steps: list[dict[str, float]] = []
        self.step: dict[str, float] = defaultdict(float)

    def new_step(self) -> None:
        self.step = defaultdict(float)
        self.steps.append(self.step)

    def add(self, key: str, value: float) -> None:
        with self._lock:
            self.step[key] += value

    # nodes: LangGraph reports each task as a chain named after its node
    def on_chain_start(
        self, serialized: Any, inputs: Any, *, run_id: UUID, metadata: Any = None, **kw: Any
    ) -> None:
        name = kw.get("name")
        if kw.get("parent_run_id") in self._started:
            return  # a runnable inside a node (the agent, when it is one) is the node's time
        if name in (*NODES, "start") and metadata and metadata.get("langgraph_node") == name:
            self._started[run_id] = (name, time.perf_counter())
            self.node = name

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kw: Any) -> None:
        self._ended(run_id)

    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kw: Any) -> None:
        self._ended(run_id)

    def _ended(self, run_id: UUID) -> None:
        hit = self._started.pop(run_id, None)
        if hit is not None:
            self.add(f"node.{hit[0]}.ms", (time.perf_counter() - hit[1]) * 1000)
            self.node = "outside"

    # components: exclusive time, per thread
    def timed(self, component: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            stack: list[float] = self._stacks.__dict__.setdefault("stack", [])
            stack.append(0.0)
            began = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                spent = time.perf_counter() - began
                inner = stack.pop()
                if stack:
                    stack[-1] += spent
                self.add(f"component.{component}.ms", (spent - inner) * 1000)

        return wrapper

    def timed_context(self, component: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        """``timed`` for a method that returns a context manager: its entry and its
        exit (a transaction's first statements and its commit) are what is charged."""

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            return _TimedContext(fn(*args, **kwargs), self.timed(component, _call))

        return wrapper

    # the engine: statements and transactions, charged to the running node
    def attach(self, engine: Any) -> Callable[[], None]:
        # Statements are counted where SQLite runs them (its trace callback on every
        # pooled connection), not at SQLAlchemy's events: the ledger's append path
        # sends its statements on the driver's cursor, which those events never see.
        last: list[str] = [""]

        def statement(sql: str) -> None:
            # SQLite reports a statement again each time one of its triggers starts:
            # a repeat of the text just seen is that, not a new statement.
            if sql != last[0] and not sql.lstrip().startswith("--"):
                self.add(f"node.{self.node}.statements", 1)
            last[0] = sql

        def checkout(dbapi_connection: Any, *_: Any) -> None:
            if isinstance(dbapi_connection, sqlite3.Connection):
                dbapi_connection.set_trace_callback(statement)

        def checkin(dbapi_connection: Any, *_: Any) -> None:
            if isinstance(dbapi_connection, sqlite3.Connection):
                dbapi_connection.set_trace_callback(None)

        def commit(*_: Any) -> None:
            self.add(f"node.{self.node}.commits", 1)

        def rollback(*_: Any) -> None:
            self.add(f"node.{self.node}.rollbacks", 1)

        hooks = [("checkout", checkout), ("checkin", checkin), ("commit", commit),
                 ("rollback", rollback)]  # fmt: skip
        for name, hook in hooks:
            event.listen(engine, name, hook)

        def detach() -> None:
            for name, hook in hooks:
                event.remove(engine, name, hook)

        return detach

    def attach_saver(self, saver: Any) -> Callable[[], None]:
        for method in ("put", "put_writes", "get_tuple"):
            original = getattr(saver, method)
            timed = self.timed("checkpointer", original)

            def counted(*a: Any, __m: str = method, __f: Any = timed, **k: Any) -> Any:
                self.add(f"checkpointer.{__m}", 1)
                return __f(*a, **k)

            setattr(saver, method, counted)
        conn = _sqlite_connection(saver)
        if conn is not None:

            def trace(sql: str) -> None:
                self.add("checkpointer.statements", 1)
                if sql.lstrip().upper().startswith("COMMIT"):
                    self.add("checkpointer.commits", 1)

            conn.set_trace_callback(trace)

        def undo() -> None:
            for method in ("put", "put_writes", "get_tuple"):
                delattr(saver, method)
            if conn is not None:
                conn.set_trace_callback(None)

        return undo


def _call(fn: Callable[..., Any], *args: Any) -> Any:
    return fn(*args)


class _TimedContext:
    def __init__(self, inner: Any, timed_call: Callable[..., Any]) -> None:
        self._inner = inner
        self._call = timed_call

    def __enter__(self) -> Any:
        return self._call(self._inner.__enter__)

    def __exit__(self, *exc: Any) -> Any:
        return self._call(self._inner.__exit__, *exc)


@contextmanager
def instrumented(cp: ControlPlane) -> Generator[Probe, None, None]:
    probe = Probe()
    patched: list[tuple[type, str, Any]] = []
    for cls, name, component in _TIMED:
        original = cls.__dict__.get(name)
        if callable(original):
            patched.append((cls, name, original))
            setattr(cls, name, probe.timed(component, original))
    for cls, name, component in _TIMED_CONTEXTS:
        original = cls.__dict__.get(name)
        if callable(original):
            patched.append((cls, name, original))
            setattr(cls, name, probe.timed_context(component, original))
    detach = probe.attach(cp.engine)
    undo_saver = probe.attach_saver(cp.checkpointer)
    try:
        yield probe
    finally:
        undo_saver()
        detach()
        for cls, name, original in patched:
            setattr(cls, name, original)


def breakdown(graph: Any, cp: ControlPlane, runs: int, offset: int) -> dict[str, Any]:
    """One instrumented series: p50 per step of every figure the probe collects."""
    with instrumented(cp) as probe:
        for i in range(runs):
            probe.new_step()
            began = time.perf_counter()
            graph.invoke(
                {"task": f"audit {offset + i}"},
                {"configurable": {"thread_id": f"b{offset + i}"}, "callbacks": [probe]},
                durability=DURABILITY,
            )
            spent = (time.perf_counter() - began) * 1000
            in_nodes = sum(
                v for k, v in probe.step.items() if k.startswith("node.") and k.endswith(".ms")
            )
            probe.add("step.ms", spent)
            probe.add("outside_nodes.ms", spent - in_nodes)
    keys = sorted({k for step in probe.steps for k in step})

    def p50(key: str) -> float:
        return round(statistics.median(step.get(key, 0.0) for step in probe.steps), 2)

    nodes: dict[str, Any] = {}
    for node in [*NODES, "start", "outside"]:
        if not any(k.startswith(f"node.{node}.") for k in keys):
            continue
        commits, rollbacks = p50(f"node.{node}.commits"), p50(f"node.{node}.rollbacks")
        nodes[node] = {
            "ms_p50": p50(f"node.{node}.ms"),
            "statements": p50(f"node.{node}.statements"),
            "transactions": commits + rollbacks,
            "write_transactions": commits,
        }
    components = {k.split(".")[1]: p50(k) for k in keys if k.startswith("component.")}
    return {
        "runs": runs,
        "step_ms_p50": p50("step.ms"),
        "outside_nodes_ms_p50": p50("outside_nodes.ms"),
        "transactions_per_step": round(sum(v["transactions"] for v in nodes.values()), 2),
        "write_transactions_per_step": round(
            sum(v["write_transactions"] for v in nodes.values()), 2
        ),
        "statements_per_step": round(sum(v["statements"] for v in nodes.values()), 2),
        "nodes": nodes,
        "components_ms_p50": components,
        "checkpointer": {
            "puts": p50("checkpointer.put"),
            "put_writes": p50("checkpointer.put_writes"),
            "get_tuples": p50("checkpointer.get_tuple"),
            "statements": p50("checkpointer.statements"),
            "commits": p50("checkpointer.commits"),
        },
    }


def _sqlite_connection(saver: Any) -> sqlite3.Connection | None:
    """The sqlite3 connection under LangGraph's SQLite saver, directly or as the
    synchronous side of a saver that holds one."""
    for candidate in (saver, getattr(saver, "sync", None)):
        conn = getattr(candidate, "conn", None)
        if isinstance(conn, sqlite3.Connection):
            return conn
    return None


def _checkpointer_pragmas(cp: ControlPlane) -> dict[str, Any]:
    conn = _sqlite_connection(cp.checkpointer)
    if conn is None:
        return {}
    names = ("journal_mode", "synchronous")
    return {name: conn.execute(f"PRAGMA {name}").fetchone()[0] for name in names}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--claims", type=int, default=5)
    parser.add_argument("--nli", choices=("model", "standin"), default="model")
    args = parser.parse_args()
    model = TimedModel(Verifier.default() if args.nli == "model" else LexicalNLI())
    with (
        tempfile.TemporaryDirectory() as tmp,
        ControlPlane.open(f"sqlite:///{tmp}/bench.db", nli=model) as cp,
    ):
        cp.registry.register(
            TOOL,
            lambda a: f"Invoice line {a['line']}: senior associate, 2.5 h at EUR {a['rate']}/h.",
        )
        agent = make_agent(cp, args.claims)
        plain, fenced = baseline_graph(cp, agent), fence(agent, control_plane=cp, name="bench")
        measure(plain, fenced, 3, model, offset=10_000)  # warm-up: model load, compiles
        timed = measure(plain, fenced, args.runs, model)
        base, guarded = timed["baseline"], timed["fenced"]
        assert guarded["samples_ms"], "no samples"
        where = {
            "fenced": breakdown(fenced, cp, args.runs, 200_000),
            "baseline": breakdown(plain, cp, args.runs, 300_000),
            "checkpointer_pragmas": _checkpointer_pragmas(cp),
        }
        shape = measure_shape(cp, args.runs)
    overhead = guarded["median_ms"] - base["median_ms"]
    write_result(
        "graph_overhead",
        {
            "runs": args.runs,
            "claims_per_step": args.claims,
            "engine": "sqlite",
            "durability": DURABILITY,
            "model": model.model_id,
            "baseline": {k: v for k, v in base.items() if not k.startswith("model")},
            "fenced": guarded,
            "overhead_median_ms": round(overhead, 1),
            "overhead_without_model_median_ms": round(overhead - guarded["model_median_ms"], 1),
            "overhead_without_model_paired_median_ms": round(
                statistics.median(timed["paired_overhead_without_model_ms"]), 1
            ),
            "overhead_without_model_paired_cpu_median_ms": round(
                statistics.median(timed["paired_cpu_overhead_without_model_ms"]), 1
            ),
            "breakdown": where,
            "langgraph_shape": shape,
        },
    )


if __name__ == "__main__":
    main()
