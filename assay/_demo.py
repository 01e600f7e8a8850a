"""The ledger walk-through that ``assay demo`` runs until the reference graph lands."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from assay.control_plane import ControlPlane

_LETTER = (
    "Engagement letter, section 4.2: hourly rates are capped at EUR 380 for senior "
    "associates and EUR 250 for associates."
)
_INVOICE_LINE = "Invoice INV-4421, line 14: senior associate, 12.5 h at EUR 450/h."


def ledger_walkthrough(cp: ControlPlane, console: Console) -> str:
    """Append evidence and records to a fresh run, show it, verify it; return its id."""
    ledger = cp.ledger
    run_id = ledger.start_run(metadata={"demo": "ledger walk-through"})
    console.print(f"[bold]run[/] {run_id}")
    letter = ledger.append(run_id, kind="retrieval", source="letter.md#4.2", content=_LETTER)
    line = ledger.append(
        run_id,
        kind="tool_output",
        source="read_invoice@1.0.0",
        content=_INVOICE_LINE,
        metadata={"line": 14},
    )
    again = ledger.append(run_id, kind="retrieval", source="letter.md#4.2", content=_LETTER)
    console.print(
        f"appending the letter twice returns one entry: {letter.id} == {again.id} -> "
        f"{letter.id == again.id}"
    )
    ledger.append(
        run_id,
        kind="handover",
        source="analyst",
        content=f'{{"claim": "line 14 exceeds the cap", "cites": ["{letter.id}", "{line.id}"]}}',
    )
    table = Table("seq", "id", "kind", "source", "sha256", "prev_hash", title="chain")
    for entry in ledger.entries(run_id):
        table.add_row(
            str(entry.seq),
            entry.id,
            entry.kind,
            entry.source,
            entry.sha256[:12],
            entry.prev_hash[:12],
        )
    console.print(table)
    report = ledger.verify(run_id)
    status = "[green]ok[/]" if report.ok else f"[red]broken at seq {report.first_bad_seq}[/]"
    console.print(f"verify: {status}, {report.checked} entries; head {ledger.head(run_id)[:16]}")
    console.print(
        "evidence an agent may cite: "
        + ", ".join(e.id for e in ledger.evidence(run_id))
        + " (the hand-over itself is audit trail, never evidence)"
    )
    return run_id
