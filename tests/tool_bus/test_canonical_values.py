"""One canonical value everywhere: what the gate grounds is what the effect key names.

An incident-response agent (a deploy log, an irreversible ``rollback_deploy``) and a
generic tool keyed on a string: an invented identifier never reaches a call, a
spelling of a value the gate accepts is the same effect, and a policy approves an
argument only where a verified proposition states it in its role.
"""

from __future__ import annotations

import os
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assay import ControlPlane
from assay._canonical import canonical_value
from assay._values import Slots, role_problems, ungrounded_values
from assay.tool_bus import GrantRequest, ToolSpec
from assay.tool_bus._effects import EffectKey, effect_key
from tests.tool_bus._tools import StandInClaims

DEPLOY_LOG = (
    '{"service": "checkout-api", "deploys": ['
    '{"commit": "9be44d2c1f0a8e3b7d6c5a4f3e2d1c0b9a8f7e6d", "at": "2025-03-14T06:02:00Z",'
    ' "author": "ayesha.k"}, '
    '{"commit": "3f9a2c1d7e8b4a6c5d2e1f0a9b8c7d6e5f4a3b2c", "at": "2025-03-14T05:10:00Z",'
    ' "author": "li.wei"}]}'
)

ROLLBACK = ToolSpec(
    "rollback_deploy",
    "1.0.0",
    "Roll a service back to an earlier commit.",
    {
        "type": "object",
        "properties": {
            "service": {"type": "string"},
            "to_commit": {"type": "string"},
            "dry_run": {"type": "boolean", "x-assay-grounding": "choice"},
        },
        "required": ["service", "to_commit"],
    },
    {"type": "object"},
    "irreversible",
    idempotency_key=("/service", "/to_commit"),
)


def _handover(run: str, log_id: str, args: dict[str, Any], depends_on: list[str]) -> dict[str, Any]:
    return {
        "run_id": run,
        "from_agent": "responder",
        "status": "ok",
        "claims": [
            {
                "id": "c1",
                "type": "Assertion",
                "confidence": 0.9,
                "text": "The deploy before the incident was commit 3f9a2c1d7e8b.",
                "propositions": [
                    {
                        "id": "p1",
                        "text": "checkout-api was deployed from commit 3f9a2c1d7e8b at 05:10.",
                        "ledger_ids": [log_id],
                    }
                ],
            }
        ],
        "action_intents": [
            {
                "id": "a1",
                "tool": "rollback_deploy",
                "requires_grant": True,
                "args": args,
                "depends_on": depends_on,
            }
        ],
    }


@pytest.fixture
def incident(plane: ControlPlane) -> tuple[ControlPlane, str, str]:
    plane.registry.register(ROLLBACK, _rolled_back)
    run = plane.ledger.start_run(metadata={"task": "checkout-api errors after 06:00"})
    log = plane.ledger.append(run, kind="tool_output", source="deploys@1.0.0", content=DEPLOY_LOG)
    return plane, run, log.id


def _rolled_back(args: dict[str, Any]) -> dict[str, Any]:
    return {"rolled_back_to": args["to_commit"]}


def _codes(plane: ControlPlane, run: str, log_id: str, args: dict[str, Any], deps: list[str]):
    decision = plane.gate.check(run, _handover(run, log_id, args, deps))
    return Counter(e.code for e in decision.errors), decision


@pytest.mark.parametrize(
    "commit", ["deadbee", "9be44d3", "c0ffee1c0ffee1", "3f9a2c1d7e8b4a6c5d2e1f0a9b8c7d6e5f4a3b2d"]
)
def test_an_invented_commit_never_reaches_the_call(
    incident: tuple[ControlPlane, str, str], commit: str
) -> None:
    plane, run, log_id = incident
    codes, decision = _codes(
        plane, run, log_id, {"service": "checkout-api", "to_commit": commit}, ["c1"]
    )
    assert codes["ungrounded_argument"] == 1, decision.errors
    (finding,) = [e for e in decision.errors if e.code == "ungrounded_argument"]
    assert finding.path == "$.action_intents[0].args.to_commit" and commit in finding.message


def test_an_invented_service_is_refused_too(incident: tuple[ControlPlane, str, str]) -> None:
    plane, run, log_id = incident
    args = {"service": "payments-api", "to_commit": "3f9a2c1d7e8b4a6c5d2e1f0a9b8c7d6e5f4a3b2c"}
    codes, _ = _codes(plane, run, log_id, args, ["c1"])
    assert codes == Counter({"ungrounded_argument": 1})


def test_a_true_commit_in_any_spelling_the_key_shares_passes(
    incident: tuple[ControlPlane, str, str],
) -> None:
    plane, run, log_id = incident
    full = "3f9a2c1d7e8b4a6c5d2e1f0a9b8c7d6e5f4a3b2c"
    for commit in (full, full.upper(), f" {full}", "\uff13" + full[1:]):
        args = {"service": "checkout-api", "to_commit": commit, "dry_run": False}
        _, decision = _codes(plane, run, log_id, args, ["c1"])
        assert decision.accepted, (commit, decision.errors)


