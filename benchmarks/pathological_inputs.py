"""Identifier extraction, matching and the verifier's checks on hostile text: seconds
per call as input grows.

    python benchmarks/pathological_inputs.py [--sizes 10,20,40,80,160] [--budget 30]
        [--checks-only] [--handover N]

(``--checks-only`` times the verifier's checks alone and keeps the other sections of
the results file as they are.)

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

Each of the verifier's deterministic checks (``checks``) is timed on hostile claims
and evidence (:data:`CHECK_FAMILIES`: repeated numbers, negations, clause chains,
party names, dates and words of plan, states, runs of capitals, blanks and opening
quotes)
at 4,000 and 16,000 characters, once with the claim growing against 400 characters
of evidence and once with the evidence growing against a 400-character claim; the
``growth`` of each check, family and side is the ratio of the two times (linear: 4;
quadratic: 16). ``--handover N`` also times :meth:`LedgerVerifier.verify` (with the
lexical stand-in for the model) on a hand-over of ``N`` propositions of the longest
length a proposition may have, each of the family that costs most per proposition,
against one evidence entry of 4,000 characters of that family: the cost of the
checks for the largest hand-over the gate takes, with ``N`` at most what fits in
its byte limit (``handover.max_propositions``).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from assay._limits import MAX_HANDOVER_BYTES, MAX_PROPOSITION_CHARS
from assay.gate._reply import reply_report
from assay.grounding import check_values, extract_identifiers, identifier_in_evidence
from assay.verifier._antonyms import action_conflict, in_evidence_words
from assay.verifier._deterministic import (
    deterministic_gaps,
    in_evidence_terms,
    states_another_value,
)
from assay.verifier._direction import direction_conflict
from assay.verifier._expected import expected_as_done
from assay.verifier._fields import wrong_field, wrong_party
from assay.verifier._flags import flag_conflict, flag_support, state_conflict
from assay.verifier._polarity import negated, opposite_polarity, polarity_conflict
from assay.verifier._premises import read
from assay.verifier._rows import row_mismatch
from assay.verifier._states import codes, contradicting, state_lines
from assay.verifier._text import split_claim, split_clauses
from benchmarks._common import RESULTS, write_result


def _repeat(unit: str, size: int, head: str = "", tail: str = "") -> str:
    return head + unit * max(1, (size - len(head) - len(tail)) // len(unit)) + tail


FAMILIES: dict[str, Callable[[int], str]] = {
    "digits_comma": lambda n: _repeat(",111", n, head="1", tail=" items"),
    "digits_dot": lambda n: _repeat(".111", n, head="1", tail=" items"),
    "digits_space": lambda n: _repeat(" 111", n, head="1", tail=" items"),
    "digits_apostrophe": lambda n: _repeat("'111", n, head="1", tail=" items"),
    "digits_nbsp": lambda n: _repeat("\u00a0111", n, head="1", tail=" items"),
    "hex_run": lambda n: _repeat("3f9a2c1b7e4d", n, tail="z"),
    "hex_tokens": lambda n: _repeat("commit ab12cd3 ", n),
    "long_path": lambda n: _repeat("segment/", n, head="/srv/", tail="x"),
    "deep_slashes": lambda n: _repeat("a/", n),
    "slashes_only": lambda n: _repeat("/", n),
    "hash_signs": lambda n: _repeat("#", n, tail="1"),
    "many_tickets": lambda n: _repeat("#1 INV-7 ", n),
    "colour_tickets": lambda n: _repeat("fill #1 ", n),
    "at_signs": lambda n: _repeat("a@", n),
    "plus_signs": lambda n: _repeat("a+", n),
    "dotted_words": lambda n: _repeat("a.", n),
    "format_chars": lambda n: _repeat("\u200d", n, head="INV-4421"),
    "format_in_digits": lambda n: _repeat("1\u200b", n, head="EUR "),
    "cyrillic_words": lambda n: _repeat("\u0406NV-1 ", n),
    "bidi_controls": lambda n: _repeat("\u202e1\u202c", n),
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
    """The flag, outcome, state and role checks on what the verifier reads of ``text`` for
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
            contradicting(list(state_lines(reading)), claim, [middle]),
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


