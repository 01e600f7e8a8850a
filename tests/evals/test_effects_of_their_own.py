"""Evals measure the agent, not the database's past: each evaluation's effects are its
own, an expected action refused as a duplicate fails its case, a baseline never
expects no effect where the suite expects one, and false refusals are told apart from
false answers. Storage tests run on a real SQLite file and a real PostgreSQL
database, with the stock desk (its order keyed by SKU) of ``_desk.py``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay import ControlPlane
from assay.errors import UsageError
from assay.evals import (
    check_regressions,
    evaluate,
    load_suite,
    read_baseline,
    score_case,
    summarise,
    write_baseline,
)
from assay.evals._run import CaseRun, ObservedProposition
from tests.evals import _desk
from tests.evals.conftest import SUITE, write_suite

ORDER = {"sku": "BT-105", "units": 40}


def _order_only(folder: Path, text: str = SUITE) -> Path:
    """The suite with its ``order`` case alone (the one that runs ``place_order``)."""
    head, _, cases = text.partition("cases:\n")
    order = cases[cases.index("  - id: order") : cases.index("  - id: paused")]
    return write_suite(folder, f"{head}cases:\n{order}", "orders.yaml")


def test_a_second_evaluation_on_the_same_database_runs_its_own_orders(
    desk_plane: ControlPlane, tmp_path: Path
) -> None:
    _desk.PLACED.clear()
    suite = _order_only(tmp_path)

    first = evaluate(suite, _desk.graph_keyed, control_plane=desk_plane, judge=None)
    second = evaluate(suite, _desk.graph_keyed, control_plane=desk_plane, judge=None)

    for report in (first, second):
        case = report.case("order")
        assert (case.status, case.actions_ok, case.duplicate_actions) == ("answered", 1, ())
        assert report.metrics.action_accuracy == 1.0
        assert check_regressions(report).passed
    assert _desk.PLACED == [ORDER, ORDER]
    # Each evaluation named its effects in a scope of its own, not the shared one.
    assert desk_plane.bus.prior_effect("place_order", ORDER, version="1.2.0") is None


def test_an_expected_order_refused_as_a_duplicate_fails_the_case_and_the_gate(
    desk_plane: ControlPlane, tmp_path: Path
) -> None:
    _desk.PLACED.clear()
    head, _, cases = _order_only(tmp_path).read_text().partition("cases:\n")
    twice = cases + cases.replace("id: order", "id: order-again")
    suite = write_suite(tmp_path, f"{head}cases:\n{twice}", "twice.yaml")

    report = evaluate(suite, _desk.graph_keyed, control_plane=desk_plane, judge=None)

    again = report.case("order-again")
    assert again.status == "incomplete" and again.actions_ok == 0
    assert again.duplicate_actions == ("place_order {'sku': 'BT-105', 'units': 40}",)
    assert any("refused as a duplicate" in line for line in again.shortfalls())
    gate = check_regressions(report)
    assert not gate.passed
    assert any("measured the database's past" in f for f in gate.failures)
    with pytest.raises(UsageError, match="refused as a duplicate"):
        write_baseline(report, tmp_path / "baseline.json")
    assert _desk.PLACED == [ORDER]


def test_a_baseline_that_expects_no_order_where_the_suite_expects_one_is_refused(
    desk_plane: ControlPlane, tmp_path: Path
) -> None:
    suite = _order_only(tmp_path)
    report = evaluate(suite, _desk.graph_keyed, control_plane=desk_plane, judge=None)
    path = tmp_path / "baseline.json"
    write_baseline(report, path)
    recorded = json.loads(path.read_text())
    recorded["cases"]["order"]["actions_ok"] = 0
    recorded["metrics"]["action_accuracy"] = 0.0
    path.write_text(json.dumps(recorded))

    gate = check_regressions(report, read_baseline(path, suite_id=load_suite(suite).id))

    assert not gate.passed
    assert any("the baseline expects 0 of case order's 1 action(s)" in f for f in gate.failures)


def test_a_run_whose_expected_order_did_not_run_is_no_baseline(
    desk_plane: ControlPlane, tmp_path: Path
) -> None:
    denied = _order_only(tmp_path, SUITE.replace("review: approve", "review: deny", 1))
    report = evaluate(denied, _desk.graph_keyed, control_plane=desk_plane, judge=None)

    assert report.case("order").status == "denied"
    with pytest.raises(UsageError, match="ran 0 times, not once, where the suite expects it"):
        write_baseline(report, tmp_path / "baseline.json")


def test_false_refusals_and_false_answers_are_counted_apart(tmp_path: Path) -> None:
    suite = load_suite(write_suite(tmp_path))
    case = suite.case("stock")
    truth = "Warehouse W-12 holds 120 units of SKU BT-105."
    lie = "W-12 holds 200 units of BT-105"

    def prop(text: str, label: str) -> ObservedProposition:
        return ObservedProposition(
            claim_id=text[:8], claim_type="Assertion", text=text, label=label
        )

    honest = CaseRun(
        case_id="stock",
        run_id="run_a",
        thread_id=None,
        status="abstained",
        refused=(prop(truth, "neutral"),),
    )
    liar = CaseRun(
        case_id="stock",
        run_id="run_b",
        thread_id=None,
        status="answered",
        propositions=(prop(lie, "entailment"),),
    )

    refused, let_through = score_case(case, honest), score_case(case, liar)

    assert (refused.false_refusals, refused.false_answers) == ((truth,), ())
    assert (let_through.false_refusals, let_through.false_answers) == ((), (lie,))
    metrics = summarise([refused, let_through])
    assert (metrics.false_refusal_rate, metrics.false_answer_rate) == (1.0, 1.0)
    assert summarise([refused]).false_answer_rate is None
    assert summarise([let_through]).false_refusal_rate is None