def test_a_keyed_hash_must_be_whole_but_a_plain_argument_may_be_short() -> None:
    schema = ROLLBACK.input_schema
    short = {"service": "checkout-api", "to_commit": "3f9a2c1d7e8b"}
    keyed = ungrounded_values(short, schema, [DEPLOY_LOG], exact=["/to_commit"])
    assert [p for p, _ in keyed] == ["/to_commit"] and "whole" in keyed[0][1]
    assert ungrounded_values(short, schema, [DEPLOY_LOG]) == []


def test_an_irreversible_intent_on_no_claim_is_refused_before_anyone_is_asked(
    incident: tuple[ControlPlane, str, str],
) -> None:
    plane, run, log_id = incident
    args = {"service": "checkout-api", "to_commit": "3f9a2c1d7e8b4a6c5d2e1f0a9b8c7d6e5f4a3b2c"}
    codes, _ = _codes(plane, run, log_id, args, [])
    assert codes["ungrounded_intent"] == 1


# --- one canonical value: the gate and the effect key --------------------------------

KEYED = ToolSpec(
    "close_ticket",
    "1.0.0",
    "Close a ticket.",
    {"type": "object", "properties": {"ticket": {"type": "string"}}, "required": ["ticket"]},
    {"type": "object"},
    "irreversible",
    idempotency_key=("/ticket",),
)


def _key(value: str) -> str:
    found = effect_key(KEYED, {"ticket": value})
    assert isinstance(found, EffectKey)
    return found.sha256


#: The spellings of one value that once ran again as a new effect.
VARIANTS = {
    "3f9a2c1d7e8b": [
        "3F9A2C1D7E8B",
        " 3f9a2c1d7e8b",
        "3f9a2c1d7e8b\n",
        "3f9a2c1d7e8b.",
        "3f9a2c1d",
    ],
    "alice@example.com": ["ALICE@EXAMPLE.COM", "alice@example.com "],
    "OPS-1234": [
        "OPS-\uff11\uff12\uff13\uff14",
        "OPS-\u0661\u0662\u0663\u0664",
        "OPS\u200b-1234",
        "OPS-01234",
        "OPS-1234\n",
        "OPS-12345",
    ],
}


@pytest.mark.parametrize(("value", "variant"), [(v, x) for v, xs in VARIANTS.items() for x in xs])
def test_a_variant_the_gate_grounds_is_the_same_effect(value: str, variant: str) -> None:
    """Each spelling is either refused by the gate (not grounded by evidence that
    writes the value once) or named by the same effect key: never a new effect."""
    evidence = f"Ticket owner record: {value} (opened 2025-03-14)."
    grounded = not ungrounded_values(
        {"ticket": variant}, KEYED.input_schema, [evidence], exact=["/ticket"]
    )
    assert not grounded or _key(variant) == _key(value), variant


_pieces = st.sampled_from(["OPS-1234", "3f9a2c1d7e8b", "bob@example.org", "db-1.internal"])
_noise = st.sampled_from(
    ["", " ", "\u200b", "\u2060", "\ufeff", "\u00a0", ".", "\n", "\t", "-", "0", "A", "\u2011"]
)


@st.composite
def _spellings(draw: st.DrawFn) -> tuple[str, str]:
    value = draw(_pieces)
    chars = list(value)
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(chars)))
        chars.insert(at, draw(_noise))
    spelled = "".join(chars)
    if draw(st.booleans()):
        spelled = spelled.translate(
            str.maketrans(
                "0123456789", "\uff10\uff11\uff12\uff13\uff14\uff15\uff16\uff17\uff18\uff19"
            )
        )
    if draw(st.booleans()):
        spelled = spelled.upper()
    return value, spelled


@settings(max_examples=300, deadline=None)
@given(pair=_spellings())
def test_any_two_values_the_gate_counts_as_one_give_one_effect_key(
    pair: tuple[str, str],
) -> None:
    value, spelled = pair
    evidence = f"The record names {value} and nothing else."
    args = {"ticket": spelled}
    if not ungrounded_values(args, KEYED.input_schema, [evidence], exact=["/ticket"]):
        assert _key(spelled) == _key(value)
        assert canonical_value(spelled) == canonical_value(value)


