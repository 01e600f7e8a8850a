"""The ``assay`` command line: runs of any fenced graph, the ledger, the database
schema and the demo.

``run`` / ``resume`` take the graph as ``--graph module:attr`` (a factory called with
the control plane; the invoice audit by default). A finished or paused run exits 0;
user mistakes (a bad URL, an unknown thread, another graph's thread, a decision
already taken) print one clear line and exit 2; a failure at run time exits 3; a
broken chain exits 1 and names the first bad entry; tracebacks are for bugs only.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, cast

import typer
from rich.prompt import Confirm
from rich.table import Table

from assay import _db
from assay.cli._common import (
    DbOption,
    console,
    err_console,
    handles_errors,
    load_reference,
    open_plane,
)
from assay.cli._gate import gate_app
from assay.cli._ledger import ledger_app
from assay.cli._render import (
    render_audit,
    render_paused,
    render_result,
    render_thread,
    shown,
)
from assay.cli._tools import tools_app
from assay.cli._verifier import app as verifier_app
from assay.control_plane import ControlPlane
from assay.errors import UsageError
from assay.fence import RunResult
from assay.ledger import LedgerEntry

app = typer.Typer(no_args_is_help=True, add_completion=False, help=__doc__)
db_app = typer.Typer(no_args_is_help=True, help="The database schema (Alembic).")
app.add_typer(ledger_app, name="ledger")
app.add_typer(db_app, name="db")
app.add_typer(gate_app, name="gate")
app.add_typer(tools_app, name="tools")
app.add_typer(verifier_app, name="verifier")


@app.command("runs")
@handles_errors
def runs_command(db: DbOption = None) -> None:
    """List the ledger's runs with their entry counts and head hashes."""
    with open_plane(db) as cp:
        table = Table(title="runs")
        _columns(table, "run", "created", "entries", "head", "metadata")
        for run in cp.ledger.runs():
            table.add_row(
                run.run_id,
                run.created_at.isoformat(timespec="seconds"),
                str(run.head_seq),
                run.head_hash[:16],
                _short(str(run.metadata or "")),
            )
        console.print(table)


@ledger_app.command("show")
@handles_errors
def ledger_show(
    run: Annotated[str, typer.Argument(help="The run id (run_...).")],
    db: DbOption = None,
    width: Annotated[int, typer.Option(help="Characters of content to show.")] = 60,
) -> None:
    """Show a run's entries in chain order."""
    with open_plane(db) as cp:
        info = cp.ledger.run(run)
        table = Table(title=f"{run} (head {info.head_hash[:16]})")
        _columns(table, "seq", "id", "kind", "source", "content", "sha256")
        for entry in cp.ledger.entries(run):
            table.add_row(
                str(entry.seq),
                entry.id,
                entry.kind,
                entry.source,
                _preview(entry, width),
                entry.sha256[:12],
            )
        console.print(table)


@ledger_app.command("verify")
@handles_errors
def ledger_verify(
    run: Annotated[str | None, typer.Option("--run", help="Verify only this run.")] = None,
    db: DbOption = None,
) -> None:
    """Re-derive every hash of the chain; exit 1 and name the first bad entry if broken."""
    with open_plane(db) as cp:
        report = cp.ledger.verify(run)
    if report.ok:
        console.print(f"[green]ok[/]: {report.checked} entries in {report.runs} run(s) verified")
        return
    err_console.print(
        f"[bold red]broken[/]: run {report.run_id} entry seq {report.first_bad_seq}"
        f" ({report.entry_id or 'absent'}): {report.reason}",
        highlight=False,
    )
    raise typer.Exit(1)


@db_app.command("upgrade")
@handles_errors
def db_upgrade(
    db: DbOption = None,
    revision: Annotated[str, typer.Option(help="Target revision.")] = "head",
) -> None:
    """Bring the schema to the newest revision (or ``--revision``)."""
    engine = _db.create_engine(_db.resolve_url(db))
    try:
        _db.upgrade(engine, revision)
        console.print(f"schema at {_db.current_revision(engine)}")
    finally:
        engine.dispose()


@db_app.command("current")
@handles_errors
def db_current(db: DbOption = None) -> None:
    """Print the schema revision the database is at, and the newest one."""
    engine = _db.create_engine(_db.resolve_url(db))
    try:
        current, head = _db.current_revision(engine), _db.head_revision()
    finally:
        engine.dispose()
    state = "[green]up to date[/]" if current == head else "[yellow]behind: run assay db upgrade[/]"
    console.print(f"current {current or '(empty)'}  head {head}  {state}")


DEFAULT_GRAPH = "assay.apps.reference:graph"
DEFAULT_DEMO = "assay.apps.reference:demo"

GraphOption = Annotated[
    str,
    typer.Option(
        "--graph",
        help="The fenced graph, as module:attr naming a factory graph(control_plane).",
    ),
]


@app.command("run")
@handles_errors
def run_command(
    input_: Annotated[
        str,
        typer.Option("--input", help="The run's input: JSON text, or @file holding it."),
    ],
    graph: GraphOption = DEFAULT_GRAPH,
    thread: Annotated[str | None, typer.Option("--thread", help="Thread id to use.")] = None,
    db: DbOption = None,
) -> None:
    """Start a fenced graph on an input, in a new thread; a run that pauses for a grant
    prints the thread to resume."""
    value = _json_input(input_)
    factory = _graph_factory(graph)
    with open_plane(db) as cp:
        render_result(cp.ledger, cp.run(factory(cp), value, thread_id=thread), console)


