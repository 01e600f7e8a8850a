"""The ledger's contract, run unchanged on SQLite and on a real PostgreSQL server."""

from __future__ import annotations

import hashlib
import re
import threading
from datetime import UTC

import pytest
import sqlalchemy as sa
from sqlalchemy.exc import DBAPIError

from assay import (
    ChainReport,
    ContentTooLarge,
    ControlPlane,
    InvalidEntry,
    InvalidMetadata,
    LedgerError,
    LedgerWriteRefused,
    UnknownEntry,
    UnknownKind,
    UnknownRun,
    UsageError,
)
from assay.ledger import GENESIS_HASH, canonical_json
from tests.ledger._tamper import raw_engine, tamper


def test_start_run_returns_fresh_ids(plane: ControlPlane) -> None:
    first = plane.ledger.start_run(metadata={"task": "audit"})
    second = plane.ledger.start_run()
    assert re.fullmatch(r"run_[0-9a-f]{32}", first)
    assert first != second
    info = plane.ledger.run(first)
    assert info.metadata == {"task": "audit"}
    assert (info.head_seq, info.head_hash) == (0, GENESIS_HASH)
    assert [r.run_id for r in plane.ledger.runs()] == [first, second]


def test_append_links_entries_into_a_chain(plane: ControlPlane) -> None:
    run = plane.ledger.start_run()
    a = plane.ledger.append(run, kind="retrieval", source="letter.md", content="caps at EUR 380")
    b = plane.ledger.append(
        run, kind="tool_output", source="read@1", content=b"\x00\xff", metadata={"line": 14}
    )
    assert (a.seq, b.seq) == (1, 2)
    assert a.prev_hash == GENESIS_HASH and b.prev_hash == a.entry_hash
    assert a.id == "led_" + a.entry_hash[:16]
    assert a.sha256 == hashlib.sha256(b"caps at EUR 380").hexdigest()
    assert b.sha256 == hashlib.sha256(b"\x00\xff").hexdigest()
    expected = hashlib.sha256(
        canonical_json(
            {
                "run_id": run,
                "seq": 2,
                "kind": "tool_output",
                "source": "read@1",
                "sha256": b.sha256,
                "metadata": {"line": 14},
                "prev_hash": a.entry_hash,
                # format 2 also hashes the content's type, the creation time and the run
                "format": 2,
                "content_type": "bytes",
                "created_at": b.created_at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
                "run": plane.ledger.run(run).run_hash,
            }
        )
    ).hexdigest()
    assert b.entry_hash == expected
    assert plane.ledger.head(run) == b.entry_hash


def test_content_comes_back_exactly(plane: ControlPlane) -> None:
    run = plane.ledger.start_run()
    text = "Zeile 14 — 12,5 h à 450 €\n\ttab"
    raw = bytes(range(256))
    t = plane.ledger.append(run, kind="retrieval", source="doc", content=text)
    b = plane.ledger.append(run, kind="retrieval", source="blob", content=raw)
    assert plane.ledger.get(t.id).content == text
    assert plane.ledger.get(b.id).content == raw
    assert plane.ledger.get(b.id).content_bytes == raw
    assert plane.ledger.get(t.id) == t


def test_identical_append_returns_the_existing_entry(plane: ControlPlane) -> None:
    run = plane.ledger.start_run()
    first = plane.ledger.append(run, kind="retrieval", source="s", content="x", metadata={"a": 1})
    again = plane.ledger.append(run, kind="retrieval", source="s", content="x", metadata={"a": 1})
    other_meta = plane.ledger.append(
        run, kind="retrieval", source="s", content="x", metadata={"a": 2}
    )
    other_kind = plane.ledger.append(
        run, kind="human_fact", source="s", content="x", metadata={"a": 1}
    )
    assert again == first
    assert other_meta.seq == 2 and other_kind.seq == 3
    assert plane.ledger.run(run).head_seq == 3


def test_same_content_in_another_run_is_a_new_entry(plane: ControlPlane) -> None:
    one, two = plane.ledger.start_run(), plane.ledger.start_run()
    a = plane.ledger.append(one, kind="retrieval", source="s", content="x")
    b = plane.ledger.append(two, kind="retrieval", source="s", content="x")
    assert a.id != b.id and b.seq == 1


