"""The command line: tables, exit statuses, and no traceback for a user mistake."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import assay.cli._main
from assay import ControlPlane
from assay.cli import app
from assay.verifier import LexicalNLI
from tests.fence import _orders
from tests.ledger._tamper import tamper

runner = CliRunner()
WIDE = {"COLUMNS": "200"}
ORDERS = "tests.fence._orders:graph"


@pytest.fixture
def stand_in_model(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The commands' control plane with the deterministic stand-in NLI model (the
    model is not what these tests are about), and the demo's outbox in tmp_path."""

    def open_plane(db: str | None, *, migrate: bool = True) -> ControlPlane:
        return ControlPlane.open(db, migrate=migrate, nli=LexicalNLI())

    monkeypatch.setattr(assay.cli._main, "open_plane", open_plane)
    monkeypatch.setenv("ASSAY_OUTBOX", str(tmp_path / "outbox.jsonl"))
    _orders.PLACED.clear()


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
    missing = runner.invoke(app, ["db", "current", "--db", sqlite_url])
    assert missing.exit_code == 2 and "no database at" in missing.output
    Path(sqlite_url.removeprefix("sqlite:///")).touch()  # an empty SQLite file
    before = runner.invoke(app, ["db", "current", "--db", sqlite_url])
    assert "(empty)" in before.output and "behind" in before.output
    upgraded = runner.invoke(app, ["db", "upgrade", "--db", sqlite_url])
    assert upgraded.exit_code == 0, upgraded.output
    after = runner.invoke(app, ["db", "current", "--db", sqlite_url])
    assert "up to date" in after.output


def test_run_status_and_paused_with_a_graph_of_ones_own(
    sqlite_url: str, stand_in_model: None, tmp_path: Path
) -> None:
    task = tmp_path / "task.json"
    task.write_text(json.dumps({"task": "Restock BT-105."}))
    started = runner.invoke(
        app,
        ["run", "--graph", ORDERS, "--input", f"@{task}", "--thread", "cli-1", "--db", sqlite_url],
        env=WIDE,
    )
    assert started.exit_code == 0, started.output
    assert "awaiting_grant" in started.output and "pending grant place_order" in started.output
    status = runner.invoke(app, ["status", "cli-1", "--db", sqlite_url], env=WIDE)
    assert status.exit_code == 0 and "awaiting_grant graph order-desk version 1" in status.output
    listed = runner.invoke(app, ["paused", "--graph-name", "order-desk", "--db", sqlite_url])
    assert listed.exit_code == 0 and "cli-1" in listed.output
    rerun = ["run", "--graph", ORDERS, "--input", '{"task": "x"}', "--thread", "cli-1"]
    again = runner.invoke(app, [*rerun, "--db", sqlite_url])
    assert again.exit_code == 2 and "already holds a run" in again.output
    assert _orders.PLACED == []


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--graph", "not a reference"], "must be module:attr"),
        (["--graph", "no_such_module_anywhere:graph"], "cannot import"),
        (["--graph", "tests.fence._orders:nothing"], "has no attribute"),
        (["--graph", "tests.fence._orders:NAME"], "is not a factory"),
        (["--graph", "builtins:id"], "int is not a fenced graph"),
        (["--input", "{not json"], "is not JSON"),
        (["--input", "[1, 2]"], "must be a JSON object"),
        (["--input", "@/no/such/file.json"], "cannot read it"),
        (["--input", '{"task": "x", "extra": 1}'], "takes 'task' and 'context'"),
    ],
)
def test_run_mistakes_exit_2_in_one_line(
    sqlite_url: str, stand_in_model: None, options: list[str], message: str
) -> None:
    arguments = {"--graph": ORDERS, "--input": '{"task": "Restock"}'}
    arguments.update(dict(zip(options[::2], options[1::2], strict=True)))
    flat = [item for pair in arguments.items() for item in pair]
    out = runner.invoke(app, ["run", *flat, "--db", sqlite_url], env=WIDE)
    assert out.exit_code == 2, out.output
    assert message in out.output and "Traceback" not in out.output


def test_resume_mistakes_exit_2(sqlite_url: str, stand_in_model: None) -> None:
    resume = ["resume", "nobody", "--graph", ORDERS, "--approve", "--approver", "a"]
    unknown = runner.invoke(app, [*resume, "--db", sqlite_url])
    assert unknown.exit_code == 2 and "no run on thread 'nobody'" in unknown.output
    status = runner.invoke(app, ["status", "nobody", "--db", sqlite_url])
    assert status.exit_code == 2 and "nobody" in status.output


def test_the_demo_runs_every_case_and_audits_the_flagged_one(
    sqlite_url: str, stand_in_model: None, tmp_path: Path
) -> None:
    out = runner.invoke(app, ["demo", "--approve", "--db", sqlite_url], env=WIDE)
    assert out.exit_code == 0, out.output
    for shown in (
        "compliant:",
        "action flag_invoice_line executed by demo-reviewer",
        "action flag_invoice_line executed by policy:small-overages",
        "abstained run",
        "audit of the over_cap run",
        "ledger chain: ok",
    ):
        assert shown in out.output
    assert len((tmp_path / "outbox.jsonl").read_text().splitlines()) == 2