@app.command("resume")
@handles_errors
def resume_command(
    thread: Annotated[str, typer.Argument(help="The thread id of the paused run.")],
    approve: Annotated[bool, typer.Option("--approve/--deny", help="Grant or refuse.")],
    approver: Annotated[str, typer.Option(help="Who decides (recorded in the ledger).")],
    reason: Annotated[str | None, typer.Option(help="Why (recorded with the decision).")] = None,
    graph: GraphOption = DEFAULT_GRAPH,
    db: DbOption = None,
) -> None:
    """Approve or deny the irreversible calls a paused run waits on, with the graph
    that started it (another graph is refused)."""
    decision: dict[str, object] = {"approve": approve, "approver": approver}
    if reason is not None:
        decision["reason"] = reason
    factory = _graph_factory(graph)
    with open_plane(db) as cp:
        render_result(cp.ledger, cp.resume(factory(cp), thread, decision), console)


@app.command("status")
@handles_errors
def status_command(
    thread: Annotated[str, typer.Argument(help="The thread id.")],
    db: DbOption = None,
) -> None:
    """Where a thread stands: its graph, run and status, and the run's outcome."""
    with open_plane(db) as cp:
        render_thread(cp.ledger, cp.status(thread), console)


@app.command("paused")
@handles_errors
def paused_command(
    graph_name: Annotated[
        str | None, typer.Option("--graph-name", help="Only threads of this graph.")
    ] = None,
    limit: Annotated[int, typer.Option(help="At most this many threads.", min=1)] = 100,
    db: DbOption = None,
) -> None:
    """The threads waiting for a grant, the most recently paused first."""
    with open_plane(db) as cp:
        render_paused(cp.paused(graph_name=graph_name, limit=limit), console)


@app.command("demo")
@handles_errors
def demo_command(
    db: DbOption = None,
    approve: Annotated[
        bool | None,
        typer.Option("--approve/--deny", help="Decide the pending grant (default: ask)."),
    ] = None,
    approver: Annotated[str, typer.Option(help="Reviewer name for the grant.")] = "demo-reviewer",
) -> None:
    """The invoice audit on the bundled cases: verified claims with their evidence
    spans, abstentions, a grant, the executed action, and the audit."""
    demo = load_reference(DEFAULT_DEMO, "the demo")()
    with open_plane(db) as cp:
        graph = demo.graph(cp)
        results: dict[str, RunResult] = {}
        for case in demo.cases:
            console.rule(f"[bold]{shown(case.name)}[/]: {shown(case.task)}")
            result = cp.run(graph, case.input)
            render_result(cp.ledger, result, console)
            if result.status == "awaiting_grant":
                result = _decide(cp, graph, result, approve=approve, approver=approver)
            results[case.name] = result
        audited = results[demo.audited]
        console.rule(f"[bold]audit[/] of the {shown(demo.audited)} run {audited.run_id}")
        render_audit(cp, audited.run_id, console)
        report = cp.ledger.verify()
        console.print(
            f"ledger chain: {'[green]ok' if report.ok else '[red]broken'}[/], "
            f"{report.checked} entries in {report.runs} runs"
        )


def _decide(
    cp: ControlPlane, graph: Any, result: RunResult, *, approve: bool | None, approver: str
) -> RunResult:
    """The demo's reviewer: ``--approve`` / ``--deny``, or a question on a terminal."""
    if approve is None:
        if not console.is_terminal:
            console.print(
                f"left pending; resume with: assay resume {result.thread_id} "
                "--approve --approver NAME"
            )
            return result
        approve = Confirm.ask("approve this irreversible call?", console=console)
    decision = {
        "approve": approve,
        "approver": approver,
        "reason": "approved in the demo" if approve else "denied in the demo",
    }
    resumed = cp.resume(graph, result.thread_id, decision)
    render_result(cp.ledger, resumed, console)
    return resumed


@app.command("audit")
@handles_errors
def audit_command(
    run: Annotated[str, typer.Argument(help="The run id (run_...).")],
    db: DbOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the manifest as JSON.")] = False,
) -> None:
    """Show a run's claims with their evidence spans and entailment, then its manifest:
    phases, artifacts, gate decisions, verdicts, grants, tool calls and errors."""
    with open_plane(db) as cp:
        if as_json:
            typer.echo(cp.manifest(run).to_json())
        else:
            render_audit(cp, run, console)


def _json_input(text: str) -> dict[str, Any]:
    """``--input``: JSON text, or ``@path`` of a file holding it; a JSON object."""
    if text.startswith("@"):
        path = Path(text[1:])
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"--input {path}: cannot read it ({exc})") from None
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"--input is not JSON ({exc})") from None
    if not isinstance(value, dict):
        raise UsageError('--input must be a JSON object, e.g. {"task": "..."}')
    return cast(dict[str, Any], value)


def _graph_factory(reference: str) -> Callable[[ControlPlane], Any]:
    factory = load_reference(reference)
    if not callable(factory):
        raise UsageError(f"--graph {reference} is not a factory graph(control_plane)")
    return cast(Callable[[ControlPlane], Any], factory)


def _columns(table: Table, *names: str) -> None:
    """Add columns; identifiers and hashes never wrap or shrink, they are what users copy."""
    for name in names:
        exact = name in ("run", "id", "seq", "sha256", "head", "entries")
        table.add_column(name, no_wrap=exact, min_width=None if not exact else len(name))
        if exact:
            table.columns[-1].overflow = "fold"


def _short(text: str, width: int = 40) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _preview(entry: LedgerEntry, width: int) -> str:
    if isinstance(entry.content, bytes):
        return f"<{len(entry.content)} bytes>"
    return _short(entry.content.replace("\n", " "), width)


def main() -> None:
    """Console-script entry point."""
    app()
