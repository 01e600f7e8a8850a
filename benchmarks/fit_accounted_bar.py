"""Choose the accounted bar on the tuning half of the agent-grounding set.

Why: a proposition one record accounts for slot by slot (every value, identifier
and name) is entailed unless the model reads a contradiction there with a
probability at or above the bar (``assay.verifier._pipeline.ACCOUNTED_BAR``). On
such propositions the small model's contradiction is weak evidence: it reads one
for honest and false ones alike, and the conflict checks that run before it are
what refuse the false ones. The bar is therefore the *highest* one at which the
fence still refuses at least ``--refusal-floor`` of the unsupported claims of the
*tuning* half (the floor of ``fit_agent_threshold.py``), judged on the held-out
half, which it never saw.

Reads a result of ``benchmarks/agent_grounding.py`` (each item's first verdict,
with ``accounted``: the record and the model's doubt, where the doubt kept it out)
and writes ``results/accounted_bar.json``:

    python benchmarks/agent_grounding.py --accounted-bar 0.4 --out agent_grounding_bar_fit
    python benchmarks/fit_accounted_bar.py --result benchmarks/results/agent_grounding_bar_fit.json

The figures here are read off first verdicts (an item kept out by its doubt counts
as answered below a bar above that doubt); re-run ``agent_grounding.py`` after
setting the bar for the fence's own.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import RESULTS, write_result
from benchmarks.agent_grounding import tuning_domains
from benchmarks.fit_agent_threshold import REFUSAL_FLOOR, answer_rates


def answered(outcome: Mapping[str, Any], bar: float | None) -> bool:
    """Whether the item is answered with the accounted bar at ``bar`` (``None``: as
    it was run)."""
    if outcome["answered"]:
        return True
    accounted = outcome.get("accounted")
    return bar is not None and accounted is not None and float(accounted["doubt"]) < bar


def rates(outcomes: Sequence[Mapping[str, Any]], bar: float | None) -> dict[str, float]:
    return answer_rates(outcomes, lambda o: answered(o, bar))


def fit(outcomes: Sequence[Mapping[str, Any]], floor: float, run_bar: float) -> dict[str, Any]:
    tuning = tuning_domains(outcomes)
    tune = [o for o in outcomes if o["domain"] in tuning]
    held = [o for o in outcomes if o["domain"] not in tuning]
    doubts = sorted(
        {float(o["accounted"]["doubt"]) for o in tune if o.get("accounted")} | {run_bar}
    )
    # The highest bar (just above an observed doubt) that keeps the floor.
    chosen = run_bar
    for doubt in doubts:
        bar = round(min(doubt + 0.0001, 1.0), 4) if doubt > run_bar else run_bar
        if rates(tune, bar)["unsupported_refused"] >= floor:
            chosen = max(chosen, bar)
    return {
        "refusal_floor": floor,
        "run_with_bar": run_bar,
        "bar": chosen,
        "tuning": {"domains": sorted(tuning), **rates(tune, chosen)},
        "held_out": {"domains": sorted({str(o["domain"]) for o in held}), **rates(held, chosen)},
        "all": rates(outcomes, chosen),
        "as_run": rates(outcomes, None),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--result", type=Path, default=RESULTS / "agent_grounding.json")
    parser.add_argument("--refusal-floor", type=float, default=REFUSAL_FLOOR)
    args = parser.parse_args(argv)
    if not args.result.is_file():
        print(f"no result at {args.result}; run benchmarks/agent_grounding.py", file=sys.stderr)
        return 2
    result = json.loads(args.result.read_text(encoding="utf-8"))
    outcomes = result["outcomes"]
    if "accounted_bar" not in result or not any("accounted" in o for o in outcomes):
        print(f"{args.result} has no accounted doubts; re-run agent_grounding.py", file=sys.stderr)
        return 2
    payload = {"result": args.result.name, "nli": result.get("nli")}
    fitted = fit(outcomes, args.refusal_floor, float(result["accounted_bar"]))
    write_result("accounted_bar", payload | fitted)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
