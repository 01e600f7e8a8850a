"""Reads by id and by kind, whatever their number: a few ids go by a statement made
for that many, more by chunks; kinds may repeat; missing ids are left out."""

from __future__ import annotations

import pytest

from assay import ControlPlane
from assay.ledger import LedgerEntry


@pytest.fixture
def stored(plane: ControlPlane) -> tuple[str, list[LedgerEntry]]:
    run = plane.ledger.start_run()
    with plane.ledger.batch(run) as batch:
        entries = [
            batch.append(kind="tool_output" if i % 2 else "verdict", source="t", content=str(i))
            for i in range(40)
        ]
    return run, entries


@pytest.mark.parametrize("count", [0, 1, 31, 32, 33, 40])
def test_get_many_finds_every_stored_id_and_leaves_out_the_rest(
    plane: ControlPlane, stored: tuple[str, list[LedgerEntry]], count: int
) -> None:
    _, entries = stored
    wanted = entries[:count]
    missing = [f"led_{i:016x}" for i in range(count)]
    found = plane.ledger.get_many([e.id for e in wanted] + missing + [e.id for e in wanted])
    assert found == {e.id: e for e in wanted}


def test_get_many_in_chunks(plane: ControlPlane, stored: tuple[str, list[LedgerEntry]]) -> None:
    _, entries = stored
    missing = [f"led_{i:016x}" for i in range(1200)]
    assert plane.ledger.get_many([*missing, entries[-1].id]) == {entries[-1].id: entries[-1]}


def test_entries_of_kinds_repeated_or_not(
    plane: ControlPlane, stored: tuple[str, list[LedgerEntry]]
) -> None:
    run, entries = stored
    outputs = [e for e in entries if e.kind == "tool_output"]
    assert plane.ledger.entries(run, kinds=["tool_output", "tool_output"]) == outputs
    assert plane.ledger.entries(run, kinds=("verdict", "tool_output")) == entries
    assert plane.ledger.entries(run, kinds=[]) == []
    assert plane.ledger.entries(run, kinds=iter(["grant"])) == []
