"""``assay runs``: status, thread, graph, task and age of the newest runs, in 80
columns, filtered by status and graph."""

from __future__ import annotations

import json

from assay import ControlPlane
from assay.cli._runs import StatusFilter
from assay.fence import ThreadState
from tests.cli.conftest import ORDERS, cli, lines_fit, run_ids, start_orders_run


def _three_runs(db: str) -> dict[str, str]:
    """A run paused for a grant, one answered after approval, and one that no graph
    wrote; their run ids by what they are."""
    start_orders_run(db, "desk-1", task="Restock BT-105.")
    start_orders_run(db, "desk-2", task="Restock BT-105 again.")
    resumed = cli(
        "resume", "desk-2", "--graph", ORDERS, "--approve", "--approver", "ana", "--db", db
    )
    assert resumed.exit_code == 0, resumed.output
    with ControlPlane.open(db) as cp:
        plain = cp.ledger.start_run(metadata={"source": "import"})
    rows = json.loads(cli("runs", "--json", "--db", db).stdout)
    by_thread = {row["thread_id"]: row["run_id"] for row in rows}
    return {"paused": by_thread["desk-1"], "answered": by_thread["desk-2"], "plain": plain}


def test_runs_shows_status_thread_graph_task_and_age(
    sqlite_url: str, stand_in_model: None, five_minutes_later: None
) -> None:
    ids = _three_runs(sqlite_url)
    listed = cli("runs", "--db", sqlite_url)
    assert listed.exit_code == 0, listed.output
    assert lines_fit(listed.stdout)
    lines = listed.stdout.splitlines()
    assert lines[0].split() == ["RUN", "STATUS", "AGE", "GRAPH"]
    # newest first, two lines a run
    assert lines[1].split() == [ids["plain"], "-", "5m", "-"]
    assert lines[2].split() == ["metadata", '{"source":', '"import"}', "·", "0", "entries"]
    assert lines[3].split() == [ids["answered"], "answered", "5m", "order-desk", "v1"]
    assert lines[4].startswith("    thread desk-2 · task “Restock BT-105 again.” · ")
    assert lines[5].split() == [ids["paused"], "awaiting_grant", "5m", "order-desk", "v1"]
    assert lines[6].startswith("    thread desk-1 · task “Restock BT-105.” · ")


def test_runs_filters_by_status_graph_and_count(sqlite_url: str, stand_in_model: None) -> None:
    ids = _three_runs(sqlite_url)
    assert run_ids(sqlite_url, ["awaiting_grant"]) == [ids["paused"]]
    assert run_ids(sqlite_url, ["answered"]) == [ids["answered"]]
    assert run_ids(sqlite_url, ["none"]) == [ids["plain"]]
    assert run_ids(sqlite_url, ["answered", "awaiting_grant"]) == [ids["answered"], ids["paused"]]
    assert run_ids(sqlite_url, ["failed"]) == []
    by_graph = cli("runs", "--graph-name", "order-desk", "--json", "--db", sqlite_url)
    assert [row["run_id"] for row in json.loads(by_graph.stdout)] == [
        ids["answered"],
        ids["paused"],
    ]
    newest = cli("runs", "--limit", "1", "--json", "--db", sqlite_url)
    assert [row["run_id"] for row in json.loads(newest.stdout)] == [ids["plain"]]
    nothing = cli("runs", "--status", "failed", "--db", sqlite_url)
    assert nothing.exit_code == 0 and nothing.stdout == "no runs match\n"


def test_runs_refuses_an_unknown_status_in_one_line(sqlite_url: str) -> None:
    out = cli("runs", "--status", "paused", "--db", sqlite_url)
    assert out.exit_code == 2 and len(out.stderr.splitlines()) == 1
    assert "Invalid value for '--status'" in out.stderr


def test_the_status_filter_names_every_thread_state() -> None:
    from typing import get_args

    assert {item.value for item in StatusFilter} == {*get_args(ThreadState), "none"}


def test_an_empty_ledger(sqlite_url: str) -> None:
    out = cli("runs", "--db", sqlite_url)
    assert out.exit_code == 0 and out.stdout == "no runs\n"
    assert json.loads(cli("runs", "--json", "--db", sqlite_url).stdout) == []


def test_a_long_task_is_cut_to_the_width(sqlite_url: str, stand_in_model: None) -> None:
    start_orders_run(sqlite_url, "desk-9", task="Restock BT-105. " + "Then check again. " * 20)
    for columns in (60, 80, 120):
        out = cli("runs", "--db", sqlite_url, columns=columns)
        assert out.exit_code == 0 and lines_fit(out.stdout, columns)
        assert out.stdout.splitlines()[2].endswith("…")
