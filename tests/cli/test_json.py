"""``--json`` on every command that reads, with stable keys; ``--version``."""

from __future__ import annotations

import json
from importlib.metadata import version
from pathlib import Path
from typing import Any

from assay import ControlPlane
from assay.ledger import generate_key
from assay.verifier import LexicalNLI
from tests.cli.conftest import ORDERS, cli

RUN_RESULT = {
    "run_id", "thread_id", "status", "answer", "claims", "unsupported",
    "pending_grants", "actions", "errors", "rounds", "round_reasons",
}  # fmt: skip
THREAD = {
    "thread_id", "graph_name", "graph_version", "run_id", "status",
    "created_at", "updated_at", "result",
}  # fmt: skip


def _json(*args: str) -> Any:
    out = cli(*args, "--json")
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)


def test_version() -> None:
    out = cli("--version")
    assert out.exit_code == 0 and out.stdout == f"assay {version('assay')}\n"


def test_every_read_command_prints_json(
    sqlite_url: str, stand_in_model: None, tmp_path: Path
) -> None:
    db = ("--db", sqlite_url)
    started = _json("run", "--graph", ORDERS, "--input", '{"task": "Restock BT-105."}', *db)
    assert set(started) == RUN_RESULT and started["status"] == "awaiting_grant"
    run = started["run_id"]
    [row] = _json("runs", *db)
    assert set(row) == {
        "run_id", "status", "thread_id", "graph", "graph_version", "task",
        "created_at", "entries", "head_hash", "metadata",
    }  # fmt: skip
    assert (row["run_id"], row["status"], row["task"]) == (run, "awaiting_grant", "Restock BT-105.")

    shown = _json("ledger", "show", run, *db)
    assert set(shown) == {"run", "entries"}
    assert set(shown["entries"][0]) == {
        "id", "run_id", "seq", "kind", "source", "content", "encoding", "sha256",
        "metadata", "prev_hash", "entry_hash", "created_at", "leaf_index",
    }  # fmt: skip
    assert [e["seq"] for e in shown["entries"]] == list(range(1, shown["run"]["head_seq"] + 1))

    verified = _json("ledger", "verify", *db)
    assert verified["ok"] is True and verified["checked"] == shown["run"]["head_seq"]

    audit = _json("audit", run, *db)
    assert audit["run_id"] == run and {"phases", "artifacts", "claims"} <= set(audit)
    assert audit["claims"][0]["label"] == "entailment"
    # What decided each verdict: a deterministic check's id, or the model.
    assert all(c["check"] and c["model"] for c in audit["claims"])

    thread = started["thread_id"]
    status = _json("status", thread, *db)
    assert set(status) == THREAD and set(status["result"]) == RUN_RESULT
    [paused] = _json("paused", *db)
    assert paused["thread_id"] == thread and paused["status"] == "awaiting_grant"

    resumed = _json("resume", thread, "--graph", ORDERS, "--approve", "--approver", "ana", *db)
    assert resumed["status"] == "answered" and resumed["actions"][0]["status"] == "executed"

    assert _json("db", "current", *db)["up_to_date"] is True
    tools = _json("tools", "list", *db)
    assert "place_order" in {tool["name"] for tool in tools}
    spec = _json("tools", "show", "place_order", *db)
    assert {"name", "version", "sha256", "registered_at", "versions"} <= set(spec)


def test_ledger_verify_json_when_broken_exits_1(sqlite_url: str) -> None:
    from tests.ledger._tamper import tamper

    with ControlPlane.open(sqlite_url) as cp:
        run = cp.ledger.start_run()
        cp.ledger.append(run, kind="retrieval", source="doc", content="passage")
    tamper(sqlite_url, "UPDATE ledger_entries SET content = X'00' WHERE seq = 1")
    out = cli("ledger", "verify", "--json", "--db", sqlite_url)
    assert out.exit_code == 1
    report = json.loads(out.stdout)
    assert report["ok"] is False and report["run_id"] == run and report["first_bad_seq"] == 1


def test_bundle_and_witness_json(sqlite_url: str, tmp_path: Path) -> None:
    signer, verifier = generate_key("example.org/log")
    with ControlPlane.open(sqlite_url) as cp:
        run = cp.ledger.start_run()
        cp.ledger.append(run, kind="retrieval", source="doc", content="passage")
        bundle = cp.ledger.export_bundle(run, signer)
        kept = tmp_path / "kept.checkpoint"
        kept.write_text(cp.ledger.checkpoint(signer))
    path = tmp_path / "run.bundle"
    path.write_text(bundle)
    checked = _json("ledger", "verify-bundle", str(path), "--key", verifier)
    key = {"name": "example.org/log", "key_id": verifier.split("+")[1], "file": None}
    assert checked == {
        "ok": True, "run_id": run, "entries": 1, "origin": "example.org/log", "size": 1,
        "claims": [], "key": key,
    }  # fmt: skip
    witnessed = _json(
        "ledger", "witness", "--checkpoint", str(kept), "--key", verifier, "--db", sqlite_url
    )
    assert witnessed == {
        "consistent": True, "origin": "example.org/log", "checkpoint_size": 1, "size": 1,
        "key": key,
    }  # fmt: skip


def test_audit_json_shows_each_propositions_cited_spans(
    sqlite_url: str, stand_in_model: None
) -> None:
    with ControlPlane.open(sqlite_url, nli=LexicalNLI()) as cp:
        run = cp.ledger.start_run()
        order = cp.ledger.append(
            run,
            kind="tool_output",
            source="lookup_order",
            content='{"order": {"id": "A-1093", "delivered_on": "2025-03-14"}}',
        )
        text = "Order A-1093 was delivered on 14 March 2025."
        cites = [
            {"ledger_id": order.id, "pointer": "/order/delivered_on"},
            {"ledger_id": order.id, "quote": "A-1093"},
        ]
        cp.verifier.verify(
            run,
            {
                "run_id": run,
                "from_agent": "desk",
                "status": "ok",
                "claims": [
                    {
                        "id": "c1",
                        "type": "Assertion",
                        "text": text,
                        "confidence": 0.9,
                        "propositions": [{"id": "c1.p", "text": text, "cites": cites}],
                    }
                ],
            },
        )
    [claim] = _json("audit", run, "--db", sqlite_url)["claims"]
    field, quote = claim["cites"]
    assert (field["ledger_id"], field["pointer"], field["quote"]) == (
        order.id,
        "/order/delivered_on",
        None,
    )
    assert field["text"] == "/order/delivered_on: 2025-03-14"
    assert order.text[slice(*field["span"])] == '"2025-03-14"'  # the cited bytes
    assert (quote["quote"], quote["pointer"], quote["text"]) == ("A-1093", None, "A-1093")
    assert order.text[slice(*quote["span"])] == "A-1093"
