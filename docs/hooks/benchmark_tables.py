"""Markdown tables from ``benchmarks/results/*.json``, for the benchmarks page.

Every figure on that page is read from the JSON a benchmark script wrote, so the
page can never disagree with the measurement. A figure the JSON does not hold is
shown as a dash and listed under its table; nothing is filled in by hand. A table
with no figure at all fails the build: the JSON changed shape and the table below
has to follow it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["BENCHMARKS", "MissingFigures", "benchmark_table"]

DASH = "—"


class MissingFigures(Exception):
    """A results file that holds none of the figures its table shows."""


@dataclass
class _Reader:
    """Looks figures up by dotted path and remembers which were absent."""

    data: Mapping[str, Any]
    missing: list[str] = field(default_factory=list[str])
    found: int = 0

    def get(self, path: str) -> Any:
        node: Any = self.data
        for part in path.split("."):
            if not isinstance(node, Mapping) or part not in node:
                self.missing.append(path)
                return None
            node = node[part]  # pyright: ignore[reportUnknownVariableType]
        if node is None:
            self.missing.append(path)
            return None
        self.found += 1
        return node

    def num(self, path: str, digits: int = 1, suffix: str = "") -> str:
        """A number with thousands separators, or a dash."""
        value = self.get(path)
        if not isinstance(value, int | float) or isinstance(value, bool):
            return DASH
        return f"{value:,.{digits}f}{suffix}"

    def pair(self, first: str, second: str, digits: int = 1, suffix: str = " ms") -> str:
        """``a / b`` (for p50 / p95), or a dash when both are absent."""
        a, b = self.num(first, digits), self.num(second, digits)
        return DASH if a == b == DASH else f"{a} / {b}{suffix}"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    out = [line(header), "|" + "|".join("---" for _ in header) + "|"]
    out += [line(r) for r in rows]
    return "\n".join(out)


def _machine(data: Mapping[str, Any]) -> str:
    """The machine and date fields the JSON carries, and which ones it lacks."""
    machine = data.get("machine")
    if isinstance(machine, Mapping):
        fields: Mapping[str, Any] = machine  # pyright: ignore[reportUnknownVariableType]
    else:
        # Older scripts wrote flat fields: "machine" is then the architecture.
        fields = {"architecture": machine, "python": data.get("python")}
    labels = {
        "when": "measured",
        "cpus": "CPUs",
        "platform": "platform",
        "architecture": "architecture",
        "python": "Python",
    }
    shown = [f"{label} {fields[k]}" for k, label in labels.items() if fields.get(k) is not None]
    absent = [label for k, label in labels.items() if fields.get(k) is None and k != "architecture"]
    text = "; ".join(shown) if shown else "no machine fields"
    if absent:
        text += f" (not recorded: {', '.join(absent)})"
    return text


# --- one renderer per results file ---------------------------------------------------


def _ledger(r: _Reader) -> str:
    rows = [
        ("appends/s, one writer", "appends_per_s_single_writer", 0),
        ("`append_many` entries/s (one call)", "append_many_entries_per_s", 0),
        ("appends/s, 4 writer processes on one run", "appends_per_s_4_processes", 0),
        ("entries verified/s (chains and Merkle log)", "verified_entries_per_s", 0),
        ("signed checkpoint, built and checked (ms, p50)", "checkpoint_ms_p50", 2),
        ("inclusion proof from the database, checked (ms, p50)", "inclusion_ms_p50", 2),
        ("consistency proof from the database, checked (ms, p50)", "consistency_ms_p50", 2),
    ]
    caption = (
        f"{r.num('appends', 0)} single appends and one `append_many` of "
        f"{r.num('sqlite.append_many_batch', 0)} entries, about "
        f"{r.num('sqlite.content_bytes', 0)} bytes each, per engine; every append "
        f"maintains the Merkle log ({r.num('sqlite.log_size', 0)} leaves when the proofs "
        "are timed)."
    )
    body = [(label, r.num(f"sqlite.{k}", d), r.num(f"postgres.{k}", d)) for label, k, d in rows]
    plain = (
        "Plain `sqlite3` on the same machine, same rows and the same hashing, without "
        "the ledger's indexes, triggers and log: "
        f"{r.num('plain_sqlite3.rows_per_s_one_transaction_each', 0)} rows/s one "
        "transaction each (the ledger's single appends reach "
        f"{r.num('sqlite.ratio_to_plain_sqlite3_single', 3)} of it), "
        f"{r.num('plain_sqlite3.rows_per_s_one_transaction', 0)} rows/s in one "
        f"transaction (`append_many` reaches "
        f"{r.num('sqlite.ratio_to_plain_sqlite3_append_many', 3)} of it)."
    )
    return caption + "\n\n" + _table(("", "SQLite", "PostgreSQL"), body) + "\n\n" + plain


def _tool_bus(r: _Reader) -> str:
    body = [
        (
            "argument and output validation alone",
            f"{r.num('validate_only_calls_per_s', 0)} calls/s "
            f"({r.num('validate_only_us_per_call', 1)} µs per call)",
        ),
        (
            "validated calls through the bus, end to end",
            f"{r.num('bus_calls_per_s', 0)} calls/s "
            f"({r.num('bus_overhead_ms_per_call', 2)} ms added per call)",
        ),
        (
            "the same with `timeout_s=None` (handler inline)",
            f"{r.num('bus_no_timeout_calls_per_s', 0)} calls/s "
            f"({r.num('bus_no_timeout_overhead_ms_per_call', 2)} ms added per call)",
        ),
        ("the handler called directly", f"{r.num('direct_us_per_call', 3)} µs per call"),
    ]
    caption = f"{r.num('calls', 0)} calls on {r.get('engine') or DASH}."
    return caption + "\n\n" + _table(("", ""), body)


def _gate(r: _Reader) -> str:
    def cell(engine: str, wiring: str, what: str) -> str:
        base = f"engines.{engine}.{wiring}.{what}"
        rate = r.num(f"{base}.per_s", 0)
        return f"{rate}/s, p50 {r.num(f'{base}.p50_ms', 1)} ms, p95 {r.num(f'{base}.p95_ms', 1)} ms"

    rows = [
        ("`cp.gate.check` as the control plane wires it (records 2 entries)", "wired", "check"),
        ("`Gate.errors` as wired (the checks, nothing recorded)", "wired", "errors"),
        ("`check` on a bare `Gate` (built-in checks only)", "bare", "check"),
        ("`errors` on a bare `Gate`", "bare", "errors"),
    ]
    body = [(label, cell("sqlite", w, x), cell("postgresql", w, x)) for label, w, x in rows]
    caption = (
        f"Hand-overs of {r.num('hand_over.claims', 0)} claims x "
        f"{r.num('hand_over.propositions_per_claim', 0)} propositions x "
        f"{r.num('hand_over.ledger_ids_per_proposition', 0)} ledger ids; "
        f"{r.num('hand_over.checks', 0)} checks per row."
    )
    return caption + "\n\n" + _table(("", "SQLite", "PostgreSQL"), body)


_SETS = {
    "begin_wow": "BEGIN wow",
    "begin_cmu": "BEGIN cmu-dog",
    "begin_tc": "BEGIN topicalchat",
    "wice_claim": "WiCE, claim level",
    "summedits_news": "SummEdits news (held out of training)",
    "summedits_podcast": "SummEdits podcast (held out of training)",
    "begin_pooled": "BEGIN, the three pooled",
    "snli_test": "SNLI test",
    "mnli_dev_matched_heldout": "MNLI dev matched, held-out fifth",
    "anli_test": "ANLI test",
    "sick_test": "SICK test",
}


def _keys(r: _Reader, path: str) -> list[str]:
    node = r.data.get(path)
    return list(node) if isinstance(node, Mapping) else []  # pyright: ignore[reportUnknownArgumentType]


def _verifier_accuracy(r: _Reader) -> str:
    body: list[tuple[str, ...]] = []
    for key in _keys(r, "grounding_dev"):
        base = f"grounding_dev.{key}"
        body.append(
            (
                _SETS.get(key, key),
                f"{r.num(f'{base}.n', 0)} ({r.num(f'{base}.positives', 0)})",
                r.num(f"{base}.roc_auc", 3),
                r.num(f"{base}.roc_auc_held_out", 3),
                r.num(f"{base}.roc_auc_model_only", 3),
                r.num(f"{base}.roc_auc_coverage_only", 3),
                f"{r.num(f'{base}.balanced_accuracy', 3)} / "
                f"{r.num(f'{base}.balanced_accuracy_decision', 3)}",
            )
        )
    grounding = _table(
        (
            "set",
            "n (positives)",
            "ROC AUC",
            "ROC AUC, calibration fitted without this set",
            "model alone",
            "word coverage alone",
            "balanced accuracy: score ≥ threshold / the decision",
        ),
        body,
    )
    nli = _table(
        ("NLI test set (argmax, three-way)", "n", "accuracy"),
        [
            (_SETS.get(k, k), r.num(f"nli_test.{k}.n", 0), r.num(f"nli_test.{k}.accuracy", 3))
            for k in _keys(r, "nli_test")
        ],
    )
    caption = (
        f"Model `{r.get('model') or DASH}`; calibration a = {r.num('calibration.a', 3)}, "
        f"b = {r.num('calibration.b', 3)}, c = {r.num('calibration.c', 3)}; "
        f"threshold {r.num('threshold', 3)}."
    )
    context = r.data.get("published_for_context")
    notes = ""
    if isinstance(context, Mapping):
        items: Mapping[str, Any] = context  # pyright: ignore[reportUnknownVariableType]
        notes = "\n\nFor context, as the JSON records it:\n\n" + "\n".join(
            f"- {k}: {v}" for k, v in items.items()
        )
    return f"{caption}\n\n{grounding}\n\n{nli}{notes}"


def _verifier_speed(r: _Reader) -> str:
    columns = ("fp32", "int8_dynamic", "fp32_cached")

    def short(c: str) -> str:
        return r.num(f"{c}.short_claims_per_s_batched", 0, "/s")

    def single(c: str) -> str:
        return r.pair(f"{c}.short_single_check.p50_ms", f"{c}.short_single_check.p95_ms")

    def long(c: str) -> str:
        base = f"{c}.long_2000_words_per_claim"
        return r.pair(f"{base}.p50_ms", f"{base}.p95_ms")

    rows: list[tuple[str, Callable[[str], str]]] = [
        ("short claims (≤128 tokens), batched", short),
        ("one short check, p50 / p95", single),
        ("a claim against a 2,000-word document, p50 / p95", long),
    ]
    body = [(label, *(fn(c) for c in columns)) for label, fn in rows]
    fp32 = r.data.get("fp32")
    auc = fp32.get("roc_auc") if isinstance(fp32, Mapping) else None  # pyright: ignore[reportUnknownMemberType]
    items = r.num("auc_items_per_set", 0)
    for key in list(auc) if isinstance(auc, Mapping) else []:  # pyright: ignore[reportUnknownArgumentType]
        label = f"ROC AUC, {_SETS.get(str(key), str(key))} ({items} items)"
        body.append((label, *(r.num(f"{c}.roc_auc.{key}", 3) for c in columns)))
    caption = (
        f"{r.num('threads', 0)} threads; {r.num('short_pairs', 0)} short pairs, "
        f"{r.num('long_documents', 0)} long documents. Cache: {r.get('cache') or DASH}."
    )
    header = ("", "fp32 (shipped)", "int8 dynamic", "fp32, database cache warm")
    return caption + "\n\n" + _table(header, body)


def _encoder_size_speed(r: _Reader) -> str:
    variants = r.get("variants")
    keys = [str(k) for k in variants] if isinstance(variants, Mapping) else []  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
    body = [
        (
            str(r.get(f"variants.{k}.label") or k),
            r.num(f"variants.{k}.parameters_m", 1, "M"),
            r.num(f"variants.{k}.fp32_claims_per_s", 0, "/s"),
            r.num(f"variants.{k}.int8_claims_per_s", 0, "/s"),
            r.num(f"variants.{k}.pairs", 0),
        )
        for k in keys
    ]
    caption = (
        f"{r.num('threads', 0)} threads, batches of {r.num('batch', 0)}, at most "
        f"{r.num('max_length', 0)} word pieces; weights: {r.get('weights') or DASH}; "
        f"target: {r.num('target_short_claims_per_s', 0)} short claims/s."
    )
    header = ("encoder", "parameters", "fp32", "int8 dynamic", "pairs timed")
    return caption + "\n\n" + _table(header, body)


def _graph_overhead(r: _Reader) -> str:
    def ms(path: str) -> str:
        return r.num(path, 1, " ms")

    body = [
        ("the same graph without the fence", ms("baseline.median_ms"), ms("baseline.p95_ms")),
        ("fenced", ms("fenced.median_ms"), ms("fenced.p95_ms")),
        ("of which the NLI model", ms("fenced.model_median_ms"), ms("fenced.model_p95_ms")),
        ("fence overhead", ms("overhead_median_ms"), ""),
        ("fence overhead without the model", ms("overhead_without_model_median_ms"), ""),
        (
            "the same, paired step by step",
            ms("overhead_without_model_paired_median_ms"),
            "",
        ),
    ]
    caption = (
        f"{r.num('runs', 0)} steps of {r.num('claims_per_step', 0)} claims each on "
        f"{r.get('engine') or DASH}, model `{r.get('model') or DASH}`."
    )
    out = caption + "\n\n" + _table(("per step", "median", "p95"), body)
    breakdown = r.data.get("breakdown")
    if isinstance(breakdown, Mapping):
        out += "\n\n" + _breakdown(r)
    return out


def _breakdown(r: _Reader) -> str:
    """Where a fenced step's time goes, when the JSON carries the instrumented series."""
    base = "breakdown.fenced"
    nodes = r.data["breakdown"].get("fenced", {}).get("nodes", {})
    node_rows = [
        (
            f"`{node}`",
            r.num(f"{base}.nodes.{node}.ms_p50", 2, " ms"),
            r.num(f"{base}.nodes.{node}.transactions", 0),
            r.num(f"{base}.nodes.{node}.write_transactions", 0),
            r.num(f"{base}.nodes.{node}.statements", 0),
        )
        for node in (list(nodes) if isinstance(nodes, Mapping) else [])
    ]
    node_rows.append(
        (
            "whole step",
            r.num(f"{base}.step_ms_p50", 2, " ms"),
            r.num(f"{base}.transactions_per_step", 0),
            r.num(f"{base}.write_transactions_per_step", 0),
            r.num(f"{base}.statements_per_step", 0),
        )
    )
    header = (
        "fenced node (instrumented)",
        "p50",
        "transactions",
        "write transactions",
        "statements",
    )
    components = r.data["breakdown"].get("fenced", {}).get("components_ms_p50", {})
    component_rows = [
        (f"`{name}`", r.num(f"{base}.components_ms_p50.{name}", 2, " ms"))
        for name in (list(components) if isinstance(components, Mapping) else [])
    ]
    out = f"Instrumented series ({r.num(f'{base}.runs', 0)} steps):\n\n" + _table(header, node_rows)
    if component_rows:
        out += "\n\n" + _table(("component, exclusive time", "p50 per step"), component_rows)
    return out


