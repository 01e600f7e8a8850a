"""Grants and policy rules on SQLite and PostgreSQL: binding to the exact call,
single use (also under concurrency and across control planes), expiry, claims."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

from assay import ControlPlane, LedgerWriteRefused
from assay.errors import GrantExists, GrantRefused, InvalidPolicy, UnknownGrant
from assay.tool_bus import GrantRequest, ToolResult
from tests.tool_bus._tools import FLAG, FLAG_ARGS, OVER_CAP, Counter, StandInClaims

CLAIMS = ("claim-1", "claim-2")
CALL = "flag-1"
#: What the stand-in verifier says the claims state: every value of FLAG_ARGS.
STATED = {
    "claim-1": ("Line 14 of invoice INV-7 is billed EUR 120.50 above its cap.",),
    "claim-2": ("The cap applies to line 14.", "Amounts are in EUR."),
}


@pytest.fixture
def flags(plane: ControlPlane) -> Counter:
    found = Counter()
    plane.registry.register(FLAG, found.flag)
    plane.grants.claim_status_source = StandInClaims(
        labels={
            "claim-1": ("entailment",),
            "claim-2": ("entailment", "entailment"),
            "claim-weak": ("entailment", "neutral"),
        },
        texts=dict(STATED),
        slots={"claim-1": (OVER_CAP,)},
    )
    return found


def _request(
    plane: ControlPlane, run: str, depends_on: tuple[str, ...] = CLAIMS, call_id: str = CALL
) -> GrantRequest:
    result = plane.bus.call(
        run, "flag_invoice_line", FLAG_ARGS, depends_on=depends_on, call_id=call_id
    )
    assert result.error is not None and result.error.code == "grant_required"
    assert result.error.request is not None
    return result.error.request


def grant_request(run: str, call_id: str = CALL) -> GrantRequest:
    return GrantRequest.for_call(
        run, "flag_invoice_line", "1.0.0", FLAG_ARGS, CLAIMS, call_id=call_id
    )


def test_an_irreversible_call_needs_a_grant_for_exactly_that_call(
    plane: ControlPlane, flags: Counter
) -> None:
    run = plane.ledger.start_run()
    request = _request(plane, run)
    assert (request.run_id, request.tool, request.version) == (run, "flag_invoice_line", "1.0.0")
    assert request.depends_on == CLAIMS and dict(request.args) == FLAG_ARGS
    grant = plane.grants.issue(run, request, approver="alice")
    assert grant.via == "human" and grant.args_sha256 == request.args_sha256
    assert plane.ledger.get(grant.ledger_id).kind == "grant"
    assert plane.grants.get(grant.id) == grant
    done = plane.bus.call(run, "flag_invoice_line", FLAG_ARGS, grant_id=grant.id, call_id=CALL)
    assert done.ok and done.output == {"flag_id": "F-INV-7-14"} and len(flags.calls) == 1
    call = next(
        e
        for e in plane.ledger.entries(run, kinds=["tool_call"])
        if e.metadata.get("grant_id") == grant.id
    )
    assert call.metadata["args_sha256"] == grant.args_sha256


def test_a_grant_is_single_use(plane: ControlPlane, flags: Counter) -> None:
    run = plane.ledger.start_run()
    grant = plane.grants.issue(run, _request(plane, run), approver="alice")
    first = plane.bus.call(run, "flag_invoice_line", FLAG_ARGS, grant_id=grant.id, call_id=CALL)
    assert first.ok
    other = plane.bus.call(run, "flag_invoice_line", FLAG_ARGS, grant_id=grant.id, call_id="f2")
    assert other.error is not None and other.error.code == "grant_invalid"
    assert "issued for call 'flag-1'" in other.error.message
    replay = plane.bus.call(run, "flag_invoice_line", FLAG_ARGS, grant_id=grant.id, call_id=CALL)
    assert replay == first and len(flags.calls) == 1


def test_a_replayed_step_with_its_grant_returns_the_first_result(
    plane: ControlPlane, flags: Counter
) -> None:
    run = plane.ledger.start_run()
    grant = plane.grants.issue(run, _request(plane, run, call_id="s1"), approver="alice")
    first = plane.bus.call(run, "flag_invoice_line", FLAG_ARGS, grant_id=grant.id, call_id="s1")
    replay = plane.bus.call(run, "flag_invoice_line", FLAG_ARGS, grant_id=grant.id, call_id="s1")
    assert first == replay and first.ok and len(flags.calls) == 1


@pytest.mark.parametrize("change", ["args", "run", "claims", "unknown"])
def test_a_grant_for_something_else_is_invalid(
    plane: ControlPlane, flags: Counter, change: str
) -> None:
    run = plane.ledger.start_run()
    grant = plane.grants.issue(run, _request(plane, run), approver="alice")
    args, target, claims, grant_id = dict(FLAG_ARGS), run, CLAIMS, grant.id
    if change == "args":
        args["amount_over_cap"] = 121
    elif change == "run":
        target = plane.ledger.start_run()
    elif change == "claims":
        claims = ("claim-1",)
    else:
        grant_id = "grant_" + "0" * 32
    result = plane.bus.call(
        target, "flag_invoice_line", args, grant_id=grant_id, depends_on=claims, call_id=CALL
    )
    assert result.error is not None and result.error.code == "grant_invalid"
    expected = {
        "args": "other arguments",
        "run": "is for run",
        "claims": "rests on claims",
        "unknown": "no grant",
    }[change]
    assert expected in result.error.message and flags.calls == []


def test_an_expired_grant_is_invalid(plane: ControlPlane, flags: Counter) -> None:
    run = plane.ledger.start_run()
    grant = plane.grants.issue(run, _request(plane, run), approver="alice", ttl_s=0.05)
    time.sleep(0.1)
    result = plane.bus.call(run, "flag_invoice_line", FLAG_ARGS, grant_id=grant.id, call_id=CALL)
    assert result.error is not None and result.error.code == "grant_invalid"
    assert "expired" in result.error.message and flags.calls == []


def test_a_grant_whose_claims_lost_entailment_is_invalid(
    plane: ControlPlane, flags: Counter
) -> None:
    run = plane.ledger.start_run()
    grant = plane.grants.issue(run, _request(plane, run), approver="alice")
    source = plane.grants.claim_status_source
    assert isinstance(source, StandInClaims)
    source.labels["claim-2"] = ("entailment", "contradiction")
    result = plane.bus.call(run, "flag_invoice_line", FLAG_ARGS, grant_id=grant.id, call_id=CALL)
    assert result.error is not None and "no longer all entailed" in result.error.message


def test_concurrent_uses_of_one_grant_run_the_handler_once(
    plane: ControlPlane, flags: Counter
) -> None:
    run = plane.ledger.start_run()
    grant = plane.grants.issue(run, _request(plane, run, call_id="c0"), approver="alice")
    results: list[ToolResult] = []
    barrier = threading.Barrier(4)

    def use(i: int) -> None:
        barrier.wait()
        results.append(
            plane.bus.call(run, "flag_invoice_line", FLAG_ARGS, grant_id=grant.id, call_id=f"c{i}")
        )

    threads = [threading.Thread(target=use, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(r.ok for r in results) == [False, False, False, True]
    assert all(r.error.code == "grant_invalid" for r in results if r.error is not None)
    assert len(flags.calls) == 1


def test_a_grant_used_by_another_control_plane_is_refused(db_url: str) -> None:
    claims = StandInClaims(
        labels={"claim-1": ("entailment",), "claim-2": ("entailment",)},
        texts=dict(STATED),
        slots={"claim-1": (OVER_CAP,)},
    )
    with ControlPlane.open(db_url) as first:
        first.registry.register(FLAG, Counter().flag)
        first.grants.claim_status_source = claims
        run = first.ledger.start_run()
        grant = first.grants.issue(run, _request(first, run), approver="alice")
        done = first.bus.call(run, "flag_invoice_line", FLAG_ARGS, grant_id=grant.id, call_id=CALL)
        assert done.ok
    with ControlPlane.open(db_url) as second:
        flags = Counter()
        second.registry.register(FLAG, flags.flag)
        second.grants.claim_status_source = claims
        replay = second.bus.call(
            run, "flag_invoice_line", FLAG_ARGS, grant_id=grant.id, call_id=CALL
        )
        other = second.bus.call(
            run, "flag_invoice_line", FLAG_ARGS, grant_id=grant.id, call_id="f2"
        )
        assert replay == done and flags.calls == []
        assert other.error is not None and other.error.code == "grant_invalid"
        with pytest.raises(GrantExists, match="already ran under grant"):
            second.grants.issue(run, replace(grant_request(run), call_id=CALL), approver="bob")


def test_issuing_requires_entailed_supporting_claims(plane: ControlPlane, flags: Counter) -> None:
    run = plane.ledger.start_run()
    with pytest.raises(GrantRefused, match="at least one supporting claim"):
        plane.grants.issue(run, _request(plane, run, ()), approver="alice")
    with pytest.raises(GrantRefused) as weak:
        plane.grants.issue(run, _request(plane, run, ("claim-weak", "claim-x")), approver="a")
    assert weak.value.reasons == [
        "claim 'claim-weak' proposition 1 is neutral, not entailment",
        f"claim 'claim-x' is unknown in run {run}",
    ]
    plane.grants.claim_status_source = None
    with pytest.raises(GrantRefused, match="no claim-status source is configured"):
        plane.grants.issue(run, _request(plane, run), approver="alice")
    assert plane.ledger.entries(run, kinds=["grant"]) == []


def test_issuing_checks_the_request_itself(plane: ControlPlane, flags: Counter) -> None:
    run = plane.ledger.start_run()
    request = _request(plane, run)
    forged = replace(request, args={**FLAG_ARGS, "line": 15})
    with pytest.raises(GrantRefused, match="args_sha256 does not match"):
        plane.grants.issue(run, forged, approver="alice")
    with pytest.raises(GrantRefused, match="is for run"):
        plane.grants.issue(plane.ledger.start_run(), request, approver="alice")
    with pytest.raises(GrantRefused) as bad:
        plane.grants.issue(run, request, approver=" ", via="robot", ttl_s=0)
    assert len(bad.value.reasons) == 3
    with pytest.raises(UnknownGrant):
        plane.grants.get("grant_missing")


def test_grant_rows_cannot_be_changed(plane: ControlPlane, flags: Counter) -> None:
    import sqlalchemy as sa

    run = plane.ledger.start_run()
    grant = plane.grants.issue(run, _request(plane, run), approver="alice")
    plane.bus.call(run, "flag_invoice_line", FLAG_ARGS, grant_id=grant.id, call_id=CALL)
    for statement in (
        "UPDATE tool_grants SET expires_at = issued_at",
        "DELETE FROM tool_grant_uses",
        "DELETE FROM tool_calls",
        "UPDATE tool_call_results SET result_json = '{}'",
    ):
        with pytest.raises(LedgerWriteRefused), plane.engine.begin() as conn:
            conn.execute(sa.text(statement))


POLICY = {
    "rules": [
        {
            "name": "small-flags",
            "tool": "flag_invoice_line",
            "claims": "all_entailed",
            "args": {"amount_over_cap": {"le": 500}, "currency": {"in": ["EUR", "USD"]}},
            "ttl_s": 60,
        }
    ],
}


def test_policy_rule_approves_within_bounds_when_claims_are_entailed(
    plane: ControlPlane, flags: Counter
) -> None:
    plane.grants.load_policy(POLICY)
    run = plane.ledger.start_run()
    done = plane.bus.call(run, "flag_invoice_line", FLAG_ARGS, depends_on=CLAIMS)
    assert done.ok and len(flags.calls) == 1
    (grant_entry,) = plane.ledger.entries(run, kinds=["grant"])
    body = json.loads(grant_entry.content)
    assert body["via"] == "policy:small-flags" and body["approver"] == "policy:small-flags"
    over = plane.bus.call(
        run, "flag_invoice_line", {**FLAG_ARGS, "amount_over_cap": 500.5}, depends_on=CLAIMS
    )
    weak = plane.bus.call(run, "flag_invoice_line", FLAG_ARGS, depends_on=("claim-weak",))
    none = plane.bus.call(run, "flag_invoice_line", FLAG_ARGS)
    for refused in (over, weak, none):
        assert refused.error is not None and refused.error.code == "grant_required"
    assert len(flags.calls) == 1


def test_policy_evaluation_is_explicit_too(
    plane: ControlPlane, flags: Counter, tmp_path: Path
) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(
        "rules:\n  - name: exact\n    tool: flag_invoice_line\n    version: 1.0.0\n"
        "    args:\n      /invoice: {eq: INV-7}\n      line: {ge: 1, lt: 100}\n"
    )
    plane.grants.load_policy(path)
    run = plane.ledger.start_run()
    request = GrantRequest.for_call(
        run, "flag_invoice_line", "1.0.0", FLAG_ARGS, CLAIMS, call_id=CALL
    )
    grant = plane.grants.evaluate_policy(run, request)
    assert grant is not None and grant.via == "policy:exact" and grant.call_id == CALL
    other = GrantRequest.for_call(
        run, "flag_invoice_line", "1.0.0", {**FLAG_ARGS, "invoice": "INV-8"}, CLAIMS, call_id="f2"
    )
    assert plane.grants.evaluate_policy(run, other) is None


def test_policy_documents_are_validated(plane: ControlPlane, tmp_path: Path) -> None:
    with pytest.raises(InvalidPolicy, match="rules/0/args/x/between"):
        plane.grants.load_policy(
            {"rules": [{"name": "r", "tool": "t", "args": {"x": {"between": [1, 2]}}}]}
        )
    broken = tmp_path / "p.json"
    broken.write_text("{not json")
    with pytest.raises(InvalidPolicy, match="does not parse"):
        plane.grants.load_policy(broken)
    with pytest.raises(InvalidPolicy, match="cannot read"):
        plane.grants.load_policy(tmp_path / "missing.yaml")


def test_control_plane_open_takes_a_policy(db_url: str, tmp_path: Path) -> None:
    path = tmp_path / "policy.json"
    path.write_text(json.dumps(POLICY))
    with ControlPlane.open(db_url, policy=path) as cp:
        assert [r.name for r in cp.grants.policy.rules] == ["small-flags"]


def test_a_policy_approves_only_values_the_verified_claims_state(
    plane: ControlPlane, flags: Counter
) -> None:
    """Within the rule's bounds, claims entailed, but the figure (or the tested string)
    is not written in them: the call waits for a person."""
    plane.grants.load_policy(POLICY)
    source = plane.grants.claim_status_source
    assert isinstance(source, StandInClaims)
    run = plane.ledger.start_run()
    invented = plane.bus.call(
        run, "flag_invoice_line", {**FLAG_ARGS, "amount_over_cap": 99.5}, depends_on=CLAIMS
    )
    source.texts = {"claim-1": ("Line 14 of invoice INV-7 is billed 120.50 above its cap.",)}
    no_currency = plane.bus.call(run, "flag_invoice_line", FLAG_ARGS, depends_on=("claim-1",))
    for refused in (invented, no_currency):
        assert refused.error is not None and refused.error.code == "grant_required"
    assert flags.calls == [] and plane.ledger.entries(run, kinds=["grant"]) == []
    request = GrantRequest.for_call(
        run,
        "flag_invoice_line",
        "1.0.0",
        {**FLAG_ARGS, "amount_over_cap": 99.5},
        CLAIMS,
        call_id="x",
    )
    problems = plane.grants.policy_problems(run, request, plane.grants.policy.rules[0])
    assert problems == [
        "/amount_over_cap: 99.5 occurs in none of its claims or evidence",
        "currency: 'EUR' is not stated by the verified claims",
    ]
