"""Actions: a claim whose verb is the opposite of its evidence's ("added" against
"Dropped", "fixed" against "introduced") is the opposite, found without the model;
the same action in other words ("removed" for "dropped") is handed to the model in
the evidence's word.
"""

from __future__ import annotations

import json

import pytest

from assay import ControlPlane
from assay.verifier import LexicalNLI
from assay.verifier._antonyms import action_conflict, in_evidence_words
from tests.verifier.test_ledger_verifier import handover

RELEASE = (
    "## 5.0.0 (2025-01-20)\n"
    "- Dropped support for Node 16.\n"
    "- Added an --offline flag to `pkg sync`.\n"
    "- Fixed a memory leak in the watcher.\n"
    "- Upgraded openssl to 3.0.15.\n"
    "- The legacy exporter is disabled by default.\n"
)
CLAIMS = (
    "Appeal AP-2210 (travel insurance, trip cut short): rejected on 3 March 2025. "
    "The adjuster found the illness was known before the policy started."
)
BANK = "2025-02-03  Card payment to Ferro Tools  EUR 212.40  debited from account 4471."
CI = "Pipeline 8812: unit tests passed; integration tests failed on db-migrate."


@pytest.mark.parametrize(
    ("evidence", "claim", "sentence"),
    [
        (RELEASE, "Release 5.0.0 added support for Node 16.", "Dropped support"),
        (RELEASE, "Version 5.0.0 introduced a memory leak in the watcher.", "Fixed a memory"),
        (RELEASE, "5.0.0 removed the --offline flag from pkg sync.", "Added an --offline"),
        (RELEASE, "openssl was downgraded to 3.0.15.", "Upgraded openssl"),
        (RELEASE, "The legacy exporter is enabled by default.", "legacy exporter"),
        (CLAIMS, "Appeal AP-2210 was approved on 3 March 2025.", "rejected on"),
        (BANK, "EUR 212.40 was credited to account 4471 from Ferro Tools.", "debited"),
        (CI, "The integration tests passed on db-migrate.", "integration tests failed"),
    ],
)
def test_the_opposite_action_is_the_opposite(evidence: str, claim: str, sentence: str) -> None:
    span = action_conflict(evidence, claim)
    assert span is not None
    assert sentence in evidence[span[0] : span[1]]


@pytest.mark.parametrize(
    ("evidence", "claim"),
    [
        # The same action, in the same or other words.
        (RELEASE, "Release 5.0.0 removed support for Node 16."),
        (RELEASE, "5.0.0 fixed a memory leak in the watcher."),
        (CLAIMS, "Appeal AP-2210 was declined on 3 March 2025."),
        # A denied opposite agrees: "did not add support" is what "dropped" says.
        (RELEASE, "Release 5.0.0 did not add support for Node 16."),
        # An opposite about something else: the rest of the claim is not its sentence.
        (RELEASE, "5.0.0 removed the telemetry module from the CLI."),
        # The unit tests passed: the failing sentence is about the integration tests,
        # and it writes "passed" too.
        (CI, "The unit tests of pipeline 8812 passed."),
        # Both actions, each about its own time.
        (
            "Incident INC-7710 opened at 14:30.\nIncident INC-7710 closed at 16:05.",
            "Incident INC-7710 was opened at 14:30 and closed at 16:05.",
        ),
        # No action word at all.
        (BANK, "Ferro Tools was paid EUR 212.40 on 3 February 2025."),
    ],
)
def test_the_same_action_or_another_subject_decides_nothing(evidence: str, claim: str) -> None:
    assert action_conflict(evidence, claim) is None


@pytest.mark.parametrize(
    ("claim", "evidence", "restated"),
    [
        (
            "Version 5.0.0 removed support for Node 16.",
            RELEASE,
            "Version 5.0.0 dropped support for Node 16.",
        ),
        ("The appeal was denied.", CLAIMS, "The appeal was rejected."),
        # Written as the evidence writes it already, or no same action there.
        ("5.0.0 fixed a memory leak.", RELEASE, "5.0.0 fixed a memory leak."),
        ("The appeal was approved.", CLAIMS, "The appeal was approved."),
        # "introduce" writes two actions and is never restated.
        ("5.0.0 introduced an --offline flag.", RELEASE, "5.0.0 introduced an --offline flag."),
    ],
)
def test_the_same_action_is_restated_in_the_evidence_word(
    claim: str, evidence: str, restated: str
) -> None:
    assert in_evidence_words(claim, [evidence]) == restated


def test_the_verifier_calls_the_opposite_action_the_opposite_without_the_model(
    db_url: str,
) -> None:
    with ControlPlane.open(db_url, nli=LexicalNLI()) as cp:
        run = cp.ledger.start_run()
        entry = cp.ledger.append(run, kind="tool_output", source="tool:changelog", content=RELEASE)
        verified = cp.verifier.verify(
            run, handover(run, ("Release 5.0.0 added support for Node 16.", [entry.id]))
        )
        (verdict,) = verified.verdicts
        assert verdict.verdict.label == "contradiction"
        assert "says the opposite" in verdict.reason and "Dropped support" in verdict.reason
        span = verdict.verdict.span
        assert span is not None
        stored = entry.text[span[0] : span[1]]
        assert stored == "- Dropped support for Node 16."
        recorded = json.loads(cp.ledger.entries(run, kinds=["verdict"])[0].text)
        assert recorded["label"] == "contradiction"