def _pathological(r: _Reader) -> str:
    sizes = [str(s) for s in r.get("sizes_kb") or []]
    functions = ("extract_identifiers", "identifier_in_evidence", "reply_report")
    small, large = (sizes[-3], sizes[-1]) if len(sizes) >= 3 else (DASH, DASH)

    def cell(section: str, family: str, function: str) -> str:
        base = f"{section}.{family}.{function}"
        at_large = r.get(f"{base}.{large}")
        at_small = r.get(f"{base}.{small}")
        if not isinstance(at_large, int | float):
            return "over budget" if at_small is not None else DASH
        ratio = (
            f" (x{at_large / at_small:.1f})"
            if isinstance(at_small, int | float) and at_small
            else ""
        )
        return f"{at_large:.3f} s{ratio}"

    body = [
        (f"`{f}`", *(cell("families", f, fn) for fn in functions)) for f in _keys(r, "families")
    ]
    caption = (
        f"Seconds per call at {large} KB; in brackets the ratio to {small} KB (linear "
        f"work: about 4, quadratic: about 16). Budget per call: {r.num('budget_s', 0)} s."
    )
    header = ("input family", *(f"`{fn}`" for fn in functions))
    out = caption + "\n\n" + _table(header, body)
    table_functions = ("row_check", "verifier_reading", "record_checks")
    tables = [
        (f"`{f}`", *(cell("tables", f, fn) for fn in table_functions)) for f in _keys(r, "tables")
    ]
    if tables:
        out += (
            "\n\nA large table cited for a proposition that names one of its rows, the "
            "first time the verifier reads it: the row check, the reading handed to "
            "the model (rows written out with their column names), and the flag, "
            "outcome and role checks on that reading (the reading included).\n\n"
            + _table(("table", *(f"`{fn}`" for fn in table_functions)), tables)
        )
    return out + _pathological_checks(r)


