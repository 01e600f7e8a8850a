"""Command-line pieces of the gate: ``assay gate schema`` and the ``assay audit`` view."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import typer
from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from assay.cli._common import shown

if TYPE_CHECKING:
    from pydantic import JsonValue

    from assay.gate import Record, RunManifest

gate_app = typer.Typer(
    no_args_is_help=True,
    rich_markup_mode=None,
    help="The non-LLM gate and its hand-over contract.",
)


@gate_app.command("schema")
def schema_command() -> None:
    """Print the versioned JSON Schema of the hand-over contract."""
    from assay.contract import handover_json_schema_text

    typer.echo(handover_json_schema_text(), nl=False)


def render_manifest(manifest: RunManifest, console: Console) -> None:
    """Show a run manifest as a header and one table per part of the run."""
    chain = (
        ("chain ok", "green")
        if manifest.chain_ok
        else Text.assemble(("chain broken", "red"), f": {shown(manifest.chain_problem or '')}")
    )
    header = Text.assemble(
        (shown(manifest.run_id), "bold"),
        f"  created {shown(manifest.created_at)}\n"
        f"{manifest.entries} entries  head {shown(manifest.head_hash[:16])}  ",
        chain,
    )
    console.print(Panel(header, title="audit", expand=False))
    parts = [
        _phases(manifest),
        _decisions(manifest),
        _artifacts(manifest),
        *(
            _records(title, records)
            for title, records in (
                ("tool calls", manifest.tool_calls),
                ("verdicts", manifest.verdicts),
                ("unsupported", manifest.unsupported),
                ("grants", manifest.grants),
                ("errors", manifest.errors),
            )
            if records
        ),
    ]
    console.print(Group(*parts))


def _table(title: str, *columns: str) -> Table:
    table = Table(title=title, title_justify="left")
    for name in columns:
        exact = name in ("id", "seq", "sha256", "handover", "decision", "seqs")
        table.add_column(name, no_wrap=exact, overflow="fold" if exact else "ellipsis")
    return table


def _phases(manifest: RunManifest) -> Table:
    table = _table("phases", "#", "agent", "status", "seqs", "entries")
    colours = {"accepted": "green", "rejected": "red", "open": "yellow"}
    for phase in manifest.phases:
        kinds = ", ".join(f"{shown(k)} {n}" for k, n in sorted(phase.kinds.items()))
        table.add_row(
            str(phase.index),
            shown(phase.agent or "-"),
            Text(shown(phase.status), colours.get(phase.status, "default")),
            f"{phase.first_seq}-{phase.last_seq}",
            kinds,
        )
    return table


def _decisions(manifest: RunManifest) -> Table:
    table = _table("gate decisions", "seq", "decision", "agent", "accepted", "codes")
    for d in manifest.gate_decisions:
        mark = Text("yes", "green") if d.accepted else Text("no", "red")
        table.add_row(
            str(d.seq),
            shown(d.ledger_id),
            shown(d.from_agent or "-"),
            mark,
            shown(", ".join(d.codes)),
        )
    return table


def _artifacts(manifest: RunManifest) -> Table:
    table = _table("artifacts (citable evidence)", "seq", "id", "kind", "source", "sha256")
    for a in manifest.artifacts:
        table.add_row(
            str(a.seq), shown(a.ledger_id), shown(a.kind), shown(a.source), shown(a.sha256[:12])
        )
    return table


def _records(title: str, records: list[Record]) -> Table:
    table = _table(title, "seq", "id", "source", "content")
    for r in records:
        table.add_row(str(r.seq), shown(r.ledger_id), shown(r.source), _preview(r.content))
    return table


def _preview(value: JsonValue, width: int = 80) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return shown(text, width, one_line=True)
