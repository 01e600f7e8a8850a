"""The ``assay`` command line: runs, the ledger, the database schema and the demo.

User mistakes (a bad URL, an unknown run) print one clear line and exit 2; a broken
chain exits 1 and names the first bad entry; tracebacks are for bugs only.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.table import Table

from assay import _db
from assay.control_plane import ControlPlane
from assay.errors import AssayError, UsageError
from assay.gate._cli import gate_app
from assay.ledger import LedgerEntry

app = typer.Typer(no_args_is_help=True, add_completion=False, help=__doc__)
ledger_app = typer.Typer(no_args_is_help=True, help="Show and verify the ledger.")
db_app = typer.Typer(no_args_is_help=True, help="The database schema (Alembic).")
app.add_typer(ledger_app, name="ledger")
app.add_typer(db_app, name="db")
app.add_typer(gate_app, name="gate")

console = Console()
err_console = Console(stderr=True)

DbOption = Annotated[
    str | None,
    typer.Option(
        "--db",
        envvar="ASSAY_DATABASE_URL",
        help="Database URL (default sqlite:///./assay.db).",
        show_default=False,
    ),
]

F = TypeVar("F", bound=Callable[..., Any])


def handles_errors(func: F) -> F:
    """Turn assay's exceptions into one red line and an exit status."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except AssayError as exc:
            err_console.print(f"[bold red]error:[/] {exc}", highlight=False)
            raise typer.Exit(2 if isinstance(exc, UsageError) else 3) from None

    return wrapper  # type: ignore[return-value]


def open_plane(db: str | None, *, migrate: bool = True) -> ControlPlane:
    return ControlPlane.open(db, migrate=migrate)


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
    from assay._demo import run_demo

    with open_plane(db) as cp:
        run_demo(cp, console, approve=approve, approver=approver)


@app.command("run")
@handles_errors
def run_command(
    docs: Annotated[str, typer.Option("--docs", help="Folder of .md/.txt documents.")],
    task: Annotated[str, typer.Option("--task", help="What to audit.")],
    db: DbOption = None,
    thread: Annotated[str | None, typer.Option("--thread", help="Thread id to use.")] = None,
    inject: Annotated[
        str | None, typer.Option(help="Make the agents hallucinate on purpose (a class name).")
    ] = None,
    agents: Annotated[
        str, typer.Option(help="'rules' (offline, exact) or 'llm' (the ASSAY_MODEL chat model).")
    ] = "rules",
) -> None:
    """Run the fenced reference graph on your own documents."""
    from assay._demo import render_result

    with open_plane(db) as cp:
        result = cp.run(task, docs, thread_id=thread, inject=inject, agents=agents)
        render_result(cp, result, console)


@app.command("resume")
@handles_errors
def resume_command(
    thread: Annotated[str, typer.Argument(help="The thread id of the paused run.")],
    approve: Annotated[bool, typer.Option("--approve/--deny", help="Grant or refuse.")],
    approver: Annotated[str, typer.Option(help="Who decides (recorded in the ledger).")],
    reason: Annotated[str | None, typer.Option(help="Why (recorded on a denial).")] = None,
    db: DbOption = None,
) -> None:
    """Approve or deny the irreversible call a paused run is waiting on."""
    from assay._demo import render_result

    decision = {"approve": approve, "approver": approver, "reason": reason or ""}
    with open_plane(db) as cp:
        render_result(cp, cp.resume(thread, decision), console)


@app.command("audit")
@handles_errors
def audit_command(
    run: Annotated[str, typer.Argument(help="The run id (run_...).")],
    db: DbOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the manifest as JSON.")] = False,
) -> None:
    """Show a run's claims with their evidence spans and entailment, then its manifest:
    phases, artifacts, gate decisions, verdicts, grants, tool calls and errors."""
    from assay._demo import render_audit

    with open_plane(db) as cp:
        if as_json:
            typer.echo(cp.manifest(run).to_json())
        else:
            render_audit(cp, run, console)


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


from assay.tool_bus._cli import tools_app  # noqa: E402  (it imports the helpers above)

app.add_typer(tools_app, name="tools")

from assay.verifier._cli import app as verifier_app  # noqa: E402

app.add_typer(verifier_app, name="verifier")
