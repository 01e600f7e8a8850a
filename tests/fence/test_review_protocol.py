"""The review protocol as published: the interrupt payload is plain JSON that the
shipped schema describes and the models read back, in this process or another; the
decision schema and the one parser agree on what a decision is."""

from __future__ import annotations

import importlib.resources
import json
from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.types import Command, Interrupt
from pydantic import ValidationError

from assay import ControlPlane
from assay.errors import InvalidDecision
from assay.fence import fence
from assay.fence._review import (
    REVIEW_DECISION_SCHEMA_ID,
    REVIEW_REQUEST_SCHEMA_ID,
    REVIEW_SCHEMA_VERSION,
    IntentDecision,
    ReviewDecision,
    ReviewRequest,
    parse_decision,
    review_decision_json_schema,
    review_decision_json_schema_text,
    review_request_json_schema,
    review_request_json_schema_text,
)
from assay.tool_bus import args_sha256
from assay.verifier import LexicalNLI
from tests.fence.test_decisions import ORDERS, STOCK, order_agent, register_order_tools

THREAD = "review-thread"


def _shipped(name: str) -> dict[str, Any]:
    """A schema as shipped in the package."""
    return json.loads(importlib.resources.files("assay.fence").joinpath(name).read_text("utf-8"))


@pytest.fixture
def cp(db_url: str) -> Iterator[ControlPlane]:
    with ControlPlane.open(db_url, nli=LexicalNLI()) as plane:
        register_order_tools(plane)
        yield plane


def _pause(cp: ControlPlane, intents: tuple[str, ...] = ("order1",)) -> tuple[Any, dict[str, Any]]:
    """A fenced graph on the control plane's durable checkpointer, paused for a grant;
    the graph and the interrupt's value."""
    graph = fence(order_agent(cp, intents=intents), control_plane=cp, name="orders")
    config: RunnableConfig = {"configurable": {"thread_id": THREAD}}
    state = graph.invoke({"task": "Restock BT-105"}, config)
    [paused] = state["__interrupt__"]
    return graph, paused.value


# --- the shipped schemas --------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("review_request.schema.json", review_request_json_schema_text),
        ("review_decision.schema.json", review_decision_json_schema_text),
    ],
)
def test_shipped_schemas_equal_the_generated_text(name: str, text: Any) -> None:
    shipped = importlib.resources.files("assay.fence").joinpath(name).read_text("utf-8")
    assert shipped == text()


@pytest.mark.parametrize(
    ("schema", "schema_id"),
    [
        (review_request_json_schema(), REVIEW_REQUEST_SCHEMA_ID),
        (review_decision_json_schema(), REVIEW_DECISION_SCHEMA_ID),
    ],
)
def test_schemas_are_versioned_draft_2020_12_and_closed(
    schema: dict[str, Any], schema_id: str
) -> None:
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] == schema_id and f"/{REVIEW_SCHEMA_VERSION}/" in schema_id
    assert schema["version"] == REVIEW_SCHEMA_VERSION
    objects = {n: d for n, d in schema["$defs"].items() if n != "JsonValue"}
    assert objects and all(d["additionalProperties"] is False for d in objects.values())


# --- the request ----------------------------------------------------------------------


def test_the_interrupt_payload_is_plain_json_the_schema_and_the_model_accept(
    cp: ControlPlane,
) -> None:
    graph, value = _pause(cp)
    assert json.loads(json.dumps(value)) == value  # plain JSON data, no classes
    jsonschema.validate(value, _shipped("review_request.schema.json"))
    request = ReviewRequest.from_interrupt(value)
    assert request.to_interrupt() == value
    run_id = graph.get_state({"configurable": {"thread_id": THREAD}}).values["run_id"]
    assert (request.run_id, request.thread_id, request.refused) == (run_id, THREAD, None)
    [call] = request.pending
    args = {"sku": "BT-105", "units": 120}
    assert (call.intent_id, call.tool, call.version) == ("order1", "place_order", "1.0.0")
    assert call.args == args and call.args_sha256 == args_sha256(args)
    assert call.call_id == f"intent:{run_id}/order1" and call.depends_on == ["c1"]
    [claim] = call.claims
    assert (claim.id, claim.type, claim.text) == ("c1", "Assertion", STOCK)
    [prop] = claim.propositions
    assert prop.verdict is not None and prop.verdict.label == "entailment"
    evidence = prop.evidence
    assert evidence is not None and evidence.ledger_id == prop.verdict.ledger_id
    entry = cp.ledger.get(evidence.ledger_id)
    assert evidence.text == entry.text[evidence.start : evidence.end] and evidence.text
    assert evidence.source == entry.source


