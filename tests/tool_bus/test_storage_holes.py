"""The ways around the append-only tables and the grants that a raw SQL client with
no schema rights has tried, on SQLite and PostgreSQL: replacing rows instead of
updating them, re-creating a run with a moved head, grant rows written by hand,
and a second grant for a call that already has one."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError

from assay import ControlPlane, LedgerWriteRefused
from assay.errors import GrantExists, GrantRefused
from assay.ledger import canonical_json
from assay.tool_bus import GrantRequest
from tests.tool_bus._tools import FLAG, FLAG_ARGS, OVER_CAP, Counter, StandInClaims

CLAIMS = ("claim-1",)
STATED = {"claim-1": ("Line 14 of invoice INV-7 is billed EUR 120.50 above its cap.",)}
PROTECTED = (
    "ledger_runs",
    "ledger_entries",
    "tool_registry",
    "tool_grants",
    "tool_grant_uses",
    "tool_calls",
    "tool_call_results",
)


@pytest.fixture
def world(plane: ControlPlane) -> Iterator[tuple[ControlPlane, str, Counter]]:
    """A run with a flag executed under a grant: a row in every protected table."""
    flags = Counter()
    plane.registry.register(FLAG, flags.flag)
    plane.grants.claim_status_source = StandInClaims(
        labels={"claim-1": ("entailment",)},
        texts=dict(STATED),
        slots={"claim-1": (OVER_CAP,)},
    )
    run = plane.ledger.start_run()
    for n in range(4):
        plane.ledger.append(run, kind="retrieval", source="doc", content=f"passage {n}")
    grant = plane.grants.issue(run, _request(run, "flag-1"), approver="alice")
    assert plane.bus.call(
        run, "flag_invoice_line", FLAG_ARGS, grant_id=grant.id, call_id="flag-1", depends_on=CLAIMS
    ).ok
    yield plane, run, flags


def _request(run: str, call_id: str) -> GrantRequest:
    return GrantRequest.for_call(
        run, "flag_invoice_line", "1.0.0", FLAG_ARGS, CLAIMS, call_id=call_id
    )


def _first_row(plane: ControlPlane, table: str) -> dict[str, Any]:
    with plane.engine.connect() as conn:
        row = conn.execute(sa.text(f"SELECT * FROM {table} LIMIT 1")).mappings().first()
    assert row is not None, table
    return dict(row)


def _altered(row: dict[str, Any]) -> dict[str, Any]:
    """The same keys with every text column rewritten (an attacker's version)."""
    changed = dict(row)
    for column in ("content", "metadata_json", "spec_json", "result_json", "approver", "tool"):
        if column in changed:
            changed[column] = b"forged" if isinstance(changed[column], bytes) else "forged"
    for column in ("expires_at",):
        if column in changed:
            changed[column] = datetime(2036, 1, 1, tzinfo=UTC)
    return changed


@pytest.mark.parametrize("table", PROTECTED)
def test_no_insert_can_replace_a_protected_row(
    world: tuple[ControlPlane, str, Counter], table: str
) -> None:
    plane, run, _ = world
    before = _first_row(plane, table)
    forged = _altered(before)
    columns = ", ".join(forged)
    values = ", ".join(f":{c}" for c in forged)
    if plane.engine.dialect.name == "sqlite":
        statements = [
            f"INSERT OR REPLACE INTO {table} ({columns}) VALUES ({values})",
            f"REPLACE INTO {table} ({columns}) VALUES ({values})",
            f"INSERT OR IGNORE INTO {table} ({columns}) VALUES ({values})",
        ]
    else:
        keys = {
            "ledger_runs": "run_id",
            "ledger_entries": "entry_id",
            "tool_registry": "name, version",
            "tool_grants": "grant_id",
            "tool_grant_uses": "grant_id",
            "tool_calls": "run_id, call_id",
            "tool_call_results": "run_id, call_id",
        }[table]
        updates = ", ".join(f"{c} = EXCLUDED.{c}" for c in forged if c not in keys)
        statements = [
            f"INSERT INTO {table} ({columns}) VALUES ({values}) "
            f"ON CONFLICT ({keys}) DO UPDATE SET {updates}"
        ]
    for statement in statements:
        with pytest.raises((IntegrityError, LedgerWriteRefused)), plane.engine.begin() as conn:
            conn.execute(sa.text(statement), forged)
    assert _first_row(plane, table) == before
    assert plane.ledger.verify(run).ok


def test_on_conflict_do_nothing_changes_nothing(world: tuple[ControlPlane, str, Counter]) -> None:
    plane, run, _ = world
    if plane.engine.dialect.name != "postgresql":
        pytest.skip("ON CONFLICT DO NOTHING is PostgreSQL's; SQLite's INSERT OR IGNORE is above")
    before = _first_row(plane, "tool_grants")
    forged = _altered(before)
    columns = ", ".join(forged)
    values = ", ".join(f":{c}" for c in forged)
    with plane.engine.begin() as conn:
        conn.execute(
            sa.text(
                f"INSERT INTO tool_grants ({columns}) VALUES ({values}) ON CONFLICT DO NOTHING"
            ),
            forged,
        )
    assert _first_row(plane, "tool_grants") == before and plane.ledger.verify(run).ok


def test_a_run_is_created_empty_only(world: tuple[ControlPlane, str, Counter]) -> None:
    plane, run, _ = world
    row = _first_row(plane, "ledger_runs")
    moved = {**row, "run_id": "run_" + "f" * 32, "head_seq": 3, "head_hash": "a" * 64}
    columns = ", ".join(moved)
    values = ", ".join(f":{c}" for c in moved)
    with pytest.raises(LedgerWriteRefused, match="starts empty"), plane.engine.begin() as conn:
        conn.execute(sa.text(f"INSERT INTO ledger_runs ({columns}) VALUES ({values})"), moved)
    assert plane.ledger.verify(run).ok


def _insert_grant(plane: ControlPlane, **fields: Any) -> None:
    with plane.engine.begin() as conn:
        conn.execute(sa.text("SELECT 1"))  # the same connection kind a client would use
        from assay.tool_bus import _tables as t

        conn.execute(t.grants.insert().values(**fields))


def _hand_written(run: str, call_id: str, **overrides: Any) -> dict[str, Any]:
    now = datetime.now(UTC)
    fields: dict[str, Any] = {
        "grant_id": "grant_" + "9" * 32,
        "run_id": run,
        "call_id": call_id,
        "tool": "flag_invoice_line",
        "version": "1.0.0",
        "args_sha256": _request(run, call_id).args_sha256,
        "depends_on_json": json.dumps(list(CLAIMS)),
        "approver": "ceo",
        "via": "human",
        "issued_at": now,
        "expires_at": now + timedelta(days=3650),
        "ledger_id": "led_" + "0" * 16,
    }
    fields.update(overrides)
    return fields


def test_a_grant_written_by_hand_grants_nothing(world: tuple[ControlPlane, str, Counter]) -> None:
    plane, run, flags = world
    _insert_grant(plane, **_hand_written(run, "forged-1"))
    result = plane.bus.call(
        run,
        "flag_invoice_line",
        FLAG_ARGS,
        grant_id="grant_" + "9" * 32,
        call_id="forged-1",
        depends_on=CLAIMS,
    )
    assert result.error is not None and result.error.code == "grant_invalid"
    assert "has no grant record" in result.error.message
    assert len(flags.calls) == 1 and plane.ledger.verify(run).ok


def test_a_grant_row_that_disagrees_with_its_record_grants_nothing(
    world: tuple[ControlPlane, str, Counter],
) -> None:
    """A real grant's ledger record, reused for a row with another call and approver."""
    plane, run, flags = world
    real = plane.grants.issue(run, _request(run, "later"), approver="alice")
    forged = _hand_written(
        run,
        "forged-2",
        grant_id=real.id[:-1] + ("0" if real.id[-1] != "0" else "1"),
        ledger_id=real.ledger_id,
        issued_at=real.issued_at,
        expires_at=real.expires_at,
    )
    _insert_grant(plane, **forged)
    result = plane.bus.call(
        run,
        "flag_invoice_line",
        FLAG_ARGS,
        grant_id=forged["grant_id"],
        call_id="forged-2",
        depends_on=CLAIMS,
    )
    assert result.error is not None and "disagrees with its ledger record" in result.error.message
    assert len(flags.calls) == 1


def test_a_consistent_forgery_beyond_the_limits_grants_nothing(
    world: tuple[ControlPlane, str, Counter],
) -> None:
    """A client that appends a matching ledger record too is still held to the limits:
    a ten-year grant, or a policy grant from a rule the policy does not have."""
    plane, run, flags = world
    for n, (via, days) in enumerate((("human", 3650), ("policy:made-up", 1))):
        call_id = f"forged-limit-{n}"
        fields = _hand_written(
            run,
            call_id,
            grant_id=f"grant_{n:032d}",
            via=via,
            expires_at=datetime.now(UTC) + timedelta(days=days),
        )
        body = {
            "grant_id": fields["grant_id"],
            "run_id": run,
            "call_id": call_id,
            "tool": "flag_invoice_line",
            "version": "1.0.0",
            "args": FLAG_ARGS,
            "args_sha256": fields["args_sha256"],
            "depends_on": list(CLAIMS),
            "approver": "ceo",
            "via": via,
            "issued_at": fields["issued_at"].isoformat(),
            "expires_at": fields["expires_at"].isoformat(),
        }
        entry = plane.ledger.append(
            run, kind="grant", source=f"grant:{via}", content=canonical_json(body).decode()
        )
        _insert_grant(plane, **{**fields, "ledger_id": entry.id})
        result = plane.bus.call(
            run,
            "flag_invoice_line",
            FLAG_ARGS,
            grant_id=fields["grant_id"],
            call_id=call_id,
            depends_on=CLAIMS,
        )
        assert result.error is not None and result.error.code == "grant_invalid", via
        expected = "outside the limits" if via == "human" else "a rule the policy does not have"
        assert expected in result.error.message
    assert len(flags.calls) == 1


def test_one_call_gets_at_most_one_grant(world: tuple[ControlPlane, str, Counter]) -> None:
    plane, run, flags = world
    first = plane.grants.issue(run, _request(run, "flag-2"), approver="alice")
    with pytest.raises(GrantExists, match="already has a live grant") as second:
        plane.grants.issue(run, _request(run, "flag-2"), approver="bob")
    assert second.value.grant.id == first.id and second.value.grant.approver == "alice"
    assert [json.loads(e.text)["call_id"] for e in plane.ledger.entries(run, kinds=["grant"])] == [
        "flag-1",
        "flag-2",
    ]
    with pytest.raises(GrantExists, match="already ran under grant"):
        plane.grants.issue(run, _request(run, "flag-1"), approver="bob")
    with pytest.raises(GrantRefused, match="names no call id"):
        plane.grants.issue(
            run,
            GrantRequest.for_call(run, "flag_invoice_line", "1.0.0", FLAG_ARGS, CLAIMS),
            approver="bob",
        )
    assert len(flags.calls) == 1


def test_concurrent_approvals_leave_one_grant(world: tuple[ControlPlane, str, Counter]) -> None:
    plane, run, _ = world
    outcomes: list[str] = []
    barrier = threading.Barrier(6)

    def approve(n: int) -> None:
        barrier.wait()
        try:
            plane.grants.issue(run, _request(run, "raced"), approver=f"reviewer-{n}")
            outcomes.append("issued")
        except GrantExists:
            outcomes.append("exists")

    threads = [threading.Thread(target=approve, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert sorted(outcomes) == ["exists"] * 5 + ["issued"]
    records = [
        e
        for e in plane.ledger.entries(run, kinds=["grant"])
        if json.loads(e.text)["call_id"] == "raced"
    ]
    assert len(records) == 1
    with plane.engine.connect() as conn:
        rows = conn.execute(
            sa.text("SELECT count(*) FROM tool_grants WHERE call_id = 'raced'")
        ).scalar()
    assert rows == 1


def test_the_result_names_the_grant_that_was_used(world: tuple[ControlPlane, str, Counter]) -> None:
    plane, run, _ = world
    used = plane.grants.used_for(run, "flag-1")
    assert used is not None and used.approver == "alice" and used.call_id == "flag-1"
    assert plane.grants.used_for(run, "never-called") is None


def test_registry_rows_written_by_hand_are_not_used(plane: ControlPlane) -> None:
    """A spec altered in place (hash left as it was), a version that is not semver, and
    a new version whose row fails its hash: none is served, none crashes a lookup."""
    from assay.errors import ToolNotFound
    from assay.tool_bus import _tables as t

    plane.registry.register(FLAG, Counter().flag)
    row = _first_row(plane, "tool_registry")
    lying = row["spec_json"].replace('"irreversible"', '"read_only"')
    with plane.engine.begin() as conn:
        for version, spec_json in (("2.0.0", lying.replace("1.0.0", "2.0.0")), ("banana", lying)):
            conn.execute(
                t.registry.insert().values(
                    name=FLAG.name,
                    version=version,
                    spec_json=spec_json,
                    spec_sha256=row["spec_sha256"],
                    registered_at=datetime.now(UTC),
                )
            )
    fresh = ControlPlane.open(plane.url)
    try:
        assert fresh.registry.versions(FLAG.name) == ["1.0.0", "2.0.0"]
        with pytest.raises(ToolNotFound, match="does not match its recorded sha256"):
            fresh.registry.get(FLAG.name)
        assert [s.ref for s in fresh.registry.list()] == [FLAG.ref]
        result = fresh.bus.call(fresh.ledger.start_run(), FLAG.name, FLAG_ARGS)
        assert result.error is not None and result.error.code == "unknown_version"
    finally:
        fresh.close()
