"""How long an ``assay`` command takes from start to exit, and ``import assay``.

Each command runs in a fresh subprocess (what a person at a terminal waits for:
interpreter start, imports, the work, exit) through the console script's entry point
(``assay.cli:main``), ``--rounds`` times after one warm-up run; the JSON holds the
median and the fastest of each, which heavy modules the command loaded (torch,
transformers, LangGraph, Alembic), and the machine's load average while it ran (the
figures are wall times). ``runs`` and ``ledger verify`` run on a SQLite database
holding one run of a fenced graph, made (and migrated) first.

    python -m benchmarks.cli_startup [--rounds 7]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks._common import write_result

HEAVY = ("torch", "transformers", "langgraph", "langchain_core", "alembic")
#: The command's arguments, and the time it should stay under.
COMMANDS: dict[str, tuple[tuple[str, ...], float]] = {
    "assay --version": (("--version",), 0.3),
    "assay --help": (("--help",), 0.3),
    "assay runs": (("runs",), 1.0),
    "assay ledger verify": (("ledger", "verify"), 1.0),
}

#: Runs the command line in-process after noting the time, then prints what it loaded.
_RUNNER = """
import sys, json
sys.argv[0] = "assay"
from assay.cli import main
try:
    main()
except SystemExit:
    pass
heavy = {heavy!r}
print("\\n" + json.dumps(sorted(h for h in heavy if h in sys.modules)), file=sys.stderr)
"""

_SEED = """
from assay import ControlPlane
from assay.fence import fence
from assay.verifier import LexicalNLI

with ControlPlane.open({url!r}, nli=LexicalNLI()) as cp:
    graph = fence(lambda state: {{"handover": {{"run_id": state["run_id"],
        "from_agent": "bench", "status": "ok"}}}}, control_plane=cp, name="bench")
    cp.run(graph, {{"task": "Nothing to do."}})
"""


def _timed(argv: list[str]) -> tuple[float, list[str]]:
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=120)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{argv} exited {done.returncode}: {done.stderr[-2000:]}")
    last = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "[]"
    return elapsed, json.loads(last) if last.startswith("[") else []


def _measure(argv: list[str], rounds: int) -> dict[str, Any]:
    _timed(argv)  # warm the file cache
    times: list[float] = []
    loaded: list[str] = []
    for _ in range(rounds):
        elapsed, loaded = _timed(argv)
        times.append(elapsed)
    return {
        "median_s": round(statistics.median(times), 3),
        "min_s": round(min(times), 3),
        "rounds": rounds,
        "heavy_modules_loaded": loaded,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    rounds = parser.parse_args().rounds
    python = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'bench.db'}"
        subprocess.run([python, "-c", _SEED.format(url=url)], check=True, timeout=300)
        runner = _RUNNER.format(heavy=HEAVY)
        commands: dict[str, Any] = {}
        for name, (args, target) in COMMANDS.items():
            db = ("--db", url) if args[0] in ("runs", "ledger") else ()
            found = _measure([python, "-c", runner, *args, *db], rounds)
            commands[name] = {**found, "target_s": target, "met": found["median_s"] < target}
        probe = "import assay, sys, json; print(json.dumps(sorted(h for h in "
        probe += f"{HEAVY!r} if h in sys.modules)), file=sys.stderr)"
        imported = _measure([python, "-c", probe], rounds)
        bare = _measure([python, "-c", "pass"], rounds)
    write_result(
        "cli_startup",
        {
            "rounds": rounds,
            "load_average_1m": round(os.getloadavg()[0], 2),
            "commands": commands,
            "import_assay": imported,
            "python_bare": bare,
        },
    )


if __name__ == "__main__":
    main()
