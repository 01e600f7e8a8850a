"""The scripted chat model drives a fenced ReAct agent offline: it binds tools, makes
the calls its script lists, answers from what they returned and cites their ledger
ids, round after round. The verifier is the stand-in NLI model (the chat model is the
subject here); the database is a real SQLite file and a real PostgreSQL server."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage

from assay import ControlPlane, ToolSpec
from assay.fence import fence, react_agent
from assay.testing import ScriptedChatModel, ScriptError, call, claim, hand_over, intent
from assay.verifier import LexicalNLI

ORDER = {"order": "D-4410", "placed": "2025-03-02", "total": 29.97, "currency": "USD"}
LOOKUP = ToolSpec(
    name="lookup_order",
    version="1.0.0",
    side_effect="read_only",
    description="An order by its id.",
    input_schema={
        "type": "object",
        "required": ["order"],
        "additionalProperties": False,
        "properties": {"order": {"type": "string"}},
    },
    output_schema={"type": "object"},
)
REFUND = ToolSpec(
    name="issue_refund",
    version="1.0.0",
    side_effect="irreversible",
    description="Refund an order.",
    input_schema={
        "type": "object",
        "required": ["order", "amount"],
        "additionalProperties": False,
        "properties": {"order": {"type": "string"}, "amount": {"type": "number"}},
    },
    output_schema={"type": "object"},
)
TOTAL = "The total of order D-4410 was {lookup_order[total]} {lookup_order[currency]}."


@pytest.fixture
def cp(db_url: str) -> Iterator[ControlPlane]:
    with ControlPlane.open(db_url, nli=LexicalNLI()) as plane:
        plane.registry.register(LOOKUP, lambda args: ORDER)
        plane.registry.register(REFUND, lambda args: {"refund": "R-1", **args})
        yield plane


def _desk(cp: ControlPlane, model: ScriptedChatModel) -> Any:
    agent = react_agent(model, cp, tools=["lookup_order"])
    return fence(agent, control_plane=cp, name="refund-desk")


def test_langchains_fake_chat_model_cannot_bind_tools() -> None:
    """Why the scripted model exists: react_agent binds tools, and this one refuses."""
    fake = GenericFakeChatModel(messages=iter([AIMessage(content="hi")]))
    with pytest.raises(NotImplementedError):
        fake.bind_tools([])


def test_it_answers_from_the_tool_result_and_cites_its_ledger_id(cp: ControlPlane) -> None:
    model = ScriptedChatModel(
        script=[call("lookup_order", order="D-4410"), hand_over(claim(TOTAL, cites="lookup_order"))]
    )

    result = cp.run(_desk(cp, model), {"task": "What was the total of order D-4410?"})

    assert result.status == "answered", result
    [output] = cp.ledger.entries(result.run_id, kinds=["tool_output"])
    [verified] = result.claims
    assert verified.text == "The total of order D-4410 was 29.97 USD."
    assert [p.ledger_ids for p in verified.propositions] == [[output.id]]
    assert [(s.tool, s.output, s.ledger_id) for s in model.seen] == [
        ("lookup_order", ORDER, output.id)
    ]
    assert model.finished


def test_a_refused_round_goes_on_with_the_next_steps(cp: ControlPlane) -> None:
    """Round one hands over an amount the tool never returned; the gate refuses it,
    the agent is asked again, and the script's second round answers. The first
    round's reason stays in the result."""
    model = ScriptedChatModel(
        script=[
            call("lookup_order", order="D-4410"),
            hand_over(claim("The total of order D-4410 was 31.00 USD.", cites="lookup_order")),
            call("lookup_order", order="D-4410"),
            hand_over(claim(TOTAL, cites="lookup_order")),
        ]
    )

    result = cp.run(_desk(cp, model), {"task": "What was the total of order D-4410?"})

    assert result.status == "answered" and result.rounds == 1
    [first] = result.round_reasons
    assert first.round == 0
    assert [e["code"] for e in first.errors] == ["unverified_value"]
    assert "31.00" in first.errors[0]["message"]
    assert result.errors == () and result.unsupported == ()


def test_an_action_intent_is_written_from_the_results(cp: ControlPlane) -> None:
    model = ScriptedChatModel(
        script=[
            call("lookup_order", order="D-4410"),
            hand_over(
                claim(TOTAL, cites="lookup_order"),
                action_intents=[
                    intent(
                        "issue_refund",
                        lambda r: {"order": "D-4410", "amount": r["lookup_order"]["total"]},
                    )
                ],
            ),
        ]
    )

    result = cp.run(_desk(cp, model), {"task": "Refund order D-4410 in full."})

    assert result.status == "awaiting_grant", result
    [pending] = result.pending_grants
    assert pending.args == {"order": "D-4410", "amount": 29.97}
    assert pending.depends_on == ("c1",)


