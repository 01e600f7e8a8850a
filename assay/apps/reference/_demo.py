"""``assay demo``: the reference invoice audit on the bundled cases, shown end to end.

For each case it prints the verified claims with the exact ledger spans that support
them, the abstentions with what is missing, the pending grant (approved with
``--approve``, asked for interactively, or left pending with the command that
resumes it), the executed action, and finally the over-cap run's audit.
"""

from __future__ import annotations

import json
from typing import Any, cast

from rich.console import Console
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from assay.control_plane import ControlPlane
from assay.graph import RunResult
from assay.graph.reference import cases
from assay.ledger import LedgerEntry

DEMO_CASES = ("compliant", "over_cap", "small_overage", "uncovered_rate")


def render_result(cp: ControlPlane, result: RunResult, console: Console) -> None:
    """A run's outcome: status, answer, evidence spans, abstentions, grants, actions."""
    colour = {
        "answered": "green",
        "abstained": "yellow",
        "awaiting_grant": "cyan",
        "failed": "red",
    }[result.status]
    console.print(
        f"[bold {colour}]{result.status}[/] run {result.run_id} "
        f"thread {result.thread_id} (rounds {result.rounds})",
        highlight=False,
    )
    if result.answer:
        console.print(Panel(Text(result.answer), title="answer", expand=False))
    _evidence_table(cp, result, console)
    for item in result.unsupported:
        console.print(
            f"[yellow]unsupported[/] {item.proposition}\n    missing: {item.missing_evidence}",
            highlight=False,
        )
    for error in result.errors:
        console.print(
            f"[red]gate[/] {error['code']} at {error['path']}: {error['message']}", highlight=False
        )
    for pending in result.pending_grants:
        console.print(
            f"[cyan]pending grant[/] {pending.tool}@{pending.version} "
            f"{pending.args} (args sha256 {pending.args_sha256[:16]}…)",
            highlight=False,
        )
        for claim in pending.claims:
            console.print(f"    rests on {claim['id']}: {claim['text']}", highlight=False)
    for action in result.actions:
        detail = action.output if action.status == "executed" else (action.reason or action.error)
        console.print(
            f"[bold]action[/] {action.tool} {action.status}"
            f"{' by ' + action.approver if action.approver else ''}: {detail}",
            highlight=False,
        )


def _evidence_table(cp: ControlPlane, result: RunResult, console: Console) -> None:
    verdicts = [(c, p) for c in result.claims for p in c.propositions if p.entailment]
    if not verdicts:
        return
    ids = {p.entailment.ledger_id for _, p in verdicts if p.entailment and p.entailment.ledger_id}
    entries = cp.ledger.get_many(ids)
    table = Table(
        "claim",
        "entailment",
        "score",
        "evidence (ledger id: exact span)",
        title="verified claims",
        show_lines=False,
    )
    for claim, prop in verdicts:
        verdict = prop.entailment
        assert verdict is not None
        span = ""
        if verdict.ledger_id in entries and verdict.span:
            text = entries[verdict.ledger_id].text[verdict.span[0] : verdict.span[1]]
            span = f"{verdict.ledger_id}: “{' '.join(text.split())[:110]}”"
        table.add_row(claim.id, verdict.label, f"{verdict.score:.2f}", span)
    console.print(table)


def render_audit(cp: ControlPlane, run_id: str, console: Console) -> None:
    """A run's claims as audited: each proposition's verdict and the exact ledger span
    it rests on, then its grants and actions, then the full manifest."""
    from assay.gate._cli import render_manifest

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
            span_text = f"{entry.id}[{start}:{end}] “{' '.join(entry.text[start:end].split())}”"
        table.add_row(
            str(verdict["claim_id"]),
            str(verdict["proposition"]),
            str(verdict["label"]),
            f"{float(verdict['score']):.2f}",
            span_text or str(verdict.get("reason", "")),
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


def run_demo(
    cp: ControlPlane, console: Console, *, approve: bool | None, approver: str = "demo-reviewer"
) -> dict[str, RunResult]:
    """Run every demo case; ``approve`` None asks on the terminal, True/False decides."""
    results: dict[str, RunResult] = {}
    for name in DEMO_CASES:
        folder = cases()[name]
        task = (folder / "task.txt").read_text(encoding="utf-8").strip()
        console.rule(f"[bold]{name}[/]: {task}")
        result = cp.run(task, folder)
        render_result(cp, result, console)
        if result.status == "awaiting_grant":
            result = _decide(cp, result, console, approve=approve, approver=approver)
        results[name] = result
    flagged = results["over_cap"]
    console.rule(f"[bold]audit[/] of the over-cap run {flagged.run_id}")
    render_audit(cp, flagged.run_id, console)
    report = cp.ledger.verify()
    console.print(
        f"ledger chain: {'[green]ok' if report.ok else '[red]broken'}[/], "
        f"{report.checked} entries in {report.runs} runs"
    )
    return results


def _decide(
    cp: ControlPlane,
    result: RunResult,
    console: Console,
    *,
    approve: bool | None,
    approver: str,
) -> RunResult:
    if approve is None:
        if not console.is_terminal:
            console.print(
                f"left pending; resume with: assay resume {result.thread_id} "
                "--approve --approver NAME"
            )
            return result
        from rich.prompt import Confirm

        approve = Confirm.ask("approve this irreversible call?", console=console)
    decision = {
        "approve": approve,
        "approver": approver,
        "reason": "approved in the demo" if approve else "denied in the demo",
    }
    resumed = cp.resume(result.thread_id, decision)
    render_result(cp, resumed, console)
    return resumed
