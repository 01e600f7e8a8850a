"""The command line: tables, exit statuses, and no traceback for a user mistake."""

from __future__ import annotations

from typer.testing import CliRunner

from assay import ControlPlane
from assay.cli import app
from tests.ledger._tamper import tamper

runner = CliRunner()


def _run_with_entries(url: str) -> str:
    with ControlPlane.open(url) as cp:
        run = cp.ledger.start_run()
        for i in range(3):
            cp.ledger.append(run, kind="retrieval", source=f"doc{i}", content=f"passage {i}")
        return run


def test_runs_and_show(sqlite_url: str) -> None:
    run = _run_with_entries(sqlite_url)
    listed = runner.invoke(app, ["runs", "--db", sqlite_url], env={"COLUMNS": "200"})
    assert listed.exit_code == 0, listed.output
    assert run in listed.output
    shown = runner.invoke(app, ["ledger", "show", run, "--db", sqlite_url], env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    assert "passage 2" in shown.output and "retrieval" in shown.output


def test_verify_ok_then_broken(sqlite_url: str) -> None:
    run = _run_with_entries(sqlite_url)
    ok = runner.invoke(app, ["ledger", "verify", "--db", sqlite_url])
    assert ok.exit_code == 0 and "3 entries" in ok.output
    tamper(sqlite_url, "UPDATE ledger_entries SET content = X'00' WHERE seq = 2")
    broken = runner.invoke(app, ["ledger", "verify", "--run", run, "--db", sqlite_url])
    assert broken.exit_code == 1
    assert "seq 2" in broken.output and run in broken.output


def test_user_mistakes_exit_2_without_traceback(sqlite_url: str) -> None:
    unknown = runner.invoke(app, ["ledger", "show", "run_missing", "--db", sqlite_url])
    assert unknown.exit_code == 2
    assert "no run 'run_missing'" in unknown.output
    assert "Traceback" not in unknown.output
    bad_url = runner.invoke(app, ["runs", "--db", "mysql://x@y/z"])
    assert bad_url.exit_code == 2 and "unsupported database" in bad_url.output


def test_db_upgrade_and_current(sqlite_url: str) -> None:
    before = runner.invoke(app, ["db", "current", "--db", sqlite_url])
    assert "(empty)" in before.output and "behind" in before.output
    upgraded = runner.invoke(app, ["db", "upgrade", "--db", sqlite_url])
    assert upgraded.exit_code == 0, upgraded.output
    after = runner.invoke(app, ["db", "current", "--db", sqlite_url])
    assert "up to date" in after.output
