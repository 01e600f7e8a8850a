"""The ``state_mismatch`` check's reading of states: which classes clash, which
record a clause speaks of, and what a negation or a future leaves alone."""

from __future__ import annotations

import json

import pytest

from assay.grounding import view_of
from assay.verifier._states import clash, contradicting, said_classes, state_lines


def _fields(record: object) -> list:
    text = record if isinstance(record, str) else json.dumps(record)
    return list(state_lines(view_of(text).text))


@pytest.mark.parametrize(
    ("said", "recorded", "clashes"),
    [
        ("done", "in_progress", True),
        ("arrived", "waiting", True),
        ("waiting", "arrived", True),
        ("refused", "waiting", True),
        ("approved", "done", False),
        ("done", "arrived", False),
        ("failed", "refused", False),
        ("waiting", "in_progress", False),
        ("accepted", "waiting", False),
        ("accepted", "failed", True),
    ],
)
def test_which_classes_clash(said: str, recorded: str, clashes: bool) -> None:
    assert clash(said, recorded) is clashes


def test_a_negated_state_says_nothing_and_a_future_one_waits() -> None:
    assert said_classes("The job has not completed.") == set()
    assert said_classes("The command will be delivered at check-in.") == {"waiting"}
    assert said_classes("The command was delivered.") == {"arrived"}


def test_the_field_of_the_record_a_clause_names_decides() -> None:
    audit = {
        "student": "Leon Fischer",
        "modules": [
            {"code": "MA 2101", "result": "passed"},
            {"code": "MA 2204", "result": "failed"},
        ],
    }
    fields = _fields(audit)
    assert contradicting(fields, "Leon Fischer passed MA 2204.", ["MA 2204"]) is not None
    assert contradicting(fields, "Leon Fischer passed MA 2101.", ["MA 2101"]) is None


def test_a_field_the_clause_agrees_with_clears_it() -> None:
    application = {
        "application": "VA-20931",
        "decision": "pending",
        "biometrics": {"status": "done"},
    }
    fields = _fields(application)
    assert contradicting(fields, "Application VA-20931 is still pending.", ["VA-20931"]) is None
    assert contradicting(fields, "Application VA-20931 was approved.", ["VA-20931"]) is not None


def test_a_nested_object_named_by_its_key_decides() -> None:
    claim = {"claim": "HC-4471", "status": "approved", "payout": {"status": "scheduled"}}
    fields = _fields(claim)
    found = contradicting(fields, "the payout was delivered on 20 February", [])
    assert found is not None and found.path == "payout.status"


def test_a_failed_http_response_is_a_failed_state() -> None:
    response = (
        "POST /refunds\nHTTP/1.1 402 Payment Required\n"
        '{"error": "insufficient_balance", "message": "The refund could not be processed."}'
    )
    fields = _fields(response)
    assert [f.state for f in fields] == ["failed"]
    assert contradicting(fields, "The refund was processed successfully.", []) is not None
    assert contradicting(fields, "The refund could not be processed.", []) is None
