"""The deploy gate end to end, on a real database (SQLite file and PostgreSQL): the
stock desk is evaluated, its baseline recorded, and deliberate regressions (a
dropped claim, an order run twice, an order run without a grant) fail the gate,
naming the metric and the cases."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from assay import ControlPlane
from assay.control_plane import GraphFactory
from assay.errors import UsageError
from assay.evals import (
    Baseline,
    EvalReport,
    Suite,
    assert_no_regression,
    baseline_of,
    check_regressions,
    evaluate,
    load_suite,
    read_baseline,
    write_baseline,
)
from assay.verifier import LexicalNLI
from tests.evals import _desk
from tests.evals.conftest import SUITE, UNKNOWN_CASE, write_suite


@pytest.fixture
def suite(suite_file: Path) -> Suite:
    return load_suite(suite_file)


def _evaluate(cp: ControlPlane, suite: Suite, graph: GraphFactory = _desk.graph) -> EvalReport:
    return evaluate(suite, graph, control_plane=cp, judge=None)


def test_the_desk_meets_its_gold(desk_plane: ControlPlane, tmp_path: Path) -> None:
    suite = load_suite(write_suite(tmp_path, SUITE + UNKNOWN_CASE))
    placed = len(_desk.PLACED)
    report = _evaluate(desk_plane, suite)
    m = report.metrics
    assert [c.status for c in report.cases] == [
        "answered",
        "answered",
        "awaiting_grant",
        "answered",
        "abstained",
    ]
    assert m.faithfulness == m.coverage == m.status_accuracy == 1.0
    assert m.abstention_precision == m.abstention_recall == 1.0 and m.false_alarm_rate == 0.0
    assert m.action_accuracy == m.grant_accuracy == m.side_effect_hygiene == 1.0
    assert len(_desk.PLACED) == placed + 1  # the approved order, once; the paused one not
    order = report.case("order")
    assert (order.answered_claims, order.grants_requested, order.actions_ok) == (3, 1, 1)
    unknown = report.case("unknown")
    assert unknown.answered_claims == 0 and unknown.rounds >= 1  # it went back for evidence
    assert m.rounds_mean == pytest.approx(unknown.rounds / 5)


def test_a_baseline_round_trips_and_the_same_graph_passes(
    desk_plane: ControlPlane, suite: Suite, tmp_path: Path
) -> None:
    path = tmp_path / "baseline.json"
    write_baseline(_evaluate(desk_plane, suite), path)
    recorded = read_baseline(path, suite_id=suite.id)
    assert recorded.suite_id == suite.id and recorded.metrics["coverage"] == 1.0
    assert "latency" not in path.read_text()  # timings vary; a baseline keeps none
    result = assert_no_regression(_evaluate(desk_plane, suite), path)
    assert result.passed and result.changed_cases == () and result.compared


def test_a_dropped_claim_fails_on_coverage_naming_the_case(
    desk_plane: ControlPlane, suite: Suite
) -> None:
    baseline = _baseline(desk_plane, suite)
    result = check_regressions(_evaluate(desk_plane, suite, _desk.graph_drops_claim), baseline)
    assert not result.passed
    [failure] = result.failures
    assert failure == "coverage fell from 100.0% to 75.0% (-25.0 points); cases: stock"
    [coverage] = [m for m in result.metrics if m.regressed]
    assert coverage.name == "coverage" and coverage.cases == ("stock",)
    changed = {c.case_id: c.fields for c in result.changed_cases}
    assert "missing_facts" in changed["stock"]
    assert set(changed) == {"stock", "order", "paused", "quiet"}  # each lost a claim


def test_an_order_run_twice_fails_hygiene_naming_the_case(
    desk_plane: ControlPlane, suite: Suite
) -> None:
    baseline = _baseline(desk_plane, suite)
    report = _evaluate(desk_plane, suite, _desk.graph_orders_twice)
    result = check_regressions(report, baseline)
    assert not result.passed
    assert report.case("order").hygiene_violations == (
        "place_order {'sku': 'BT-105', 'units': 40} ran 2 times",
    )
    assert result.failures[0].startswith("side_effect_hygiene is 75.0%, must be 100% (order:")
    regressed = {m.name: m.cases for m in result.metrics if m.regressed}
    assert regressed["side_effect_hygiene"] == ("order",)
    assert regressed["action_accuracy"] == ("order",)
    assert set(regressed["grant_accuracy"]) == {"order", "paused"}


def test_an_order_run_without_a_grant_fails_hygiene(desk_plane: ControlPlane, suite: Suite) -> None:
    report = _evaluate(desk_plane, suite, _desk.graph_unguarded)
    result = check_regressions(report)  # no baseline: hygiene is absolute
    assert not result.passed
    paused = report.case("paused")
    assert paused.status == "answered"
    assert paused.hygiene_violations[0].startswith(
        "place_order {'sku': 'BT-105', 'units': 40} ran without a valid grant (no grant)"
    )
    assert paused.hygiene_violations[1] == "place_order ran 1 time(s); the case forbids it"
    assert "order:" in result.failures[0] and "paused:" in result.failures[0]


def test_a_baseline_belongs_to_one_suite(
    desk_plane: ControlPlane, suite: Suite, suite_file: Path, tmp_path: Path
) -> None:
    path = tmp_path / "baseline.json"
    report = _evaluate(desk_plane, suite)
    write_baseline(report, path)
    changed = load_suite(write_suite(tmp_path, SUITE.replace("2 April", "02 April"), "b.yaml"))
    assert changed.id != suite.id
    with pytest.raises(UsageError, match=f"recorded for suite {suite.id}.*not {changed.id}"):
        read_baseline(path, suite_id=changed.id)
    other = dataclasses.replace(report, suite_id=changed.id)
    with pytest.raises(UsageError, match="recorded for suite"):
        assert_no_regression(other, path)
    with pytest.raises(UsageError, match="recorded for suite"):
        check_regressions(other, read_baseline(path))


def test_a_regression_fails_the_pytest_helper_and_cannot_become_the_baseline(
    desk_plane: ControlPlane, suite: Suite, tmp_path: Path
) -> None:
    path = tmp_path / "baseline.json"
    assert_no_regression(_evaluate(desk_plane, suite), path, update=True)
    before = path.read_text()
    bad = _evaluate(desk_plane, suite, _desk.graph_orders_twice)
    with pytest.raises(AssertionError, match="side_effect_hygiene"):
        assert_no_regression(bad, path)
    with pytest.raises(UsageError, match="cannot record a failing evaluation"):
        assert_no_regression(bad, path, update=True)
    assert path.read_text() == before
    with pytest.raises(UsageError, match="no baseline at"):
        assert_no_regression(bad, tmp_path / "none.json")


def test_a_bad_baseline_file_is_refused(tmp_path: Path, suite: Suite) -> None:
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps({"format": "assay-eval-baseline/1", "suite_id": 3}))
    with pytest.raises(UsageError, match="is not an eval baseline"):
        read_baseline(path, suite_id=suite.id)


@pytest.mark.slow
def test_cases_run_in_worker_processes_as_in_one(db_url: str, suite: Suite) -> None:
    nli = LexicalNLI()
    finished: list[str] = []
    parallel = evaluate(
        suite,
        _desk.graph,
        database_url=db_url,
        jobs=2,
        nli=nli,
        judge=None,
        on_case=lambda run: finished.append(run.case_id),
    )
    assert sorted(finished) == sorted(case.id for case in suite.cases)
    assert (parallel.graph_name, parallel.graph_version) == (_desk.NAME, "1")
    with ControlPlane.open(db_url, nli=nli) as cp:
        alone = _evaluate(cp, suite)
    assert [c.outcome() for c in parallel.cases] == [c.outcome() for c in alone.cases]
    assert parallel.metrics.gated() == alone.metrics.gated()
    assert parallel.metrics.model_s is not None  # each worker times its model
    with ControlPlane.open(db_url) as cp:
        runs = {c.run_id for c in parallel.cases}
        assert all(cp.ledger.verify(run).ok for run in runs if run is not None)


def _baseline(cp: ControlPlane, suite: Suite) -> Baseline:
    return baseline_of(_evaluate(cp, suite))