def _pathological_checks(r: _Reader) -> str:
    """The verifier's checks on hostile claims and evidence: each check's largest
    growth from the smaller size to the larger and its slowest call, and the
    hand-over figure (nothing where the JSON has no ``checks``)."""
    if not isinstance(r.data.get("checks"), Mapping):
        return ""
    sizes = r.get("checks.sizes_chars") or []
    small, large = (f"{s:,}" for s in sizes) if len(sizes) == 2 else (DASH, DASH)
    rows: list[tuple[str, ...]] = []
    worst_of = r.get("checks.worst_growth")
    for check in list(worst_of) if isinstance(worst_of, Mapping) else []:  # pyright: ignore[reportUnknownArgumentType]
        worst = f"checks.worst_growth.{check}"
        growth = f"{r.num(f'{worst}.growth', 1, 'x')} (`{r.get(f'{worst}.family')}`, "
        rows.append((f"`{check}`", f"{growth}{r.get(f'{worst}.side')})", _slowest(r, check)))
    out = (
        f"\n\nThe verifier's deterministic checks on hostile claims and evidence (repeated "
        f"numbers, negations, clause chains, party names, dates and words of plan, runs "
        f"of capitals, blanks and opening quotes), timed at {small} and {large} "
        f"characters: the claim growing against {r.num('checks.fixed_chars', 0)} "
        "characters of evidence, and the evidence growing against a claim that long. "
        "For each check, its largest growth from one size to the other over every "
        "family and side (linear work: about 4, quadratic: about 16), and its slowest "
        f"call at {large} characters.\n\n"
    )
    out += _table(("check", "largest growth", f"slowest call at {large}"), rows)
    if isinstance(r.data.get("handover"), Mapping):
        out += (
            f"\n\nA hand-over of {r.num('handover.propositions', 0)} propositions of "
            f"{r.num('handover.proposition_chars', 0)} characters (family "
            f"`{r.get('handover.family')}`; {r.num('handover.max_propositions', 0)} fit in "
            "the largest hand-over the gate takes), verified with the lexical stand-in "
            f"for the model: {r.num('handover.seconds', 1, ' s')} "
            f"({r.num('handover.ms_per_proposition', 1, ' ms')} per proposition)."
        )
    return out


