"""Idempotent effects on SQLite and PostgreSQL: an irreversible tool with an
idempotency key performs each effect once across runs, unless a person's grant
supersedes the earlier call by its ledger entry; of racing calls exactly one runs."""

from __future__ import annotations

import json
import threading
from dataclasses import replace
from typing import Any

import pytest
import sqlalchemy as sa

from assay import ControlPlane, InvalidToolSpec, LedgerWriteRefused
from assay.errors import GrantRefused
from assay.tool_bus import GrantRequest, ToolResult, ToolSpec
from tests.tool_bus._tools import ADD, FLAG, FLAG_ARGS, OVER_CAP, Counter, StandInClaims

KEYED = replace(FLAG, version="1.1.0", idempotency_key=("/invoice", "/line"))
CLAIMS = ("claim-1",)
STATED: dict[str, tuple[str, ...]] = {
    "claim-1": ("Line 14 of invoice INV-7 is billed EUR 120.50 above its cap.",)
}


@pytest.fixture
def flags(plane: ControlPlane) -> Counter:
    found = Counter()
    plane.registry.register(KEYED, found.flag)
    plane.grants.claim_status_source = StandInClaims(
        labels={"claim-1": ("entailment",)},
        texts=dict(STATED),
        slots={"claim-1": (OVER_CAP,)},
    )
    return found


def _granted(
    plane: ControlPlane,
    run: str,
    call_id: str,
    args: dict[str, Any] = FLAG_ARGS,
    supersedes: tuple[str, ...] = (),
) -> ToolResult:
    """Ask for the call, have a person grant exactly it, and make it."""
    request = GrantRequest.for_call(
        run, KEYED.name, KEYED.version, args, CLAIMS, call_id=call_id, supersedes=supersedes
    )
    grant = plane.grants.issue(run, request, approver="alice")
    return plane.bus.call(
        run, KEYED.name, args, grant_id=grant.id, call_id=call_id, depends_on=CLAIMS
    )


def _call_entry(plane: ControlPlane, run: str, call_id: str) -> str:
    return next(
        e.id
        for e in plane.ledger.entries(run)
        if e.kind == "tool_call" and e.metadata.get("call_id") == call_id
    )


def test_the_same_effect_in_a_second_run_is_refused_naming_the_first_call(
    plane: ControlPlane, flags: Counter
) -> None:
    first_run, second_run = plane.ledger.start_run(), plane.ledger.start_run()
    assert _granted(plane, first_run, "flag-a").ok
    first_entry = _call_entry(plane, first_run, "flag-a")
    repeat = _granted(plane, second_run, "flag-b")
    assert not repeat.ok and repeat.error is not None
    assert repeat.error.code == "duplicate_effect"
    assert first_run in repeat.error.message and "'flag-a'" in repeat.error.message
    assert first_entry in repeat.error.message
    named = {d.path: d.message for d in repeat.error.details}
    assert named == {"/run_id": first_run, "/call_id": "flag-a", "/call_ledger_id": first_entry}
    # what a person would grant to repeat it on purpose
    assert repeat.error.request is not None
    assert repeat.error.request.supersedes == (first_entry,)
    assert len(flags.calls) == 1
    # the refusal is recorded in the second run's ledger, with its code
    assert repeat.ledger_id is not None
    error = plane.ledger.get(repeat.ledger_id)
    assert error.kind == "error" and error.metadata["code"] == "duplicate_effect"
    # the same key in the same run, under another call id, is the same effect too
    again = _granted(plane, first_run, "flag-c")
    assert again.error is not None and again.error.code == "duplicate_effect"
    assert len(flags.calls) == 1


