"""What the command-line tests share: an invocation at 80 columns with stdout and
stderr apart, the stand-in NLI model, and a clock fixed for stable ages."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

import assay.cli._common
import assay.cli._main
from assay import ControlPlane
from assay.cli import app
from assay.verifier import LexicalNLI
from tests.fence import _orders

ORDERS = "tests.fence._orders:graph"
_runner = CliRunner()


def cli(*args: str, columns: int = 80) -> Result:
    """``assay ARGS`` at ``columns`` wide, with no colour."""
    env = {"COLUMNS": str(columns), "NO_COLOR": "1"}
    return _runner.invoke(app, list(args), env=env, prog_name="assay")


def one_error_line(result: Result, code: int) -> str:
    """The single line a failure printed on stderr, after checking the exit status and
    that nothing else was printed."""
    assert result.exit_code == code, (result.exit_code, result.output)
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    assert "Traceback" not in result.stderr
    return lines[0]


def lines_fit(text: str, columns: int = 80) -> bool:
    from rich.cells import cell_len

    return all(cell_len(line) <= columns for line in text.splitlines())


@pytest.fixture
def stand_in_model(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The commands' control plane with the deterministic stand-in NLI model, and the
    demo's outbox in tmp_path."""

    def open_plane(db: str | None, *, migrate: bool = True) -> ControlPlane:
        return ControlPlane.open(db, migrate=migrate, nli=LexicalNLI())

    monkeypatch.setattr(assay.cli._main, "open_plane", open_plane)
    monkeypatch.setenv("ASSAY_OUTBOX", str(tmp_path / "outbox.jsonl"))
    _orders.PLACED.clear()


@pytest.fixture
def five_minutes_later(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ages measured five and a half minutes after the moment they are shown: every
    run made in the last half minute is 5m old."""
    monkeypatch.setattr(
        assay.cli._common, "now", lambda: datetime.now(UTC) + timedelta(minutes=5, seconds=30)
    )


def start_orders_run(db: str, thread: str, task: str = "Restock BT-105.") -> Result:
    """Run the test order desk (it pauses for a grant to place an order)."""
    import json

    started = cli(
        "run",
        "--graph",
        ORDERS,
        "--input",
        json.dumps({"task": task}),
        "--thread",
        thread,
        "--db",
        db,
    )
    assert started.exit_code == 0, started.output
    return started


def run_ids(db: str, statuses: Sequence[str] = ()) -> list[str]:
    import json

    listed = cli("runs", "--json", "--db", db, *(f"--status={s}" for s in statuses))
    assert listed.exit_code == 0, listed.output
    return [row["run_id"] for row in json.loads(listed.stdout)]
