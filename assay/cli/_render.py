"""Showing runs on the terminal: a run's outcome, a thread's state, the paused
threads, and a run's audit. Generic: any fenced graph's results render the same way.

Everything shown comes from agents, tools, reviewers or documents, so it is data: the
consoles parse no markup (see :mod:`assay.cli._common`) and :func:`shown` makes
control characters visible.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from rich.console import Console
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from assay.cli._common import age, fit_line, shown, styled
from assay.cli._gate import render_manifest
from assay.errors import UnknownThread

if TYPE_CHECKING:
    from assay.contract import Unsupported
    from assay.control_plane import ControlPlane
    from assay.fence import RoundReasons, RunResult, ThreadStatus
    from assay.ledger import Ledger

__all__ = [
    "STATUS_COLOURS",
    "audit_pending",
    "render_audit",
    "render_paused",
    "render_result",
    "render_thread",
]

STATUS_COLOURS = {
    "answered": "green",
    "denied": "magenta",
    "incomplete": "red",
    "abstained": "yellow",
    "awaiting_grant": "cyan",
    "failed": "red",
    "running": "blue",
}


def _status(status: str) -> tuple[str, str]:
    return (shown(status), f"bold {STATUS_COLOURS.get(status, 'default')}")


def render_result(ledger: Ledger, result: RunResult, console: Console) -> None:
    """A run's outcome: status, answer, evidence spans, abstentions, grants, actions."""
    console.print(
        styled(
            _status(result.status),
            f" run {shown(result.run_id)} thread {shown(result.thread_id)} "
            f"(rounds {result.rounds})",
        )
    )
    if result.answer:
        console.print(Panel(Text(shown(result.answer)), title="answer", expand=False))
    _evidence_table(ledger, result, console)
    _reasons(result.unsupported, result.errors, console)
    for past in _earlier_rounds(result):
        console.print(styled((f"round {past.round + 1} was sent back:", "dim")))
        _reasons(past.unsupported, past.errors, console, indent="  ")
    for pending in result.pending_grants:
        console.print(
            styled(
                ("pending grant", "cyan"),
                f" {shown(pending.tool)}@{shown(pending.version)} {shown(pending.args)} "
                f"(args sha256 {pending.args_sha256[:16]}…)",
            )
        )
        for claim in pending.claims:
            console.print(f"    rests on {shown(claim.get('id'))}: {shown(claim.get('text'))}")
        for reason in pending.policy:
            console.print(f"    not approved by policy: {shown(reason)}")
    for action in result.actions:
        detail: object = action.output if action.status == "executed" else action.reason
        if action.status != "executed" and action.error is not None:
            # The code and its one-line message; the full record is in the ledger.
            detail = f"{action.error.get('code')}: {action.error.get('message')}"
        by = f" by {shown(action.approver)}" if action.approver else ""
        console.print(
            styled(
                ("action", "bold"),
                f" {shown(action.tool)} {action.status}{by}: {shown(detail)}",
            )
        )


def _reasons(
    unsupported: Sequence[Unsupported],
    errors: Sequence[Mapping[str, Any]],
    console: Console,
    *,
    indent: str = "",
) -> None:
    """What was not established and why, then the gate's findings, each once."""
    for item in unsupported:
        console.print(
            styled(
                indent,
                ("unsupported", "yellow"),
                f" {shown(item.proposition)}\n{indent}    missing: {shown(item.missing_evidence)}",
            )
        )
    for error in errors:
        console.print(
            styled(
                indent,
                ("gate", "red"),
                f" {shown(error.get('code'))} at {shown(error.get('path'))}: "
                f"{shown(error.get('message'))}",
            )
        )


def _earlier_rounds(result: RunResult) -> list[RoundReasons]:
    """The refused rounds before the last one (an abstained run's last refused round
    is the one its ``unsupported`` and ``errors`` already show)."""
    rounds = list(result.round_reasons)
    if rounds and (rounds[-1].errors, rounds[-1].unsupported) == (
        result.errors,
        result.unsupported,
    ):
        rounds.pop()
    return rounds


