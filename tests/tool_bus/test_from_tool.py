"""Tools the way LangChain users write them: a ``ToolSpec`` from a ``@tool`` function or
a pydantic model, registered with the tool's own function; and the ``ToolContext`` a
handler receives when it asks for one. Every call goes through the real bus on a real
SQLite file and a real PostgreSQL server."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Annotated, Any

import pytest
from langchain_core.tools import InjectedToolArg, tool
from pydantic import BaseModel, Field

from assay import ControlPlane, ToolSpec
from assay.errors import InvalidToolSpec
from assay.tool_bus import GrantRequest, ToolContext, ToolResult
from tests.tool_bus._tools import StandInClaims

ORDERS = {"D-4410": {"order": "D-4410", "total": 29.97, "currency": "USD"}}


@tool
def lookup_order(order: str) -> dict[str, Any]:
    """Look an order up by its id."""
    return ORDERS[order]


class Refund(BaseModel):
    """A refund of one order."""

    order: str = Field(pattern=r"^D-[0-9]+$")
    amount: float = Field(gt=0)


@tool(args_schema=Refund)
def issue_refund(
    order: str, amount: float, context: Annotated[ToolContext, InjectedToolArg]
) -> dict[str, Any]:
    """Refund an order through the payment provider."""
    return {"order": order, "amount": amount, "key": context.idempotency_key}


@tool
async def order_note(order: str) -> str:
    """The note on an order."""
    await asyncio.sleep(0)
    return f"{order}: left at the door"


@pytest.fixture
def cp(db_url: str) -> Iterator[ControlPlane]:
    with ControlPlane.open(db_url) as plane:
        yield plane


def test_a_tool_function_becomes_a_spec_with_its_name_description_and_schemas() -> None:
    spec = ToolSpec.from_tool(lookup_order, side_effect="read_only")

    assert (spec.name, spec.version, spec.side_effect) == ("lookup_order", "1.0.0", "read_only")
    assert spec.description == "Look an order up by its id."
    schema = spec.as_json()["input_schema"]
    assert schema["type"] == "object" and schema["required"] == ["order"]
    assert schema["properties"]["order"]["type"] == "string"
    assert schema["additionalProperties"] is False
    assert spec.as_json()["output_schema"]["type"] == "object"


def test_the_caller_declares_what_a_tool_cannot_say() -> None:
    spec = ToolSpec.from_tool(
        issue_refund,
        side_effect="irreversible",
        version="2.1.0",
        units={"amount": "USD"},
        idempotency_key=["/order"],
    )

    properties = spec.as_json()["input_schema"]["properties"]
    assert properties["amount"]["x-assay-unit"] == "USD"
    assert properties["order"]["pattern"] == "^D-[0-9]+$"
    assert "context" not in properties  # injected, never the model's to fill
    assert spec.idempotency_key == ("/order",) and spec.version == "2.1.0"
    with pytest.raises(InvalidToolSpec, match="'total' is not an argument of issue_refund"):
        ToolSpec.from_tool(issue_refund, side_effect="irreversible", units={"total": "USD"})


def test_a_pydantic_model_of_the_arguments_becomes_a_spec() -> None:
    spec = ToolSpec.from_tool(Refund, side_effect="irreversible", output_schema={"type": "object"})

    assert (spec.name, spec.description) == ("Refund", "A refund of one order.")
    assert spec.as_json()["input_schema"]["properties"]["amount"]["exclusiveMinimum"] == 0


def test_something_else_is_refused_with_what_is_accepted() -> None:
    with pytest.raises(InvalidToolSpec, match="a LangChain tool"):
        ToolSpec.from_tool(len, side_effect="read_only")  # type: ignore[arg-type]


def test_a_registered_tool_function_runs_through_the_bus(cp: ControlPlane) -> None:
    cp.registry.register_tool(lookup_order, side_effect="read_only")
    cp.registry.register_tool(order_note, side_effect="read_only")
    run = cp.ledger.start_run()

    found = cp.bus.call(run, "lookup_order", {"order": "D-4410"})
    noted = cp.bus.call(run, "order_note", {"order": "D-4410"})
    refused = cp.bus.call(run, "lookup_order", {"order": "D-4410", "extra": 1})

    assert found.ok and found.output == ORDERS["D-4410"]
    assert cp.ledger.get(found.ledger_id or "").kind == "tool_output"
    assert noted.ok and noted.output == "D-4410: left at the door"
    assert refused.error is not None and refused.error.code == "invalid_arguments"


def test_a_handler_that_asks_for_the_context_gets_the_effects_key(cp: ControlPlane) -> None:
    """The payment provider gets one key per effect: the same refund asked again in
    another run is the same key (and refused before it runs), a repeat a grant
    supersedes on purpose is a new one."""
    cp.registry.register_tool(issue_refund, side_effect="irreversible", idempotency_key=["/order"])
    cp.grants.claim_status_source = StandInClaims(
        labels={"claim-1": ("entailment",)},
        texts={"claim-1": ("Order D-4410 is refunded 29.97 USD.",)},
    )
    first_run, second_run = cp.ledger.start_run(), cp.ledger.start_run()
    args = {"order": "D-4410", "amount": 29.97}

    first = _granted_call(cp, first_run, args)
    again = cp.bus.call(second_run, "issue_refund", args)
    assert again.error is not None and again.error.code == "duplicate_effect"
    repeat = _granted_call(cp, second_run, args, supersedes=(first.call_ledger_id,))

    assert first.result.ok and repeat.result.ok
    first_key, repeat_key = first.result.output["key"], repeat.result.output["key"]
    assert first.result.output["order"] == "D-4410" and first.result.output["amount"] == 29.97
    assert len(first_key) == 64 and first_key != repeat_key


def test_context_holds_the_call_it_serves(cp: ControlPlane) -> None:
    seen: list[ToolContext] = []

    def handler(args: dict[str, Any], context: ToolContext) -> dict[str, Any]:
        seen.append(context)
        return ORDERS[args["order"]]

    cp.registry.register(ToolSpec.from_tool(lookup_order, side_effect="read_only"), handler)
    run = cp.ledger.start_run()
    result = cp.bus.call(run, "lookup_order", {"order": "D-4410"}, call_id="call-7")
    again = cp.bus.call(cp.ledger.start_run(), "lookup_order", {"order": "D-4410"})

    assert result.ok and again.ok
    context, other = seen
    assert (context.run_id, context.call_id, context.tool, context.version) == (
        run,
        "call-7",
        "lookup_order",
        "1.0.0",
    )
    assert context.grant_id is None
    assert cp.ledger.get(context.call_ledger_id).kind == "tool_call"
    assert context.idempotency_key != other.idempotency_key


def test_a_handler_that_asks_for_nothing_is_called_as_before(cp: ControlPlane) -> None:
    received: list[tuple[Any, ...]] = []
    cp.registry.register(
        ToolSpec.from_tool(lookup_order, side_effect="read_only"),
        lambda *args: received.append(args) or ORDERS["D-4410"],
    )

    assert cp.bus.call(cp.ledger.start_run(), "lookup_order", {"order": "D-4410"}).ok
    assert received == [({"order": "D-4410"},)]


CLAIMS = ("claim-1",)


def _granted_call(
    cp: ControlPlane, run: str, args: dict[str, Any], *, supersedes: tuple[str, ...] = ()
) -> _Granted:
    """Have a person grant exactly this call of issue_refund, and make it."""
    call_id = f"refund-{run}"
    request = GrantRequest.for_call(
        run, "issue_refund", "1.0.0", args, CLAIMS, call_id=call_id, supersedes=supersedes
    )
    grant = cp.grants.issue(run, request, approver="ana")
    result = cp.bus.call(
        run, "issue_refund", args, grant_id=grant.id, call_id=call_id, depends_on=CLAIMS
    )
    entry = next(
        e.id
        for e in cp.ledger.entries(run)
        if e.kind == "tool_call" and e.metadata.get("call_id") == call_id
    )
    return _Granted(result=result, call_ledger_id=entry)


@dataclass(frozen=True, kw_only=True)
class _Granted:
    result: ToolResult
    call_ledger_id: str
