"""Exporting one run as an offline audit bundle (see :mod:`assay.ledger._bundle`).

The bundle is cut at the tree of the checkpoint it is signed with: every entry of the
run that is a leaf of that tree, and none after it. A run still being appended to is
exported complete up to that checkpoint, and its signed run head says how far that
is. The reads need not share one snapshot (PostgreSQL reads each statement afresh):
the run's record is read first, the log's head next, and then the run's entries whose
leaves are inside that tree, which, since an entry and its leaf are committed
together and a run's leaves follow its seq, are exactly seq 1 to n of the run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from assay._limits import safe_repr, visible
from assay.errors import LedgerCorrupted, UnknownRun
from assay.ledger import _tables as t
from assay.ledger._bundle import make_bundle
from assay.ledger._hashing import ENTRY_FORMAT
from assay.ledger._log import inclusion_hashes, signed_checkpoint
from assay.ledger._records import GENESIS_HASH, LedgerEntry
from assay.ledger._runhead import RunHead, sign_run_head
from assay.ledger._signed_checkpoint import Signer
from assay.ledger._stored_rows import ENTRY_COLUMNS, RUN_COLUMNS, entry_from_values, run_from_values

_VERIFY = "run `assay ledger verify`"
_FORMAT = list(t.entries.columns.keys()).index("format")
_RUN = sa.select(*RUN_COLUMNS).where(t.runs.c.run_id == sa.bindparam("run"))
#: The run's entries that are leaves of the tree of ``size`` leaves, in seq order.
_ENTRIES_IN_TREE = (
    sa.select(*ENTRY_COLUMNS)
    .where(t.entries.c.run_id == sa.bindparam("run"))
    .where(t.entries.c.leaf_index < sa.bindparam("size"))
    .order_by(t.entries.c.seq)
)


def export_run(conn: Connection, signer: Signer, run_id: str) -> str:
    """The audit bundle of ``run_id``: its entries in the log as it stands, each with
    its inclusion proof, a signed checkpoint of that log and a signed run head.
    :class:`~assay.errors.UnknownRun` for a run the ledger does not hold;
    :class:`~assay.errors.LedgerCorrupted` when the stored run is not a chain the
    ledger could have written, rather than sign a statement about it."""
    row = conn.execute(_RUN, {"run": run_id}).first()
    if row is None:
        raise UnknownRun(f"no run {safe_repr(run_id, 80)} in this ledger")
    run = run_from_values(tuple(row))
    checkpoint, note = signed_checkpoint(conn, signer)
    rows = conn.execute(_ENTRIES_IN_TREE, {"run": run_id, "size": checkpoint.size})
    stored = [_stored(tuple(r)) for r in rows]
    _check_chain(run_id, [entry for entry, _ in stored], run.head_seq)
    head = RunHead.of(
        checkpoint,
        run_hash=run.run_hash,
        entries=len(stored),
        head_hash=stored[-1][0].entry_hash if stored else GENESIS_HASH,
    )
    items = [
        (entry, fmt, inclusion_hashes(conn, entry.leaf_index, checkpoint.size))
        for entry, fmt in stored
    ]
    return make_bundle(note, sign_run_head(head, signer), run, items)


def _stored(values: tuple[Any, ...]) -> tuple[LedgerEntry, int]:
    """An entry row read back, with its entry format."""
    entry = entry_from_values(values)
    fmt = values[_FORMAT]
    if type(fmt) is not int or fmt not in (1, ENTRY_FORMAT):
        raise LedgerCorrupted(
            f"entry {visible(entry.id, 40)} cannot be exported: its format "
            f"{safe_repr(fmt, 40)} is not one the ledger writes; {_VERIFY}",
            entry.id,
        )
    return entry, fmt


def _check_chain(run_id: str, entries: Sequence[LedgerEntry], stored_head: int) -> None:
    """That the entries read are seq 1 to n without a gap, and no fewer than the run's
    head counted when it was read: a run head is signed only for a whole chain."""
    for position, entry in enumerate(entries, start=1):
        if entry.seq != position:
            raise LedgerCorrupted(
                f"run {safe_repr(run_id, 80)} cannot be exported: its entry seq {position} is "
                f"missing from the log; {_VERIFY}",
                entry.id,
            )
    if len(entries) < stored_head:
        raise LedgerCorrupted(
            f"run {safe_repr(run_id, 80)} cannot be exported: its head counts {stored_head} "
            f"entries, the log holds {len(entries)} of them; {_VERIFY}"
        )