def _evidence_table(ledger: Ledger, result: RunResult, console: Console) -> None:
    verdicts = [p for c in result.claims for p in c.propositions if p.entailment]
    if not verdicts:
        return
    ids = {p.entailment.ledger_id for p in verdicts if p.entailment and p.entailment.ledger_id}
    entries = ledger.get_many(ids)
    table = Table(title="verified claims")
    for column in ("proposition", "entailment", "score"):
        table.add_column(column)
    table.add_column("evidence (ledger id: where it states the values)", overflow="fold")
    for prop in verdicts:
        verdict = prop.entailment
        assert verdict is not None
        entry = entries.get(verdict.ledger_id or "")
        span = Text("")
        if entry is not None and verdict.span:
            span = evidence_text(entry.id, entry.text, verdict.span, prop.text)
        label = f"{shown(prop.id)}\n{shown(prop.text, 80)}"
        table.add_row(label, shown(verdict.label), f"{verdict.score:.2f}", span)
    console.print(table)


#: Characters of evidence shown either side of a value it states, on the terminal.
_CONTEXT = 24
_MAX_SPAN = 110
_SPACES = re.compile(r"\s+")


def evidence_text(
    ledger_id: str, stored: str, span: Sequence[int], statement: str, *, context: int = _CONTEXT
) -> Text:
    """``ledger_id: “…”``: where the entry states the statement's values (each one
    highlighted, with a little context), else the verifier's span, cut to 110
    characters. White space is made single and control characters visible."""
    from assay.grounding import marked_excerpt, value_spans

    marks = value_spans(statement, stored)
    if marks:
        pieces = marked_excerpt(stored, marks, context=context)
    else:
        start, end = span[0], span[1]
        pieces = [(shown(" ".join(stored[start:end].split()), _MAX_SPAN), False)]
    text = Text(f"{shown(ledger_id)}: “")
    for piece, marked in pieces:
        text.append(shown(_SPACES.sub(" ", piece)), style="bold reverse" if marked else "")
    text.append("”")
    return text


def render_thread(ledger: Ledger, status: ThreadStatus, console: Console) -> None:
    """Where a thread stands: its graph, run and status, then its run's outcome."""
    console.print(
        styled(
            f"thread {shown(status.thread_id)}: ",
            _status(status.status),
            f" graph {shown(status.graph_name)} version {shown(status.graph_version)} "
            f"run {shown(status.run_id or '-')} (updated "
            f"{status.updated_at.isoformat(timespec='seconds')})",
        )
    )
    if status.result is not None:
        render_result(ledger, status.result, console)


def render_paused(threads: Sequence[ThreadStatus], console: Console) -> None:
    """The threads waiting for a grant, two lines each, cut to the console's width: the
    run, how long it has waited and its graph, then the thread and the calls it waits on."""
    if not threads:
        console.print("no thread is waiting for a grant")
        return
    ages = [age(item.updated_at) for item in threads]
    run_w = max(3, *(len(shown(item.run_id or "-")) for item in threads))
    age_w = max(6, *(len(a) for a in ages))
    header = f"{'RUN'.ljust(run_w)}  {'WAITED'.rjust(age_w)}  GRAPH"
    fit_line(console, Text(header, style="bold"))
    for item, waited in zip(threads, ages, strict=True):
        graph = f"{shown(item.graph_name, one_line=True)} v{shown(item.graph_version)}"
        line = f"{shown(item.run_id or '-').ljust(run_w)}  {waited.rjust(age_w)}  {graph}"
        fit_line(console, Text(line))
        pending = item.result.pending_grants if item.result is not None else ()
        calls = ", ".join(
            f"{shown(p.tool)}@{shown(p.version)} {shown(p.args, one_line=True)}" for p in pending
        )
        details = f"thread {shown(item.thread_id, one_line=True)} · waits on {calls or '-'}"
        fit_line(console, Text("    " + details, style="dim"))


