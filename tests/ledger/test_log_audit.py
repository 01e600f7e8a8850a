"""The Merkle log as an auditor uses it, on both engines: signed checkpoints, inclusion
and consistency proofs from the database, offline bundles, witnessing, and a
superuser's consistent rewrite of history, which ``verify`` cannot see and ``witness``
catches."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
import sqlalchemy as sa
from typer.testing import CliRunner

from assay import ControlPlane, InvalidKey, InvalidProof
from assay.cli import app
from assay.ledger import (
    generate_key,
    leaf_hash,
    verify_bundle,
    verify_checkpoint,
    verify_consistency,
    verify_inclusion,
)
from assay.ledger._hashing import dedup_key, entry_hash, entry_id_for, format_fields, sha256_hex
from assay.ledger._merkle import Frontier
from tests.ledger._tamper import raw_engine, tamper

runner = CliRunner()
NAME = "audit.example.org/ledger"


@pytest.fixture
def keys() -> tuple[str, str]:
    return generate_key(NAME)


def _fill(plane: ControlPlane) -> tuple[str, str]:
    """Two runs, the second with evidence and a verdict citing a span of it."""
    first = plane.ledger.start_run(metadata={"task": "warm-up"})
    plane.ledger.append_many(
        first, [{"kind": "retrieval", "source": f"d{i}", "content": f"line {i}"} for i in range(9)]
    )
    run = plane.ledger.start_run(metadata={"task": "audit invoice INV-7731"})
    evidence = plane.ledger.append(
        run, kind="tool_output", source="invoices@1", content="Line 3: 2.0 h at EUR 610/h"
    )
    plane.ledger.append(run, kind="retrieval", source="scan.bin", content=b"\x00\xffraw")
    verdict = {
        "proposition": "Line 3 took 2 hours.",
        "label": "entailment",
        "score": 0.93,
        "ledger_id": evidence.id,
        "span": [0, 14],
    }
    plane.ledger.append(run, kind="verdict", source="verifier", content=json.dumps(verdict))
    return first, run


def test_proofs_from_the_database_verify_against_a_signed_checkpoint(
    plane: ControlPlane, keys: tuple[str, str]
) -> None:
    signer, verifier = keys
    first, run = _fill(plane)
    old = verify_checkpoint(plane.ledger.checkpoint(signer), verifier)
    assert old.origin == NAME and old.size == plane.ledger.tree_size() == 12
    for entry in plane.ledger.entries(first) + plane.ledger.entries(run):
        proof = plane.ledger.inclusion_proof(entry.id)
        assert (proof.leaf_index, proof.tree_size) == (entry.leaf_index, 12)
        verify_inclusion(
            leaf_hash(bytes.fromhex(entry.entry_hash)), entry.leaf_index, 12, proof.hashes, old.root
        )
    later = plane.ledger.append(run, kind="human_fact", source="reviewer", content="confirmed")
    assert later.leaf_index == 12
    size, root = plane.ledger.root()
    verify_consistency(old.size, size, old.root, root, plane.ledger.consistency_proof(old.size))
    # an earlier size's root is what that checkpoint signed
    assert plane.ledger.root(old.size) == (old.size, old.root)
    wrong = plane.ledger.inclusion_proof(later.id)
    with pytest.raises(InvalidProof):
        verify_inclusion(
            leaf_hash(bytes.fromhex(later.entry_hash)), 12, size, wrong.hashes, old.root
        )


def test_checkpoint_without_a_key_says_how_to_make_one(
    plane: ControlPlane, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ASSAY_LEDGER_KEY", raising=False)
    monkeypatch.delenv("ASSAY_LEDGER_KEY_FILE", raising=False)
    with pytest.raises(InvalidKey, match="assay ledger keygen"):
        plane.ledger.checkpoint()


def test_a_bundle_verifies_offline_and_fails_when_any_byte_is_edited(
    plane: ControlPlane, keys: tuple[str, str]
) -> None:
    signer, verifier = keys
    _, run = _fill(plane)
    bundle = plane.ledger.export_bundle(run, signer)
    verified = verify_bundle(bundle, verifier)
    assert [e.seq for e in verified.entries] == [1, 2, 3]
    assert verified.entries[1].content == b"\x00\xffraw"
    assert verified.claims() == [
        {
            "verdict_entry": verified.entries[2].id,
            "proposition": "Line 3 took 2 hours.",
            "label": "entailment",
            "score": 0.93,
            "evidence": verified.entries[0].id,
            "span": [0, 14],
            "quote": "Line 3: 2.0 h ",
        }
    ]
    data = bundle.encode("utf-8")
    accepted = []
    for position in range(len(data)):
        edited = bytearray(data)
        edited[position] ^= 0x01
        try:
            verify_bundle(bytes(edited), verifier)
        except InvalidProof as exc:
            assert exc.reason
        else:
            accepted.append(position)
    assert accepted == []
    _, other_verifier = generate_key("other.example.org/ledger")
    with pytest.raises(InvalidProof):
        verify_bundle(bundle, other_verifier)


def _rewrite_history(url: str, run: str, new_text: str) -> None:
    """What a database superuser can do: change an entry's content and recompute every
    hash after it, the chain, the heads and the whole Merkle log, consistently."""
    engine = raw_engine(url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                sa.text(
                    "SELECT entry_id, seq, kind, source, content, is_text, metadata_json, "
                    "created_at FROM ledger_entries WHERE run_id = :r ORDER BY seq"
                ),
                {"r": run},
            ).all()
            record = conn.execute(
                sa.text("SELECT run_hash FROM ledger_runs WHERE run_id = :r"), {"r": run}
            ).scalar_one()
            created = [plane_time(row.created_at) for row in rows]
            updates: list[str] = []
            prev = "0" * 64
            for row, when in zip(rows, created, strict=True):
                content = new_text.encode() if row.seq == 1 else bytes(row.content)
                digest = sha256_hex(content)
                new_hash = entry_hash(
                    run_id=run,
                    seq=row.seq,
                    kind=row.kind,
                    source=row.source,
                    content_sha256=digest,
                    metadata=json.loads(row.metadata_json),
                    prev_hash=prev,
                    extra=format_fields(
                        2, is_text=bool(row.is_text), created_at=when, run_record=record
                    ),
                )
                key = dedup_key(
                    run_id=run,
                    kind=row.kind,
                    source=row.source,
                    content_sha256=digest,
                    metadata=json.loads(row.metadata_json),
                    metadata_text=row.metadata_json,
                    is_text=bool(row.is_text),
                )
                hexed = content.hex()
                updates.append(
                    f"UPDATE ledger_entries SET content = {_blob(url, hexed)}, "
                    f"content_sha256 = '{digest}', prev_hash = '{prev}', "
                    f"entry_hash = '{new_hash}', entry_id = '{entry_id_for(new_hash)}', "
                    f"dedup_key = '{key}' "
                    f"WHERE run_id = '{run}' AND seq = {row.seq}"
                )
                prev = new_hash
            updates.append(f"UPDATE ledger_runs SET head_hash = '{prev}' WHERE run_id = '{run}'")
        tamper(url, *updates)
        # now the log: every leaf's subtree hashes and the frontier, rebuilt
        with engine.connect() as conn:
            leaves = conn.execute(
                sa.text("SELECT leaf_index, entry_hash FROM ledger_entries ORDER BY leaf_index")
            ).all()
        frontier = Frontier()
        log_updates = []
        for leaf in leaves:
            made = b"".join(frontier.append(leaf_hash(bytes.fromhex(leaf.entry_hash))))
            log_updates.append(
                f"UPDATE ledger_entries SET subtrees = {_blob(url, made.hex())} "
                f"WHERE leaf_index = {leaf.leaf_index}"
            )
        log_updates.append(
            f"UPDATE ledger_tree SET frontier = {_blob(url, frontier.to_bytes().hex())}"
        )
        tamper(url, *log_updates)
    finally:
        engine.dispose()


def plane_time(value: datetime | str) -> datetime:
    """A stored creation time as the ledger hashed it (SQLite stores naive UTC text)."""
    parsed = datetime.fromisoformat(value) if isinstance(value, str) else value
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def _blob(url: str, hexed: str) -> str:
    return f"'\\x{hexed}'::bytea" if url.startswith("postgresql") else f"X'{hexed}'"


def test_witness_catches_a_consistent_rewrite_that_verify_cannot_see(
    plane: ControlPlane, keys: tuple[str, str], tmp_path: Path
) -> None:
    signer, verifier = keys
    _, run = _fill(plane)
    kept = tmp_path / "kept.checkpoint"
    kept.write_text(plane.ledger.checkpoint(signer), encoding="utf-8")
    plane.ledger.append(run, kind="human_fact", source="reviewer", content="later entry")

    ok = runner.invoke(
        app, ["ledger", "witness", "--checkpoint", str(kept), "--key", verifier, "--db", plane.url]
    )
    assert ok.exit_code == 0, ok.output
    assert "consistent" in ok.output

    _rewrite_history(plane.url, run, "Line 3: 0.5 h at EUR 610/h")
    assert plane.ledger.entries(run)[0].content == "Line 3: 0.5 h at EUR 610/h"
    assert plane.ledger.verify().ok  # every hash agrees: only an outside record can tell
    caught = runner.invoke(
        app, ["ledger", "witness", "--checkpoint", str(kept), "--key", verifier, "--db", plane.url]
    )
    assert caught.exit_code == 1
    assert "not consistent" in caught.output


def test_cli_keygen_checkpoint_export_and_verify_bundle(
    plane: ControlPlane, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key_file = tmp_path / "ledger.key"
    made = runner.invoke(app, ["ledger", "keygen", NAME, "--out", str(key_file)])
    assert made.exit_code == 0, made.output
    verifier = made.stdout.strip()
    assert verifier.startswith(NAME + "+")
    again = runner.invoke(app, ["ledger", "keygen", NAME, "--out", str(key_file)])
    assert again.exit_code == 2 and "never overwritten" in again.output
    monkeypatch.setenv("ASSAY_LEDGER_KEY_FILE", str(key_file))
    monkeypatch.delenv("ASSAY_LEDGER_KEY", raising=False)
    _, run = _fill(plane)

    store = tmp_path / "checkpoints"
    store.mkdir()
    signed = runner.invoke(app, ["ledger", "checkpoint", "--db", plane.url, "--out", str(store)])
    assert signed.exit_code == 0, signed.output
    assert verify_checkpoint((store / "12.checkpoint").read_text(), verifier).size == 12

    exported = runner.invoke(app, ["ledger", "export", run, "--db", plane.url])
    assert exported.exit_code == 0, exported.output
    bundle = tmp_path / "run.bundle"
    bundle.write_text(exported.stdout, encoding="utf-8")
    checked = runner.invoke(
        app, ["ledger", "verify-bundle", str(bundle), "--key", verifier], env={"COLUMNS": "250"}
    )
    assert checked.exit_code == 0, checked.output
    assert "Line 3 took 2 hours." in checked.output and "Line 3: 2.0 h" in checked.output

    bundle.write_text(exported.stdout.replace("EUR 610/h", "EUR 160/h"), encoding="utf-8")
    failed = runner.invoke(app, ["ledger", "verify-bundle", str(bundle), "--key", verifier])
    assert failed.exit_code == 1
    assert "bundle fails" in failed.output
    bad_key = runner.invoke(app, ["ledger", "verify-bundle", str(bundle), "--key", "nonsense+1"])
    assert bad_key.exit_code == 2
