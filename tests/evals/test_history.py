"""Recorded eval runs: appended by ``record_eval`` (and by every ``assay eval``), read
back newest first by ``eval_history`` and ``assay eval history``, never changed, on
SQLite and PostgreSQL."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic import command
from typer.testing import CliRunner

from assay import ControlPlane, LedgerWriteRefused, UsageError, _db
from assay.cli import app
from assay.control_plane import GraphFactory
from assay.evals import (
    EvalReport,
    check_regressions,
    eval_history,
    evaluate,
    read_baseline,
    record_eval,
    write_baseline,
)
from assay.verifier import LexicalNLI, Verifier
from tests.evals import _desk
from tests.evals.conftest import SUITE, write_suite


@pytest.fixture(autouse=True)
def _stand_in_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Verifier, "default", lambda *_, **__: LexicalNLI())


def _evaluate(cp: ControlPlane, suite_file: Path, graph: GraphFactory) -> EvalReport:
    return evaluate(suite_file, graph, control_plane=cp, judge=None)


def test_runs_are_recorded_and_read_back_newest_first(
    desk_plane: ControlPlane, suite_file: Path
) -> None:
    good = _evaluate(desk_plane, suite_file, _desk.graph)
    first = record_eval(desk_plane, good, check_regressions(good))
    baseline_file = suite_file.parent / "baseline.json"
    write_baseline(good, baseline_file)
    bad = _evaluate(desk_plane, suite_file, _desk.graph_drops_claim)
    gate = check_regressions(bad, read_baseline(baseline_file))
    second = record_eval(desk_plane, bad, gate, baseline=baseline_file)

    records = eval_history(desk_plane)
    assert [r.id for r in records] == [second.id, first.id]
    assert records == [second, first]  # as written, timestamps to the microsecond
    newest = records[0]
    assert (newest.graph_name, newest.graph_version) == (_desk.NAME, "1")
    assert (newest.suite_id, newest.suite_name, newest.cases) == (good.suite_id, "stock-desk", 4)
    assert newest.passed is False and first.passed is True
    assert newest.failures == gate.failures and "coverage fell" in newest.failures[0]
    assert newest.baseline_sha256 == hashlib.sha256(baseline_file.read_bytes()).hexdigest()
    assert first.baseline_sha256 is None
    assert newest.gated()["coverage"] == 0.75 and newest.metrics["cases"] == 4
    assert newest.case_outcomes["stock"]["missing_facts"] == ["delivery"]
    assert newest.started_at <= newest.finished_at
    assert newest.finished_at.utcoffset() is not None
    assert bad.started_at is not None and newest.started_at == bad.started_at

    assert eval_history(desk_plane, limit=1) == [second]
    assert eval_history(desk_plane, graph_name=_desk.NAME, suite_id=good.suite_id) == records
    assert eval_history(desk_plane, graph_name="another") == []
    assert eval_history(desk_plane, suite_id="ste_000000000000000000000000") == []


def test_a_recorded_run_cannot_be_changed(desk_plane: ControlPlane, suite_file: Path) -> None:
    report = _evaluate(desk_plane, suite_file, _desk.graph)
    record_eval(desk_plane, report, check_regressions(report))
    for statement in ("UPDATE eval_runs SET passed = false", "DELETE FROM eval_runs"):
        with (
            pytest.raises(LedgerWriteRefused, match="append-only"),
            desk_plane.engine.begin() as conn,
        ):
            conn.execute(sa.text(statement))
    [kept] = eval_history(desk_plane)
    assert kept.passed is True


def test_what_cannot_be_recorded_writes_nothing(
    desk_plane: ControlPlane, suite_file: Path, tmp_path: Path
) -> None:
    report = _evaluate(desk_plane, suite_file, _desk.graph)
    other = write_suite(tmp_path, SUITE.replace("2 April", "02 April"), "other.yaml")
    other_report = _evaluate(desk_plane, other, _desk.graph)
    with pytest.raises(UsageError, match="the gate result is for suite"):
        record_eval(desk_plane, report, check_regressions(other_report))
    runless = replace(report, graph_name=None, graph_version=None)  # as score() builds it
    with pytest.raises(UsageError, match="names no graph name"):
        record_eval(desk_plane, runless, check_regressions(runless))
    with pytest.raises(UsageError, match="cannot read the baseline"):
        record_eval(desk_plane, report, check_regressions(report), baseline=tmp_path / "none.json")
    with pytest.raises(UsageError, match="limit must be"):
        eval_history(desk_plane, limit=0)
    assert eval_history(desk_plane) == []
    named = record_eval(
        desk_plane, runless, check_regressions(runless), graph_name="by-hand", graph_version="2"
    )
    assert (named.graph_name, named.graph_version) == ("by-hand", "2")


def _assay(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "80"})
    return result.exit_code, result.stdout, result.stderr


def test_assay_eval_history_shows_the_trend(db_url: str, suite_file: Path) -> None:
    baseline = suite_file.parent / "baseline.json"
    run = ["eval", str(suite_file), "--db", db_url, "--baseline", str(baseline)]
    assert _assay(*run, "--graph", "tests.evals._desk:graph", "--update-baseline")[0] == 0
    assert _assay(*run, "--graph", "tests.evals._desk:graph_drops_claim")[0] == 1

    code, out, err = _assay("eval", "history", "--db", db_url)
    assert code == 0, err
    lines = out.splitlines()
    assert all(len(line) <= 80 for line in lines)
    assert lines[0].split() == [
        "WHEN", "(UTC)", "FAITH", "COVER", "ABS-P", "ABS-R", "FALSE", "HYGIENE", "GATE"
    ]  # fmt: skip
    newest, older = lines[1].split(), lines[3].split()
    assert newest[2:] == ["100.0%", "75.0%", "n/a", "n/a", "0.0%", "100.0%", "FAIL"]
    assert older[2:] == ["100.0%", "100.0%", "n/a", "n/a", "0.0%", "100.0%", "pass"]
    sha = hashlib.sha256(baseline.read_bytes()).hexdigest()
    assert lines[2].split()[:2] == ["stock-desk@1", "·"] and f"baseline {sha[:8]}" in lines[2]
    assert "baseline" not in lines[4]  # the update compared with none

    code, out, _ = _assay("eval", "history", "--db", db_url, "--suite", str(suite_file), "--json")
    records = json.loads(out)
    assert [r["passed"] for r in records] == [False, True]
    assert records[0]["baseline_sha256"] == sha and records[0]["graph_name"] == "stock-desk"
    code, out, _ = _assay("eval", "history", "--db", db_url, "--graph-name", "x")
    assert (code, out.strip()) == (0, "no recorded eval runs match")
    code, _, err = _assay("eval", "history", "--db", db_url, "--limit", "0")
    assert code == 2 and "Traceback" not in err
    code, _, err = _assay("eval", "history", "--db", db_url, "--suite", "nothere.yaml")
    assert code == 2 and "--suite takes a suite id (ste_...) or a suite file" in err


def test_suite_text_is_shown_as_data(sqlite_url: str, tmp_path: Path) -> None:
    named = SUITE.replace("suite: stock-desk", 'suite: "desk \\e[2J[bold]x[/bold]"')
    suite = write_suite(tmp_path, named)
    assert (
        _assay("eval", str(suite), "--db", sqlite_url, "--graph", "tests.evals._desk:graph")[0] == 0
    )
    code, out, _ = _assay("eval", "history", "--db", sqlite_url)
    assert code == 0
    assert "desk \\x1b[2J[bold]x[/bold]" in out and "\x1b" not in out


def test_the_table_comes_and_goes_with_its_migration(sqlite_url: str) -> None:
    with ControlPlane.open(sqlite_url) as cp:
        assert "eval_runs" in sa.inspect(cp.engine).get_table_names()
        with _db.write_transaction(cp.engine) as conn:
            command.downgrade(_db.alembic_config(conn), "0007_tool_effects")
        assert "eval_runs" not in sa.inspect(cp.engine).get_table_names()
        _db.upgrade(cp.engine)
        assert eval_history(cp) == []


def _listed(command: str, help_text: str) -> bool:
    """Whether a help text lists ``command`` as one of its commands (a line of its
    own, indented, the command's short help after it)."""
    return re.search(rf"^\s+{command}\s{{2,}}\S", help_text, re.MULTILINE) is not None


def test_the_eval_commands_are_listed() -> None:
    code, out, _ = _assay("--help")
    assert code == 0 and _listed("eval", out)
    code, out, _ = _assay("eval", "--help")
    assert code == 0 and _listed("run", out) and _listed("history", out)
    code, out, _ = _assay("eval", "history", "--help")
    assert code == 0 and "--graph-name" in out and "--limit" in out
