"""The ledger's Merkle log as stored: its size and root, proofs read from the
database, signed checkpoints, and the keys that sign and check them.

Each entry row holds the hashes of the complete subtrees that end at its leaf
(``subtrees``), so a root or a proof is a handful of indexed reads: the coordinates
:mod:`assay.ledger._merkle` names are mapped to the leaf rows that end them and
fetched in one query. All reads of one answer run in one transaction, so a proof and
the size it is for agree even while others append.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from assay._db import DriverStatement
from assay.errors import InvalidKey, InvalidProof, UnknownEntry
from assay.ledger import _tables as t
from assay.ledger._checkpoint import Checkpoint, Signer, Verifier, sign_checkpoint
from assay.ledger._merkle import (
    EMPTY_ROOT,
    HASH_SIZE,
    Frontier,
    consistency_nodes,
    consistency_proof,
    inclusion_nodes,
    inclusion_proof,
    root,
    root_nodes,
)

#: The signing key's text (``PRIVATE+KEY+name+id+key``), or a file holding it.
KEY_ENV = "ASSAY_LEDGER_KEY"
KEY_FILE_ENV = "ASSAY_LEDGER_KEY_FILE"

_LOG_HEAD = DriverStatement(sa.select(t.tree.c.size, t.tree.c.frontier).where(t.tree.c.id == 1))
_LEAF_OF_ENTRY = DriverStatement(
    sa.select(t.entries.c.leaf_index, t.entries.c.entry_hash).where(
        t.entries.c.entry_id == sa.bindparam("id")
    )
)
_NODES = sa.select(t.entries.c.leaf_index, t.entries.c.subtrees).where(
    t.entries.c.leaf_index.in_(sa.bindparam("leaves", expanding=True))
)


@dataclass(frozen=True, kw_only=True)
class InclusionProof:
    """That an entry is the leaf ``leaf_index`` of the log at ``tree_size``: check it
    with :func:`assay.ledger.verify_inclusion` against a checkpoint's root."""

    entry_id: str
    entry_hash: str
    leaf_index: int
    tree_size: int
    hashes: tuple[bytes, ...]


# --- keys ---------------------------------------------------------------------------


def load_signer(key: str | os.PathLike[str] | Signer | None = None) -> Signer:
    """The checkpoint signing key: ``key`` (a :class:`Signer`, the key's text, or a
    path to a file holding it), else ``ASSAY_LEDGER_KEY`` (the text), else the file
    named by ``ASSAY_LEDGER_KEY_FILE``. :class:`~assay.errors.InvalidKey` when there
    is none or it cannot be read; make one with ``assay ledger keygen``."""
    if isinstance(key, Signer):
        return key
    if key is None:
        text = os.environ.get(KEY_ENV)
        if text:
            return Signer.from_text(text.strip())
        path = os.environ.get(KEY_FILE_ENV)
        if not path:
            raise InvalidKey(
                f"no checkpoint signing key: set {KEY_ENV} to the key's text or "
                f"{KEY_FILE_ENV} to a file holding it (make one with `assay ledger keygen`)"
            )
        return Signer.from_text(_read_key_file(Path(path), "signing key"))
    if isinstance(key, str) and key.startswith("PRIVATE+KEY+"):
        return Signer.from_text(key.strip())
    return Signer.from_text(_read_key_file(Path(key), "signing key"))


def load_verifier(key: str | os.PathLike[str] | Verifier) -> Verifier:
    """A verifier key: a :class:`Verifier`, its text (``name+id+key``) or a file."""
    if isinstance(key, Verifier):
        return key
    if isinstance(key, str) and "+" in key and not Path(key).exists():
        return Verifier.from_text(key.strip())
    return Verifier.from_text(_read_key_file(Path(key), "verifier key"))


def _read_key_file(path: Path, what: str) -> str:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidKey(f"cannot read the {what} file {str(path)!r}: {exc}") from None
    return text.strip()


# --- reading the stored log ------------------------------------------------------------