def _slowest(r: _Reader, check: str) -> str:
    """A check's slowest call at the larger size, with its family and side."""
    sizes = r.get("checks.sizes_chars") or []
    results = r.get(f"checks.results.{check}")
    if len(sizes) != 2 or not isinstance(results, Mapping):
        return DASH
    calls = [
        (seconds, family, side)
        for family, sides in results.items()  # pyright: ignore[reportUnknownVariableType]
        if isinstance(sides, Mapping)
        for side, row in sides.items()  # pyright: ignore[reportUnknownVariableType]
        if isinstance(row, Mapping) and isinstance(seconds := row.get(str(sizes[1])), int | float)  # pyright: ignore[reportUnknownMemberType]
    ]
    if not calls:
        return DASH
    seconds, family, side = max(calls)  # pyright: ignore[reportUnknownVariableType]
    return f"{seconds:.3f} s (`{family}`, {side})"


def _agent_grounding(r: _Reader) -> str:
    caption = (
        f"{r.num('items', 0)} agent-evidence items, each run through `fence()` as a user's "
        "agent would (one bus call per evidence entry, every entry cited, one plain-text "
        f"proposition); verifier: {r.get('nli') or DASH}."
    )
    totals = _table(
        (
            "supported claims answered",
            "unsupported claims refused",
            "ROC AUC of the score",
            "supported called contradicted",
            "unsupported called contradicted",
        ),
        [
            (
                r.num("supported_answered", 3),
                r.num("unsupported_refused", 3),
                r.num("roc_auc", 3),
                r.num("supported_called_contradicted", 3),
                r.num("unsupported_called_contradicted", 3),
            )
        ],
    )
    rows: list[tuple[str, str, str, str]] = []
    table: Any = r.get("per_phenomenon")
    if isinstance(table, list):
        for row in table:  # pyright: ignore[reportUnknownVariableType]
            if isinstance(row, Mapping):
                item: Mapping[str, Any] = row  # pyright: ignore[reportUnknownVariableType]
                right = "answered" if item.get("label") == "supported" else "refused"
                rows.append(
                    (
                        str(item.get("label")),
                        str(item.get("phenomenon")),
                        str(item.get("items")),
                        f"{item.get('correct')} {right} ({float(item.get('rate', 0)):.0%})",
                    )
                )
    per = _table(("label", "phenomenon", "items", "correct"), rows)
    halves: list[tuple[str, str, str, str, str]] = []
    for name, label in (("tuning", "tuning"), ("held_out", "held out")):
        domains: Any = r.get(f"halves.{name}.domains")
        if isinstance(domains, list):
            names = ", ".join(str(d) for d in domains)  # pyright: ignore[reportUnknownVariableType]
            halves.append(
                (
                    label,
                    names,
                    r.num(f"halves.{name}.items", 0),
                    r.num(f"halves.{name}.supported_answered", 3),
                    r.num(f"halves.{name}.unsupported_refused", 3),
                )
            )
    parts = [caption, totals]
    if halves:
        parts.append(
            _table(
                ("half", "domains", "items", "supported answered", "unsupported refused"), halves
            )
        )
    parts.append(per)
    checks = _per_check(r)
    if checks:
        parts.append(checks)
    return "\n\n".join(parts)