def test_another_process_reads_the_payload_without_the_classes(
    cp: ControlPlane, db_url: str
) -> None:
    """A second control plane on the same database (its own checkpointer, whose
    serialiser revives only assay's result records) reads the same payload back."""
    _, value = _pause(cp)
    with ControlPlane.open(db_url, nli=LexicalNLI()) as other:
        register_order_tools(other)
        graph = fence(order_agent(other), control_plane=other, name="orders")
        snapshot = graph.get_state({"configurable": {"thread_id": THREAD}})
        [task] = snapshot.tasks
        [interrupt] = task.interrupts
        assert isinstance(interrupt, Interrupt) and interrupt.value == value
        assert ReviewRequest.from_interrupt(interrupt) == ReviewRequest.from_interrupt(value)
        assert ReviewRequest.from_interrupt(json.dumps(value)) == ReviewRequest.from_interrupt(
            value
        )


def test_a_refused_resume_pauses_again_with_a_typed_refusal(cp: ControlPlane) -> None:
    graph, first = _pause(cp)
    config: RunnableConfig = {"configurable": {"thread_id": THREAD}}
    state = graph.invoke(Command(resume={"approve": 1, "approver": "alice"}), config)
    [paused] = state["__interrupt__"]
    jsonschema.validate(paused.value, _shipped("review_request.schema.json"))
    request = ReviewRequest.from_interrupt(paused.value)
    assert request.refused is not None and request.refused.code == "invalid_decision"
    assert "'approve': true or false, not 1" in request.refused.message
    assert request.model_copy(update={"refused": None}).to_interrupt() == first


@pytest.mark.parametrize(
    "change",
    [
        {"pending": []},
        {"extra": 1},
        {"run_id": 7},
        {"refused": {"code": "other", "message": "m"}},
        {"pending": [{"intent_id": "x"}]},
    ],
)
def test_a_payload_that_is_not_a_review_request_is_refused(
    cp: ControlPlane, change: dict[str, Any]
) -> None:
    _, value = _pause(cp)
    broken = {**value, **change}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, review_request_json_schema())
    with pytest.raises(ValidationError):
        ReviewRequest.from_interrupt(broken)


def test_evidence_and_arguments_are_checked_in_the_model(cp: ControlPlane) -> None:
    _, value = _pause(cp)
    call = value["pending"][0]
    evidence = call["claims"][0]["propositions"][0]["evidence"]
    for broken_call in (
        {**call, "args_sha256": "not-a-digest"},
        {**call, "claims": [{**call["claims"][0], "type": "Rumour"}]},
    ):
        with pytest.raises(ValidationError):
            ReviewRequest.from_interrupt({**value, "pending": [broken_call]})
    reversed_span = {**evidence, "start": evidence["end"] + 1}
    prop = {**call["claims"][0]["propositions"][0], "evidence": reversed_span}
    claim = {**call["claims"][0], "propositions": [prop]}
    with pytest.raises(ValidationError, match="span"):
        ReviewRequest.from_interrupt({**value, "pending": [{**call, "claims": [claim]}]})


# --- the decision ---------------------------------------------------------------------

ALICE = {"approve": True, "approver": "alice"}
ACCEPTED: list[Any] = [
    {"approve": True, "approver": "alice"},
    {"approve": False, "approver": "bob", "reason": "over budget\nsee the thread"},
    {"approve": True, "approver": "Zoë Ångström", "reason": None},
    {"decisions": {"order1": {"approve": False, "approver": "carol", "reason": "no"}}},
]
REFUSED: list[Any] = [
    {"approve": "yes", "approver": "alice"},
    {"approve": 1, "approver": "alice"},
    {"approve": True},
    {"approver": "alice"},
    {"approve": True, "approver": ""},
    {"approve": True, "approver": "   "},
    {"approve": True, "approver": "alice\n"},
    {"approve": True, "approver": "al\x1b[2Jice"},
    {"approve": True, "approver": "a" * 201},
    {"approve": True, "approver": "alice", "reason": "x" * 2001},
    {"approve": True, "approver": "alice", "reason": "a\rb"},
    {"approve": True, "approver": "alice", "note": "extra"},
    {"decisions": {}},
    {"decisions": []},
    {"decisions": {"order1": {"approve": True}}},
    {"decisions": {"order1": {"approve": True, "approver": "a"}}, "approve": True},
    ["approve"],
]


