"""The eval suites that ship in ``evals/`` and gate CI (``evals/run_ci.sh``): each is
valid, its baseline belongs to it, and one small case runs end to end; the
agent-grounding builder turns labelled items into a suite the replay graph runs."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from assay import ControlPlane
from assay.apps import reference
from assay.evals import evaluate, load_suite, read_baseline, suite_json_schema, suite_problems
from assay.verifier import LexicalNLI
from evals.agent_grounding import build_suite, replay

EVALS = Path(__file__).resolve().parents[2] / "evals"
SHIPPED = sorted(EVALS.glob("*/suite.yaml"))


def test_the_shipped_suites_are_found() -> None:
    assert {p.parent.name for p in SHIPPED} >= {"invoice-audit", "injection"}


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.parent.name)
def test_a_shipped_suite_is_valid_and_its_baseline_is_its_own(path: Path) -> None:
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(suite_json_schema()).validate(raw)
    assert suite_problems(path) == []
    suite = load_suite(path)
    baseline = read_baseline(path.parent / "baseline.json", suite_id=suite.id)
    assert baseline.suite_id == suite.id
    assert set(baseline.cases) == {case.id for case in suite.cases}


def test_the_injection_suite_has_one_case_per_class() -> None:
    suite = load_suite(EVALS / "injection" / "suite.yaml")
    injected = [case.extra["inject"] for case in suite.cases]
    assert sorted(injected) == sorted(reference.INJECTIONS)
    for case in suite.cases:
        assert case.expected_status == "abstained"
        assert case.expect.forbidden_actions, case.id


def test_the_bundled_cases_are_in_the_suite_as_they_ship() -> None:
    """The suite's copies of the package's cases do not drift from them."""
    suite = load_suite(EVALS / "invoice-audit" / "suite.yaml")
    for name, folder in reference.cases().items():
        shipped = {p.name: p.read_text(encoding="utf-8") for p in folder.glob("*.md")}
        assert dict(suite.case(name).documents) == shipped, name


def test_a_line_the_agents_cannot_read_ends_in_abstention_end_to_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_OUTBOX", str(tmp_path / "outbox.jsonl"))
    suite = load_suite(EVALS / "invoice-audit" / "suite.yaml")
    one = dataclasses.replace(suite, cases=(suite.case("unreadable_line"),))
    with ControlPlane.open(f"sqlite:///{tmp_path / 'eval.db'}", nli=LexicalNLI()) as cp:
        report = evaluate(one, reference.graph, control_plane=cp, judge=None)
    [case] = report.cases
    assert (case.status, case.expected_status) == ("abstained", "abstained")
    assert not case.missing_facts and not case.forbidden_claims
    assert not case.hygiene_violations and case.error is None
    assert not (tmp_path / "outbox.jsonl").exists()


ITEMS: list[dict[str, Any]] = [
    {
        "id": "t-1",
        "evidence": [{"source": "stock_api.get", "content": {"sku": "BT-105", "units": 120}}],
        "claim": "SKU BT-105 has 120 units.",
        "label": "supported",
    },
    {
        "id": "t-2",
        "evidence": [
            {"source": "log", "content": "deploy d-17 failed: image not found"},
            {"source": "log", "content": "retry scheduled for 14:00"},
        ],
        "claim": "Deploy d-17 succeeded.",
        "label": "unsupported",
    },
]


def test_the_agent_grounding_builder_writes_a_suite_the_replay_graph_runs(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / build_suite.DATA_FILE).write_text(
        "".join(json.dumps(item) + "\n" for item in ITEMS), encoding="utf-8"
    )
    assert build_suite.main(["--data", str(data), "--out", str(tmp_path / "out")]) == 0
    path = tmp_path / "out" / "suite.json"
    assert suite_problems(path) == []
    suite = load_suite(path)
    assert sorted(suite.case("t-2").fixtures) == ["log", "log #2"]
    with ControlPlane.open(f"sqlite:///{tmp_path / 'eval.db'}", nli=LexicalNLI()) as cp:
        report = evaluate(suite, replay.graph, control_plane=cp, judge=None)
    assert [(c.case_id, c.status) for c in report.cases] == [
        ("t-1", "answered"),
        ("t-2", "abstained"),
    ]
    assert report.metrics.status_accuracy == 1.0


def test_the_agent_grounding_builder_says_when_the_data_is_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert build_suite.main(["--data", str(tmp_path / "absent"), "--out", str(tmp_path)]) == 2
    assert "no agent-grounding dev set" in capsys.readouterr().err
    assert not (tmp_path / "suite.json").exists()
