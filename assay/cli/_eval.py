"""``assay eval``: run a frozen eval suite on a fenced graph and gate the deploy on it
(``assay eval SUITE`` is ``assay eval run SUITE``), and read the recorded trend
(``assay eval history``).

Every run is recorded in the database (``eval_runs``, append-only). Exit status of
a run: 0 when the gate passes, 1 when a metric drops by 2 points or more against the
baseline, side-effect hygiene is below 100% or a case could not run, 2 for a usage
mistake (a bad suite, a baseline of another suite), 3 for a failure at run time.
"""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC
from difflib import get_close_matches
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast

import typer
from rich.table import Table
from rich.text import Text
from typer.core import TyperGroup

from assay import evals
from assay.cli._common import (
    DbOption,
    JsonOption,
    console,
    emit_json,
    err_console,
    fit_line,
    handles_errors,
    jsonable,
    load_reference,
    open_plane,
    shown,
    styled,
)
from assay.cli._progress import progress_bar
from assay.errors import UsageError

if TYPE_CHECKING:
    from assay.control_plane import GraphFactory
    from assay.evals import (
        CaseDone,
        CaseRun,
        EvalCase,
        EvalReport,
        EvalRunRecord,
        RegressionGateResult,
        Suite,
    )

__all__ = ["DefaultCommandGroup", "eval_app", "eval_command", "history_command"]


class DefaultCommandGroup(TyperGroup):
    """A group whose first argument is a sub-command's name or, when it names none,
    the first argument of the default sub-command: ``assay eval SUITE`` runs
    ``assay eval run SUITE``."""

    default_command = "run"

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        help_names = set(self.get_help_option_names(ctx))
        if args and args[0] not in self.commands and args[0] not in help_names:
            args = [self.default_command, *args]
        return super().parse_args(ctx, args)


eval_app = typer.Typer(
    cls=DefaultCommandGroup,
    rich_markup_mode=None,
    no_args_is_help=True,
    add_completion=False,
    help=(
        "Run a frozen eval suite on a fenced graph and gate the deploy on it "
        "(assay eval SUITE is assay eval run SUITE); read the recorded runs "
        "(assay eval history).\n\n"
        "Every run is recorded in the database. A run exits 0 when the gate passes, "
        "1 when it fails, 2 for a mistake, 3 for a failure at run time."
    ),
    short_help="Run an eval suite and gate the deploy on it; the recorded trend.",
)


@eval_app.command("run")
@handles_errors
def eval_command(
    suite: Annotated[Path, typer.Argument(help="The suite file (.yaml, .yml or .json).")],
    graph: Annotated[
        str,
        typer.Option(
            "--graph",
            help="The fenced graph, as module:attr naming a factory graph(control_plane).",
        ),
    ],
    baseline: Annotated[
        Path | None,
        typer.Option("--baseline", help="The baseline file (JSON) to compare with."),
    ] = None,
    update_baseline: Annotated[
        bool,
        typer.Option("--update-baseline", help="Record this evaluation as the baseline."),
    ] = False,
    jobs: Annotated[int, typer.Option("--jobs", help="Cases run in this many processes.")] = 1,
    db: DbOption = None,
    as_json: JsonOption = False,
    report_dir: Annotated[
        Path | None,
        typer.Option("--report", help="Write DIR/eval-report.html: metrics, trend, audits."),
    ] = None,
    only: Annotated[
        list[str] | None,
        typer.Option(
            "--case",
            metavar="ID",
            help=(
                "Run only this case (repeat for more): a check of those cases against "
                "their expectations, neither gated nor recorded."
            ),
        ),
    ] = None,
    ray: Annotated[
        str | None,
        typer.Option(
            "--ray",
            metavar="ADDRESS",
            help=(
                "Run the cases as Ray tasks (--jobs actors) on the cluster at ADDRESS "
                "(host:port); 'auto': RAY_ADDRESS, a local `ray start`, else a new local "
                "one. Needs the ray extra."
            ),
        ),
    ] = None,
) -> None:
    """Run every case of SUITE on the fenced graph, gate the deploy on the result and
    record the run in the database (exit 1 when the gate fails)."""
    loaded = evals.load_suite(suite)
    _check_options(only, baseline, update_baseline, report_dir)
    if only:
        loaded = replace(loaded, cases=_selected(loaded, only))
    recorded = None
    if baseline is not None and not update_baseline:
        recorded = evals.read_baseline(baseline, suite_id=loaded.id)  # refused before any run
    factory = load_reference(graph)
    if not callable(factory):
        raise UsageError(f"--graph {graph} is not a factory graph(control_plane)")
    with _progress(len(loaded.cases), shown_if=not as_json) as on_case:
        report = evals.evaluate(
            loaded,
            cast("GraphFactory", factory),
            database_url=db,
            jobs=jobs,
            on_case=on_case,
            ray=False if ray is None else (True if ray.strip() in ("", "auto") else ray),
        )
    if only:
        _check_cases(report, as_json=as_json)
        return
    result = evals.check_regressions(report, recorded)
    with open_plane(db) as cp:
        kept_baseline = baseline if recorded is not None else None
        kept = evals.record_eval(cp, report, result, baseline=kept_baseline)
        past = evals.eval_history(cp, suite_id=report.suite_id)[::-1] if report_dir else []
    if report_dir is not None:  # the HTML report, with the audit of each failed case
        page = evals.write_report_dir(
            report, report_dir, baseline=recorded, history=past, database_url=db
        )
        err_console().print(f"report written to {shown(str(page))}")
    if as_json:
        emit_json({"report": jsonable(report), "gate": jsonable(result), "recorded": kept.id})
    else:
        _render(report, result)
        err_console().print(f"recorded as {kept.id} (assay eval history)")
    if update_baseline and baseline is not None and result.passed:
        evals.write_baseline(report, baseline)
        err_console().print(f"baseline written to {shown(str(baseline))} (suite {report.suite_id})")
    if not result.passed:
        raise typer.Exit(1)