@pytest.mark.parametrize("value", ACCEPTED)
def test_what_the_schema_accepts_the_parser_accepts(value: Any) -> None:
    jsonschema.validate(value, _shipped("review_decision.schema.json"))
    decisions = parse_decision(value, ["order1"])
    assert set(decisions) == {"order1"}
    assert all(isinstance(d, IntentDecision) for d in decisions.values())
    assert ReviewDecision.model_validate(value).model_dump(exclude_none=True) == {
        k: v for k, v in value.items() if v is not None
    }


@pytest.mark.parametrize("value", REFUSED)
def test_what_the_schema_refuses_the_parser_refuses(value: Any) -> None:
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(value, review_decision_json_schema())
    with pytest.raises(InvalidDecision):
        parse_decision(value, ["order1"])
    with pytest.raises(InvalidDecision):
        parse_decision(value, None)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"approve": "yes", "approver": "a"}, "decision needs 'approve': true or false, not 'yes'"),
        ({"approve": True}, "decision: approver must name who approves"),
        (
            {"decisions": {"order1": {"approve": True, "approver": "a\x00"}, "order2": ALICE}},
            "decisions['order1']: approver must not contain control characters",
        ),
        ({"decisions": {"order2": {"approve": True, "approver": "a"}}}, "no decision for"),
        (
            {
                "decisions": {
                    "order1": {"approve": True, "approver": "a"},
                    "order2": {"approve": True, "approver": "a"},
                    "ghost": {"approve": True, "approver": "a"},
                }
            },
            "not pending: 'ghost'",
        ),
        ({"approve": True, "approver": "a", "x": 1}, "unexpected field 'x'"),
        ({"approve": True, "approver": "a" * 500}, "longer than 200 characters"),
        ({"approve": "y" * 10_000, "approver": "a"}, "..."),  # the echo is bounded
    ],
)
def test_a_refusal_says_what_is_wrong(value: Any, message: str) -> None:
    with pytest.raises(InvalidDecision) as refused:
        parse_decision(value, ["order1", "order2"])
    assert message in str(refused.value)
    assert len(str(refused.value)) < 300


def test_a_decision_for_all_and_one_by_one() -> None:
    everyone = parse_decision({"approve": True, "approver": "alice"}, ["a", "b"])
    assert everyone == {"a": IntentDecision(approve=True, approver="alice")} | {
        "b": IntentDecision(approve=True, approver="alice")
    }
    assert parse_decision({"approve": False, "approver": "bob"}, None) == {
        "*": IntentDecision(approve=False, approver="bob")
    }
    one_by_one = {
        "decisions": {
            "b": {"approve": False, "approver": "bob", "reason": "too many"},
            "a": {"approve": True, "approver": "alice"},
        }
    }
    parsed = parse_decision(one_by_one, ["a", "b"])
    assert list(parsed) == ["a", "b"]  # in the order the calls are pending
    assert parsed["b"] == IntentDecision(approve=False, approver="bob", reason="too many")
    with pytest.raises(ValidationError):
        parsed["a"].approve = False  # type: ignore[misc]


def test_each_intent_gets_its_own_decision(cp: ControlPlane) -> None:
    graph, value = _pause(cp, intents=("order1", "order2"))
    assert [c["intent_id"] for c in value["pending"]] == ["order1", "order2"]
    decision = {
        "decisions": {
            "order1": {"approve": True, "approver": "alice"},
            "order2": {"approve": False, "approver": "bob", "reason": "one is enough"},
        }
    }
    state = graph.invoke(Command(resume=decision), {"configurable": {"thread_id": THREAD}})
    actions = {a.intent_id: a for a in state["result"].actions}
    assert (actions["order1"].status, actions["order1"].approver) == ("executed", "alice")
    assert (actions["order2"].status, actions["order2"].reason) == ("denied", "one is enough")
    assert ORDERS[cp] == [{"sku": "BT-105", "units": 120}]
