"""The ``state_mismatch`` check's reading of states: which classes clash, which
record a clause speaks of, and what a negation or a future leaves alone."""

from __future__ import annotations

import json
import re

import pytest

from assay.grounding import view_of
from assay.verifier._states import StateLine, clash, contradicting, said_classes, state_lines


def _fields(record: object) -> list[StateLine]:
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


def test_a_clause_about_every_record_is_contradicted_by_one() -> None:
    pods = "NAME    READY   STATUS\napi-1   2/2     Running\napi-2   1/2     CrashLoopBackOff\n"
    from assay.verifier._premises import read

    fields = list(state_lines(read(pods, "pods").text))
    assert [f.state for f in fields] == ["in_progress", "failed"]
    assert contradicting(fields, "All api pods are running.", []) is not None
    assert contradicting(fields, "One api pod is running with both containers ready.", []) is None


def test_whether_a_thing_is_in_force_is_its_own_question() -> None:
    policy = {"policy_number": "AU-55", "status": "lapsed"}
    claim = {"claim_number": "CLM-9", "policy_number": "AU-55", "status": "under_review"}
    fields = _fields(policy) + _fields(claim)
    assert contradicting(fields, "while policy AU-55 was still in force", ["AU-55"]) is not None
    assert contradicting(fields, "after policy AU-55 expired", ["AU-55"]) is None


def test_a_nested_objects_state_is_not_its_parents() -> None:
    flight = {
        "flight": "NX 482",
        "status": "delayed",
        "inbound": {"flight": "NX 481", "status": "landed"},
    }
    fields = _fields(flight)
    assert contradicting(fields, "NX 482 is running late", ["NX 482"]) is None
    assert contradicting(fields, "NX 481 is expected to land at 07:32", ["NX 481"]) is not None


def test_an_anchor_names_its_record_whole() -> None:
    tickets = {
        "tickets": [
            {"id": "T-5", "status": "pending"},
            {"id": "T-50", "status": "completed"},
        ]
    }
    fields = _fields(tickets)
    assert contradicting(fields, "Ticket T-5 was completed.", ["T-5"]) is not None
    assert contradicting(fields, "Ticket T-50 was completed.", ["T-50"]) is None


@pytest.mark.parametrize(
    ("response", "claim"),
    [
        (
            "GET /v2/meters/M-1/reads\n502 Bad Gateway\nupstream did not respond",
            "Fetching the reads of meter M-1 succeeded.",
        ),
        (
            "$ npm install ui-kit\nnpm error 404 Not Found - GET https://registry.example.org/ui-kit",
            "The npm install of ui-kit succeeded.",
        ),
        (
            json.dumps({"message": "Validation of the issue failed", "status": 422}),
            "Creating the issue succeeded.",
        ),
    ],
)
def test_a_failed_status_with_its_phrase_or_in_a_field_is_a_failed_response(
    response: str, claim: str
) -> None:
    fields = _fields(response)
    assert [f.state for f in fields] == ["failed"]
    assert contradicting(fields, claim, re.findall(r"M-1", claim)) is not None


def test_a_success_among_failures_leaves_the_entry_undecided() -> None:
    log = "POST /refunds\nHTTP/1.1 503 Service Unavailable\nPOST /refunds\nHTTP/1.1 201 Created"
    fields = _fields(log)
    assert sorted(f.state for f in fields) == ["done", "failed"]
    assert contradicting(fields, "The refund call succeeded on the second try.", []) is None