def test_reading(plane: ControlPlane) -> None:
    run = plane.ledger.start_run()
    ev = plane.ledger.append(run, kind="retrieval", source="s", content="evidence")
    rec = plane.ledger.append(run, kind="handover", source="analyst", content="{}")
    assert [e.id for e in plane.ledger.entries(run)] == [ev.id, rec.id]
    assert [e.id for e in plane.ledger.entries(run, kinds=["handover"])] == [rec.id]
    assert [e.id for e in plane.ledger.evidence(run)] == [ev.id]
    assert ev.is_evidence and not rec.is_evidence
    assert plane.ledger.get_many([ev.id, "led_0000000000000000"]) == {ev.id: ev}
    with pytest.raises(UnknownEntry):
        plane.ledger.get("led_0000000000000000")


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"kind": "summary"}, UnknownKind),
        ({"source": ""}, InvalidEntry),
        ({"source": "agent\x00"}, InvalidEntry),
        ({"content": 42}, InvalidEntry),
        ({"metadata": ["not", "an", "object"]}, InvalidMetadata),
        ({"metadata": {"x": float("nan")}}, InvalidMetadata),
        ({"metadata": {"x": object()}}, InvalidMetadata),
        ({"content": "x" * 1025}, ContentTooLarge),
    ],
)
def test_bad_input_is_refused_and_writes_nothing(
    db_url: str, kwargs: dict[str, object], error: type[LedgerError]
) -> None:
    with ControlPlane.open(db_url, max_content_bytes=1024) as cp:
        run = cp.ledger.start_run()
        cp.ledger.append(run, kind="retrieval", source="s", content="ok")
        args: dict[str, object] = {"kind": "retrieval", "source": "s", "content": "y"} | kwargs
        with pytest.raises(error) as caught:
            cp.ledger.append(run, **args)  # type: ignore[arg-type]
        assert isinstance(caught.value, UsageError)
        assert str(caught.value)
        assert cp.ledger.run(run).head_seq == 1
        assert len(cp.ledger.entries(run)) == 1


def test_unknown_run_is_refused(plane: ControlPlane) -> None:
    with pytest.raises(UnknownRun, match="run_nope"):
        plane.ledger.append("run_nope", kind="retrieval", source="s", content="x")
    with pytest.raises(UnknownRun):
        plane.ledger.entries("run_nope")
    assert plane.ledger.runs() == []


def test_content_limit_is_exact(db_url: str) -> None:
    with ControlPlane.open(db_url, max_content_bytes=8) as cp:
        run = cp.ledger.start_run()
        cp.ledger.append(run, kind="retrieval", source="s", content=b"12345678")
        with pytest.raises(ContentTooLarge, match="9 bytes"):
            cp.ledger.append(run, kind="retrieval", source="s", content="€€€")


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE ledger_entries SET content = :blob",
        "UPDATE ledger_entries SET source = 'forged'",
        "DELETE FROM ledger_entries",
        "DELETE FROM ledger_runs",
        "UPDATE ledger_runs SET metadata_json = '{}'",
        "UPDATE ledger_runs SET head_seq = 0",
        "INSERT INTO ledger_entries SELECT 'led_x', run_id, 9, kind, source, content, is_text, "
        "content_sha256, metadata_json, prev_hash, 'h', 'd', created_at, format, "
        "leaf_index + 1, subtrees FROM ledger_entries",
        "UPDATE ledger_tree SET size = size + 1",
        "UPDATE ledger_tree SET frontier = :blob",
        "DELETE FROM ledger_tree",
        "INSERT INTO ledger_tree (id, size, frontier) VALUES (2, 0, :blob)",
        "UPDATE ledger_runs SET run_hash = '" + "0" * 64 + "'",
    ],
)
def test_the_database_refuses_changes_from_any_client(plane: ControlPlane, statement: str) -> None:
    run = plane.ledger.start_run(metadata={"m": 1})
    plane.ledger.append(run, kind="retrieval", source="s", content="original")
    params = {"blob": b"forged"} if ":blob" in statement else {}
    with pytest.raises(LedgerWriteRefused, match="append-only"), plane.engine.begin() as conn:
        conn.execute(sa.text(statement), params)
    engine = raw_engine(plane.url)
    try:
        with pytest.raises(DBAPIError, match="append-only"), engine.connect() as conn:
            conn.execute(sa.text(statement), params)
    finally:
        engine.dispose()
    assert plane.ledger.entries(run)[0].content == "original"
    assert plane.ledger.verify(run).ok