def _per_check(r: _Reader) -> str:
    """What decided each item's first verdict (a check's id, ``model`` or ``gate``),
    how often, and how often rightly."""
    table: Any = r.get("per_check")
    if not isinstance(table, list):
        return ""
    rows: list[tuple[str, str, str, str, str]] = []
    for row in table:  # pyright: ignore[reportUnknownVariableType]
        if isinstance(row, Mapping):
            item: Mapping[str, Any] = row  # pyright: ignore[reportUnknownVariableType]
            rows.append(
                (
                    f"`{item.get('check')}`",
                    str(item.get("decided")),
                    str(item.get("entailed")),
                    str(item.get("refused")),
                    f"{float(item.get('precision', 0)):.3f}",
                )
            )
    header = ("decided by", "items", "entailed", "refused", "precision")
    return _table(header, rows)


def _agent_threshold(r: _Reader) -> str:
    caption = (
        f"Threshold {r.num('threshold', 4)}: the lowest at which the tuning half's "
        f"unsupported claims are refused at least {r.num('refusal_floor', 3)} of the time, "
        f"read off `{r.get('result') or DASH}`; the held-out half took no part in choosing it."
    )
    return caption + "\n\n" + _rates_table(r, _HALVES)


#: The rows of a fitted setting's table: the result's key and the row's label.
_HALVES = (("tuning", "tuning half"), ("held_out", "held-out half"), ("all", "all"))


def _rates_table(r: _Reader, keys: Sequence[tuple[str, str]]) -> str:
    """Supported answered and unsupported refused, one row per key of the result."""
    rows = [
        (label, r.num(f"{key}.supported_answered", 3), r.num(f"{key}.unsupported_refused", 3))
        for key, label in keys
    ]
    return _table(("items", "supported answered", "unsupported refused"), rows)


