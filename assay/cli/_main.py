"""The ``assay`` command line: runs of any fenced graph, the ledger, the database
schema and the demo.

``run`` / ``resume`` take the graph as ``--graph module:attr`` (a factory called with
the control plane; the invoice audit by default). A finished or paused run exits 0;
user mistakes (a bad URL, an unknown thread, another graph's thread, a decision
already taken) print one clear line and exit 2; a failure at run time exits 3; a
broken chain exits 1 and names the first bad entry; ``--debug`` shows the traceback
of any failure. Every command that reads takes ``--json``.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast

import typer

from assay.cli._common import (
    DbOption,
    JsonOption,
    console,
    emit_json,
    handles_errors,
    load_reference,
    open_ledger,
    open_plane,
    set_debug,
    shown,
    styled,
)
from assay.cli._gate import gate_app
from assay.cli._groups import RootGroup
from assay.cli._render import (
    audit_claims,
    audit_pending,
    render_audit,
    render_paused,
    render_result,
    render_thread,
)
from assay.cli._runs import StatusFilter, render_runs, run_rows
from assay.cli._service import serve_command, tokens_app
from assay.errors import UsageError

if TYPE_CHECKING:
    from assay.control_plane import ControlPlane
    from assay.fence import RunResult

app = typer.Typer(
    cls=RootGroup,
    no_args_is_help=True,
    add_completion=False,
    # click's plain help: typer's rich help costs more to import than all else.
    rich_markup_mode=None,
    help=(
        "The assay command line: runs of any fenced graph, evals, the ledger, the HTTP "
        "service, the database schema and the demo.\n\n"
        "run and resume take the graph as --graph module:attr (a factory called with the "
        "control plane; the invoice audit by default). A finished or paused run exits 0; "
        "a user mistake prints one line and exits 2; a failure at run time exits 3; a "
        "broken chain or a failed eval gate exits 1. --debug shows the traceback of any "
        "failure. Every command that reads takes --json."
    ),
    pretty_exceptions_enable=False,
)
db_app = typer.Typer(
    no_args_is_help=True, rich_markup_mode=None, help="The database schema (Alembic)."
)
# ledger, tools, verifier and eval are loaded when used (assay.cli._groups).
app.add_typer(db_app, name="db")
app.add_typer(gate_app, name="gate")
app.add_typer(tokens_app, name="tokens")
app.command("serve")(serve_command)


def _version(value: bool) -> None:
    if value:
        from assay.cli._version import version_line

        typer.echo(version_line())
        raise typer.Exit()


@app.callback()
def root(
    debug: Annotated[
        bool,
        typer.Option(
            "--debug",
            envvar="ASSAY_DEBUG",
            help="Show the exception and traceback of a failure instead of one line.",
        ),
    ] = False,
    _version_flag: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    set_debug(debug)


@app.command("runs")
@handles_errors
def runs_command(
    db: DbOption = None,
    status: Annotated[
        list[StatusFilter] | None,
        typer.Option(
            "--status",
            help="Only runs in this state (repeat for several; none: runs of no graph).",
            show_default=False,
        ),
    ] = None,
    graph_name: Annotated[
        str | None, typer.Option("--graph-name", help="Only runs of this graph.")
    ] = None,
    limit: Annotated[int, typer.Option(help="At most this many runs.", min=1)] = 50,
    as_json: JsonOption = False,
) -> None:
    """List the newest runs: status, graph, age, thread and task."""
    with open_ledger(db) as cp:
        statuses = {str(item) for item in status or ()}
        rows = run_rows(cp, statuses=statuses, graph_name=graph_name, limit=limit)
    if as_json:
        emit_json(rows)
        return
    render_runs(rows, console(), filtered=bool(status or graph_name))


@db_app.command("upgrade")
@handles_errors
def db_upgrade(
    db: DbOption = None,
    revision: Annotated[str, typer.Option(help="Target revision.")] = "head",
) -> None:
    """Bring the schema to the newest revision (or ``--revision``)."""
    from assay import _db

    engine = _db.create_engine(_db.resolve_url(db))
    try:
        _db.upgrade(engine, revision)
        console().print(f"schema at {_db.current_revision(engine)}")
    finally:
        engine.dispose()


@db_app.command("current")
@handles_errors
def db_current(db: DbOption = None, as_json: JsonOption = False) -> None:
    """Print the schema revision the database is at, and the newest one."""
    from assay import _db

    url = _db.resolve_url(db)
    _refuse_missing_sqlite_file(url)
    engine = _db.create_engine(url)
    try:
        current, head = _db.current_revision(engine), _db.head_revision()
    finally:
        engine.dispose()
    if as_json:
        emit_json({"current": current, "head": head, "up_to_date": current == head})
        return
    behind = ("behind: run assay db upgrade", "yellow")
    state = ("up to date", "green") if current == head else behind
    console().print(styled(f"current {current or '(empty)'}  head {head}  ", state))


def _refuse_missing_sqlite_file(url: str) -> None:
    """A question about a SQLite file that does not exist is answered without
    creating it (opening it would)."""
    import sqlalchemy as sa
    from sqlalchemy.exc import ArgumentError

    try:
        parsed = sa.make_url(url)
    except (ArgumentError, ValueError):
        return  # create_engine says what is wrong with it
    name = parsed.database or ""
    memory = name in ("", ":memory:") or name.startswith("file::memory:")
    if parsed.get_backend_name() == "sqlite" and not memory and not Path(name).exists():
        raise UsageError(
            f"no database at {name} (nothing was created); assay db upgrade creates one"
        )


DEFAULT_GRAPH = "assay.apps.reference:graph"
DEFAULT_DEMO = "assay.apps.reference:demo"
DEFAULT_GRAPH_NAME = "assay.apps.reference:GRAPH_NAME"

GraphOption = Annotated[
    str,
    typer.Option(
        "--graph",
        help="The fenced graph, as module:attr naming a factory graph(control_plane).",
    ),
]


ResumeGraphOption = Annotated[
    str | None,
    typer.Option(
        "--graph",
        help="The fenced graph that started the thread, as module:attr naming a factory "
        "graph(control_plane); default: the invoice audit, for its threads.",
        show_default=False,
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
    as_json: JsonOption = False,
) -> None:
    """Start a fenced graph on an input, in a new thread; a run that pauses for a grant
    prints the thread to resume."""
    value = _json_input(input_)
    factory = _graph_factory(graph)
    with open_plane(db) as cp:
        result = cp.run(factory(cp), value, thread_id=thread)
        _show_result(cp, result, as_json=as_json)
    if result.status == "awaiting_grant" and not as_json:
        line = resume_command_line(result.thread_id, graph, db)
        console().print(f"resume with: {shown(line)}", soft_wrap=True)


def resume_command_line(thread_id: str, graph: str, db: str | None) -> str:
    """The exact ``assay resume`` that decides the run paused on ``thread_id``: its
    graph, and the database when one was named (``--approve`` or ``--deny`` left to
    the reader to choose, with a name to record)."""
    words = ["assay", "resume", thread_id]
    if graph != DEFAULT_GRAPH:
        words += ["--graph", graph]
    if db is not None:
        words += ["--db", db]
    words += ["--approve", "--approver", "NAME"]
    return " ".join(shlex.quote(word) for word in words)


def _show_result(cp: ControlPlane, result: RunResult, *, as_json: bool) -> None:
    if as_json:
        emit_json(result)
    else:
        render_result(cp.ledger, result, console())


@app.command("resume")
@handles_errors
def resume_command(
    thread: Annotated[str, typer.Argument(help="The thread id of the paused run.")],
    approve: Annotated[bool, typer.Option("--approve/--deny", help="Grant or refuse.")],
    approver: Annotated[str, typer.Option(help="Who decides (recorded in the ledger).")],
    reason: Annotated[str | None, typer.Option(help="Why (recorded with the decision).")] = None,
    graph: ResumeGraphOption = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Approve or deny the irreversible calls a paused run waits on, with the graph
    that started it (another graph is refused; without --graph, the thread must be
    the invoice audit's, and the error says which graph it belongs to)."""
    decision: dict[str, object] = {"approve": approve, "approver": approver}
    if reason is not None:
        decision["reason"] = reason
    with open_plane(db) as cp:
        factory = _graph_factory(graph if graph is not None else _default_graph_for(cp, thread))
        _show_result(cp, cp.resume(factory(cp), thread, decision), as_json=as_json)


