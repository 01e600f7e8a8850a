"""Running the invoice audit again on the same documents flags each line once: the
flag tool's idempotency key (invoice, line) makes the repeat a ``duplicate_effect``
naming the first flag, and no policy grant is issued for a call that cannot run."""

from __future__ import annotations

import json
from pathlib import Path

from assay import ControlPlane
from assay.fence import FencedGraph
from assay.tool_bus import ToolFailure
from tests.fence.conftest import case


def test_a_second_run_on_the_same_invoice_does_not_flag_again(
    audit: ControlPlane, invoice: FencedGraph, outbox: Path
) -> None:
    first = audit.run(invoice, case("small_overage"))
    [flagged] = first.actions
    assert flagged.status == "executed"
    assert len(outbox.read_text().splitlines()) == 1

    second = audit.run(invoice, case("small_overage"))
    [repeat] = second.actions
    assert repeat.status == "duplicate" and repeat.error is not None
    assert second.status == "incomplete"
    assert repeat.error["code"] == "duplicate_effect"
    first_call = next(
        e
        for e in audit.ledger.entries(first.run_id)
        if e.kind == "tool_call" and e.source.startswith("tool:flag_invoice_line@")
    )
    assert first.run_id in repeat.error["message"] and first_call.id in repeat.error["message"]
    assert len(outbox.read_text().splitlines()) == 1
    assert not any(e.kind == "grant" for e in audit.ledger.entries(second.run_id))

    # A person may repeat it on purpose: the refusal carries the request for a
    # grant that supersedes the first flag.
    request = ToolFailure.from_json(repeat.error).request
    assert request is not None and request.supersedes == (first_call.id,)
    held = audit.bus.prior_effect("flag_invoice_line", flagged.args)
    assert held is not None and held.call_ledger_id == first_call.id
    grant = audit.grants.issue(second.run_id, request, approver="alice")
    again = audit.bus.call(
        second.run_id,
        request.tool,
        request.args,
        version=request.version,
        grant_id=grant.id,
        call_id=request.call_id,
        depends_on=request.depends_on,
    )
    assert again.ok
    assert [json.loads(line)["line"] for line in outbox.read_text().splitlines()] == [32, 32]