def _accounted_bar(r: _Reader) -> str:
    caption = (
        f"Accounted bar {r.num('bar', 4)}: the highest at which the tuning half's "
        f"unsupported claims are still refused at least {r.num('refusal_floor', 3)} of the "
        f"time, read off `{r.get('result') or DASH}` (run with the bar at "
        f"{r.num('run_with_bar', 2)}); the held-out half took no part in choosing it."
    )
    as_run = ("as_run", f"all, bar {r.num('run_with_bar', 2)}")
    return caption + "\n\n" + _rates_table(r, (as_run, *_HALVES))


def _grounding_rules(r: _Reader) -> str:
    caption = (
        f"The value rules alone (no gate, no model) on {r.num('items', 0)} items: "
        f"{r.num('claim_values', 0)} values in claims, {r.num('computed_values', 0)} of them "
        f"accepted as checked computations, in {r.num('seconds', 1)} s."
    )
    rows: list[tuple[str, str, str]] = []
    for label, path in (
        ("supported: every value accounted for", "supported_all_values_accounted"),
        ("unsupported, numeric phenomena: caught", "unsupported_caught"),
    ):
        groups: Any = r.get(
            f"{path}.by_phenomenon" if "supported_all" in path else f"{path}.numeric"
        )
        if isinstance(groups, Mapping):
            for name, cell in groups.items():  # pyright: ignore[reportUnknownVariableType]
                if isinstance(cell, Mapping):
                    c: Mapping[str, Any] = cell  # pyright: ignore[reportUnknownVariableType]
                    rows.append((label, str(name), f"{c.get('hit')} / {c.get('of')}"))
    totals = _table(
        ("supported, all values accounted for", "unsupported numeric, caught"),
        [
            (
                r.num("supported_all_values_accounted.total.share", 3),
                r.num("unsupported_caught.numeric_total.share", 3),
            )
        ],
    )
    return caption + "\n\n" + totals + "\n\n" + _table(("", "phenomenon", "items"), rows)


def _eval_throughput(r: _Reader) -> str:
    settings = r.data.get("settings")
    names = list(settings) if isinstance(settings, Mapping) else []  # pyright: ignore[reportUnknownArgumentType]
    rows = [
        (
            f"{r.num(f'settings.{n}.jobs', 0)} "
            + ("Ray actors" if r.get(f"settings.{n}.ray") else "worker processes"),
            r.num(f"settings.{n}.cases", 0),
            r.num(f"settings.{n}.seconds_median", 1, " s"),
            r.num(f"settings.{n}.cases_per_s", 2),
        )
        for n in names
    ]
    caption = (
        f"Suite `{r.get('suite.file') or DASH}` on `{r.get('graph') or DASH}`, the shipped "
        f"NLI model, median of {r.num('rounds', 0)} evaluations each, start-up included."
    )
    return caption + "\n\n" + _table(("cases run in", "cases", "wall time", "cases/s"), rows)


def _invoice_agents(r: _Reader) -> str:
    agents = r.data.get("agents")
    names = list(agents) if isinstance(agents, Mapping) else []  # pyright: ignore[reportUnknownArgumentType]
    rows: list[tuple[str, ...]] = []
    for n in names:
        skipped = r.data["agents"][n].get("skipped")
        if skipped:
            rows.append((f"`{n}`", f"skipped: {skipped}", *([DASH] * 5)))
            continue
        missed = r.get(f"agents.{n}.cases_missed")
        rows.append(
            (
                f"`{n}`",
                r.num(f"agents.{n}.metrics.status_accuracy", 3),
                r.num(f"agents.{n}.metrics.coverage", 3),
                r.num(f"agents.{n}.metrics.action_accuracy", 3),
                r.num(f"agents.{n}.metrics.false_alarm_rate", 3),
                r.num(f"agents.{n}.metrics.side_effect_hygiene", 3),
                str(len(missed)) if isinstance(missed, Mapping) else DASH,
            )
        )
    caption = (
        f"Suite `{r.get('suite.file') or DASH}` ({r.num('cases', 0)} cases), the shipped "
        f"NLI model; chat model `{r.data.get('model') or 'none configured'}`."
    )
    header = ("agents", "status accuracy", "coverage", "actions", "false alarms", "hygiene")
    return caption + "\n\n" + _table((*header, "cases missed"), rows)


def _service_load(r: _Reader) -> str:
    operations = (
        ("read_audit", "read a finished run's audit"),
        ("decide_grant", "approve a grant (its own paused run)"),
    )
    rows = [
        (
            label,
            r.num(f"operations.{key}.requests", 0),
            r.num(f"operations.{key}.requests_per_second", 1),
            r.pair(f"operations.{key}.p50_ms", f"operations.{key}.p95_ms"),
        )
        for key, label in operations
    ]
    database = {"sqlite": "SQLite", "postgres": "PostgreSQL"}.get(str(r.get("database")), DASH)
    caption = (
        f"`assay serve --workers {r.num('workers', 0)}` of `{r.get('graph') or DASH}` on "
        f"{database}, {r.num('clients', 0)} concurrent clients each on its own connection; "
        "every approval performs its own flag."
    )
    return caption + "\n\n" + _table(("request", "requests", "requests/s", "p50 / p95"), rows)