def test_prior_effect_finds_a_repeat_however_it_is_spelled(plane: ControlPlane) -> None:
    plane.registry.register(KEYED, _closed)
    plane.grants.claim_status_source = StandInClaims(
        labels={"c1": ("entailment",)}, texts={"c1": ("Ticket OPS-1234 is resolved.",)}
    )
    run = plane.ledger.start_run()
    args = {"ticket": "OPS-1234"}
    request = GrantRequest.for_call(run, KEYED.name, KEYED.version, args, ("c1",), call_id="x")
    grant = plane.grants.issue(run, request, approver="rita")
    done = plane.bus.call(run, KEYED.name, args, grant_id=grant.id, call_id="x", depends_on=("c1",))
    assert done.ok, done.error
    for spelled in ("OPS-\uff11\uff12\uff13\uff14", " OPS-1234", "OPS\u200b-1234"):
        held = plane.bus.prior_effect("close_ticket", {"ticket": spelled})
        assert held is not None and held.run_id == run, spelled
    assert plane.bus.prior_effect("close_ticket", {"ticket": "OPS-12345"}) is None


#: ``ASSAY_LONG_PROPERTIES=1`` runs the engine property with 1,000 examples per engine.
_ENGINE_EXAMPLES = 1000 if os.environ.get("ASSAY_LONG_PROPERTIES") == "1" else 40


@settings(
    max_examples=_ENGINE_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(pair=_spellings())
def test_a_spelling_the_gate_grounds_is_found_as_the_performed_effect(
    performed: ControlPlane, pair: tuple[str, str]
) -> None:
    """On each engine: the effect of ``value`` was performed; any spelling the gate
    grounds by the same evidence is that effect for ``prior_effect`` (and the bus)."""
    value, spelled = pair
    evidence = f"The record names {value} and nothing else."
    if ungrounded_values({"ticket": spelled}, KEYED.input_schema, [evidence], exact=["/ticket"]):
        return
    held = performed.bus.prior_effect("close_ticket", {"ticket": spelled})
    assert held is not None and held.key_values == {"/ticket": canonical_value(value)}


@pytest.fixture
def performed(plane: ControlPlane) -> ControlPlane:
    """A plane where ``close_ticket`` has performed the effect of each base value."""
    plane.registry.register(KEYED, _closed)
    plane.grants.claim_status_source = StandInClaims(
        labels={"c1": ("entailment",)}, texts={"c1": ("The tickets are resolved.",)}
    )
    run = plane.ledger.start_run()
    for n, value in enumerate(["OPS-1234", "3f9a2c1d7e8b", "bob@example.org", "db-1.internal"]):
        args = {"ticket": value}
        request = GrantRequest.for_call(
            run, KEYED.name, KEYED.version, args, ("c1",), call_id=f"k{n}"
        )
        grant = plane.grants.issue(run, request, approver="rita")
        done = plane.bus.call(
            run, KEYED.name, args, grant_id=grant.id, call_id=f"k{n}", depends_on=("c1",)
        )
        assert done.ok, done.error
    return plane


def _closed(args: dict[str, Any]) -> dict[str, Any]:
    return {"closed": args["ticket"]}


# --- roles ----------------------------------------------------------------------------

FLAG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "line": {"type": "integer", "x-assay-role": {"pred": "over_cap", "arg": 0}},
        "amount": {
            "type": "number",
            "x-assay-unit": "EUR",
            "x-assay-role": {"pred": "over_cap", "arg": 1},
        },
    },
}
TRUE_FACTS = [
    Slots(pred="over_cap", args=("line 3", "EUR 875.00")),
    Slots(pred="retainer", args=("line 2", "EUR 300.00")),
]


def test_a_true_number_in_the_wrong_role_is_not_bound() -> None:
    assert role_problems({"line": 3, "amount": 875.0}, FLAG_SCHEMA, TRUE_FACTS) == []
    wrong_amount = role_problems({"line": 3, "amount": 300.0}, FLAG_SCHEMA, TRUE_FACTS)
    assert [p for p, _ in wrong_amount] == ["/amount"]
    assert "over_cap(line 3, EUR 875.00)" in wrong_amount[0][1]
    compliant_line = role_problems({"line": 2, "amount": 300.0}, FLAG_SCHEMA, TRUE_FACTS)
    assert sorted(p for p, _ in compliant_line) == ["/amount", "/line"]
    nothing = role_problems({"line": 3, "amount": 875.0}, FLAG_SCHEMA, TRUE_FACTS[1:])
    assert sorted(p for p, _ in nothing) == ["/amount", "/line"]


def test_the_reference_flag_refuses_an_invoice_number_spelled_around_its_pattern() -> None:
    """``INV-4421\\n`` passed a Python ``$`` and ran as a second flag of the line."""
    from assay.apps.reference._tools import FLAG
    from assay.tool_bus._validation import argument_errors

    args = {
        "invoice": "INV-4421",
        "line": 3,
        "amount_over_cap": 875.0,
        "currency": "EUR",
        "reason": "over cap",
    }
    assert argument_errors(FLAG, args) == []
    for spelled in ("INV-4421\n", "INV-\uff14\uff14\uff12\uff11", "INV-\u0664\u0664\u0662\u0661"):
        problems = argument_errors(FLAG, {**args, "invoice": spelled})
        assert [d.path for d in problems] == ["/invoice"], spelled
