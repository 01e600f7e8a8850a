"""Showing runs on the terminal: a run's outcome, a thread's state, the paused
threads, and a run's audit. Generic: any fenced graph's results render the same way.

Everything shown comes from agents, tools, reviewers or documents, so it is data:
rich markup in it is escaped and control characters are made visible.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, cast

from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from assay.cli._gate import render_manifest
from assay.control_plane import ControlPlane
from assay.fence import RunResult, ThreadStatus
from assay.ledger import Ledger, LedgerEntry

__all__ = ["render_audit", "render_paused", "render_result", "render_thread", "shown"]

_COLOURS = {
    "answered": "green",
    "abstained": "yellow",
    "awaiting_grant": "cyan",
    "failed": "red",
    "running": "blue",
}
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")


def shown(value: object, width: int | None = None) -> str:
    """``value`` as text safe to print with markup: escaped, control characters
    visible, cut to ``width`` characters when given."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = _CONTROL.sub(lambda m: f"\\x{ord(m.group(0)):02x}", text)
    if width is not None and len(text) > width:
        text = text[: width - 1] + "…"
    return escape(text)


def render_result(ledger: Ledger, result: RunResult, console: Console) -> None:
    """A run's outcome: status, answer, evidence spans, abstentions, grants, actions."""
    console.print(
        f"[bold {_COLOURS[result.status]}]{result.status}[/] run {shown(result.run_id)} "
        f"thread {shown(result.thread_id)} (rounds {result.rounds})",
        highlight=False,
    )
    if result.answer:
        console.print(Panel(Text(result.answer), title="answer", expand=False))
    _evidence_table(ledger, result, console)
    for item in result.unsupported:
        console.print(
            f"[yellow]unsupported[/] {shown(item.proposition)}\n"
            f"    missing: {shown(item.missing_evidence)}",
            highlight=False,
        )
    for error in result.errors:
        console.print(
            f"[red]gate[/] {shown(error.get('code'))} at {shown(error.get('path'))}: "
            f"{shown(error.get('message'))}",
            highlight=False,
        )
    for pending in result.pending_grants:
        console.print(
            f"[cyan]pending grant[/] {shown(pending.tool)}@{shown(pending.version)} "
            f"{shown(pending.args)} (args sha256 {pending.args_sha256[:16]}…)",
            highlight=False,
        )
        for claim in pending.claims:
            console.print(
                f"    rests on {shown(claim.get('id'))}: {shown(claim.get('text'))}",
                highlight=False,
            )
    for action in result.actions:
        detail = action.output if action.status == "executed" else (action.reason or action.error)
        by = f" by {shown(action.approver)}" if action.approver else ""
        console.print(
            f"[bold]action[/] {shown(action.tool)} {action.status}{by}: {shown(detail)}",
            highlight=False,
        )


def _evidence_table(ledger: Ledger, result: RunResult, console: Console) -> None:
    verdicts = [(c, p) for c in result.claims for p in c.propositions if p.entailment]
    if not verdicts:
        return
    ids = {p.entailment.ledger_id for _, p in verdicts if p.entailment and p.entailment.ledger_id}
    entries = ledger.get_many(ids)
    table = Table(
        "claim", "entailment", "score", "evidence (ledger id: exact span)", title="verified claims"
    )
    for claim, prop in verdicts:
        verdict = prop.entailment
        assert verdict is not None
        span = ""
        if verdict.ledger_id in entries and verdict.span:
            text = entries[verdict.ledger_id].text[verdict.span[0] : verdict.span[1]]
            span = f"{verdict.ledger_id}: “{shown(' '.join(text.split()), 110)}”"
        table.add_row(shown(claim.id), verdict.label, f"{verdict.score:.2f}", span)
    console.print(table)


def render_thread(ledger: Ledger, status: ThreadStatus, console: Console) -> None:
    """Where a thread stands: its graph, run and status, then its run's outcome."""
    console.print(
        f"thread {shown(status.thread_id)}: [bold {_COLOURS[status.status]}]{status.status}[/] "
        f"graph {shown(status.graph_name)} version {shown(status.graph_version)} "
        f"run {shown(status.run_id or '-')} (updated "
        f"{status.updated_at.isoformat(timespec='seconds')})",
        highlight=False,
    )
    if status.result is not None:
        render_result(ledger, status.result, console)


def render_paused(threads: Sequence[ThreadStatus], console: Console) -> None:
    """The threads waiting for a grant, with the calls they wait on."""
    table = Table(title="paused for a grant", title_justify="left")
    for column in ("thread", "graph", "run", "paused at", "pending calls"):
        exact = column in ("thread", "run")
        table.add_column(column, no_wrap=exact, overflow="fold" if exact else "ellipsis")
    for item in threads:
        pending = item.result.pending_grants if item.result is not None else ()
        calls = ", ".join(f"{shown(p.tool)} {shown(p.args, 60)}" for p in pending)
        table.add_row(
            shown(item.thread_id),
            f"{shown(item.graph_name)} v{shown(item.graph_version)}",
            shown(item.run_id or "-"),
            item.updated_at.isoformat(timespec="seconds"),
            calls or "-",
        )
    console.print(table)


def render_audit(cp: ControlPlane, run_id: str, console: Console) -> None:
    """A run's claims as audited: each proposition's verdict and the exact ledger span
    it rests on, then its grants and actions, then the full manifest."""
    verdicts = [
        v
        for v in map(_verifier_record, cp.ledger.entries(run_id, kinds=["verdict"]))
        if v is not None
    ]
    entries = cp.ledger.get_many(v["ledger_id"] for v in verdicts if v.get("ledger_id"))
    table = Table(
        "claim", "proposition", "entailment", "score", "evidence span", title=f"claims of {run_id}"
    )
    for verdict in verdicts:
        span_text = ""
        entry = entries.get(verdict.get("ledger_id") or "")
        if entry is not None and verdict.get("span"):
            start, end = verdict["span"]
            text = shown(" ".join(entry.text[start:end].split()))
            span_text = f"{entry.id}[{start}:{end}] “{text}”"
        table.add_row(
            shown(verdict["claim_id"]),
            shown(verdict["proposition"]),
            shown(verdict["label"]),
            f"{float(verdict['score']):.2f}",
            span_text or shown(verdict.get("reason", "")),
        )
    console.print(table)
    render_manifest(cp.manifest(run_id), console)


def _verifier_record(entry: LedgerEntry) -> dict[str, Any] | None:
    """A verdict entry written by the verifier, or None for any other content (the
    ledger accepts records from anyone; the audit shows the verifier's own)."""
    try:
        body = json.loads(entry.text)
    except ValueError:
        return None
    needed = ("claim_id", "proposition", "label", "score")
    if not isinstance(body, dict) or any(k not in body for k in needed):
        return None
    return cast(dict[str, Any], body)
