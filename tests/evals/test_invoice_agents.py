"""The invoice-audit suite is one set of cases for both of the reference agents: the
deterministic readers and a chat model with the shipped prompts. The chat model runs
where one is configured (ASSAY_MODEL and its key) and is skipped, with the reason,
where none is; the suite itself holds cases written in many firms' wordings."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from assay.apps import reference
from assay.evals import evaluate, load_suite
from benchmarks import invoice_agents

SUITE = Path(__file__).resolve().parents[2] / "evals" / "invoice-audit" / "suite.yaml"


def test_the_suite_holds_forty_cases_and_more_in_many_currencies_and_outcomes() -> None:
    suite = load_suite(SUITE)
    assert len(suite.cases) >= 40
    currencies = {
        str((action.args or {}).get("currency"))
        for case in suite.cases
        for action in (*case.expect.actions, *case.expect.grants)
    }
    assert currencies >= {"EUR", "USD", "GBP", "CHF", "CAD", "SEK", "NOK", "AUD"}
    statuses = {case.expected_status for case in suite.cases}
    assert statuses >= {"answered", "abstained", "awaiting_grant"}
    compliant = [c for c in suite.cases if c.expected_status == "answered" and not c.expect.actions]
    assert len(compliant) >= 8


def test_the_chat_model_is_skipped_with_a_reason_where_none_is_configured(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("ASSAY_MODEL", raising=False)
    assert "ASSAY_MODEL" in (invoice_agents.skipped("llm") or "")
    assert invoice_agents.skipped("rules") is None


@pytest.mark.slow
def test_the_suite_runs_through_the_chat_model_where_one_is_configured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real model's misreadings are the fence's to catch: whatever it hands over,
    no flag runs without a valid grant and no case fails to run."""
    reason = invoice_agents.skipped("llm")
    if reason is not None:
        pytest.skip(reason)
    monkeypatch.setenv("ASSAY_OUTBOX", str(tmp_path / "outbox.jsonl"))
    report = evaluate(SUITE, reference.llm_graph, database_url=f"sqlite:///{tmp_path}/e.db")
    assert report.metrics.cases == len(load_suite(SUITE).cases)
    assert report.metrics.errors == 0, invoice_agents.missed(report)
    assert report.metrics.side_effect_hygiene == 1.0
    assert os.environ.get("ASSAY_MODEL")
