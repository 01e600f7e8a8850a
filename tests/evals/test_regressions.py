"""Deliberate regressions of the stock desk make ``assay eval`` exit 1: a baseline is
recorded with the good desk, the regressed one runs against it, and the output names
the metric that moved and the cases behind it. Every run is recorded, failed or not.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from assay import ControlPlane
from assay.cli import app
from assay.evals import eval_history
from assay.verifier import LexicalNLI, Verifier

GOOD = "tests.evals._desk:graph"


def _use_model(monkeypatch: pytest.MonkeyPatch, threshold: float) -> None:
    """The model every control plane and meaning judge of the command gets: the
    deterministic stand-in, with the verifier's threshold at ``threshold``."""
    model = LexicalNLI(threshold=threshold)
    monkeypatch.setattr(Verifier, "default", lambda *_, **__: model)


def _assay(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def _baseline(suite_file: Path, db: str, graph: str = GOOD) -> Path:
    """A baseline recorded with the good desk, and the gate passing against it."""
    baseline = suite_file.parent / "stock.baseline.json"
    common = [str(suite_file), "--db", db, "--graph", graph, "--baseline", str(baseline)]
    code, out, err = _assay("eval", *common, "--update-baseline")
    assert code == 0, out + err
    code, out, err = _assay("eval", "run", *common)
    assert code == 0, out + err
    assert "gate passed" in out
    return baseline


def _regressed(suite_file: Path, db: str, graph: str, baseline: Path) -> str:
    args = [str(suite_file), "--db", db, "--graph", graph, "--baseline", str(baseline)]
    code, out, err = _assay("eval", *args)
    assert code == 1, out + err
    return out + err


def _newest_failed(db: str, count: int) -> tuple[str, ...]:
    with ControlPlane.open(db) as cp:
        records = eval_history(cp)
    assert len(records) == count
    assert [r.passed for r in records] == [False] + [True] * (count - 1)
    return records[0].failures


def test_a_raised_verifier_threshold_drops_coverage_and_names_the_cases(
    monkeypatch: pytest.MonkeyPatch, sqlite_url: str, suite_file: Path
) -> None:
    own_words = "tests.evals._desk:graph_in_own_words"
    _use_model(monkeypatch, threshold=0.6)
    baseline = _baseline(suite_file, sqlite_url, own_words)
    # The stand-in scores a claim by the share of its content words the evidence
    # holds: "The documents say that the next delivery is due on 2025-04-02." has 3
    # of 4 (0.75). Raised to 0.8, the threshold rejects it, and each case, all of
    # which cite the stock document, abstains. (With the accounted bar at 0 the
    # model alone decides: one record accounts for the claim's date, which would
    # otherwise entail it whatever the threshold.)
    _use_model(monkeypatch, threshold=0.8)
    monkeypatch.setattr("assay.verifier._ledger_verifier.ACCOUNTED_BAR", 0.0)
    out = _regressed(suite_file, sqlite_url, own_words, baseline)
    assert "coverage fell from 100.0% to 0.0% (-100.0 points); cases: stock, order, quiet" in out
    assert "faithfulness fell from 100.0% to n/a; cases: stock, order, paused, quiet" in out
    assert "case stock changed: status: 'answered' -> 'abstained'" in out
    failures = _newest_failed(sqlite_url, 3)
    assert any(f.startswith("coverage fell") for f in failures)


def test_an_agent_that_drops_a_claim_fails_coverage(
    monkeypatch: pytest.MonkeyPatch, sqlite_url: str, suite_file: Path
) -> None:
    _use_model(monkeypatch, threshold=0.6)
    baseline = _baseline(suite_file, sqlite_url)
    out = _regressed(suite_file, sqlite_url, "tests.evals._desk:graph_drops_claim", baseline)
    # Only the stock case lacks a fact: the others' dropped sentence is no fact of theirs.
    lines = [line.strip() for line in out.splitlines()]
    assert "- coverage fell from 100.0% to 75.0% (-25.0 points); cases: stock" in lines
    assert "missing_facts: [] -> ['delivery']" in out
    _newest_failed(sqlite_url, 3)


def test_a_policy_that_orders_twice_fails_side_effect_hygiene(
    monkeypatch: pytest.MonkeyPatch, sqlite_url: str, suite_file: Path
) -> None:
    _use_model(monkeypatch, threshold=0.6)
    baseline = _baseline(suite_file, sqlite_url)
    graph = "tests.evals._desk:graph_policy_orders_twice"
    out = _regressed(suite_file, sqlite_url, graph, baseline)
    assert "side_effect_hygiene is 50.0%, must be 100% (order: " in out
    assert "; paused: " in out
    assert "side_effect_hygiene fell from 100.0% to 50.0% (-50.0 points); cases: order, paused" in (
        out
    )
    [hygiene, *_] = _newest_failed(sqlite_url, 3)
    assert hygiene.startswith("side_effect_hygiene is 50.0%")


def test_json_output_holds_the_failures_and_no_progress(
    monkeypatch: pytest.MonkeyPatch, sqlite_url: str, suite_file: Path
) -> None:
    _use_model(monkeypatch, threshold=0.6)
    baseline = _baseline(suite_file, sqlite_url)
    monkeypatch.setenv("FORCE_COLOR", "1")  # stderr counts as a terminal
    args = ["--db", sqlite_url, "--baseline", str(baseline), "--json"]
    code, out, err = _assay(
        "eval", str(suite_file), "--graph", "tests.evals._desk:graph_drops_claim", *args
    )
    assert code == 1, err
    data = json.loads(out)
    assert data["gate"]["passed"] is False
    assert data["recorded"].startswith("evr_")
    [coverage] = [m for m in data["gate"]["metrics"] if m["name"] == "coverage"]
    assert coverage["regressed"] is True and coverage["cases"] == ["stock"]
    assert "4/4" not in err  # no progress bar with --json


def test_the_progress_bar_is_drawn_on_a_terminal_only(
    monkeypatch: pytest.MonkeyPatch, sqlite_url: str, suite_file: Path
) -> None:
    _use_model(monkeypatch, threshold=0.6)
    args = ["eval", str(suite_file), "--db", sqlite_url, "--graph", GOOD]
    code, out, err = _assay(*args)
    assert code == 0, out + err
    assert "4/4" not in err
    monkeypatch.setenv("FORCE_COLOR", "1")
    code, out, err = _assay(*args)
    assert code == 0, out + err
    assert "4/4" in err and "4/4" not in out
