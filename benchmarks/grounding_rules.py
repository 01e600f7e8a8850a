"""The deterministic value rules alone on the agent-grounding set: no gate, no model.

For each item, every number, quantity, date and time of the claim is checked
against the item's evidence (a JSON content as ``json.dumps`` of it, read through
its view; a text content as it is) by :func:`assay.grounding.check_values`: stated
in another written form, or a checked computation the claim says it is.

Reported per phenomenon: for supported items, how many have every value accounted
for; for unsupported items of the numeric phenomena (``number_swap``,
``unit_error``, ``date_error``, ``bad_arithmetic``, ``bad_count``), how many are
caught (some value not accounted for, or a miscalculation). Other unsupported
phenomena are listed too, for what the rules catch there by the way; and the
supported items with a value not accounted for are listed with the value, for
error analysis.

    python benchmarks/grounding_rules.py [--data PATH] [--out NAME]

The data set is a development set, so its figures are development figures.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from assay.grounding import check_values
from benchmarks._common import write_result

DEFAULT_DATA = (
    Path(__file__).resolve().parents[2]
    / "shared"
    / "data"
    / "agent-grounding-dev"
    / "agent_grounding_dev.jsonl"
)
NUMERIC = ("number_swap", "unit_error", "date_error", "bad_arithmetic", "bad_count")


def evidence_texts(item: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for entry in item["evidence"]:
        content = entry["content"]
        out.append(content if isinstance(content, str) else json.dumps(content))
    return out


def run(path: Path) -> dict[str, Any]:
    items = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    supported: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    caught: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    misses: list[dict[str, Any]] = []
    values = computed = 0
    started = time.perf_counter()
    for item in items:
        checks = check_values(item["claim"], evidence_texts(item))
        values += len(checks)
        computed += sum(1 for c in checks if c.status == "computed")
        ok = all(c.ok for c in checks)
        tally = supported if item["label"] == "supported" else caught
        tally[item["phenomenon"]][1] += 1
        if item["label"] == "supported":
            supported[item["phenomenon"]][0] += int(ok)
            if not ok:
                misses.append(
                    {
                        "id": item["id"],
                        "phenomenon": item["phenomenon"],
                        "unaccounted": [c.value.text for c in checks if not c.ok],
                    }
                )
        else:
            caught[item["phenomenon"]][0] += int(not ok)
    seconds = time.perf_counter() - started
    numeric = [caught[p] for p in NUMERIC]
    return {
        "data": path.name,
        "items": len(items),
        "claim_values": values,
        "computed_values": computed,
        "seconds": round(seconds, 2),
        "supported_all_values_accounted": {
            "total": _share(
                sum(v[0] for v in supported.values()), sum(v[1] for v in supported.values())
            ),
            "by_phenomenon": {k: _share(*v) for k, v in sorted(supported.items())},
        },
        "unsupported_caught": {
            "numeric_total": _share(sum(v[0] for v in numeric), sum(v[1] for v in numeric)),
            "numeric": {p: _share(*caught[p]) for p in NUMERIC},
            "other": {k: _share(*v) for k, v in sorted(caught.items()) if k not in NUMERIC},
        },
        "supported_with_values_unaccounted": misses,
    }


def _share(hit: int, total: int) -> dict[str, Any]:
    return {"hit": hit, "of": total, "share": round(hit / total, 3) if total else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--out", default="grounding_rules", help="result name under results/")
    args = parser.parse_args()
    write_result(args.out, run(args.data))


if __name__ == "__main__":
    main()
