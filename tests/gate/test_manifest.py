"""The run manifest, derived from the ledger alone, and ``assay audit``."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from assay import ControlPlane, RunManifest
from assay.cli import app
from tests.gate._world import World, make_world

runner = CliRunner()


def _story(plane: ControlPlane) -> World:
    """Evidence, a rejected and an accepted hand-over, then a verdict, a grant, a call."""
    world = make_world(plane)
    bad = world.handover()
    bad["claims"][0]["propositions"][0]["ledger_ids"] = [world.record]
    assert not plane.gate.check(world.run, bad).accepted
    assert plane.gate.check(world.run, world.handover()).accepted
    ledger = plane.ledger
    ledger.append(
        world.run,
        kind="verdict",
        source="verifier",
        content='{"proposition": "p1", "label": "entailment"}',
    )
    ledger.append(
        world.run,
        kind="grant",
        source="reviewer:dana",
        content='{"tool": "flag_invoice_line", "approved": true}',
    )
    ledger.append(
        world.run,
        kind="tool_call",
        source="flag_invoice_line@1.0.0",
        content='{"args": {"invoice": "INV-4421"}}',
    )
    ledger.append(world.run, kind="error", source="bus", content="timeout after 30 s")
    return world


def test_manifest_tells_the_run(plane: ControlPlane) -> None:
    world = _story(plane)
    manifest = plane.manifest(world.run)
    assert isinstance(manifest, RunManifest)
    assert manifest.run_id == world.run and manifest.chain_ok and manifest.entries == 13
    assert [p.status for p in manifest.phases] == ["rejected", "accepted", "open"]
    assert [p.agent for p in manifest.phases] == ["auditor", "auditor", None]
    first, second, last = manifest.phases
    assert (first.first_seq, first.last_seq) == (1, 7)
    assert first.kinds == {
        "tool_output": 2,
        "retrieval": 1,
        "human_fact": 1,
        "handover": 2,
        "gate_decision": 1,
    }
    assert (second.first_seq, second.last_seq) == (8, 9)
    assert last.kinds == {"verdict": 1, "grant": 1, "tool_call": 1, "error": 1}
    assert {a.ledger_id for a in manifest.artifacts} == {
        world.crm,
        world.contract,
        world.git,
        world.user,
    }
    assert [(d.accepted, d.codes) for d in manifest.gate_decisions] == [
        (False, ["uncitable_entry", "unverified_identifier"]),
        (True, []),
    ]
    assert manifest.grants[0].content == {"tool": "flag_invoice_line", "approved": True}
    assert manifest.tool_calls[0].source == "flag_invoice_line@1.0.0"
    assert manifest.errors[0].content == "timeout after 30 s"
    assert manifest.verdicts[0].content == {"proposition": "p1", "label": "entailment"}
    assert len(manifest.handovers) == 3  # the researcher's record and the two checked
    assert RunManifest.model_validate_json(manifest.to_json()) == manifest


def test_manifest_of_an_empty_run(plane: ControlPlane) -> None:
    run = plane.ledger.start_run()
    manifest = plane.manifest(run)
    assert manifest.entries == 0 and manifest.phases == [] and manifest.chain_ok


def test_audit_renders_and_prints_json(sqlite_url: str) -> None:
    with ControlPlane.open(sqlite_url) as cp:
        world = _story(cp)
    shown = runner.invoke(app, ["audit", world.run, "--db", sqlite_url], env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    for text in (
        world.run,
        "phases",
        "gate decisions",
        "uncitable_entry",
        "rejected",
        "accepted",
        "tool calls",
        "grants",
        "chain ok",
    ):
        assert text in shown.output
    as_json = runner.invoke(app, ["audit", world.run, "--db", sqlite_url, "--json"])
    assert as_json.exit_code == 0
    assert json.loads(as_json.output)["run_id"] == world.run


def test_audit_of_an_unknown_run_is_one_line(sqlite_url: str) -> None:
    result = runner.invoke(app, ["audit", "run_missing", "--db", sqlite_url])
    assert result.exit_code == 2
    assert "run_missing" in result.output and "Traceback" not in result.output
