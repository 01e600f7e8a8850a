"""A whole-ledger check draws its progress on a terminal only, and never with --json."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from assay import ControlPlane
from assay.cli import app


def test_ledger_verify_shows_its_progress_on_a_terminal_only(
    sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with ControlPlane.open(sqlite_url) as cp:
        for n in range(3):
            run = cp.ledger.start_run()
            cp.ledger.append(run, kind="retrieval", source="doc.md", content=f"text {n}")
    args = ["ledger", "verify", "--db", sqlite_url]
    piped = CliRunner().invoke(app, args)
    assert piped.exit_code == 0, piped.output
    assert "3/3" not in piped.stderr and "3 run(s) verified" in piped.stdout

    monkeypatch.setenv("FORCE_COLOR", "1")  # stderr counts as a terminal
    drawn = CliRunner().invoke(app, args)
    assert drawn.exit_code == 0, drawn.output
    assert "3/3" in drawn.stderr and "runs verified" in drawn.stderr
    assert "3/3" not in drawn.stdout

    as_json = CliRunner().invoke(app, [*args, "--json"])
    assert as_json.exit_code == 0 and "3/3" not in as_json.stderr
    assert json.loads(as_json.stdout)["ok"] is True
