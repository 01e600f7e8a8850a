"""Identifier extraction and matching on hostile text: seconds per call as input grows.

    python benchmarks/pathological_inputs.py [--sizes 10,20,40,80,160] [--budget 30]

Every family below is text an agent, a tool or a web page can hand the gate: digit
groups with each thousands separator, long hex runs, long and deep paths, runs of
``#`` and ``@``, many short tickets, and long runs of invisible format characters.
For each family and size (KB) it times :func:`extract_identifiers` on the text,
:func:`identifier_in_evidence` with the text as evidence, and the reply guard with
the text as both the reply and the one tool result. The verifier's reading of a
large table is timed the same way (``tables``): a CSV, a JSON array of records and
a Markdown table, each with one proposition that names a row in the middle, through
the row check (:func:`row_mismatch`, the table read once and cached) and the
reading the model is handed (:func:`read`, each row written out with its column
names, or a bounded selection of rows), and, with a JSON array whose records carry
a true/false field, an outcome and names, the flag, outcome and role checks on that
reading (``record_checks``, the reading included). Time that grows with the square
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
from assay.verifier._fields import wrong_field, wrong_party
from assay.verifier._flags import flag_conflict, flag_support, state_conflict
from assay.verifier._premises import read
from assay.verifier._rows import row_mismatch
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


def _csv(size: int) -> str:
    rows = [f"ST-{i:05d},{i % 97},{i * 3 % 1000}.25" for i in range(max(3, size // 20))]
    return "store,orders,revenue_eur\n" + "\n".join(rows)


def _json_records(size: int) -> str:
    rows = [
        f'{{"store": "ST-{i:05d}", "orders": {i % 97}, "revenue_eur": {i * 3 % 1000}.25}}'
        for i in range(max(3, size // 55))
    ]
    return "[" + ", ".join(rows) + "]"


def _json_flags(size: int) -> str:
    """JSON records with a true/false field, an outcome field and two name fields:
    what the flag, outcome and role checks read."""
    rows = [
        f'{{"store": "ST-{i:05d}", "active": {"true" if i % 2 else "false"}, '
        f'"status": "{"approved" if i % 3 else "rejected"}", "owner": "mgr{i % 89}", '
        f'"auditor": "aud{i % 13}"}}'
        for i in range(max(3, size // 100))
    ]
    return "[" + ", ".join(rows) + "]"


def _markdown(size: int) -> str:
    rows = [f"| ST-{i:05d} | {i % 97} | {i * 3 % 1000}.25 |" for i in range(max(3, size // 24))]
    return "| store | orders | revenue_eur |\n|---|---|---|\n" + "\n".join(rows)


def _middle_claim(text: str) -> str:
    """A proposition about the row in the middle, with the orders of another row."""
    rows = text.count("ST-")
    return f"Store ST-{rows // 2:05d} had {(rows // 2 + 1) % 97} orders."


def _record_checks(text: str) -> object:
    """The flag, outcome and role checks on what the verifier reads of ``text`` for
    two propositions about the row in the middle: one that states a flag and an
    outcome the other way, one that gives a name another field's role."""
    rows = text.count("ST-")
    middle = f"ST-{rows // 2:05d}"
    found = []
    for claim in (
        f"Store {middle} is inactive and was rejected.",
        f"Store {middle} was audited by mgr{rows // 2 % 89}.",
    ):
        reading = read(text, claim).text
        found += [
            flag_conflict(reading, claim),
            flag_support(reading, claim),
            state_conflict(reading, claim),
            wrong_field(reading, claim),
            wrong_party(reading, claim),
        ]
    return found


#: Tables the verifier reads for a proposition that names one of their rows.
TABLE_FAMILIES: dict[str, Callable[[int], str]] = {
    "csv_rows": _csv,
    "json_records": _json_records,
    "json_flags": _json_flags,
    "markdown_rows": _markdown,
}

TABLE_OPERATIONS: dict[str, Callable[[str], object]] = {
    "row_check": lambda text: row_mismatch(text, _middle_claim(text), []),
    "verifier_reading": lambda text: read(text, _middle_claim(text)),
    "record_checks": _record_checks,
}


def _seconds(operation: Callable[[str], object], text: str) -> float:
    start = time.perf_counter()
    operation(text)
    return time.perf_counter() - start


def _fresh(text: str, tag: str) -> str:
    """``text`` made unique by ``tag``: inside a JSON array as one more record, so
    that the array stays JSON; elsewhere after the text."""
    if text.endswith("]"):
        return text[:-1] + f', {{"note": "{tag}"}}]'
    return f"{text} {tag}"


def measure(
    sizes: list[int],
    budget: float,
    families: dict[str, Callable[[int], str]] = FAMILIES,
    operations: dict[str, Callable[[str], object]] = OPERATIONS,
) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for family, make in families.items():
        results[family] = {}
        for op_name, operation in operations.items():
            operation(make(1024))  # warm-up: imports and caches outside the timing
            row: dict[str, float | None] = {}
            over = False
            for kb in sizes:
                if over:
                    row[str(kb)] = None
                    continue
                # A fresh text each time, so no cached result of an earlier call is used.
                text = _fresh(make(kb * 1024), f"run {family} {op_name} {kb}")
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
        "tables": measure(sizes, args.budget, TABLE_FAMILIES, TABLE_OPERATIONS),
    }
    path = write_result(args.name, payload)
    print(f"wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
