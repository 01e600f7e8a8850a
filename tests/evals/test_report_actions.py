"""The eval report shows, per case, the actions the case expects and the actions the
run took, in the text report and the JSON one (and the HTML report, where a case
failed on its actions); a baseline keeps neither. The stock
desk of ``_desk.py`` runs on a real SQLite file, with the stand-in NLI model (the
model is not the subject here)."""

from __future__ import annotations

import html
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from assay import ControlPlane
from assay.cli._eval import eval_app
from assay.evals import evaluate, render_html_report
from assay.verifier import LexicalNLI, Verifier
from tests.evals import _desk

ORDER = "place_order {'sku': 'BT-105', 'units': 40}"


@pytest.fixture(autouse=True)
def _stand_in_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Verifier, "default", lambda *_, **__: LexicalNLI())


def test_each_case_lists_the_actions_expected_and_taken(
    desk_plane: ControlPlane, suite_file: Path
) -> None:
    report = evaluate(suite_file, _desk.graph, control_plane=desk_plane, judge=None)

    order, paused, stock = report.case("order"), report.case("paused"), report.case("stock")
    assert (order.expected_actions, order.actions_taken) == ((ORDER,), (ORDER,))
    # A paused order took no action; a case that only reads documents takes none either.
    assert (paused.expected_actions, paused.actions_taken) == ((), ())
    assert (stock.expected_actions, stock.actions_taken) == ((), ())
    assert "expected_actions" not in order.outcome() and "actions_taken" not in order.outcome()


def test_an_action_taken_twice_is_listed_twice(desk_plane: ControlPlane, suite_file: Path) -> None:
    report = evaluate(suite_file, _desk.graph_orders_twice, control_plane=desk_plane, judge=None)

    order = report.case("order")
    assert order.expected_actions == (ORDER,)
    assert order.actions_taken == (ORDER, ORDER)
    # The HTML report names both where it says why the case failed.
    page = render_html_report(report)
    assert f"actions expected: {ORDER}; taken: {ORDER}, {ORDER}" in html.unescape(page)


def _eval(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(eval_app, list(args))
    return result.exit_code, result.output


def test_the_text_and_json_reports_show_them(sqlite_url: str, suite_file: Path) -> None:
    common = [str(suite_file), "--db", sqlite_url, "--graph", "tests.evals._desk:graph"]

    code, out = _eval(*common, "--case", "order", "--json")

    assert code == 0, out
    [case] = json.loads(out)["report"]["cases"]
    assert (case["expected_actions"], case["actions_taken"]) == ([ORDER], [ORDER])

    code, out = _eval(*common)

    assert code == 0, out
    assert f"case order: actions expected: {ORDER}; taken: {ORDER}" in " ".join(out.split())
    # A case that expects and takes no action gets no line.
    assert "case stock: actions" not in out