def render_audit(cp: ControlPlane, run_id: str, console: Console) -> None:
    """A run's claims as audited: each proposition's verdict and the exact ledger span
    it rests on, then its grants and actions, then the full manifest."""
    manifest = cp.manifest(run_id)
    table = Table(title=f"claims of {shown(run_id)}")
    for column in ("claim", "proposition", "entailment", "score"):
        table.add_column(column)
    table.add_column("evidence: where it states the values", overflow="fold")
    rows = audit_claims(cp, run_id)
    entries = cp.ledger.get_many(r["ledger_id"] for r in rows if r["ledger_id"])
    for row in rows:
        entry = entries.get(row["ledger_id"] or "")
        span_text: Text | str = shown(row["reason"] or "")
        if row["span"] is not None and entry is not None:
            span_text = evidence_text(entry.id, entry.text, row["span"], str(row["proposition"]))
        table.add_row(
            shown(row["claim_id"]),
            shown(row["proposition"]),
            # The label, and under it what decided it (a check's id or the model).
            f"{shown(row['label'])}\n{shown(decided_by(row))}",
            f"{row['score']:.2f}",
            span_text,
        )
    console.print(table)
    for call in audit_pending(cp, run_id):
        console.print(
            styled(
                ("pending grant", "cyan"),
                f" {shown(call['tool'])}@{shown(call['version'])} {shown(call['args'])}",
            )
        )
        for reason in call["policy"]:
            console.print(f"    not approved by policy: {shown(reason)}")
    render_manifest(manifest, console)


def audit_pending(cp: ControlPlane, run_id: str) -> list[dict[str, Any]]:
    """The calls the run waits on for a grant (none unless its thread is paused on
    it), each with why no policy rule approved it."""
    thread: Any = cp.ledger.run(run_id).metadata.get("thread_id")
    if not isinstance(thread, str) or not thread:
        return []
    try:
        found = cp.status(thread)
    except UnknownThread:
        return []
    if found.run_id != run_id or found.result is None:
        return []
    return [
        {
            "intent_id": p.intent_id,
            "tool": p.tool,
            "version": p.version,
            "args": p.args,
            "args_sha256": p.args_sha256,
            "depends_on": list(p.depends_on),
            "policy": list(p.policy),
        }
        for p in found.result.pending_grants
    ]


def decided_by(row: Mapping[str, Any]) -> str:
    """What decided a verdict: the deterministic check's id, or the model's id (a
    verdict recorded before checks were named shows its model alone)."""
    check, model = row.get("check"), row.get("model")
    if check == "model" or check is None:
        return str(model or "")
    return str(check)


def audit_claims(cp: ControlPlane, run_id: str) -> list[dict[str, Any]]:
    """The verifier's verdicts on the run's propositions, each with the exact span of
    the ledger entry it rests on (``quote``, white space made single)."""
    from assay.verifier import audited_verdicts

    return [
        {
            "claim_id": v.record["claim_id"],
            "proposition": v.record["proposition"],
            "label": v.record["label"],
            "score": _score(v.record["score"]),
            "ledger_id": v.entry.id if v.entry is not None else None,
            "span": v.span,
            "quote": " ".join(v.quote.split()) if v.quote is not None else None,
            "reason": v.record.get("reason"),
            # What decided it: a deterministic check's id, or ``model`` (with the
            # model's id and score).
            "check": v.record.get("check"),
            "model": v.record.get("model"),
            # Where the proposition points: each citation with what it names.
            **({"cites": v.cites} if v.cites else {}),
        }
        for v in audited_verdicts(cp.ledger, run_id)
    ]


def _score(value: object) -> float:
    try:
        return float(cast(Any, value))
    except (TypeError, ValueError):
        return float("nan")
