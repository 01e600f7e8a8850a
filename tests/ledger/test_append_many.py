"""``append_many``: one transaction for many entries, with the same checks, chain,
dedup and log as single appends, on both engines."""

from __future__ import annotations

import pytest

from assay import ControlPlane, InvalidEntry, InvalidMetadata, UnknownRun


def test_append_many_chains_dedups_and_joins_the_log(plane: ControlPlane) -> None:
    run = plane.ledger.start_run()
    before = plane.ledger.append(run, kind="retrieval", source="doc", content="stored earlier")
    entries = plane.ledger.append_many(
        run,
        [
            {"kind": "retrieval", "source": "doc", "content": "first"},
            {"kind": "retrieval", "source": "doc", "content": "stored earlier"},  # stored
            {"kind": "tool_output", "source": "t@1", "content": b"\x00raw", "metadata": {"n": 1}},
            {"kind": "retrieval", "source": "doc", "content": "first"},  # repeated here
        ],
    )
    assert [e.seq for e in entries] == [2, 1, 3, 2]
    assert entries[1] == before and entries[3].id == entries[0].id
    assert [e.leaf_index for e in plane.ledger.entries(run)] == [0, 1, 2]
    assert plane.ledger.run(run).head_hash == entries[2].entry_hash
    assert plane.ledger.tree_size() == 3
    assert plane.ledger.verify().ok


def test_the_content_type_is_part_of_an_entry_identity(plane: ControlPlane) -> None:
    run = plane.ledger.start_run()
    text = plane.ledger.append(run, kind="retrieval", source="doc", content="same")
    raw = plane.ledger.append(run, kind="retrieval", source="doc", content=b"same")
    assert text.id != raw.id and raw.content == b"same" and text.content == "same"
    assert plane.ledger.append(run, kind="retrieval", source="doc", content=b"same") == raw


@pytest.mark.parametrize(
    ("bad", "error", "message"),
    [
        ({"kind": "retrieval", "source": "doc", "content": "a\ud800"}, InvalidEntry, "entry 1"),
        ({"kind": "retrieval", "source": "d\udc00", "content": "x"}, InvalidEntry, "entry 1"),
        (
            {"kind": "retrieval", "source": "d", "content": "x", "metadata": {"k": "\ud800"}},
            InvalidMetadata,
            "entry 1",
        ),
        ({"kind": "retrieval", "source": "d"}, InvalidEntry, "entry 1: missing content"),
        (
            {"kind": "retrieval", "source": "d", "content": "x", "extra": 1},
            InvalidEntry,
            "unknown field",
        ),
        ("not a mapping", InvalidEntry, "entry 1: an entry is a mapping"),
    ],
)
def test_one_bad_entry_writes_none(
    plane: ControlPlane, bad: object, error: type[Exception], message: str
) -> None:
    run = plane.ledger.start_run()
    good = {"kind": "retrieval", "source": "doc", "content": "fine"}
    with pytest.raises(error, match=message):
        plane.ledger.append_many(run, [good, bad])  # type: ignore[list-item]
    assert plane.ledger.entries(run) == [] and plane.ledger.tree_size() == 0


def test_append_many_on_an_unknown_run(plane: ControlPlane) -> None:
    with pytest.raises(UnknownRun):
        plane.ledger.append_many("run_" + "0" * 32, [{"kind": "retrieval", "source": "d",
                                                      "content": "x"}])  # fmt: skip
    with pytest.raises(UnknownRun):
        plane.ledger.append_many("run_" + "0" * 32, [])