# --- the verifier's checks ------------------------------------------------------------

#: The two lengths (characters) each check is timed at: 4x apart.
CHECK_SIZES = (4_000, 16_000)
#: The length of the side that does not grow.
FIXED_CHARS = 400


def _filled(unit: Callable[[int], str], size: int, head: str = "", tail: str = "") -> str:
    """``head``, then ``unit(0)``, ``unit(1)``… while they fit in ``size``, then ``tail``."""
    parts, used, i = [head], len(head) + len(tail), 0
    while i == 0 or used + len(unit(i)) <= size:
        parts.append(unit(i))
        used += len(unit(i))
        i += 1
    return "".join(parts) + tail


def _same(unit: str, head: str = "", tail: str = "") -> Callable[[int], str]:
    return lambda size: _filled(lambda _: unit, size, head, tail)


def _numbered(unit: str) -> Callable[[int], str]:
    """``unit`` with ``{i}`` the item's number and ``{n}`` a name made of it (``AB``)."""

    def name(i: int) -> str:
        return chr(65 + i // 26 % 26) + chr(65 + i % 26)

    return lambda size: _filled(lambda i: unit.format(i=i, n=name(i)), size)


#: Hostile evidence and claims for the verifier's checks: two makers per family,
#: of the evidence and of the claim, each giving a text of about the length asked.
CHECK_FAMILIES: dict[str, tuple[Callable[[int], str], Callable[[int], str]]] = {
    "numbers_1,2": (_same("1,2 "), _same("1,2 ")),
    "amounts_total": (
        _numbered("line {i}: EUR 1,2{i}.00\n"),
        _same("a total of EUR 7,777.77 and "),
    ),
    "not_not": (_same("not ", "The invoice was ", "paid."), _same("not ", "It was ", "paid.")),
    "clause_chain": (_same("the fee rose, and "), _same("the fee fell, and ")),
    "party_names": (
        _numbered("Kestrel{n} Joinery Ltd (borrower) and Bright{n} Union (lender), "),
        _numbered("Kestrel{n} Joinery is the lender, "),
    ),
    "dates_due": (_same("due 2025-01-31, "), _same("was replaced on 31 January 2025 and ")),
    "offset_dates": (
        _same("30 days from 2024-11-18, "),
        _same("paid 30 days from 2024-11-18 and "),
    ),
    "expected_words": (_same("expected due scheduled ETA "), _same("was replaced expected due ")),
    "direction": (_same("fell from 12.0% to 11.2%, "), _same("rose to 11.2%, ")),
    "from_to": (
        _same("moves from 14 July to 21 July "),
        _same("moved earlier from 21 July to 14 July "),
    ),
    "sentences": (_same("The invoice was paid. "), _same("The invoice was paid. ")),
    "names": (_numbered("Alice{n} Brown met Carol. "), _numbered("and Alice{n} Brown met Dave ")),
    "bounds": (_same("no more than 6 credits, "), _same("more than 6 credits, ")),
    "json_lines": (
        _numbered("owner{i}: Dana Ruiz\nreviewer{i}: Dev Malhotra\n"),
        _same("reviewed by Dana Ruiz, "),
    ),
    "prefixed": (_same("unpaid inactive non-refundable "), _same("paid active refundable ")),
    "states": (_numbered("job J-{i} status=queued\n"), _same("all jobs completed, none failed, ")),
    "capitals": (_same("A", tail=" x (lender)"), _same("A", tail=" x")),
    "blanks": (_same(" ", "EUR 5", " more than 6 (lender)"), _same(" ", "5", " more than 6")),
    "open_quotes": (_same("\u201cabc "), _same("\u201cabc ")),
}


def _clauses(evidence: str, claim: str) -> object:
    return [split_clauses(sentence) for sentence in split_claim(claim)]


#: The verifier's deterministic checks, each as ``check(evidence, claim)``.
CHECKS: dict[str, Callable[[str, str], object]] = {
    "check_values": lambda e, c: check_values(c, [e]),
    "deterministic_gaps": lambda e, c: deterministic_gaps(c, [e]),
    "in_evidence_terms": lambda e, c: in_evidence_terms(c, [e]),
    "states_another_value": states_another_value,
    "row_mismatch": lambda e, c: row_mismatch(e, c, []),
    "wrong_field": wrong_field,
    "wrong_party": wrong_party,
    "flag_conflict": flag_conflict,
    "flag_support": flag_support,
    "state_conflict": state_conflict,
    "state_mismatch": lambda e, c: contradicting(list(state_lines(e)), c, codes(c)),
    "polarity_conflict": lambda e, c: polarity_conflict(e, c),
    "polarity_conflict_clause": lambda e, c: polarity_conflict(e, c, shared_negation=True),
    "opposite_polarity": lambda e, c: opposite_polarity(c, e),
    "negated": lambda e, c: negated(c, other=e),
    "direction_conflict": direction_conflict,
    "action_conflict": action_conflict,
    "expected_as_done": expected_as_done,
    "in_evidence_words": lambda e, c: in_evidence_words(c, [e]),
    "split_clauses": _clauses,
}


def _check_inputs(family: str, side: str, size: int, tag: str) -> tuple[str, str]:
    """Evidence and claim of ``family``, the ``side`` one ``size`` characters long,
    the other :data:`FIXED_CHARS`; each made unique by ``tag`` (no cache answers)."""
    evidence, claim = CHECK_FAMILIES[family]
    e = evidence(size if side == "evidence" else FIXED_CHARS)
    c = claim(size if side == "claim" else FIXED_CHARS)
    return f"{e} {tag}", f"{c} {tag}"


#: Numbers each call's texts (no two calls read the same texts: no cache answers).
_RUNS = itertools.count()


def _best_of(check: Callable[[str, str], object], family: str, side: str, size: int) -> float:
    """The least time of a few calls (more for a fast one, whose time is noisy), each
    on texts of its own."""
    best, spent, run = float("inf"), 0.0, 0
    while run < 5 or (spent < 0.2 and run < 30):
        evidence, claim = _check_inputs(family, side, size, f"run {next(_RUNS)}")
        start = time.perf_counter()
        check(evidence, claim)
        seconds = time.perf_counter() - start
        best, spent, run = min(best, seconds), spent + seconds, run + 1
        if seconds > 2:
            break
    return best


def _growing(
    check: Callable[[str, str], object],
    family: str,
    side: str,
    sizes: tuple[int, int],
    budget: float,
) -> dict[str, float | None]:
    """``check`` on ``family`` with ``side`` growing: seconds at each size (``None``
    past one over ``budget``) and the growth from the first size to the second."""
    small = _best_of(check, family, side, sizes[0])
    large = None if small > budget else _best_of(check, family, side, sizes[1])
    growth = None if large is None else round(large / small, 1)
    return {
        str(sizes[0]): round(small, 5),
        str(sizes[1]): large and round(large, 5),
        "growth": growth,
    }


def measure_checks(sizes: tuple[int, int], budget: float) -> dict[str, Any]:
    """Each check on each family, each side growing: its times and growth."""
    results: dict[str, Any] = {}
    for name, check in CHECKS.items():
        results[name] = {}
        for family in CHECK_FAMILIES:
            check(*_check_inputs(family, "claim", 500, "warm-up"))
            results[name][family] = {
                side: _growing(check, family, side, sizes, budget) for side in ("claim", "evidence")
            }
            print(f"{name:26} {family:16} {results[name][family]}", file=sys.stderr)
    return results


def worst_growth(results: dict[str, Any]) -> dict[str, Any]:
    """Each check's largest growth, with the family and side that gave it."""
    worst: dict[str, Any] = {}
    for name, families in results.items():
        rows = [
            (row["growth"], family, side)
            for family, sides in families.items()
            for side, row in sides.items()
            if row["growth"] is not None
        ]
        growth, family, side = max(rows)
        worst[name] = {"growth": growth, "family": family, "side": side}
    return worst


def _handover(run: str, texts: list[str], entry: str) -> dict[str, Any]:
    """A hand-over of one claim with a proposition for each of ``texts``, each citing
    ``entry``."""
    propositions = [
        {"id": f"p{i}", "text": text, "ledger_ids": [entry]} for i, text in enumerate(texts)
    ]
    claim = {"id": "c", "type": "Assertion", "text": "c", "confidence": 0.9}
    return {
        "run_id": run,
        "from_agent": "bench",
        "status": "ok",
        "claims": [{**claim, "propositions": propositions}],
    }


def max_propositions(chars: int) -> int:
    """How many propositions of ``chars`` characters fit in the largest hand-over the
    gate takes (:data:`MAX_HANDOVER_BYTES` of JSON)."""
    one = len(json.dumps(_handover("run_" + "0" * 32, ["x" * chars], "e" * 40)))
    two = len(json.dumps(_handover("run_" + "0" * 32, ["x" * chars] * 2, "e" * 40)))
    return (MAX_HANDOVER_BYTES - one) // (two - one) + 1


def per_proposition(results: dict[str, Any], size: int) -> str:
    """The family whose claim, at ``size`` characters, costs the checks most in all."""
    totals: dict[str, float] = {}
    for families in results.values():
        for family, sides in families.items():
            totals[family] = totals.get(family, 0.0) + (sides["claim"][str(size)] or 0.0)
    return max(totals, key=lambda f: totals[f])


def measure_handover(family: str, propositions: int) -> dict[str, Any]:
    """:meth:`LedgerVerifier.verify` of ``propositions`` propositions of the longest
    length, of ``family``, against one entry of that family (the lexical stand-in
    for the model): the deterministic checks' cost of a hand-over that large."""
    from assay import ControlPlane
    from assay.verifier import LexicalNLI

    evidence, claim = CHECK_FAMILIES[family]
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{folder}/handover.db"
        with ControlPlane.open(url, nli=LexicalNLI()) as cp:
            run = cp.ledger.start_run()
            entry = cp.ledger.append(
                run, kind="tool_output", source="tool:x", content=evidence(4_000)
            )
            texts = [f"{claim(MAX_PROPOSITION_CHARS - 8)} {i:07d}" for i in range(propositions)]
            start = time.perf_counter()
            cp.verifier.verify(run, _handover(run, texts, entry.id))
            seconds = time.perf_counter() - start
    return {
        "family": family,
        "propositions": propositions,
        "proposition_chars": MAX_PROPOSITION_CHARS,
        "max_propositions": max_propositions(MAX_PROPOSITION_CHARS),
        "seconds": round(seconds, 2),
        "ms_per_proposition": round(1000 * seconds / propositions, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="10,20,40,80,160")
    parser.add_argument("--budget", type=float, default=30.0)
    parser.add_argument("--name", default="pathological_inputs")
    parser.add_argument("--checks-only", action="store_true", help="only the verifier's checks")
    parser.add_argument("--handover", type=int, default=0, help="propositions in the hand-over")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    payload: dict[str, Any] = {
        "unit": "seconds per call",
        "sizes_kb": sizes,
        "budget_s": args.budget,
    }
    if args.checks_only:  # the other sections as the last full run left them
        kept = json.loads((RESULTS / f"{args.name}.json").read_text())
        payload.update({key: kept[key] for key in ("sizes_kb", "families", "tables")})
    else:
        payload["families"] = measure(sizes, args.budget)
        payload["tables"] = measure(sizes, args.budget, TABLE_FAMILIES, TABLE_OPERATIONS)
    checks = measure_checks(CHECK_SIZES, args.budget)
    payload["checks"] = {
        "sizes_chars": list(CHECK_SIZES),
        "fixed_chars": FIXED_CHARS,
        "worst_growth": worst_growth(checks),
        "results": checks,
    }
    if args.handover:
        family = per_proposition(checks, CHECK_SIZES[0])
        payload["handover"] = measure_handover(family, args.handover)
    path = write_result(args.name, payload)
    print(f"wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