def test_threads_appending_to_one_run_keep_the_chain(plane: ControlPlane) -> None:
    run = plane.ledger.start_run()

    def writer(n: int) -> None:
        for i in range(40):
            plane.ledger.append(run, kind="tool_output", source=f"t{n}", content=f"{n}:{i}")

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    entries = plane.ledger.entries(run)
    assert [e.seq for e in entries] == list(range(1, 241))
    assert len({e.content for e in entries}) == 240
    assert plane.ledger.verify(run) == ChainReport(ok=True, checked=240, runs=1)


def _flip_first_byte(url: str, run: str, seq: int) -> None:
    engine = raw_engine(url)
    try:
        with engine.connect() as conn:
            content = conn.execute(
                sa.text("SELECT content FROM ledger_entries WHERE run_id = :r AND seq = :s"),
                {"r": run, "s": seq},
            ).scalar_one()
    finally:
        engine.dispose()
    forged = bytes([content[0] ^ 0x01]) + bytes(content[1:])
    tamper_params(
        url,
        "UPDATE ledger_entries SET content = :c WHERE run_id = :r AND seq = :s",
        {"c": forged, "r": run, "s": seq},
    )


def tamper_params(url: str, statement: str, params: dict[str, object]) -> None:
    tamper(url)  # drop or disable the triggers
    engine = raw_engine(url)
    try:
        with engine.connect() as conn:
            conn.execute(sa.text(statement), params)
    finally:
        engine.dispose()


def _five_entries(cp: ControlPlane) -> str:
    run = cp.ledger.start_run()
    for i in range(1, 6):
        cp.ledger.append(
            run, kind="retrieval", source=f"doc{i}", content=f"passage {i}", metadata={"i": i}
        )
    return run


def test_verify_names_an_edited_byte(plane: ControlPlane) -> None:
    run = _five_entries(plane)
    _flip_first_byte(plane.url, run, 3)
    report = plane.ledger.verify()
    assert not report.ok
    assert (report.run_id, report.first_bad_seq) == (run, 3)
    assert report.checked == 2
    assert "content" in (report.reason or "")


@pytest.mark.parametrize(
    ("statement", "bad_seq", "words"),
    [
        ("UPDATE ledger_entries SET metadata_json = '{\"i\": 99}' WHERE seq = 2", 2, "hash"),
        ("UPDATE ledger_entries SET source = 'forged' WHERE seq = 4", 4, "hash"),
        ("DELETE FROM ledger_entries WHERE seq = 3", 3, "missing"),
        ("UPDATE ledger_entries SET entry_hash = '" + "ab" * 32 + "' WHERE seq = 2", 2, "hash"),
        ("DELETE FROM ledger_entries WHERE seq = 5", 5, "head"),
    ],
)
def test_verify_detects_tampering(
    plane: ControlPlane, statement: str, bad_seq: int, words: str
) -> None:
    run = _five_entries(plane)
    tamper(plane.url, statement)
    report = plane.ledger.verify(run)
    assert not report.ok
    assert report.first_bad_seq == bad_seq
    assert words in (report.reason or "")


def test_verify_detects_reordered_entries(plane: ControlPlane) -> None:
    run = _five_entries(plane)
    tamper(
        plane.url,
        "UPDATE ledger_entries SET seq = 100 WHERE seq = 2",
        "UPDATE ledger_entries SET seq = 2 WHERE seq = 3",
        "UPDATE ledger_entries SET seq = 3 WHERE seq = 100",
    )
    report = plane.ledger.verify(run)
    assert not report.ok and report.first_bad_seq == 2


def test_verify_all_runs(plane: ControlPlane) -> None:
    runs = [_five_entries(plane) for _ in range(3)]
    assert plane.ledger.verify() == ChainReport(ok=True, checked=15, runs=3)
    tamper(plane.url, f"DELETE FROM ledger_entries WHERE run_id = '{runs[1]}' AND seq = 1")
    report = plane.ledger.verify()
    assert (report.ok, report.run_id, report.first_bad_seq) == (False, runs[1], 1)