def _check_options(
    only: list[str] | None, baseline: Path | None, update_baseline: bool, report_dir: Path | None
) -> None:
    """Options that cannot go together, refused before any case runs, not after all
    of them."""
    if only and (baseline is not None or update_baseline or report_dir is not None):
        raise UsageError(
            "--case runs part of the suite, which is neither gated nor recorded: "
            "drop --baseline, --update-baseline and --report"
        )
    if update_baseline and baseline is None:
        raise UsageError("--update-baseline needs --baseline FILE: where to record it")
    if update_baseline and baseline is not None and not baseline.parent.is_dir():
        raise UsageError(f"--baseline {baseline}: its folder does not exist")


def _selected(suite: Suite, ids: list[str]) -> tuple[EvalCase, ...]:
    """The cases ``--case`` names, in the suite's order; a name it lacks is refused
    with the ids closest to it."""
    known = [case.id for case in suite.cases]
    for case_id in ids:
        if case_id not in known:
            close = get_close_matches(case_id, known, n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise UsageError(f"suite {suite.name!r} has no case {case_id!r}{hint}")
    return tuple(case for case in suite.cases if case.id in ids)


def _check_cases(report: EvalReport, *, as_json: bool) -> None:
    """Report the cases ``--case`` ran against their expectations; exit 1 when one
    falls short."""
    shortfalls = {case.case_id: case.shortfalls() for case in report.cases}
    if as_json:
        emit_json({"report": jsonable(report), "shortfalls": shortfalls})
    else:
        _cases(report)
        for case_id, found in shortfalls.items():
            if not found:
                console().print(f"case {shown(case_id)} meets its expectations")
            for line in found:
                err_console().print(f"case {shown(case_id)}: {shown(line, 300)}", soft_wrap=True)
    if any(shortfalls.values()):
        raise typer.Exit(1)


def _render(report: EvalReport, result: RegressionGateResult) -> None:
    header = f" suite {report.suite_id}: {report.metrics.cases} cases"
    console().print(styled((shown(report.suite_name), "bold"), header))
    table = Table(title="metrics")
    for column in ("metric", "value", "baseline", "change"):
        table.add_column(column)
    before = {m.name: m for m in result.metrics}
    for name, value in report.metrics.gated().items():
        change = before.get(name)
        table.add_row(
            name + (" (lower is better)" if evals.GATED_METRICS[name] == "lower" else ""),
            _pct(value),
            _pct(change.baseline) if change else "",
            _points(change.points if change else None, regressed=bool(change and change.regressed)),
        )
    console().print(table)
    _timings(report)
    _checks(report)
    _cases(report)
    target = console() if result.passed else err_console()
    for line in result.summary().splitlines():
        target.print(shown(line), soft_wrap=True)


def _checks(report: EvalReport) -> None:
    """Which check decided how many verdicts, and how often gold agrees."""
    table = Table(title="what decided the verdicts")
    for column in ("check", "decided", "entailed", "refused", "precision"):
        table.add_column(column)
    for found in evals.check_precision(report.cases):
        table.add_row(
            shown(found.check),
            str(found.decided),
            str(found.entailed),
            str(found.refused),
            _pct(found.precision),
        )
    if table.row_count:
        console().print(table)


def _timings(report: EvalReport) -> None:
    m = report.metrics
    parts = [
        f"rounds {m.rounds_mean:.2f}/case" if m.rounds_mean is not None else "",
        f"latency {m.latency_mean_s:.2f} s/case (max {m.latency_max_s:.2f} s)"
        if m.latency_mean_s is not None and m.latency_max_s is not None
        else "",
        f"model {m.model_s:.2f} s" if m.model_s is not None else "model time n/a",
    ]
    console().print("  ".join(p for p in parts if p))


def _cases(report: EvalReport) -> None:
    table = Table(title="cases")
    for column in ("case", "status", "expected", "faithful", "facts", "actions", "hygiene"):
        table.add_column(column)
    for case in report.cases:
        table.add_row(
            shown(case.case_id),
            shown(case.status or f"error: {case.error}", 80),
            case.expected_status,
            f"{case.faithful_claims}/{case.answered_claims}",
            f"{case.facts_established}/{case.facts}",
            f"{len(case.actions_taken)}/{len(case.expected_actions)}",
            "ok"
            if not case.hygiene_violations
            else styled((f"{len(case.hygiene_violations)}", "red")),
        )
    console().print(table)
    for case in report.cases:
        if case.expected_actions or case.actions_taken:
            console().print(
                f"case {shown(case.case_id)}: actions expected: {_actions(case.expected_actions)}"
                f"; taken: {_actions(case.actions_taken)}",
                soft_wrap=True,
            )


def _actions(calls: tuple[str, ...]) -> str:
    """Calls, ``tool {args}`` each, or ``none``."""
    return ", ".join(shown(call, 200, one_line=True) for call in calls) if calls else "none"


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def _points(points: float | None, *, regressed: bool) -> str | Text:
    if points is None:
        return ""
    text = f"{points:+.1f} pts"
    return styled((text, "red")) if regressed else text


@contextmanager
def _progress(total: int, *, shown_if: bool) -> Generator[CaseDone | None]:
    """A progress bar of the cases on stderr while they run (see
    :func:`progress_bar`), labelled with the case that finished last."""
    with progress_bar(shown_if=shown_if) as update:
        if update is None:
            yield None
            return
        finished = 0

        def done(run: CaseRun) -> None:
            nonlocal finished
            finished += 1
            update(finished, total, f"case {shown(run.case_id, 40, one_line=True)}")

        update(0, total, "cases")
        yield done


@eval_app.command("history")
@handles_errors
def history_command(
    suite: Annotated[
        str | None,
        typer.Option("--suite", help="Only runs of this suite: its id (ste_...) or its file."),
    ] = None,
    graph_name: Annotated[
        str | None, typer.Option("--graph-name", help="Only runs of this graph.")
    ] = None,
    limit: Annotated[int, typer.Option(help="At most this many runs.", min=1)] = 20,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """The recorded eval runs, newest first: when, the gated metrics, whether the gate
    passed, the graph and the suite. Red: a metric down 2 points or more against
    the previous run of the suite on the same graph."""
    suite_id = _suite_id(suite)
    with open_plane(db) as cp:
        records = evals.eval_history(cp, suite_id=suite_id, graph_name=graph_name, limit=limit)
    if as_json:
        emit_json(records)
        return
    _render_history(records, filtered=suite is not None or graph_name is not None)


def _suite_id(value: str | None) -> str | None:
    """``--suite``: a suite id as given, or the id of the suite file it names."""
    if value is None or value.startswith("ste_"):
        return value
    if not Path(value).is_file():
        raise UsageError(f"--suite takes a suite id (ste_...) or a suite file, not {value!r}")
    return evals.load_suite(value).id


#: The history's metric columns: heading, metric, width.
_COLUMNS = (
    ("FAITH", "faithfulness", 6),
    ("COVER", "coverage", 6),
    ("ABS-P", "abstention_precision", 6),
    ("ABS-R", "abstention_recall", 6),
    ("FALSE", "false_alarm_rate", 6),
    ("HYGIENE", "side_effect_hygiene", 7),
)
_GAP = "  "


def _render_history(records: list[EvalRunRecord], *, filtered: bool) -> None:
    """Two lines a run, cut to the console's width: when, the metrics and the gate
    (71 characters), then the graph, the suite and the baseline's hash."""
    out = console()
    if not records:
        out.print("no recorded eval runs match" if filtered else "no recorded eval runs")
        return
    header = ["WHEN (UTC)".ljust(16), *(h.rjust(w) for h, _, w in _COLUMNS), "GATE"]
    fit_line(out, Text(_GAP.join(header), style="bold"))
    for index, record in enumerate(records):
        before = _previous(records, index)
        line = Text(record.finished_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M"))
        for _, name, width in _COLUMNS:
            value = record.metrics.get(name)
            line.append(_GAP)
            line.append(_pct(value).rjust(width), "red" if _fell(name, before, value) else "")
        line.append(_GAP)
        line.append(*(("pass", "green") if record.passed else ("FAIL", "bold red")))
        fit_line(out, line)
        graph = shown(f"{record.graph_name}@{record.graph_version}", one_line=True)
        details = [graph, f"{shown(record.suite_name, one_line=True)} {record.suite_id}"]
        if record.baseline_sha256 is not None:
            details.append(f"baseline {record.baseline_sha256[:8]}")
        fit_line(out, Text("    " + " · ".join(details), style="dim"))


def _previous(records: list[EvalRunRecord], index: int) -> EvalRunRecord | None:
    """The next older run of the same suite and graph in the listing, if any."""
    record = records[index]
    for older in records[index + 1 :]:
        if older.suite_id == record.suite_id and older.graph_name == record.graph_name:
            return older
    return None


def _fell(name: str, before: EvalRunRecord | None, now: float | None) -> bool:
    was = before.metrics.get(name) if before is not None else None
    if was is None:
        return False
    if now is None:
        return True
    drop = (was - now) if evals.GATED_METRICS[name] == "higher" else (now - was)
    return drop * 100 >= evals.DEFAULT_THRESHOLD_POINTS - 1e-9
