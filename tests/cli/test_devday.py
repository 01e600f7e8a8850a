"""What a developer running their own graph from the command line is shown: the
command that resumes a paused run, which graph a thread belongs to, evidence rows
labelled by proposition with the span that states each value, and each round's
reasons. A real SQLite file; the stand-in NLI model (the model is not the subject)."""

from __future__ import annotations

import json
import shlex

import pytest

from assay.cli._render import evidence_text
from tests.cli.conftest import ORDERS, cli, one_error_line, start_orders_run

REFUND = "tests.cli._refund:graph"
STORED = '{"currency":"USD","order":"D-4410","placed":"2025-03-02","total":29.97}'


def _marked(text: object) -> list[str]:
    """The pieces of a rich Text printed highlighted."""
    plain = str(text)
    return [plain[s.start : s.end] for s in text.spans if s.style]  # type: ignore[attr-defined]


def test_a_paused_run_prints_the_exact_command_that_resumes_it(
    sqlite_url: str, stand_in_model: None
) -> None:
    started = start_orders_run(sqlite_url, "desk-1")

    [line] = [x for x in started.stdout.splitlines() if x.startswith("resume with: ")]
    words = shlex.split(line.removeprefix("resume with: "))
    assert words[:3] == ["assay", "resume", "desk-1"]
    assert words[3:] == ["--graph", ORDERS, "--db", sqlite_url, "--approve", "--approver", "NAME"]
    resumed = cli(*words[1:-1], "ana")
    assert resumed.exit_code == 0, resumed.output
    assert "answered" in resumed.stdout


def test_resume_without_graph_names_the_threads_graph(
    sqlite_url: str, stand_in_model: None
) -> None:
    start_orders_run(sqlite_url, "desk-2")

    line = one_error_line(
        cli("resume", "desk-2", "--approve", "--approver", "ana", "--db", sqlite_url), 2
    )
    assert "thread 'desk-2' belongs to graph 'order-desk'" in line
    assert "--graph module:attr" in line


@pytest.mark.parametrize(
    ("statement", "marked"),
    [
        ("The total of order D-4410 was $29.97.", ["29.97"]),
        ("Order D-4410 was placed on 2 March 2025.", ["2025-03-02"]),
    ],
)
def test_the_evidence_shown_is_where_each_value_is_stated(
    statement: str, marked: list[str]
) -> None:
    """The verifier's span was the order id for the total: the value is marked."""
    shown = evidence_text("led_1", STORED, (27, 33), statement)
    assert _marked(shown) == marked
    assert str(shown).startswith("led_1: “")


def test_a_statement_with_no_value_shows_the_verifiers_span() -> None:
    shown = evidence_text("led_1", STORED, (27, 33), "The order exists.")
    assert str(shown) == "led_1: “D-4410”" and _marked(shown) == []


def test_evidence_rows_are_labelled_by_proposition(sqlite_url: str, stand_in_model: None) -> None:
    task = json.dumps({"task": "Refund order D-4410 in full."})
    done = cli("run", "--graph", REFUND, "--input", task, "--db", sqlite_url, columns=120)

    assert done.exit_code == 0, done.output
    rows = [x for x in done.stdout.splitlines() if "c1.p" in x]
    assert [r.split("│")[1].strip() for r in rows] == ["c1.p1", "c1.p2"]