def test_another_key_value_is_another_effect_and_a_replay_is_the_first_result(
    plane: ControlPlane, flags: Counter
) -> None:
    run = plane.ledger.start_run()
    assert _granted(plane, run, "flag-a").ok
    other_line = {**FLAG_ARGS, "line": 15}
    STATED["claim-1"] += ("Line 15 too.",)
    try:
        assert _granted(plane, run, "flag-b", other_line).ok
    finally:
        STATED["claim-1"] = STATED["claim-1"][:1]
    # other arguments outside the key do not make it another effect
    other_amount = {**FLAG_ARGS, "amount_over_cap": 99.5}
    refused = _granted(plane, plane.ledger.start_run(), "flag-c", other_amount)
    assert refused.error is not None and refused.error.code == "duplicate_effect"
    # the call id that ran answers with its first result, not a refusal
    replay = plane.bus.call(run, KEYED.name, FLAG_ARGS, call_id="flag-a", depends_on=CLAIMS)
    assert replay.ok and replay.output == {"flag_id": "F-INV-7-14"}
    assert len(flags.calls) == 2
    holder = plane.bus.prior_effect(KEYED.name, FLAG_ARGS)
    assert holder is not None and (holder.run_id, holder.call_id) == (run, "flag-a")
    assert holder.generation == 0 and dict(holder.key_values) == {"/invoice": "INV-7", "/line": 14}
    assert plane.bus.prior_effect(KEYED.name, {**FLAG_ARGS, "line": 16}) is None


def test_a_grant_that_supersedes_the_earlier_call_repeats_the_effect_once(
    plane: ControlPlane, flags: Counter
) -> None:
    first_run, second_run, third_run = (plane.ledger.start_run() for _ in range(3))
    assert _granted(plane, first_run, "flag-a").ok
    first_entry = _call_entry(plane, first_run, "flag-a")
    repeat = _granted(plane, second_run, "flag-b", supersedes=(first_entry,))
    assert repeat.ok and len(flags.calls) == 2
    grant = plane.grants.used_for(second_run, "flag-b")
    assert grant is not None and grant.supersedes == (first_entry,)
    recorded = json.loads(plane.ledger.get(grant.ledger_id).text)
    assert recorded["supersedes"] == [first_entry]
    holder = plane.bus.prior_effect(KEYED.name, FLAG_ARGS)
    assert holder is not None and holder.run_id == second_run and holder.generation == 1
    # superseding the first call again is not enough: the second holds the effect now
    stale = _granted(plane, third_run, "flag-c", supersedes=(first_entry,))
    assert stale.error is not None and stale.error.code == "duplicate_effect"
    assert _call_entry(plane, second_run, "flag-b") in stale.error.message
    assert len(flags.calls) == 2


def test_supersedes_must_name_an_earlier_call_of_the_same_tool(
    plane: ControlPlane, flags: Counter
) -> None:
    plane.registry.register(ADD, Counter().add)
    run = plane.ledger.start_run()
    assert plane.bus.call(run, "add", {"a": 1, "b": 2}, call_id="sum").ok
    add_entry = _call_entry(plane, run, "sum")
    output_entry = next(e.id for e in plane.ledger.entries(run) if e.kind == "tool_output")
    for supersedes, reason in [
        (("led_nowhere",), "no tool_call entry has this id"),
        ((output_entry,), "no tool_call entry has this id"),
        ((add_entry,), "that call is of add@1.0.0, not of flag_invoice_line"),
        ((add_entry, add_entry), "names a call twice"),
    ]:
        request = GrantRequest.for_call(
            run, KEYED.name, KEYED.version, FLAG_ARGS, CLAIMS, call_id="f", supersedes=supersedes
        )
        with pytest.raises(GrantRefused, match=reason):
            plane.grants.issue(run, request, approver="alice")
    request = GrantRequest.for_call(
        run, KEYED.name, KEYED.version, FLAG_ARGS, CLAIMS, call_id="f", supersedes=(add_entry,)
    )
    with pytest.raises(GrantRefused, match="only a person's grant"):
        plane.grants.issue(run, request, approver="policy:r", via="policy:r")
    assert not any(e.kind == "grant" for e in plane.ledger.entries(run))


def test_a_policy_never_repeats_an_effect_and_issues_no_grant_for_it(
    plane: ControlPlane, flags: Counter
) -> None:
    plane.grants.load_policy(
        {"rules": [{"name": "flags", "tool": KEYED.name, "claims": "all_entailed"}]}
    )
    first_run, second_run = plane.ledger.start_run(), plane.ledger.start_run()
    assert plane.bus.call(first_run, KEYED.name, FLAG_ARGS, call_id="a", depends_on=CLAIMS).ok
    repeat = plane.bus.call(second_run, KEYED.name, FLAG_ARGS, call_id="a", depends_on=CLAIMS)
    assert repeat.error is not None and repeat.error.code == "duplicate_effect"
    assert not any(e.kind == "grant" for e in plane.ledger.entries(second_run))
    assert len(flags.calls) == 1