def _cli_startup(r: _Reader) -> str:
    names = ("assay --version", "assay --help", "assay runs", "assay ledger verify")
    rows = [
        (
            f"`{name}`",
            r.num(f"commands.{name}.median_s", 3, " s"),
            r.num(f"commands.{name}.min_s", 3, " s"),
            r.num(f"commands.{name}.target_s", 1, " s"),
            ", ".join(r.get(f"commands.{name}.heavy_modules_loaded") or []) or "none",
        )
        for name in names
    ]
    load = r.get("load_average_1m")
    caption = (
        f"Each command in a fresh process, median of {r.num('rounds', 0)} runs; `import assay` "
        f"{r.num('import_assay.median_s', 3, ' s')}, a bare interpreter "
        f"{r.num('python_bare.median_s', 3, ' s')} on the same machine"
        + (f" (load average {load} while it ran)." if load is not None else ".")
    )
    header = ("command", "median", "fastest", "target", "heavy modules loaded")
    return caption + "\n\n" + _table(header, rows)


def _refund_desk(r: _Reader) -> str:
    h, a, t = "hallucinating.", "approval_paths.", "audit_trail."
    rows = [
        ("hallucinating runs: abstained; of; refunds run", "abstained runs refunds", h),
        ("deny; approve; decide again; same order again; any refunded twice", _STEPS, a),
        ("exit of audit; ledger verify; verify-bundle; witness", _EXITS, t),
        ("reviewer page: chain intact; hashes re-derived", _PAGE, t),
        ("seconds in all; load average while it ran", "seconds load_average_1m", ""),
    ]
    cells = [(w, "; ".join(str(r.get(at + p)) for p in ps.split())) for w, ps, at in rows]
    caption = f"`examples/refund_desk.py` with the NLI model `{r.get('nli_model')}`."
    return caption + "\n\n" + _table(("what", "measured"), cells)


_STEPS = "denied.status approved.status decided_again.status same_order_again.paused refunded_twice"
_PAGE = "reviewer_page.chain_intact reviewer_page.every_hash_re_derived"
_EXITS = "audit.exit ledger_verify.exit bundle.verify_exit witness.exit"


def _agent_grounding_cites(r: _Reader) -> str:
    caption = (
        f"The {r.num('items', 0)} items of the development set through `fence()`, each "
        "run twice: plain (every entry cited by its id) and with `cites` written by one "
        "fixed rule for every item, whatever its label (`benchmarks/_cites.py`: pointers "
        "to the fields whose values the claim states, quotes of the sentences that hold "
        f"them); verifier: {r.get('nli') or DASH}."
    )
    rows = [
        (
            label,
            r.num(f"modes.{mode}.supported_answered", 3),
            r.num(f"modes.{mode}.unsupported_refused", 3),
            r.num(f"modes.{mode}.roc_auc", 3),
            r.pair(
                f"modes.{mode}.halves.held_out.supported_answered",
                f"modes.{mode}.halves.held_out.unsupported_refused",
                digits=3,
                suffix="",
            ),
        )
        for mode, label in (("plain", "plain"), ("cites", "with cites"))
    ]
    return (
        caption
        + "\n\n"
        + _table(
            (
                "propositions",
                "supported answered",
                "unsupported refused",
                "ROC AUC",
                "held-out half (answered / refused)",
            ),
            rows,
        )
    )


def _verifier_candidate(r: _Reader) -> str:
    caption = (
        f"A candidate trained from the shipped model on one GPU "
        f"({r.num('device.candidates.b.pairs_seen', 0)} pairs seen in "
        f"{r.num('device.candidates.b.train_seconds', 0)} s), against the shipped model; "
        f"agent grounding through fence() on all items, grounding dev sets "
        f"on {r.num('verifier_accuracy.shipped.limit', 0)} items each. "
        f"Decision: {r.get('decision') or DASH}"
    )
    rows = [
        (
            label,
            r.num(f"agent_grounding.{key}.threshold", 4),
            r.num(f"agent_grounding.{key}.held_out.supported_answered", 3),
            r.num(f"agent_grounding.{key}.held_out.unsupported_refused", 3),
            r.num(f"agent_grounding.{key}.tuning.supported_answered", 3),
            r.num(f"agent_grounding.{key}.tuning.unsupported_refused", 3),
            r.num(f"verifier_accuracy.{key}.roc_auc.begin_pooled", 3),
            r.num(f"verifier_accuracy.{key}.roc_auc.wice_claim", 3),
            r.num(f"verifier_accuracy.{key}.roc_auc.summedits_news", 3),
        )
        for key, label in (("shipped", "shipped"), ("candidate_b", "candidate"))
    ]
    header = (
        "model",
        "threshold",
        "held-out: supported answered",
        "held-out: unsupported refused",
        "tuning: supported answered",
        "tuning: unsupported refused",
        "BEGIN pooled ROC AUC",
        "WiCE ROC AUC",
        "SummEdits news ROC AUC",
    )
    failed = r.num("test_suite_with_candidate_in_place.candidate_b.failed", 0)
    tests = f"With the candidate in place, {failed} tests of the verifier and the fence fail."
    return caption + "\n\n" + _table(header, rows) + "\n\n" + tests


