"""Tool bus throughput: validated calls per second for a small schema, and the cost
the bus adds to each call over calling the handler directly.

Three measurements on the same handler and arguments:

* ``direct``      the handler called as a function;
* ``validate``    ``argument_errors`` + ``output_errors`` only (no database);
* ``bus``         ``cp.bus.call`` end to end: validation, the ``tool_call`` and
                  ``tool_output`` ledger appends, the call and result rows. With
                  the default 30 s timeout the handler runs on a daemon thread;
                  ``bus_no_timeout`` runs it inline (``timeout_s=None``).

Run: ``python benchmarks/tool_bus.py [--calls N] [--db URL]`` (default: a fresh
SQLite file in a temporary directory; pass a PostgreSQL URL to measure that).
Prints JSON and writes benchmarks/results/tool_bus.json.
"""

from __future__ import annotations

import argparse
import json
import platform
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from assay import ControlPlane
from assay.tool_bus import ToolSpec, argument_errors, output_errors

SPEC = ToolSpec(
    "add",
    "1.0.0",
    "Add two integers.",
    {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
    {"type": "integer"},
    "read_only",
)
RESULTS = Path(__file__).parent / "results" / "tool_bus.json"


def _add(args: dict[str, Any]) -> int:
    return args["a"] + args["b"]


def _rate(n: int, step: Callable[[int], object]) -> float:
    started = time.perf_counter()
    for i in range(n):
        step(i)
    return (time.perf_counter() - started) / n


def measure(url: str, calls: int) -> dict[str, Any]:
    args = {"a": 2, "b": 3}
    direct = _rate(calls * 20, lambda i: _add(args))
    validate = _rate(calls * 5, lambda i: (argument_errors(SPEC, args), output_errors(SPEC, 5)))
    with ControlPlane.open(url) as cp:
        cp.registry.register(SPEC, _add)
        run = cp.ledger.start_run()
        cp.bus.call(run, "add", args)  # warm caches and connections
        bus = _rate(calls, lambda i: cp.bus.call(run, "add", {"a": i, "b": 3}))
        cp.bus.timeout_s = None
        inline = _rate(calls, lambda i: cp.bus.call(run, "add", {"a": i, "b": -3}))
        engine = cp.engine.dialect.name
    return {
        "engine": engine,
        "calls": calls,
        "direct_us_per_call": round(direct * 1e6, 3),
        "validate_only_calls_per_s": round(1 / validate),
        "validate_only_us_per_call": round(validate * 1e6, 1),
        "bus_calls_per_s": round(1 / bus),
        "bus_overhead_ms_per_call": round((bus - direct) * 1e3, 3),
        "bus_no_timeout_calls_per_s": round(1 / inline),
        "bus_no_timeout_overhead_ms_per_call": round((inline - direct) * 1e3, 3),
        "python": platform.python_version(),
        "machine": platform.machine(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description="Tool bus throughput.")
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--db", default=None, help="database URL (default: temp SQLite)")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url = options.db or f"sqlite:///{Path(tmp) / 'bench.db'}"
        figures = measure(url, options.calls)
    text = json.dumps(figures, indent=2)
    print(text)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(text + "\n")


if __name__ == "__main__":
    main()