def test_a_key_pointer_without_a_value_is_an_invalid_argument(
    plane: ControlPlane, flags: Counter
) -> None:
    keyed_currency = replace(FLAG, version="1.2.0", idempotency_key=("/invoice", "/currency"))
    plane.registry.register(keyed_currency, Counter().flag)
    run = plane.ledger.start_run()
    no_currency = {k: v for k, v in FLAG_ARGS.items() if k != "currency"}
    result = plane.bus.call(
        run, KEYED.name, no_currency, version="1.2.0", call_id="x", depends_on=CLAIMS
    )
    assert result.error is not None and result.error.code == "invalid_arguments"
    assert [d.path for d in result.error.details] == ["/currency"]


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        ({"side_effect": "read_only"}, "idempotency_key is for irreversible tools"),
        ({"idempotency_key": ("invoice",)}, "is not a JSON pointer into the arguments"),
        ({"idempotency_key": ("/a", "/a")}, "names a pointer twice"),
        ({"idempotency_key": tuple(f"/a{i}" for i in range(17))}, "at most 16 pointers"),
        ({"idempotency_key": "/invoice"}, "must be a list of JSON pointers"),
    ],
)
def test_a_bad_idempotency_key_is_refused_with_the_spec(
    changes: dict[str, object], problem: str
) -> None:
    with pytest.raises(InvalidToolSpec, match=problem):
        replace(KEYED, **changes)  # type: ignore[arg-type]


def test_a_spec_without_a_key_keeps_its_stored_form() -> None:
    assert "idempotency_key" not in FLAG.as_json()
    assert KEYED.as_json()["idempotency_key"] == ["/invoice", "/line"]
    as_list = replace(KEYED, idempotency_key=["/invoice", "/line"])  # type: ignore[arg-type]
    assert as_list.idempotency_key == ("/invoice", "/line") and as_list == KEYED
    stored = ToolSpec.from_json(KEYED.canonical)  # what the registry reads back
    assert stored == KEYED and stored.sha256 == KEYED.sha256


def test_the_effects_table_is_append_only(plane: ControlPlane, flags: Counter) -> None:
    assert _granted(plane, plane.ledger.start_run(), "flag-a").ok
    for statement in (
        "UPDATE tool_effects SET run_id = 'other'",
        "DELETE FROM tool_effects",
    ):
        with pytest.raises(LedgerWriteRefused), plane.engine.begin() as conn:
            conn.execute(sa.text(statement))
    with plane.engine.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM tool_effects")).scalar() == 1


def test_of_racing_runs_exactly_one_performs_the_effect(db_url: str) -> None:
    """Four control planes (as four processes would), each in its own run with its
    own person's grant for the same effect, start at once: one runs, three are
    refused as duplicates of it."""
    flags = Counter()
    claims = StandInClaims(
        labels={"claim-1": ("entailment",)},
        texts=dict(STATED),
        slots={"claim-1": (OVER_CAP,)},
    )
    planes = [ControlPlane.open(db_url) for _ in range(4)]
    try:
        grants: list[tuple[str, str]] = []
        for i, plane in enumerate(planes):
            plane.registry.register(KEYED, flags.flag)
            plane.grants.claim_status_source = claims
            run = plane.ledger.start_run()
            request = GrantRequest.for_call(
                run, KEYED.name, KEYED.version, FLAG_ARGS, CLAIMS, call_id=f"c{i}"
            )
            grants.append((run, plane.grants.issue(run, request, approver="alice").id))
        results: list[ToolResult] = []
        barrier = threading.Barrier(4)

        def use(i: int) -> None:
            run, grant_id = grants[i]
            barrier.wait()
            results.append(
                planes[i].bus.call(run, KEYED.name, FLAG_ARGS, grant_id=grant_id, call_id=f"c{i}")
            )

        threads = [threading.Thread(target=use, args=(i,)) for i in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert sorted(r.ok for r in results) == [False, False, False, True]
        assert {r.error.code for r in results if r.error is not None} == {"duplicate_effect"}
        assert len(flags.calls) == 1
        with planes[0].engine.connect() as conn:
            assert conn.execute(sa.text("SELECT count(*) FROM tool_effects")).scalar() == 1
    finally:
        for plane in planes:
            plane.close()