#: Results written by a script of another name (the previous default's figures, the
#: threshold fitted from a run's figures).
SCRIPTS = {
    "verifier_accuracy_full": "verifier_accuracy",
    "agent_grounding_full": "agent_grounding",
    "agent_grounding_cites": "agent_grounding",
    "agent_grounding_relations_fresh": "agent_grounding",
    "agent_grounding_relations_fresh_before": "agent_grounding",
    "agent_threshold": "fit_agent_threshold",
    "accounted_bar": "fit_accounted_bar",
    "agent_grounding_bar_fit": "agent_grounding",
    "agent_grounding_values_fresh": "agent_grounding",
    "agent_grounding_values_fresh_before": "agent_grounding",
    "grounding_rules_values_fresh": "grounding_rules",
    "grounding_rules_values_fresh_before": "grounding_rules",
    **{
        f"agent_grounding_{name}_fresh{when}": "agent_grounding"
        for name in ("computed", "sequence", "login", "states")
        for when in ("", "_before")
    },
}

BENCHMARKS: dict[str, Callable[[_Reader], str]] = {
    "agent_grounding": _agent_grounding,
    "agent_grounding_cites": _agent_grounding_cites,
    # A fresh set on relations (benchmarks/data/relations_fresh.jsonl), written before
    # the relation checks were built: its figures before them and after.
    "agent_grounding_relations_fresh_before": _agent_grounding,
    "agent_grounding_relations_fresh": _agent_grounding,
    "grounding_rules": _grounding_rules,
    "ledger": _ledger,
    "tool_bus": _tool_bus,
    "gate": _gate,
    "verifier_accuracy": _verifier_accuracy,
    # The previous default (the `full` mix, non-commercial sets included), measured by
    # the same scripts before it was replaced.
    "verifier_accuracy_full": _verifier_accuracy,
    "agent_grounding_full": _agent_grounding,
    "agent_threshold": _agent_threshold,
    # The accounted bar, fitted on a run with the bar at its previous value.
    "accounted_bar": _accounted_bar,
    "agent_grounding_bar_fit": _agent_grounding,
    # A candidate model trained on a GPU, measured against the shipped one; not shipped.
    "verifier_candidate_h200": _verifier_candidate,
    "verifier_speed": _verifier_speed,
    "encoder_size_speed": _encoder_size_speed,
    "graph_overhead": _graph_overhead,
    "pathological_inputs": _pathological,
    "eval_throughput": _eval_throughput,
    # The invoice suite through the rule-based agents and a configured chat model.
    "invoice_agents": _invoice_agents,
    "service_load": _service_load,
    "cli_startup": _cli_startup,
    "refund_desk": _refund_desk,
    "cli_startup_before": _cli_startup,
    # The fresh set of values stated in another form, before and after the readings
    # of units stated apart from the number (docs/grounding.md).
    "agent_grounding_values_fresh_before": _agent_grounding,
    "agent_grounding_values_fresh": _agent_grounding,
    "grounding_rules_values_fresh_before": _grounding_rules,
    "grounding_rules_values_fresh": _grounding_rules,
    # Fresh sets of computed values, of events in order in time and of logins, before
    # and after the accounted check's computations and the checks order_in_time and
    # misplaced_login (docs/verifier.md).
    **{
        f"agent_grounding_{name}_fresh{when}": _agent_grounding
        for name in ("computed", "sequence", "login", "states")
        for when in ("_before", "")
    },
}


def benchmark_table(results_dir: Path, name: str) -> str:
    """The Markdown for ``benchmarks/results/<name>.json``: a caption, the table(s),
    the machine line and the figures the JSON lacks."""
    if name not in BENCHMARKS:
        raise KeyError(f"no table for benchmark {name!r}; known: {', '.join(BENCHMARKS)}")
    path = results_dir / f"{name}.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    reader = _Reader(data)
    body = BENCHMARKS[name](reader)
    if reader.found == 0:
        raise MissingFigures(f"{path} holds none of the figures its table shows")
    written_by = data.get("written_by")
    script = (
        written_by if isinstance(written_by, str) else f"`benchmarks/{SCRIPTS.get(name, name)}.py`"
    )
    lines = [body, "", f"*Source: {script} → `benchmarks/results/{name}.json`; {_machine(data)}.*"]
    absent = sorted(set(reader.missing))
    if absent:
        lines += ["", f"{DASH}: not in the JSON ({', '.join(f'`{p}`' for p in absent)})."]
    return "\n".join(lines)
