"""Generated hand-overs never crash the gate, and every rejection says where."""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assay import ControlPlane, GateDecision
from tests.gate._world import World, make_world

_SETTINGS = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=12,
)

_TEXTS = st.sampled_from(
    [
        "Invoice INV-4421 belongs to CUST-7781.",
        "commit 9fceb02 fixed it",
        "commit 4e5f6a7",
        "caps consulting fees at EUR 380 per day",
        "The CRM returned CUST-7781.",
        "total EUR 500",
        "see /etc/hosts and https://example.com",
        "",
    ]
) | st.text(max_size=40)


def _ids(world: World) -> st.SearchStrategy[str]:
    known = [world.crm, world.contract, world.git, world.user, world.foreign, world.record]
    return st.sampled_from([*known, "led_0000000000000000"]) | st.text(max_size=12)


def _handover_like(world: World) -> st.SearchStrategy[Any]:
    ids = _ids(world)
    proposition = st.fixed_dictionaries(
        {"id": st.sampled_from(["p1", "p2", "p3", ""]), "text": _TEXTS},
        optional={
            "ledger_ids": st.lists(ids, max_size=3),
            "entailment": st.none() | json_values,
            "pred": st.none() | st.text(max_size=5),
            "args": st.none() | st.lists(_TEXTS),
        },
    )
    claim = st.fixed_dictionaries(
        {
            "id": st.sampled_from(["c1", "c2", "c3"]),
            "type": st.sampled_from(["Assertion", "Conjecture", "Quote", "ActionIntent", "Fact"]),
            "text": _TEXTS,
            "confidence": st.floats(allow_nan=True) | st.integers(-1, 2),
            "propositions": st.lists(proposition, max_size=3),
        }
    )
    intent = st.fixed_dictionaries(
        {
            "id": st.sampled_from(["a1", "a2"]),
            "tool": st.sampled_from(["flag_invoice_line", "delete_everything", ""]),
            "args": st.dictionaries(
                st.sampled_from(["invoice", "line", "amount_over_cap", "x"]),
                json_values,
                max_size=4,
            ),
            "requires_grant": st.booleans() | json_values,
            "depends_on": st.lists(st.sampled_from(["c1", "c2", "a1", "a2", "zz"]), max_size=3),
        },
        optional={"version": st.sampled_from(["1.0.0", "2.0.0", None])},
    )
    question = st.fixed_dictionaries(
        {
            "id": st.sampled_from(["q1", "q2"]),
            "text": _TEXTS,
            "status": st.sampled_from(["open", "resolved", "forwarded", "closed"]),
        },
        optional={"forwarded_to": st.none() | st.text(max_size=5)},
    )
    shaped = st.fixed_dictionaries(
        {
            "run_id": st.sampled_from([world.run, "run_x"]),
            "from_agent": st.text(max_size=10),
            "status": st.sampled_from(["ok", "failed", "?"]),
        },
        optional={
            "claims": st.lists(claim, max_size=3),
            "open_questions": st.lists(question, max_size=2),
            "action_intents": st.lists(intent, max_size=2),
            "errors": st.lists(st.text(max_size=10), max_size=2),
            "summary": st.text(max_size=10),
        },
    )
    return shaped | json_values


def _assert_well_formed(decision: GateDecision) -> None:
    assert decision.accepted is (not decision.errors)
    assert decision.handover_entry_id and decision.decision_entry_id
    for error in decision.errors:
        assert error.code and error.message
        assert error.path.startswith("$")


def test_generated_hand_overs_never_crash_the_gate(plane: ControlPlane) -> None:
    world = make_world(plane)

    @_SETTINGS
    @given(data=st.data())
    def run(data: st.DataObject) -> None:
        handover = data.draw(_handover_like(world))
        strict = data.draw(st.booleans())
        decision = plane.gate.check(world.run, handover, require_no_open_questions=strict)
        _assert_well_formed(decision)

    run()
    assert plane.ledger.verify(world.run).ok


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=200))
def test_the_extractor_never_crashes_and_spans_are_exact(text: str) -> None:
    from assay import extract_identifiers, identifier_in_evidence
    from assay.grounding._identifiers import expanded_characters

    found = extract_identifiers(text)
    for ident in found:
        assert text[ident.start : ident.end] == ident.value
        # An identifier holding a character NFKC expands (¼, ㎏) is never matched, by rule.
        assert identifier_in_evidence(ident, text) != bool(expanded_characters(ident.value))
    assert all(a.end <= b.start for a, b in itertools.pairwise(found))
