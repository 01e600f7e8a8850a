"""Direction: a claim that moves a value the other way from its evidence ("rose to
11.2%" against "11.2%, down from 12.0%") is the opposite, found without the model;
a claim that moves it the same way, or evidence that says no way, decides nothing.
"""

from __future__ import annotations

import json

import pytest

from assay import ControlPlane
from assay.verifier import LexicalNLI
from assay.verifier._direction import direction_conflict
from tests.verifier.test_ledger_verifier import handover

REPORT = (
    "Quarterly report Q3 2025 (Halden Foods plc)\n"
    "Revenue rose 8.4% to EUR 1.26 billion. Operating margin was 11.2%, down from 12.0% "
    "a year earlier. Net debt stood at EUR 310 million; headcount was 4,870."
)
NOTICE = (
    "Due to runway resurfacing on 10-12 December, all first-wave departures are retimed "
    "40 minutes later. Report times move accordingly."
)
MINUTES = (
    "## Decisions\n- Postgres 16 upgrade moves from 14 July to 21 July.\n"
    "- Error budget goes from 99.5% to 99.9% next quarter.\n"
)
CHANGELOG = "## 4.3.0 - 2025-02-11\n- Changed: default timeout raised from 30 s to 60 s.\n"


@pytest.mark.parametrize(
    ("evidence", "claim", "sentence"),
    [
        (REPORT, "Operating margin rose to 11.2%.", "Operating margin was 11.2%"),
        (REPORT, "Revenue fell 8.4% in the third quarter.", "Revenue rose 8.4%"),
        (REPORT, "Revenue declined 8.4% to EUR 1.26 billion.", "Revenue rose 8.4%"),
        (NOTICE, "First-wave departures are brought forward 40 minutes.", "all first-wave"),
        (CHANGELOG, "4.3.0 lowered the default timeout to 30 seconds.", "raised from 30 s"),
        (CHANGELOG, "4.3.0 cut the default timeout to 30 s.", "raised from 30 s"),
        # "from A to B" says which way by itself.
        (MINUTES, "The Postgres 16 upgrade was brought forward to 14 July.", "moves from"),
        (MINUTES, "The error budget was lowered to 99.9%.", "goes from 99.5%"),
        (NOTICE, "Departures on 10-12 December move 40 minutes earlier.", "all first-wave"),
    ],
)
def test_a_value_moved_the_other_way_is_the_opposite(
    evidence: str, claim: str, sentence: str
) -> None:
    span = direction_conflict(evidence, claim)
    assert span is not None
    assert sentence in evidence[span[0] : span[1]]


@pytest.mark.parametrize(
    ("evidence", "claim"),
    [
        # The same way, in other words.
        (REPORT, "Operating margin fell 0.8 percentage points to 11.2%."),
        (REPORT, "Operating margin fell from 12.0% to 11.2%."),
        (REPORT, "Revenue grew 8.4% to EUR 1.26 billion."),
        (NOTICE, "First-wave departures are pushed back 40 minutes."),
        (CHANGELOG, "4.3.0 raised the default timeout to 60 seconds."),
        (MINUTES, "The Postgres 16 upgrade was pushed back a week, from 14 July to 21 July."),
        (MINUTES, "The Postgres 16 upgrade was postponed to 21 July."),
        (MINUTES, "The error budget was raised to 99.9%."),
        # Days alone ("from 14 to 21") say too little to order.
        (
            "The window moves from the 14th to the 21st.",
            "The window was brought forward to the 14th.",
        ),
        (CHANGELOG, "4.3.0 doubled the default timeout from 30 s to 60 s."),
        # No direction beside the value in the evidence, or none in the claim.
        (REPORT, "Net debt rose to EUR 310 million."),
        (REPORT, "Headcount fell to 4,870."),
        (REPORT, "Operating margin was 11.2%."),
        # A word of direction in another clause is about something else.
        ("Costs rose sharply; the margin was 11.2%.", "The margin fell to 11.2%."),
    ],
)
def test_the_same_direction_or_none_decides_nothing(evidence: str, claim: str) -> None:
    assert direction_conflict(evidence, claim) is None


def test_the_verifier_calls_a_reversed_change_the_opposite_without_the_model(
    db_url: str,
) -> None:
    with ControlPlane.open(db_url, nli=LexicalNLI()) as cp:
        run = cp.ledger.start_run()
        entry = cp.ledger.append(run, kind="tool_output", source="tool:report", content=REPORT)
        verified = cp.verifier.verify(
            run, handover(run, ("Operating margin rose to 11.2%.", [entry.id]))
        )
        (verdict,) = verified.verdicts
        assert verdict.verdict.label == "contradiction"
        assert "says the opposite" in verdict.reason and "down from 12.0%" in verdict.reason
        recorded = json.loads(cp.ledger.entries(run, kinds=["verdict"])[0].text)
        assert recorded["label"] == "contradiction"
