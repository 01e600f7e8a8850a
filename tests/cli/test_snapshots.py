"""What the commands print at 80 columns, compared with golden files in snapshots/.

Ids, hashes and times differ from run to run; each is replaced by a mask of the same
length, so the layout is compared as printed. Write the files again after a deliberate
change with ``ASSAY_UPDATE_SNAPSHOTS=1 pytest tests/cli/test_snapshots.py``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from assay import ControlPlane
from tests.cli.conftest import ORDERS, cli, lines_fit, run_ids, start_orders_run

SNAPSHOTS = Path(__file__).parent / "snapshots"
_VOLATILE = re.compile(
    r"(?P<prefix>run_|led_)[0-9a-f]{16,32}"
    r"|\b[0-9a-f]{12,64}\b"
    r"|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)?"
)


def _masked(text: str) -> str:
    def mask(match: re.Match[str]) -> str:
        prefix = match.group("prefix") or ""
        return prefix + "#" * (len(match.group(0)) - len(prefix))

    return _VOLATILE.sub(mask, text)


def assert_snapshot(name: str, text: str, *, fits: bool = True) -> None:
    assert not fits or lines_fit(text, 80), f"{name} is wider than 80 columns"
    path = SNAPSHOTS / f"{name}.txt"
    masked = _masked(text)
    if os.environ.get("ASSAY_UPDATE_SNAPSHOTS") == "1":
        path.write_text(masked, encoding="utf-8")
        return
    assert path.exists(), f"no snapshot {path.name}: write it with ASSAY_UPDATE_SNAPSHOTS=1"
    assert masked == path.read_text(encoding="utf-8")


@pytest.fixture
def desk(sqlite_url: str, stand_in_model: None, five_minutes_later: None) -> str:
    """A database with a run paused for a grant, an answered one and a plain one that
    carries markup and control characters."""
    start_orders_run(sqlite_url, "desk-1", task="Restock BT-105 before the weekend.")
    start_orders_run(sqlite_url, "desk-2", task="Restock BT-105 [bold]now[/bold].")
    resumed = cli(
        "resume", "desk-2", "--graph", ORDERS, "--approve", "--approver", "ana", "--db", sqlite_url
    )
    assert resumed.exit_code == 0, resumed.output
    with ControlPlane.open(sqlite_url) as cp:
        run = cp.ledger.start_run(metadata={"note": "[/]"})
        cp.ledger.append(
            run, kind="retrieval", source="doc [/oops]", content="see [bold]this[/bold]\x1b[2J"
        )
    return sqlite_url


def _out(*args: str) -> str:
    result = cli(*args)
    assert result.exit_code == 0, result.output
    return result.stdout


def test_runs(desk: str) -> None:
    assert_snapshot("runs", _out("runs", "--db", desk))


def test_paused(desk: str) -> None:
    assert_snapshot("paused", _out("paused", "--db", desk))


def test_status(desk: str) -> None:
    assert_snapshot("status", _out("status", "desk-2", "--db", desk))


def test_ledger_show(desk: str) -> None:
    [plain] = run_ids(desk, ["none"])
    assert_snapshot("ledger_show", _out("ledger", "show", plain, "--db", desk))


def test_audit(desk: str) -> None:
    [answered] = run_ids(desk, ["answered"])
    assert_snapshot("audit", _out("audit", answered, "--db", desk))


def test_errors() -> None:
    lines = [
        cli("runs", "--db", "sqlite://x.db").stderr,
        cli("audit", "run_[/oops]", "--db", "nosuchdriver://x").stderr,
        cli("runs", "--status", "bogus").stderr,
        cli("ledger", "show").stderr,
    ]
    assert_snapshot("errors", "".join(lines), fits=False)  # an error is one line, however long


def test_help_names_the_global_options() -> None:
    shown = _out("--help")  # typer's layout, not compared: only what assay adds
    assert lines_fit(shown, 80)
    assert "--debug" in shown and "--version" in shown and "ASSAY_DEBUG" in shown
