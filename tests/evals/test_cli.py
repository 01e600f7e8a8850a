"""``assay eval`` as a command: the gate's exit status, the baseline file, and one
clear line (no traceback) for a bad suite or another suite's baseline."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from assay.cli._eval import eval_app
from assay.verifier import LexicalNLI, Verifier
from tests.evals.conftest import SUITE, write_suite


@pytest.fixture(autouse=True)
def _stand_in_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Verifier, "default", lambda *_, **__: LexicalNLI())


def _eval(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(eval_app, list(args))
    return result.exit_code, result.output


def _eval_desk(suite_file: Path, sqlite_url: str, *args: str) -> tuple[int, str]:
    """``assay eval`` of the suite on the stock desk's graph."""
    return _eval(str(suite_file), "--db", sqlite_url, "--graph", "tests.evals._desk:graph", *args)


def test_record_a_baseline_then_gate_a_regression(sqlite_url: str, suite_file: Path) -> None:
    baseline = suite_file.parent / "stock.baseline.json"
    common = [str(suite_file), "--db", sqlite_url, "--baseline", str(baseline)]
    code, out = _eval(*common, "--graph", "tests.evals._desk:graph", "--update-baseline")
    assert code == 0, out
    assert "baseline written" in out and baseline.exists()
    code, out = _eval(*common, "--graph", "tests.evals._desk:graph")
    assert code == 0, out
    assert "gate passed" in out and "coverage" in out
    code, out = _eval(*common, "--graph", "tests.evals._desk:graph_drops_claim")
    assert code == 1, out
    assert "coverage fell from 100.0% to 75.0% (-25.0 points); cases: stock" in out
    assert "case stock changed" in out


def test_hygiene_fails_without_a_baseline(sqlite_url: str, suite_file: Path) -> None:
    code, out = _eval(
        str(suite_file), "--db", sqlite_url, "--graph", "tests.evals._desk:graph_orders_twice"
    )
    assert code == 1, out
    assert "side_effect_hygiene is 75.0%, must be 100% (order:" in out


def test_a_bad_suite_is_one_line_and_exit_2(tmp_path: Path, sqlite_url: str) -> None:
    bad = write_suite(tmp_path, SUITE.replace("status: awaiting_grant", "status: later"), "b.yaml")
    code, out = _eval(str(bad), "--db", sqlite_url, "--graph", "tests.evals._desk:graph")
    assert code == 2
    assert "case 'paused': expect.status" in out and "Traceback" not in out


def test_another_suites_baseline_is_refused_before_any_run(
    tmp_path: Path, sqlite_url: str, suite_file: Path
) -> None:
    baseline = tmp_path / "b.json"
    args = [str(suite_file), "--db", sqlite_url, "--graph", "tests.evals._desk:graph"]
    assert _eval(*args, "--baseline", str(baseline), "--update-baseline")[0] == 0
    other = write_suite(tmp_path, SUITE.replace("2 April", "02 April"), "other.yaml")
    code, out = _eval(
        str(other), "--db", sqlite_url, "--graph", "nowhere:graph", "--baseline", str(baseline)
    )
    assert code == 2 and "was recorded for suite" in out and "Traceback" not in out


def test_update_baseline_needs_a_file(sqlite_url: str, suite_file: Path) -> None:
    code, out = _eval_desk(suite_file, sqlite_url, "--update-baseline")
    assert code == 2 and "--update-baseline needs --baseline" in out
    missing = suite_file.parent / "no-such-folder" / "baseline.json"
    code, out = _eval_desk(suite_file, sqlite_url, "--update-baseline", "--baseline", str(missing))
    assert code == 2 and "its folder does not exist" in out and "Traceback" not in out
    assert not missing.parent.exists()


def test_one_case_is_checked_against_its_expectations_and_not_recorded(
    sqlite_url: str, suite_file: Path
) -> None:
    args = [str(suite_file), "--db", sqlite_url, "--case", "stock"]
    code, out = _eval(*args, "--graph", "tests.evals._desk:graph")
    assert code == 0, out
    assert "case stock meets its expectations" in out
    assert "order" not in out.split("cases")[-1]  # only the case named ran
    code, out = _eval(*args, "--graph", "tests.evals._desk:graph_drops_claim")
    assert code == 1, out
    assert "case stock: missing fact: delivery" in out
    # Neither check was recorded: the history holds no evaluation.
    code, out = _eval("history", "--db", sqlite_url)
    assert code == 0 and "stock-desk" not in out, out


def test_an_unknown_case_is_refused_with_the_closest_ids(sqlite_url: str, suite_file: Path) -> None:
    code, out = _eval_desk(suite_file, sqlite_url, "--case", "stok")
    assert code == 2 and "has no case 'stok'; did you mean stock?" in out, out
    assert "Traceback" not in out


def test_a_case_check_is_not_gated_or_recorded_as_a_baseline(
    sqlite_url: str, suite_file: Path
) -> None:
    baseline = suite_file.parent / "b.json"
    code, out = _eval_desk(
        suite_file, sqlite_url, "--case", "stock", "--baseline", str(baseline), "--update-baseline"
    )
    assert code == 2 and "--case runs part of the suite" in out, out
    assert not baseline.exists()
