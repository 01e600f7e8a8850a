"""Every gate error code: a minimal rejected hand-over and its accepted twin, on each
storage engine. Each twin differs from the rejected one in the one place at fault."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from assay import ControlPlane, GateDecision, Handover
from assay.gate import GATE_ERROR_CODES, intent_call_id
from assay.tool_bus import ToolSpec
from tests.gate._world import World, make_world

Mutation = Callable[[dict[str, Any], World], None]


def _noop(h: dict[str, Any], w: World) -> None:
    return None


def _prop(h: dict[str, Any], claim: int = 0, prop: int = 0) -> dict[str, Any]:
    return h["claims"][claim]["propositions"][prop]


def _intent(h: dict[str, Any]) -> dict[str, Any]:
    return h["action_intents"][0]


@dataclass(frozen=True)
class Case:
    code: str
    bad: Mutation
    good: Mutation = _noop
    strict_questions: bool = False


def _set_summary(h: dict[str, Any], w: World) -> None:
    h["summary"] = "All fine, invoice INV-4421 is over the cap."


def _other_run(h: dict[str, Any], w: World) -> None:
    h["run_id"] = "run_" + "0" * 32


def _asserted_without_evidence(h: dict[str, Any], w: World) -> None:
    _slip_proposition(h, w)
    h["claims"][2]["type"] = "Assertion"


def _slip_proposition(h: dict[str, Any], w: World) -> None:
    slip = {"id": "p3", "text": "The overcharge is a data-entry slip.", "ledger_ids": []}
    h["claims"][2]["propositions"] = [slip]


def _overlong_proposition(h: dict[str, Any], w: World) -> None:
    _prop(h)["text"] = "The engagement letter caps senior associates. " * 50


def _unknown_id(h: dict[str, Any], w: World) -> None:
    _prop(h)["ledger_ids"] = ["led_0000000000000000"]


def _foreign(h: dict[str, Any], w: World) -> None:
    _prop(h)["ledger_ids"] = [w.foreign]


def _record(h: dict[str, Any], w: World) -> None:
    _prop(h)["ledger_ids"] = [w.record]


def _misquote(h: dict[str, Any], w: World) -> None:
    _prop(h, 1)["text"] = "caps consulting fees at EUR 380 a day"


def _fabricated_quote(h: dict[str, Any], w: World) -> None:
    _prop(h, 1)["cites"] = [{"ledger_id": w.contract, "quote": "fees at EUR 330 per day"}]


def _true_quote(h: dict[str, Any], w: World) -> None:
    _prop(h, 1)["cites"] = [{"ledger_id": w.contract, "quote": "fees at EUR 380 per day"}]


def _derivation_of_nothing(h: dict[str, Any], w: World) -> None:
    _true_quote(h, w)
    _prop(h, 1)["derivation"] = {"expr": "$1", "result": "EUR 380 per day"}


def _derivation_of_its_quote(h: dict[str, Any], w: World) -> None:
    _true_quote(h, w)
    _prop(h, 1)["derivation"] = {"expr": "$0", "result": "EUR 380 per day"}


def _preset(h: dict[str, Any], w: World) -> None:
    _prop(h)["entailment"] = {"label": "entailment", "score": 0.99, "model": "self"}


def _preset_garbage(h: dict[str, Any], w: World) -> None:
    _prop(h)["entailment"] = "yes, entailed"


def _unknown_tool(h: dict[str, Any], w: World) -> None:
    _intent(h)["tool"] = "flag_invoice"


def _unknown_version(h: dict[str, Any], w: World) -> None:
    _intent(h)["version"] = "9.0.0"


def _known_version(h: dict[str, Any], w: World) -> None:
    _intent(h)["version"] = "1.0.0"


def _missing_arg(h: dict[str, Any], w: World) -> None:
    del _intent(h)["args"]["line"]


def _dangling(h: dict[str, Any], w: World) -> None:
    _intent(h)["depends_on"] = ["c1", "c9"]


def _cycle(h: dict[str, Any], w: World) -> None:
    second = dict(_intent(h), id="a2", depends_on=["a1"])
    _intent(h)["depends_on"] = ["c1", "a2"]
    h["action_intents"].append(second)


def _chain(h: dict[str, Any], w: World) -> None:
    h["action_intents"].append(dict(_intent(h), id="a2", depends_on=["a1"]))


def _reused_intent_id(h: dict[str, Any], w: World) -> None:
    # a1's call reached the bus earlier in the run (refused there for want of a grant).
    intent = _intent(h)
    call_id = intent_call_id(w.run, intent["id"])
    w.plane.bus.call(w.run, intent["tool"], intent["args"], call_id=call_id)


def _fresh_intent_id(h: dict[str, Any], w: World) -> None:
    _intent(h)["id"] = "a9"


def _failed_silently(h: dict[str, Any], w: World) -> None:
    h["status"] = "failed"


def _failed_with_errors(h: dict[str, Any], w: World) -> None:
    h["status"] = "failed"
    h["errors"] = ["crm.lookup timed out twice; the customer could not be confirmed"]


def _open_question(h: dict[str, Any], w: World) -> None:
    h["open_questions"][0]["status"] = "open"


def _forwarded_question(h: dict[str, Any], w: World) -> None:
    h["open_questions"][0].update(status="forwarded", forwarded_to="reviewer")


def _invented_invoice(h: dict[str, Any], w: World) -> None:
    _prop(h)["text"] = "The CRM lookup returned invoice INV-4422 for CUST-7781."


def _invented_total(h: dict[str, Any], w: World) -> None:
    _prop(h)["text"] = "The CRM lookup returned invoice INV-4421 for CUST-7781, for EUR 550."


def _invented_arg(h: dict[str, Any], w: World) -> None:
    _intent(h)["args"]["invoice"] = "INV-9999"


def _invented_amount(h: dict[str, Any], w: World) -> None:
    _intent(h)["args"]["amount_over_cap"] = 400.0


def _invented_short_hash(h: dict[str, Any], w: World) -> None:
    # Seven hex digits and no digit among them: a hash nonetheless, in no evidence.
    _intent(h)["args"]["invoice"] = "deadbee"


def _no_supporting_claim(h: dict[str, Any], w: World) -> None:
    _intent(h)["depends_on"] = []


ROLE_FLAG = ToolSpec(
    "flag_over_cap",
    "1.0.0",
    "Flag a line with its overage, each read from one over_cap(line, amount) proposition.",
    {
        "type": "object",
        "properties": {
            "line": {"type": "integer", "x-assay-role": {"pred": "over_cap", "arg": 0}},
            "amount": {
                "type": "number",
                "x-assay-unit": "EUR",
                "x-assay-role": {"pred": "over_cap", "arg": 1},
            },
        },
        "required": ["line", "amount"],
    },
    {"type": "object"},
    "irreversible",
)


def _no_effect(args: dict[str, Any]) -> dict[str, Any]:
    return {}


def _role_flag(h: dict[str, Any], w: World, amount: float) -> None:
    w.plane.registry.register(ROLE_FLAG, _no_effect)  # the same handler: registered once
    # The contract says line 14 is EUR 120.00 over; it also writes EUR 380 (the cap).
    _prop(h, 1).update(pred="over_cap", args=["line 14", "EUR 120.00"])
    _intent(h).update(tool="flag_over_cap", args={"line": 14, "amount": amount})


def _amount_of_another_line(h: dict[str, Any], w: World) -> None:
    _role_flag(h, w, 380.0)  # a true figure of the evidence, in the wrong role


def _amount_of_its_line(h: dict[str, Any], w: World) -> None:
    _role_flag(h, w, 120.0)


def _hidden_joiner(h: dict[str, Any], w: World) -> None:
    _prop(h)["text"] = "The CRM lookup returned invoice INV\u200d-4421 for CUST-7781."


def _borrowed(h: dict[str, Any], w: World) -> None:
    _prop(h)["ledger_ids"] = [w.user]


def _user_said(h: dict[str, Any], w: World) -> None:
    _prop(h)["ledger_ids"] = [w.user]
    _prop(h)["text"] = "The user says invoice INV-4421 is for CUST-7781."


CASES = [
    Case("schema_violation", _set_summary),
    Case("run_mismatch", _other_run),
    Case("missing_ledger_ids", _asserted_without_evidence, _slip_proposition),
    Case("unknown_ledger_id", _unknown_id),
    Case("foreign_run_ledger_id", _foreign),
    Case("uncitable_entry", _record),
    Case("quote_mismatch", _misquote),
    Case("fabricated_citation", _fabricated_quote, _true_quote),
    Case("bad_derivation", _derivation_of_nothing, _derivation_of_its_quote),
    Case("proposition_too_long", _overlong_proposition),
    Case("entailment_preset", _preset),
    Case("unknown_tool", _unknown_tool),
    Case("unknown_version", _unknown_version, _known_version),
    Case("invalid_action_args", _missing_arg),
    Case("ungrounded_argument", _invented_amount),
    Case("dangling_dependency", _dangling, _chain),
    Case("dependency_cycle", _cycle, _chain),
    Case("intent_id_reused", _reused_intent_id, _fresh_intent_id),
    Case("failed_without_errors", _failed_silently, _failed_with_errors),
    Case("unresolved_open_question", _open_question, _forwarded_question, strict_questions=True),
    Case("unverified_identifier", _invented_invoice),
    Case("unverified_value", _invented_total),
    Case("ungrounded_argument", _invented_arg),
    Case("ungrounded_argument", _invented_short_hash),
    Case("ungrounded_intent", _no_supporting_claim),
    Case("unbound_argument", _amount_of_another_line, _amount_of_its_line),
    Case("suspicious_characters", _hidden_joiner),
    Case("provenance_mismatch", _borrowed, _user_said),
]


def test_every_built_in_code_has_a_case() -> None:
    assert {c.code for c in CASES} == GATE_ERROR_CODES


def _check(world: World, mutate: Mutation, *, strict: bool) -> GateDecision:
    handover = world.handover()
    mutate(handover, world)
    return world.plane.gate.check(world.run, handover, require_no_open_questions=strict)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.code}-{c.bad.__name__}")
def test_rejected_and_accepted_twin(plane: ControlPlane, case: Case) -> None:
    world = make_world(plane)
    rejected = _check(world, case.bad, strict=case.strict_questions)
    assert not rejected.accepted
    assert case.code in rejected.codes, rejected.errors
    assert all(e.path.startswith("$") and e.message for e in rejected.errors)
    accepted = _check(world, case.good, strict=case.strict_questions)
    assert accepted.accepted, accepted.errors
    assert accepted.errors == ()
    assert isinstance(accepted.handover, Handover)


def test_errors_name_the_exact_place(plane: ControlPlane) -> None:
    world = make_world(plane)
    handover = world.handover()
    _record(handover, world)
    _misquote(handover, world)
    _missing_arg(handover, world)
    decision = plane.gate.check(world.run, handover)
    places = {(e.code, e.path) for e in decision.errors}
    assert ("uncitable_entry", "$.claims[0].propositions[0].ledger_ids[0]") in places
    assert ("quote_mismatch", "$.claims[1].propositions[0].text") in places
    assert ("invalid_action_args", "$.action_intents[0].args.line") in places


def test_all_errors_are_reported_at_once(plane: ControlPlane) -> None:
    world = make_world(plane)
    handover = world.handover()
    for mutate in (_unknown_id, _misquote, _unknown_tool, _failed_silently, _invented_arg):
        mutate(handover, world)
    decision = plane.gate.check(world.run, handover)
    assert {
        "unknown_ledger_id",
        "quote_mismatch",
        "unknown_tool",
        "failed_without_errors",
        "unverified_identifier",
    } <= decision.codes


def test_filled_entailment_of_any_shape_is_entailment_preset(plane: ControlPlane) -> None:
    world = make_world(plane)
    decision = _check(world, _preset_garbage, strict=False)
    assert decision.codes == {"entailment_preset"}
    assert decision.errors[0].path == "$.claims[0].propositions[0].entailment"


def test_open_questions_pass_unless_the_receiver_requires_none(plane: ControlPlane) -> None:
    world = make_world(plane)
    assert _check(world, _open_question, strict=False).accepted


def test_schema_violations_are_all_listed_with_paths(plane: ControlPlane) -> None:
    world = make_world(plane)
    handover = world.handover()
    handover["claims"][0]["confidence"] = 1.5
    handover["claims"][1]["type"] = "Opinion"
    handover["action_intents"][0]["requires_grant"] = "yes"
    handover["claims"][2]["id"] = "c1"
    decision = plane.gate.check(world.run, handover)
    assert decision.handover is None
    paths = {e.path for e in decision.errors if e.code == "schema_violation"}
    assert {
        "$.claims[0].confidence",
        "$.claims[1].type",
        "$.action_intents[0].requires_grant",
    } <= paths


def test_duplicate_ids_are_refused(plane: ControlPlane) -> None:
    world = make_world(plane)
    handover = world.handover()
    handover["claims"][2]["id"] = "c1"
    decision = plane.gate.check(world.run, handover)
    assert decision.codes == {"schema_violation"}
    assert "'c1'" in decision.errors[0].message


def test_a_model_is_checked_like_a_dict(plane: ControlPlane) -> None:
    world = make_world(plane)
    model = Handover.model_validate(world.handover())
    assert plane.gate.check(world.run, model).accepted
    bad = model.model_copy(update={"status": "failed"})
    assert plane.gate.check(world.run, bad).codes == {"failed_without_errors"}


def test_hand_over_and_decision_are_recorded(plane: ControlPlane) -> None:
    world = make_world(plane)
    handover = world.handover()
    _unknown_id(handover, world)
    decision = plane.gate.check(world.run, handover)
    assert decision.handover_entry_id and decision.decision_entry_id
    received = plane.ledger.get(decision.handover_entry_id)
    recorded = plane.ledger.get(decision.decision_entry_id)
    assert (received.kind, received.source, received.run_id) == ("handover", "auditor", world.run)
    assert "led_0000000000000000" in received.text
    assert recorded.kind == "gate_decision"
    # Without its evidence, the proposition's identifiers are unverified as well.
    assert recorded.metadata == {
        "accepted": False,
        "codes": ["unknown_ledger_id", "unverified_identifier"],
        "handover_id": received.id,
    }
    assert '"path":"$.claims[0].propositions[0].ledger_ids[0]"' in recorded.text
    assert plane.ledger.verify(world.run).ok


def test_unknown_run_is_a_usage_error_and_writes_nothing(plane: ControlPlane) -> None:
    from assay import UnknownRun

    world = make_world(plane)
    before = plane.ledger.run(world.run).head_seq
    with pytest.raises(UnknownRun):
        plane.gate.check("run_missing", world.handover())
    assert plane.ledger.run(world.run).head_seq == before


def test_an_extra_check_can_be_registered(plane: ControlPlane) -> None:
    from assay import GateFinding

    world = make_world(plane)
    seen: list[set[str]] = []

    def no_fees(run_id: str, handover: Handover, entries: dict[str, Any]) -> list[GateFinding]:
        seen.append(set(entries))
        return [
            GateFinding(code="reworded_unsupported", path=f"$.claims[{i}].text", message="again")
            for i, c in enumerate(handover.claims)
            if "fees" in c.text
        ]

    plane.gate.add_check(no_fees)
    decision = plane.gate.check(world.run, world.handover())
    assert decision.codes == {"reworded_unsupported"}
    assert decision.errors[0].path == "$.claims[1].text"
    assert seen == [{world.crm, world.contract}]
