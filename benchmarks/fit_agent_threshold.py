"""Choose the verifier's decision threshold for agent evidence on the tuning half.

Why: ``assay verifier calibrate`` fits the score and a threshold on BEGIN, WiCE and
SummEdits, whose claims and base rates are not those of an agent citing tool
outputs; the same rule gives a different operating point on agent evidence for
each model. The fence's two failure modes are not equal (a false claim let through
costs more than an honest one refused), so the threshold is the lowest one at
which the fence refuses at least ``--refusal-floor`` of the unsupported claims of
the agent-grounding set's *tuning* half (domains 1, 3, 5 … in alphabetical order),
and it is judged on the *held-out* half, which it never saw.

Reads a result of ``benchmarks/agent_grounding.py`` (its per-item first scores; a
claim the gate or a contradiction settled is refused whatever the threshold), and
writes ``results/agent_threshold.json``:

    python benchmarks/fit_agent_threshold.py [--result PATH] [--refusal-floor 0.848]

The chosen threshold goes into the model's ``calibration.json`` by hand, with the
rule beside it; re-run ``agent_grounding.py`` afterwards for the figures of the
fence itself (this script's are read off first scores, not re-run).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import RESULTS, write_result
from benchmarks.agent_grounding import tuning_domains

#: First verdicts that refuse a claim whatever its score.
_SETTLED = frozenset({"gate", "contradiction", "missing_evidence"})


def answered(outcome: Mapping[str, Any], threshold: float) -> bool:
    return outcome["verdict"] not in _SETTLED and float(outcome["score"]) >= threshold


#: The share of the tuning half's unsupported claims the fence must refuse.
REFUSAL_FLOOR = 0.848


def answer_rates(
    outcomes: Sequence[Mapping[str, Any]], answered: Callable[[Mapping[str, Any]], bool]
) -> dict[str, float]:
    """The share of supported claims answered and of unsupported ones refused, where
    ``answered`` says whether one item is answered."""
    supported = [o for o in outcomes if o["label"] == "supported"]
    unsupported = [o for o in outcomes if o["label"] != "supported"]
    return {
        "supported_answered": round(sum(map(answered, supported)) / len(supported), 4),
        "unsupported_refused": round(
            sum(not answered(o) for o in unsupported) / len(unsupported), 4
        ),
    }


def rates(outcomes: Sequence[Mapping[str, Any]], threshold: float) -> dict[str, float]:
    return answer_rates(outcomes, lambda o: answered(o, threshold))


def fit(outcomes: Sequence[Mapping[str, Any]], floor: float) -> dict[str, Any]:
    domains = {str(o["domain"]) for o in outcomes}
    tuning = tuning_domains(outcomes)
    tune = [o for o in outcomes if o["domain"] in tuning]
    held = [o for o in outcomes if o["domain"] not in tuning]
    candidates = sorted({float(o["score"]) for o in tune} | {1.0})
    # The lowest score threshold (midway between observed scores) meeting the floor.
    chosen = 1.0
    for low, high in zip([0.0, *candidates], candidates, strict=False):
        threshold = round((low + high) / 2, 4)
        if rates(tune, threshold)["unsupported_refused"] >= floor:
            chosen = threshold
            break
    return {
        "refusal_floor": floor,
        "threshold": chosen,
        "tuning": {"domains": sorted(tuning), **rates(tune, chosen)},
        "held_out": {"domains": sorted(domains - tuning), **rates(held, chosen)},
        "all": rates(outcomes, chosen),
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
    payload = {"result": args.result.name, "nli": result.get("nli")}
    write_result("agent_threshold", payload | fit(result["outcomes"], args.refusal_floor))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
