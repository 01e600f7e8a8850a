"""The reply guard: validate_reply, annotate, and the ledger-backed cp.gate.validate_reply."""

from __future__ import annotations

import dataclasses

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from assay import ControlPlane, annotate, validate_reply

TOOL = '{"invoice": "INV-4421", "status": "paid", "confirmation": "PAY-12345"}'


def test_found_echo_and_unverified_are_told_apart() -> None:
    conversation = [
        SystemMessage("You are a billing assistant. Example id: INV-0001."),
        HumanMessage("Is INV-4421 paid? My account is ACC-778."),
        AIMessage("Let me look that up."),
        ToolMessage(TOOL, tool_call_id="call_1"),
    ]
    reply = "INV-4421 is paid (PAY-12345) for ACC-778; see also INV-0001 and PAY-99999."
    report = validate_reply(reply, tool_results=[], conversation=conversation)
    assert [i.value for i in report.found] == ["INV-4421", "PAY-12345"]
    assert [i.value for i in report.user_origin] == ["ACC-778"]
    # A system prompt is not evidence and not something the person said.
    assert [i.value for i in report.unverified] == ["INV-0001", "PAY-99999"]
    assert not report.ok
    assert {"INV-4421", "PAY-12345", "ACC-778"} <= set(report.known)
    assert "INV-0001" not in report.known


def test_tool_results_take_priority_over_echoes() -> None:
    conversation = [{"role": "user", "content": "Check INV-4421"}]
    report = validate_reply("INV-4421 is paid.", tool_results=[TOOL], conversation=conversation)
    assert [i.value for i in report.found] == ["INV-4421"] and not report.user_origin


def test_dict_messages_and_content_blocks() -> None:
    conversation = [
        {"role": "user", "content": [{"type": "text", "text": "ticket #77"}]},
        {"role": "tool", "content": "build 3f9a1c0b7e passed"},
    ]
    reply = AIMessage(content=[{"type": "text", "text": "#77: build 3f9a1c0b7e passed"}])
    report = validate_reply(reply, tool_results=[], conversation=conversation)
    assert [i.value for i in report.found] == ["3f9a1c0b7e"]
    assert [i.value for i in report.user_origin] == ["#77"]


def test_correction_messages_are_not_context() -> None:
    conversation = [
        HumanMessage("What is the refund id?"),
        AIMessage("It is RF-9001.", additional_kwargs={"assay": "flagged_reply"}),
        HumanMessage(
            "[assay correction] RF-9001 is in no tool result.",
            additional_kwargs={"assay": "correction"},
        ),
    ]
    report = validate_reply("It is RF-9001.", tool_results=[], conversation=conversation)
    assert [i.value for i in report.unverified] == ["RF-9001"]
    assert "RF-9001" not in report.known


def test_report_is_frozen() -> None:
    report = validate_reply("nothing to see", tool_results=[])
    assert report.ok and report.found == () and report.unverified == ()
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.found = ()  # type: ignore[misc]


def test_annotate_wordings() -> None:
    conversation = [{"role": "user", "content": "my order is #5531"}]
    reply = "Order #5531 ships under PAY-99999."
    report = validate_reply(reply, tool_results=[], conversation=conversation)
    first = annotate(reply, report)
    after = annotate(reply, report, after_self_correction=True)
    assert first.startswith(reply) and after.startswith(reply)
    assert "[Unverified: `PAY-99999` does not appear in any tool result" in first
    assert "[Unverified after self-correction: `PAY-99999` still does not appear" in after
    assert "Do not rely on it." in after and "after self-correction" not in first
    for text in (first, after):
        assert "[From your own message: `#5531` is repeated from what you wrote" in text
    clean = validate_reply("Order #5531 ships.", tool_results=['{"order": "#5531"}'])
    assert annotate("Order #5531 ships.", clean) == "Order #5531 ships."


def test_annotate_lists_each_value_once() -> None:
    reply = "PAY-1 and PAY-1 and PAY-2"
    text = annotate(reply, validate_reply(reply, tool_results=[]))
    assert "`PAY-1`, `PAY-2` do not appear" in text and "Treat them" in text


def test_plane_reads_tool_results_from_the_ledger(plane: ControlPlane) -> None:
    run = plane.ledger.start_run()
    plane.ledger.append(run, kind="tool_output", source="billing@1.0.0", content=TOOL)
    plane.ledger.append(run, kind="human_fact", source="user", content="account ACC-778")
    plane.ledger.append(run, kind="handover", source="agent", content="INV-5555 is paid")
    other = plane.ledger.start_run()
    plane.ledger.append(other, kind="tool_output", source="billing@1.0.0", content="PAY-777")
    report = plane.gate.validate_reply(
        run,
        "INV-4421 paid via PAY-12345 for ACC-778; INV-5555 and PAY-777 too.",
        [HumanMessage("hello")],
    )
    assert [i.value for i in report.found] == ["INV-4421", "PAY-12345"]
    assert [i.value for i in report.user_origin] == ["ACC-778"]
    # A hand-over is not a tool result, and another run's output is not this run's.
    assert [i.value for i in report.unverified] == ["INV-5555", "PAY-777"]
