"""Text from the ledger, metadata, ids and errors is shown as it is: never read as
rich markup, never sent to the terminal with its control characters."""

from __future__ import annotations

import json

from assay import ControlPlane
from tests.cli.conftest import cli, one_error_line, start_orders_run

VISIBLE = "see [bold]this[/bold] [/oops] \\x1b[2J\\x1b]0;title\\x07 \\u202eevil"


def _no_control_characters(text: str) -> None:
    assert not any(ch in text for ch in ("\x1b", "\x07", "\u202e", "\x00")), (
        "a control character reached the terminal"
    )


def _hostile_run(url: str) -> str:
    with ControlPlane.open(url) as cp:
        run = cp.ledger.start_run(metadata={"note": "[/]", "x": "\x1b[31mred"})
        cp.ledger.append(
            run,
            kind="retrieval",
            source="doc [/oops]",
            content="see [bold]this[/bold] too\x1b[2J \u202eevil",
        )
        return run


def test_ledger_show_prints_markup_and_control_characters_as_text(sqlite_url: str) -> None:
    run = _hostile_run(sqlite_url)
    shown = cli("ledger", "show", run, "--db", sqlite_url)
    assert shown.exit_code == 0, shown.output
    assert "see [bold]this[/bold] too\\x1b[2J \\u202eevil" in shown.stdout
    assert "doc [/oops]" in shown.stdout
    _no_control_characters(shown.output)


def test_runs_with_markup_in_metadata(sqlite_url: str) -> None:
    _hostile_run(sqlite_url)
    listed = cli("runs", "--db", sqlite_url)
    assert listed.exit_code == 0, listed.output
    assert '"note": "[/]"' in listed.stdout and "\\u001b[31mred" in listed.stdout  # JSON
    _no_control_characters(listed.output)


def test_audit_of_a_run_id_with_markup_is_one_line(sqlite_url: str) -> None:
    line = one_error_line(cli("audit", "run_[/oops]", "--db", sqlite_url), 2)
    assert line == "error: no run 'run_[/oops]' in this ledger"


def test_audit_shows_evidence_as_written(sqlite_url: str) -> None:
    run = _hostile_run(sqlite_url)
    audited = cli("audit", run, "--db", sqlite_url, columns=200)
    assert audited.exit_code == 0, audited.output
    assert "doc [/oops]" in audited.stdout
    _no_control_characters(audited.output)


def test_a_thread_id_and_task_with_markup(sqlite_url: str, stand_in_model: None) -> None:
    thread = "t-[/oops]-[bold]x[/bold]"  # thread ids are printable: no control characters
    start_orders_run(sqlite_url, thread, task="Restock BT-105 [bold]now[/bold].")
    for command in (["status", thread], ["paused"], ["runs"]):
        out = cli(*command, "--db", sqlite_url, columns=200)
        assert out.exit_code == 0, out.output
        assert thread in out.stdout, command
        _no_control_characters(out.output)
    listed = cli("runs", "--db", sqlite_url, columns=200)
    assert "Restock BT-105 [bold]now[/bold]." in listed.stdout


def test_an_assay_error_message_is_escaped(sqlite_url: str) -> None:
    out = cli("run", "--graph", "tests.cli._graphs:refusing", "--input", "{}", "--db", sqlite_url)
    line = one_error_line(out, 2)
    assert line == f"error: refused: {VISIBLE}"


def test_an_unexpected_exception_is_one_line_exit_3(sqlite_url: str) -> None:
    out = cli("run", "--graph", "tests.cli._graphs:broken", "--input", "{}", "--db", sqlite_url)
    line = one_error_line(out, 3)
    assert line == (
        f"error: unexpected RuntimeError: boom: {VISIBLE} "
        "(a bug in assay; --debug shows the traceback)"
    )


def test_json_output_escapes_every_control_and_non_ascii_character(sqlite_url: str) -> None:
    run = _hostile_run(sqlite_url)
    out = cli("ledger", "show", run, "--json", "--db", sqlite_url)
    assert out.exit_code == 0, out.output
    assert out.stdout.isascii()
    [entry] = json.loads(out.stdout)["entries"]
    assert entry["content"] == "see [bold]this[/bold] too\x1b[2J \u202eevil"
