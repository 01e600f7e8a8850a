"""Identifier extraction and matching on hostile text: seconds per call as input grows.

    python benchmarks/pathological_inputs.py [--sizes 10,20,40,80,160] [--budget 30]

Every family below is text an agent, a tool or a web page can hand the gate: digit
groups with each thousands separator, long hex runs, long and deep paths, runs of
``#`` and ``@``, many short tickets, and long runs of invisible format characters.
For each family and size (KB) it times :func:`extract_identifiers` on the text,
:func:`identifier_in_evidence` with the text as evidence, and the reply guard with
the text as both the reply and the one tool result. Time that grows with the square
of the size shows up as a ratio of about 16 between 40 and 160 KB; linear work
shows about 4. A family whose call takes longer than ``--budget`` seconds is not
run at the larger sizes (recorded as ``null``).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from assay.gate import extract_identifiers, identifier_in_evidence
from assay.gate._reply import reply_report
from benchmarks._common import write_result


def _repeat(unit: str, size: int, head: str = "", tail: str = "") -> str:
    return head + unit * max(1, (size - len(head) - len(tail)) // len(unit)) + tail


FAMILIES: dict[str, Callable[[int], str]] = {
    "digits_comma": lambda n: _repeat(",111", n, head="1", tail=" items"),
    "digits_dot": lambda n: _repeat(".111", n, head="1", tail=" items"),
    "digits_space": lambda n: _repeat(" 111", n, head="1", tail=" items"),
    "digits_apostrophe": lambda n: _repeat("'111", n, head="1", tail=" items"),
    "hex_run": lambda n: _repeat("3f9a2c1b7e4d", n, tail="z"),
    "hex_tokens": lambda n: _repeat("commit ab12cd3 ", n),
    "long_path": lambda n: _repeat("segment/", n, head="/srv/", tail="x"),
    "deep_slashes": lambda n: _repeat("a/", n),
    "hash_signs": lambda n: _repeat("#", n, tail="1"),
    "many_tickets": lambda n: _repeat("#1 INV-7 ", n),
    "at_signs": lambda n: _repeat("a@", n),
    "format_chars": lambda n: _repeat("\u200d", n, head="INV-4421"),
    "format_in_digits": lambda n: _repeat("1\u200b", n, head="EUR "),
}

OPERATIONS: dict[str, Callable[[str], object]] = {
    "extract_identifiers": extract_identifiers,
    "identifier_in_evidence": lambda text: identifier_in_evidence("EUR 875.00", text),
    "reply_report": lambda text: reply_report(text, tool_results=[text]),
}


def _seconds(operation: Callable[[str], object], text: str) -> float:
    start = time.perf_counter()
    operation(text)
    return time.perf_counter() - start


def measure(sizes: list[int], budget: float) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for family, make in FAMILIES.items():
        results[family] = {}
        for op_name, operation in OPERATIONS.items():
            row: dict[str, float | None] = {}
            over = False
            for kb in sizes:
                if over:
                    row[str(kb)] = None
                    continue
                # A fresh text each time, so no cached result of an earlier call is used.
                text = make(kb * 1024) + f" run {family} {op_name} {kb}"
                seconds = _seconds(operation, text)
                row[str(kb)] = round(seconds, 4)
                over = seconds > budget
            results[family][op_name] = row
            print(f"{family:18} {op_name:22} {row}", file=sys.stderr)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="10,20,40,80,160")
    parser.add_argument("--budget", type=float, default=30.0)
    parser.add_argument("--name", default="pathological_inputs")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    payload = {
        "unit": "seconds per call",
        "sizes_kb": sizes,
        "budget_s": args.budget,
        "families": measure(sizes, args.budget),
    }
    path = write_result(args.name, payload)
    print(f"wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