def log_head(conn: Connection) -> Frontier:
    """The log's size and frontier as stored."""
    row = _LOG_HEAD(conn, {}).first()
    if row is None:
        raise InvalidProof("the ledger's log row is missing: run `assay db upgrade`")
    size, frontier = row
    if not isinstance(size, int) or not isinstance(frontier, bytes | memoryview):
        raise InvalidProof("the ledger's log row was edited; run `assay ledger verify`")
    return Frontier.from_bytes(size, bytes(frontier))


def tree_size(conn: Connection) -> int:
    return log_head(conn).size


def _node_reader(
    conn: Connection, coords: Iterable[tuple[int, int]]
) -> Callable[[int, int], bytes]:
    """A ``node(level, index)`` function over the stored subtree hashes of ``coords``,
    fetched in one query."""
    wanted = {(level, index): (index + 1) * 2**level - 1 for level, index in coords}
    found: dict[int, bytes] = {}
    if wanted:
        rows = conn.execute(_NODES, {"leaves": sorted(set(wanted.values()))})
        for leaf, subtrees in rows:
            found[int(leaf)] = bytes(subtrees)

    def node(level: int, index: int) -> bytes:
        leaf = (index + 1) * 2**level - 1
        stored = found.get(leaf, b"")
        value = stored[level * HASH_SIZE : (level + 1) * HASH_SIZE]
        if len(value) != HASH_SIZE:
            raise InvalidProof(
                f"the log's stored subtree ({level}, {index}) at leaf {leaf} is missing or "
                "damaged; run `assay ledger verify`"
            )
        return value

    return node


def _checked_size(conn: Connection, size: int | None) -> int:
    current = tree_size(conn)
    if size is None:
        return current
    if not isinstance(size, int) or isinstance(size, bool) or not 0 <= size <= current:
        raise ValueError(f"tree size must be an integer from 0 to {current}, not {size!r}")
    return size


def root_at(conn: Connection, size: int | None = None) -> tuple[int, bytes]:
    """The log's size (``size`` or the current one) and its root hash."""
    size = _checked_size(conn, size)
    if size == 0:
        return 0, EMPTY_ROOT
    return size, root(size, _node_reader(conn, root_nodes(size)))


def prove_inclusion(conn: Connection, entry_id: str, size: int | None = None) -> InclusionProof:
    row = _LEAF_OF_ENTRY(conn, {"id": entry_id}).first()
    if row is None:
        raise UnknownEntry(f"no ledger entry {entry_id!r}")
    leaf, entry_hash = int(row[0]), str(row[1])
    size = _checked_size(conn, size)
    return InclusionProof(
        entry_id=entry_id,
        entry_hash=entry_hash,
        leaf_index=leaf,
        tree_size=size,
        hashes=inclusion_hashes(conn, leaf, size),
    )


def inclusion_hashes(conn: Connection, leaf: int, size: int) -> tuple[bytes, ...]:
    """The inclusion proof of leaf ``leaf`` in the log at ``size`` (a size already
    checked against the log), read in one query."""
    if leaf >= size:
        raise ValueError(f"leaf {leaf} is not in a tree of size {size}")
    return tuple(inclusion_proof(leaf, size, _node_reader(conn, inclusion_nodes(leaf, size))))


def prove_consistency(conn: Connection, old_size: int, new_size: int | None = None) -> list[bytes]:
    new_size = _checked_size(conn, new_size)
    if not isinstance(old_size, int) or isinstance(old_size, bool) or not 0 <= old_size <= new_size:
        raise ValueError(f"old size must be an integer from 0 to {new_size}, not {old_size!r}")
    if old_size in (0, new_size):
        return []
    node = _node_reader(conn, consistency_nodes(old_size, new_size))
    return consistency_proof(old_size, new_size, node)


def signed_checkpoint(
    conn: Connection, signer: Signer, origin: str | None = None
) -> tuple[Checkpoint, str]:
    """A C2SP checkpoint of the log as it stands, and its signed note's text."""
    size, root_hash = root_at(conn)
    checkpoint = Checkpoint(origin=origin or signer.name, size=size, root=root_hash)
    return checkpoint, sign_checkpoint(checkpoint, signer)
