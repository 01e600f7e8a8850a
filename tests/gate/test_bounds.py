"""A hand-over the gate can neither check nor store is refused, never raised on.

Nested thousands deep (or containing itself), larger than ``MAX_HANDOVER_BYTES``, or
naming an agent longer than ``MAX_AGENT_CHARS``: ``parse`` raises ``InvalidHandover``
before the value is serialised, and ``gate.check`` turns that into a rejection
(``schema_violation`` at ``$``) whose ledger record is a bounded note, not the value;
on both engines, with no ``RecursionError`` and no ledger ``ContentTooLarge``. Values
just inside the bounds are checked as usual.
"""

from __future__ import annotations

from typing import Any

import pytest

from assay import ControlPlane, UsageError
from assay.errors import InvalidHandover
from assay.gate import _checks


def _nested(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = {"k": value}
    return value


def _handover(run: str, **change: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "run_id": run,
        "from_agent": "auditor",
        "status": "ok",
        "claims": [{"id": "c1", "type": "Conjecture", "text": "maybe", "confidence": 0.5}],
    }
    return {**base, **change}


def _looped(run: str) -> dict[str, Any]:
    value = _handover(run)
    value["claims"][0]["self"] = value
    return value


@pytest.mark.parametrize(
    "make",
    [
        lambda run: {"claims": _nested(5_000)},
        lambda run: _handover(run, claims=[_nested(100_000)]),
        _looped,
        lambda run: _handover(
            run,
            claims=[
                {"id": "c1", "type": "Conjecture", "text": "x" * 11_000_000, "confidence": 0.5}
            ],
        ),
        lambda run: _handover(
            run, open_questions=[{"id": f"q{i}", "text": "?"} for i in range(200_000)]
        ),
        lambda run: _handover(run, from_agent="a" * 5_000_000),
    ],
    ids=["5000-deep", "100000-deep", "self", "11MB-claim", "many-questions", "5MB-agent"],
)
def test_unboundable_hand_overs_are_refused_and_recorded_bounded(
    plane: ControlPlane, make: Any
) -> None:
    run = plane.ledger.start_run()
    with pytest.raises(InvalidHandover) as raised:
        _checks.parse(make(run))
    assert isinstance(raised.value, UsageError)
    decision = plane.gate.check(run, make(run))
    assert not decision.accepted and decision.codes == {"schema_violation"}
    assert decision.errors[0].path == "$" and str(raised.value) in decision.errors[0].message
    recorded = [len(e.content) for e in plane.ledger.entries(run)]
    assert len(recorded) == 2 and max(recorded) < 2_000


def test_a_decision_records_a_bounded_number_of_errors(plane: ControlPlane) -> None:
    run = plane.ledger.start_run()
    cites = ["led_" + "0" * 16] * 20_000
    bad = _handover(
        run,
        claims=[
            {
                "id": "c1",
                "type": "Assertion",
                "text": "x",
                "confidence": 0.5,
                "propositions": [{"id": "p", "text": "x", "ledger_ids": cites}],
            }
        ],
    )
    decision = plane.gate.check(run, bad)
    assert len(decision.errors) >= 20_000
    assert decision.decision_entry_id is not None
    record = plane.ledger.get(decision.decision_entry_id)
    assert len(record.content) < 200_000


def test_hand_overs_inside_the_bounds_are_checked_as_usual(plane: ControlPlane) -> None:
    from assay import _limits

    run = plane.ledger.start_run()
    large = _handover(
        run, claims=[{"id": "c1", "type": "Conjecture", "text": "y" * 900_000, "confidence": 0.5}]
    )
    assert plane.gate.check(run, large).accepted
    deep = _handover(run, errors=[_nested(_limits.MAX_JSON_DEPTH - 3)])
    decision = plane.gate.check(run, deep)
    assert not decision.accepted and "schema_violation" in decision.codes
    agent = _handover(run, from_agent="a" * _limits.MAX_AGENT_CHARS)
    assert plane.gate.check(run, agent).accepted


@pytest.mark.parametrize(
    "agent", ["agent\ud800", "agent\x00", "agent\n", "agent\x80", "\u202eagent"], ids=repr
)
def test_an_agent_name_with_odd_characters_is_recorded_visibly(
    plane: ControlPlane, agent: str
) -> None:
    run = plane.ledger.start_run()
    decision = plane.gate.check(run, _handover(run, from_agent=agent))
    assert decision.handover_entry_id is not None
    source = plane.ledger.get(decision.handover_entry_id).source
    assert "\x00" not in source and "\n" not in source and source.encode("utf-8")