def test_a_script_that_runs_out_says_so(cp: ControlPlane) -> None:
    model = ScriptedChatModel(script=[call("lookup_order", order="D-4410")])

    result = cp.run(_desk(cp, model), {"task": "What was the total of order D-4410?"})

    assert result.status == "failed"
    [error] = result.errors
    assert "ScriptError" in error["message"] and "ran out after 1 steps" in error["message"]


def test_a_template_naming_a_result_nobody_returned_says_which() -> None:
    model = ScriptedChatModel(script=[hand_over(claim("{lookup_order[total]}"))])
    writer = model.bind_tools([{"title": "handover", "type": "object"}])
    with pytest.raises(ScriptError, match="names a result that is not there"):
        writer.invoke("go")


def test_a_script_of_other_things_is_refused() -> None:
    with pytest.raises(TypeError, match="call"):
        ScriptedChatModel(script=["lookup the order"])  # type: ignore[list-item]


# --- a place read from the conversation -------------------------------------------------

REFUNDED = "Refund {issue_refund[refund]} was issued."


def _refund_script(*first_round: Any) -> list[Any]:
    """(A refused round first, when given,) then look the order up, refund it, hand over
    the total, and once the refund is decided, the total and the refund."""
    return [
        *first_round,
        call("lookup_order", order="D-4410"),
        call("issue_refund", order="D-4410", amount=29.97),
        hand_over(claim(TOTAL, cites="lookup_order")),
        hand_over(claim(TOTAL, cites="lookup_order"), claim(REFUNDED, cites="issue_refund")),
    ]


def _held_desk(cp: ControlPlane, model: ScriptedChatModel) -> Any:
    """The desk whose model calls ``issue_refund`` itself."""
    agent = react_agent(model, cp, tools=["lookup_order", "issue_refund"])
    return fence(agent, control_plane=cp, name="refund-desk")


@pytest.mark.parametrize(
    "first_round",
    [
        (),
        (
            call("lookup_order", order="D-4410"),
            hand_over(claim("The total of order D-4410 was 31.00 USD.", cites="lookup_order")),
        ),
    ],
    ids=["paused-in-its-first-round", "paused-after-a-refused-round"],
)
def test_a_run_resumed_on_a_new_model_goes_on_where_it_paused(
    cp: ControlPlane, first_round: tuple[Any, ...]
) -> None:
    """A resume in another process (``assay resume``, the HTTP service) builds the graph,
    and its model, anew: the model finds its place in the conversation, after the
    refused round's hand-over where there was one."""
    script = _refund_script(*first_round)
    desk = _held_desk(cp, ScriptedChatModel(script=script))
    paused = cp.run(desk, {"task": "Refund order D-4410."}, thread_id="t")
    assert paused.status == "awaiting_grant", paused
    assert paused.rounds == (1 if first_round else 0)

    anew = ScriptedChatModel(script=script)  # what another process builds
    done = cp.resume(_held_desk(cp, anew), "t", {"approve": True, "approver": "ana"})

    assert done.status == "answered", done
    assert [(a.tool, a.status) for a in done.actions] == [("issue_refund", "executed")]
    assert [c.text for c in done.claims] == [
        "The total of order D-4410 was 29.97 USD.",
        "Refund R-1 was issued.",
    ]
    # The new model asked for nothing again: its round's calls are the paused ones.
    asked = [c["name"] for m in anew.messages[-1] if isinstance(m, AIMessage) for c in m.tool_calls]
    assert asked == ["lookup_order", "issue_refund"] and anew.finished


def test_one_model_serves_many_runs_each_from_the_start_of_its_script(cp: ControlPlane) -> None:
    model = ScriptedChatModel(
        script=[call("lookup_order", order="D-4410"), hand_over(claim(TOTAL, cites="lookup_order"))]
    )
    graph = _desk(cp, model)

    results = [cp.run(graph, {"task": "What was the total of order D-4410?"}) for _ in range(2)]

    assert [r.status for r in results] == ["answered", "answered"]
    assert [len(r.claims) for r in results] == [1, 1]
    assert model.finished


def test_a_refused_hand_over_that_fits_no_step_says_so() -> None:
    model = ScriptedChatModel(script=[hand_over(claim(TOTAL, cites="lookup_order"))])
    refusal = (
        "The control plane refused your previous hand-over. ...\n\nYour previous hand-over:\n"
        '{"claims": [{"id": "c1", "type": "Assertion", "text": "Something else."}]}'
    )
    with pytest.raises(ScriptError, match="fits no hand_over"):
        model.invoke([HumanMessage(content="go"), HumanMessage(content=refusal)])


def test_an_optional_claim_is_left_out_when_its_result_is_not_there() -> None:
    """A refund claim after a denial: no ``issue_refund`` result to write it from."""
    refunded = claim("Refund {issue_refund[refund]} was issued.", optional=True)
    model = ScriptedChatModel(script=[hand_over(claim("Nothing was refunded."), refunded)])
    writer = model.bind_tools([{"title": "handover", "type": "object"}])

    [written] = writer.invoke("go").tool_calls

    assert [c["text"] for c in written["args"]["claims"]] == ["Nothing was refunded."]
