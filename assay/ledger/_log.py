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
import shlex
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from assay._db import DriverStatement
from assay.errors import InvalidKey, InvalidProof, UnknownEntry
from assay.ledger import _tables as t
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
from assay.ledger._signed_checkpoint import Checkpoint, CheckpointVerifier, Signer, sign_checkpoint

#: The signing key's text (``PRIVATE+KEY+name+id+key``); never read as a path.
KEY_ENV = "ASSAY_LEDGER_KEY"
#: The path of a file holding the signing key; never read as the key's text.
KEY_FILE_ENV = "ASSAY_LEDGER_KEY_FILE"
#: ``1`` lets a signing key file that group or others may open be used all the same.
ALLOW_INSECURE_KEY_FILE_ENV = "ASSAY_ALLOW_INSECURE_KEY_FILE"
#: The largest key file read: a key is about a hundred bytes.
MAX_KEY_FILE_BYTES = 64 * 1024
_PRIVATE_PREFIX = "PRIVATE+KEY+"

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
    """The checkpoint signing key: ``key`` (a :class:`Signer`; a str beginning
    ``PRIVATE+KEY+``, the key's text; any other str or an :class:`os.PathLike`, a file
    holding it), else ``ASSAY_LEDGER_KEY`` (the text) or ``ASSAY_LEDGER_KEY_FILE`` (a
    file), never both. :class:`~assay.errors.InvalidKey` when there is none or it
    cannot be read; make one with ``assay ledger keygen``.

    A key file that group or others may open is refused, as ssh refuses one: the key
    signs the log's history, and whoever can read it can sign a rewritten one. Set
    ``ASSAY_ALLOW_INSECURE_KEY_FILE=1`` to use such a file all the same."""
    if isinstance(key, Signer):
        return key
    if key is None:
        return _signer_from_env()
    if isinstance(key, str) and key.strip().startswith(_PRIVATE_PREFIX):
        return Signer.from_text(key.strip())
    if not isinstance(key, str | os.PathLike):
        raise InvalidKey(
            f"a signing key is its text (str), a file (os.PathLike) or a Signer, "
            f"got {type(key).__name__}"
        )
    return Signer.from_text(_read_key_file(Path(key), "signing key", private=True))


def _signer_from_env() -> Signer:
    text = os.environ.get(KEY_ENV, "").strip()
    path = os.environ.get(KEY_FILE_ENV, "")
    if text and path:
        raise InvalidKey(
            f"both {KEY_ENV} (the key's text) and {KEY_FILE_ENV} (a file) are set: "
            "unset one, so that which key signs is not a matter of precedence"
        )
    if text:
        try:
            return Signer.from_text(text)
        except InvalidKey as exc:  # its messages never quote the key
            raise InvalidKey(
                f"{KEY_ENV} holds the key's text, not a path ({KEY_FILE_ENV} names a file): {exc}"
            ) from None
    if not path:
        raise InvalidKey(
            f"no checkpoint signing key: set {KEY_ENV} to the key's text or "
            f"{KEY_FILE_ENV} to a file holding it (make one with `assay ledger keygen`)"
        )
    return Signer.from_text(_read_key_file(Path(path), "signing key", private=True))


def load_verifier(key: str | os.PathLike[str] | CheckpointVerifier) -> CheckpointVerifier:
    """A verifier key: a :class:`CheckpointVerifier`, its text (``name+id+key``, a str) or a file
    holding it (an :class:`os.PathLike` such as :class:`pathlib.Path`).

    A str is never read as a path: a key name such as ``example.org/ledger`` is also a
    relative path, so a file planted under the key's text, holding another key of the
    same name, would otherwise stand in for the log's key."""
    if isinstance(key, CheckpointVerifier):
        return key
    if isinstance(key, str):
        return CheckpointVerifier.from_text(key.strip())
    if not isinstance(key, os.PathLike):
        raise InvalidKey(
            f"a verifier key is its text (str), a file (os.PathLike) or a CheckpointVerifier, "
            f"got {type(key).__name__}"
        )
    return CheckpointVerifier.from_text(_read_key_file(Path(key), "verifier key", private=False))


def _read_key_file(path: Path, what: str, *, private: bool) -> str:
    """The text of a key file, stripped. It must be a regular file of at most
    :data:`MAX_KEY_FILE_BYTES`; a ``private`` one must be open to its owner alone
    (checked on the opened file, so a swap after the check changes nothing)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as handle:
            mode = os.fstat(handle.fileno()).st_mode
            if not stat.S_ISREG(mode):
                raise InvalidKey(f"the {what} file {str(path)!r} is not a regular file")
            if private:
                _check_private(path, what, stat.S_IMODE(mode))
            data = handle.read(MAX_KEY_FILE_BYTES + 1)
    except OSError as exc:
        raise InvalidKey(f"cannot read the {what} file {str(path)!r}: {exc.strerror}") from None
    if len(data) > MAX_KEY_FILE_BYTES:
        raise InvalidKey(f"the {what} file {str(path)!r} is too large to hold a key")
    try:
        return data.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise InvalidKey(f"the {what} file {str(path)!r} is not UTF-8 text") from None


def _check_private(path: Path, what: str, mode: int) -> None:
    """Refuse a file whose mode lets group or others open it (POSIX only), unless
    ``ASSAY_ALLOW_INSECURE_KEY_FILE=1``."""
    if os.name != "posix" or not mode & 0o077:
        return
    if os.environ.get(ALLOW_INSECURE_KEY_FILE_ENV) == "1":
        return
    raise InvalidKey(
        f"the {what} file {str(path)!r} is open to group or others (mode {mode:04o}): "
        f"run `chmod 600 {shlex.quote(str(path))}`, or set {ALLOW_INSECURE_KEY_FILE_ENV}=1 "
        "to use it anyway"
    )


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