def _default_graph_for(cp: ControlPlane, thread: str) -> str:
    """The invoice audit, when ``thread`` is its; otherwise a usage error that names
    the thread's graph and how to give it."""
    owner = cp.status(thread).graph_name
    if owner == load_reference(DEFAULT_GRAPH_NAME, "the default graph"):
        return DEFAULT_GRAPH
    raise UsageError(
        f"thread {thread!r} belongs to graph {owner!r}: name its factory with "
        "--graph module:attr, the one `assay run --graph` was given "
        f"(assay resume {shlex.quote(thread)} --graph MODULE:ATTR ...)"
    )


@app.command("status")
@handles_errors
def status_command(
    thread: Annotated[str, typer.Argument(help="The thread id.")],
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Where a thread stands: its graph, run and status, and the run's outcome."""
    with open_plane(db) as cp:
        found = cp.status(thread)
        if as_json:
            emit_json(found)
        else:
            render_thread(cp.ledger, found, console())


@app.command("paused")
@handles_errors
def paused_command(
    graph_name: Annotated[
        str | None, typer.Option("--graph-name", help="Only threads of this graph.")
    ] = None,
    limit: Annotated[int, typer.Option(help="At most this many threads.", min=1)] = 100,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """The threads waiting for a grant, the most recently paused first."""
    with open_plane(db) as cp:
        found = cp.paused(graph_name=graph_name, limit=limit)
    if as_json:
        emit_json(found)
    else:
        render_paused(found, console())


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
    out = console()
    with open_plane(db) as cp:
        graph = demo.graph(cp)
        results: dict[str, RunResult] = {}
        for case in demo.cases:
            out.rule(styled((shown(case.name), "bold"), f": {shown(case.task, one_line=True)}"))
            result = cp.run(graph, case.input)
            render_result(cp.ledger, result, out)
            if result.status == "awaiting_grant":
                result = _decide(cp, graph, result, approve=approve, approver=approver)
            results[case.name] = result
        audited = results[demo.audited]
        out.rule(styled(("audit", "bold"), f" of the {shown(demo.audited)} run {audited.run_id}"))
        render_audit(cp, audited.run_id, out)
        report = cp.ledger.verify()
        out.print(
            styled(
                "ledger chain: ",
                ("ok", "green") if report.ok else ("broken", "red"),
                f", {report.checked} entries in {report.runs} runs",
            )
        )


def _decide(
    cp: ControlPlane, graph: Any, result: RunResult, *, approve: bool | None, approver: str
) -> RunResult:
    """The demo's reviewer: ``--approve`` / ``--deny``, or a question on a terminal."""
    from rich.prompt import Confirm

    if approve is None:
        if not console().is_terminal:
            console().print(
                f"left pending; resume with: assay resume {shown(result.thread_id)} "
                "--approve --approver NAME"
            )
            return result
        approve = Confirm.ask("approve this irreversible call?", console=console())
    decision = {
        "approve": approve,
        "approver": approver,
        "reason": "approved in the demo" if approve else "denied in the demo",
    }
    resumed = cp.resume(graph, result.thread_id, decision)
    render_result(cp.ledger, resumed, console())
    return resumed


@app.command("audit")
@handles_errors
def audit_command(
    run: Annotated[str, typer.Argument(help="The run id (run_...).")],
    db: DbOption = None,
    as_json: Annotated[
        bool,
        typer.Option("--json", help="Print the manifest as JSON, with the audited claims."),
    ] = False,
) -> None:
    """Show a run's claims with their evidence spans and entailment, then its manifest:
    phases, artifacts, gate decisions, verdicts, grants, tool calls and errors."""
    with open_plane(db) as cp:
        if as_json:
            manifest = cp.manifest(run).model_dump(mode="json")
            pending = audit_pending(cp, run)
            emit_json({**manifest, "claims": audit_claims(cp, run), "pending": pending})
        else:
            render_audit(cp, run, console())


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
    return cast("Callable[[ControlPlane], Any]", factory)


def main() -> None:
    """Console-script entry point."""
    app()
