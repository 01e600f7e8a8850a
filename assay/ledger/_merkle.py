"""The ledger's Merkle tree: RFC 6962 / RFC 9162 §2.1 hashing, proofs and their checks.

The tree is the one Certificate Transparency and every C2SP transparency log use, so
a checkpoint of the ledger can be checked by any tool that checks theirs::

    leaf_hash(d)    = SHA-256(0x00 || d)
    node_hash(l, r) = SHA-256(0x01 || l || r)
    MTH([])         = SHA-256("")
    MTH(D[n])       = node_hash(MTH(D[0:k]), MTH(D[k:n]))   k = largest power of 2 < n

Storage is described by *complete subtrees*: ``(level, index)`` names the subtree of
``2**level`` leaves covering leaves ``[index * 2**level, (index + 1) * 2**level)``;
level 0 is the leaf hash itself. Those hashes never change once written, so the
database stores exactly them (:func:`subtrees_ending_at` says which ones each new leaf
completes, :meth:`Frontier.append` computes them) and every root and proof is built
from a handful of them: :func:`root_nodes`, :func:`inclusion_nodes` and
:func:`consistency_nodes` name the ``O(log n)`` coordinates needed, so that one query
can fetch them all, and :func:`root`, :func:`inclusion_proof` and
:func:`consistency_proof` combine them. A subtree on the right edge of a tree whose
size is not a power of two is never stored; its hash is folded from the complete
subtrees it splits into.

Errors: building a proof with out-of-range or non-integer sizes is the caller's
mistake and raises :class:`ValueError`; anything that fails to *verify*, including
proofs, hashes and sizes of the wrong type or shape, raises
:class:`~assay.errors.InvalidProof` with a reason, as do stored hashes that are not
32 bytes long (a broken store is a run-time failure, not a usage mistake).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

from assay.errors import InvalidProof

__all__ = [
    "EMPTY_ROOT",
    "HASH_SIZE",
    "MAX_TREE_SIZE",
    "Frontier",
    "consistency_nodes",
    "consistency_proof",
    "inclusion_nodes",
    "inclusion_proof",
    "leaf_hash",
    "node_hash",
    "root",
    "root_nodes",
    "subtrees_ending_at",
    "verify_consistency",
    "verify_inclusion",
]

#: The size of every hash in the tree (SHA-256).
HASH_SIZE = 32
#: The root of the empty tree, SHA-256 of the empty string (RFC 9162 §2.1.1).
EMPTY_ROOT = hashlib.sha256(b"").digest()
#: Tree sizes are unsigned 64-bit numbers in RFC 9162 and in every checkpoint reader.
MAX_TREE_SIZE = 2**64 - 1

#: Where a stored complete-subtree hash comes from: ``node(level, index)``.
NodeReader = Callable[[int, int], bytes]
#: A run of leaves ``[start, end)`` whose hash a proof carries.
_Range = tuple[int, int]
Coord = tuple[int, int]

_sha256 = hashlib.sha256


def leaf_hash(data: bytes) -> bytes:
    """RFC 6962 leaf hash, ``SHA-256(0x00 || data)``; the prefix keeps a leaf from
    ever hashing like an interior node (second-preimage resistance)."""
    return _sha256(b"\x00" + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    """RFC 6962 interior node hash, ``SHA-256(0x01 || left || right)``.

    No length checks: this is the primitive every other function here calls in its
    inner loop, and the functions that take hashes from outside check them first."""
    return _sha256(b"\x01" + left + right).digest()


# --- the compact range kept in memory for appending -----------------------------------


class Frontier:
    """The compact range of a tree: the hashes of the complete subtrees that the binary
    decomposition of ``size`` splits the tree into, largest (leftmost) first.

    It is all an appender needs: adding a leaf merges the trailing subtrees of equal
    size, one hash per merge, so an append costs one hash amortised and reads nothing
    from the database, and the root folds the ``popcount(size)`` hashes right to left.
    Stored state that does not describe a frontier (a size that is not a tree size,
    a hash count other than ``popcount(size)``, a hash that is not 32 bytes) raises
    :class:`~assay.errors.InvalidProof`: it is a broken store, not a usage mistake.
    """

    __slots__ = ("_hashes", "_root", "_size")

    def __init__(self, size: int = 0, hashes: Sequence[bytes] = ()) -> None:
        _given_size(size, "a frontier's size")
        if isinstance(hashes, (str, bytes, bytearray, memoryview)) or not isinstance(
            hashes, Sequence
        ):
            raise InvalidProof(
                f"a frontier's hashes must be a sequence of hashes, got {type(hashes).__name__}"
            )
        want = size.bit_count()
        if len(hashes) != want:
            raise InvalidProof(
                f"a frontier of size {size} has {want} subtree hashes, "
                f"the stored state has {len(hashes)}"
            )
        self._hashes: list[bytes] = [
            _stored_hash(h, f"frontier hash {i}") for i, h in enumerate(hashes)
        ]
        self._size = size
        self._root: bytes | None = None

    @classmethod
    def from_bytes(cls, size: int, data: bytes) -> Frontier:
        """The frontier that :meth:`to_bytes` wrote: its hashes, concatenated."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise InvalidProof(f"a stored frontier must be bytes, got {type(data).__name__}")
        raw = bytes(data)
        if len(raw) % HASH_SIZE:
            raise InvalidProof(
                f"a stored frontier is {len(raw)} bytes, not a multiple of {HASH_SIZE}"
            )
        hashes = [raw[i : i + HASH_SIZE] for i in range(0, len(raw), HASH_SIZE)]
        return cls(size, hashes)

    @property
    def size(self) -> int:
        """The number of leaves appended so far."""
        return self._size

    @property
    def hashes(self) -> tuple[bytes, ...]:
        """The complete-subtree hashes, largest (leftmost) first."""
        return tuple(self._hashes)

    def to_bytes(self) -> bytes:
        """The hashes concatenated, for storage next to the size."""
        return b"".join(self._hashes)

    def copy(self) -> Frontier:
        """An independent copy (to try appends that a failed transaction may undo)."""
        clone = Frontier.__new__(Frontier)
        clone._hashes = list(self._hashes)
        clone._size = self._size
        clone._root = self._root
        return clone

    def append(self, leaf: bytes) -> list[bytes]:
        """Add one leaf hash; return the hashes of every complete subtree that ends at
        the new leaf, level 0 (the leaf itself) first: what the database stores for it,
        at the coordinates :func:`subtrees_ending_at` gives for its index.

        A leaf that is not 32 bytes is the caller's mistake (:class:`ValueError`).
        """
        if type(leaf) is not bytes or len(leaf) != HASH_SIZE:
            raise ValueError(f"a leaf hash must be {HASH_SIZE} bytes, got {_describe(leaf)}")
        size = self._size
        if size >= MAX_TREE_SIZE:
            raise ValueError(f"the tree is full ({MAX_TREE_SIZE} leaves)")
        hashes = self._hashes
        completed = [leaf]
        merged = leaf
        # Each trailing 1 bit of the old size is a subtree of the new leaf's size that
        # now has a right sibling: merge them, one level up each time.
        while size & 1:
            merged = _sha256(b"\x01" + hashes.pop() + merged).digest()
            completed.append(merged)
            size >>= 1
        hashes.append(merged)
        self._size += 1
        self._root = None
        return completed

    def root(self) -> bytes:
        """The tree head: :data:`EMPTY_ROOT` for no leaves, else MTH, which for an
        incomplete tree folds the frontier right to left (the right edge nests)."""
        if self._root is None:
            hashes = self._hashes
            if not hashes:
                self._root = EMPTY_ROOT
            else:
                acc = hashes[-1]
                for h in reversed(hashes[:-1]):
                    acc = _sha256(b"\x01" + h + acc).digest()
                self._root = acc
        return self._root

    def __repr__(self) -> str:
        return f"Frontier(size={self._size}, root={self.root().hex()[:16]}…)"


# --- which stored subtrees a root or proof needs -------------------------------------


def subtrees_ending_at(leaf_index: int) -> list[Coord]:
    """The coordinates of the complete subtrees whose last leaf is ``leaf_index``,
    level 0 first: the same ones, in the same order, that :meth:`Frontier.append`
    returns hashes for when that leaf is appended."""
    _check_size_arg("leaf_index", leaf_index)
    if leaf_index >= MAX_TREE_SIZE:
        raise ValueError(f"leaf_index must be below {MAX_TREE_SIZE}, got {leaf_index}")
    # A subtree of 2**k leaves ends at leaf i exactly when the low k bits of i are all 1.
    count = (leaf_index ^ (leaf_index + 1)).bit_length()  # trailing ones + 1
    return [(level, leaf_index >> level) for level in range(count)]


def root_nodes(size: int) -> list[Coord]:
    """The complete subtrees whose hashes :func:`root` folds for a tree of ``size``
    leaves, leftmost (largest) first; none for the empty tree."""
    _check_size_arg("size", size)
    return _split(0, size)


def inclusion_nodes(index: int, size: int) -> list[Coord]:
    """Every stored subtree :func:`inclusion_proof` reads for ``(index, size)``."""
    _check_index(index, size)
    return [coord for lo, hi in _inclusion_ranges(index, size) for coord in _split(lo, hi)]


def consistency_nodes(old_size: int, new_size: int) -> list[Coord]:
    """Every stored subtree :func:`consistency_proof` reads for ``(old_size, new_size)``."""
    _check_sizes(old_size, new_size)
    ranges = _consistency_ranges(old_size, new_size)
    return [coord for lo, hi in ranges for coord in _split(lo, hi)]


# --- building proofs from stored subtrees ----------------------------------------------


def root(size: int, node: NodeReader) -> bytes:
    """MTH of the first ``size`` leaves, from the stored complete subtrees."""
    _check_size_arg("size", size)
    if size == 0:
        return EMPTY_ROOT
    return _range_hash(0, size, node)


def inclusion_proof(index: int, size: int, node: NodeReader) -> list[bytes]:
    """The audit path of leaf ``index`` in the tree of ``size`` leaves, RFC 9162
    §2.1.3.1 PATH: sibling hashes from the leaf's level up to the root's children."""
    _check_index(index, size)
    return [_range_hash(lo, hi, node) for lo, hi in _inclusion_ranges(index, size)]


def consistency_proof(old_size: int, new_size: int, node: NodeReader) -> list[bytes]:
    """The proof that the tree of ``new_size`` leaves extends the one of ``old_size``,
    RFC 9162 §2.1.4.1 PROOF/SUBPROOF; empty when ``old_size`` is 0 or ``new_size``."""
    _check_sizes(old_size, new_size)
    return [_range_hash(lo, hi, node) for lo, hi in _consistency_ranges(old_size, new_size)]


def _inclusion_ranges(index: int, size: int) -> list[_Range]:
    """The leaf ranges whose hashes make up PATH(index, D[size]), leaf level first.

    PATH(m, D[n]) = PATH(m, D[0:k]) : MTH(D[k:n]) when m < k, else
    PATH(m - k, D[k:n]) : MTH(D[0:k]); walking down from the root collects the
    siblings outermost first, so the list is reversed at the end.
    """
    lo, hi = 0, size
    siblings: list[_Range] = []
    while hi - lo > 1:
        k = _split_point(hi - lo)
        if index < lo + k:
            siblings.append((lo + k, hi))
            hi = lo + k
        else:
            siblings.append((lo, lo + k))
            lo += k
    siblings.reverse()
    return siblings


def _consistency_ranges(old_size: int, new_size: int) -> list[_Range]:
    """The leaf ranges whose hashes make up PROOF(old_size, D[new_size]).

    SUBPROOF(m, D[n], b): m == n gives [] when b, else [MTH(D[n])]; otherwise with k
    the split point, m <= k gives SUBPROOF(m, D[0:k], b) : MTH(D[k:n]) and m > k gives
    SUBPROOF(m - k, D[k:n], false) : MTH(D[0:k]).
    """
    if old_size in (0, new_size):
        return []
    lo, hi = 0, new_size
    whole = True  # b: the subtree is the whole old tree, whose root the verifier has
    collected: list[_Range] = []
    while old_size != hi:
        k = _split_point(hi - lo)
        if old_size - lo <= k:
            collected.append((lo + k, hi))
            hi = lo + k
        else:
            collected.append((lo, lo + k))
            lo += k
            whole = False
    if not whole:
        collected.append((lo, hi))
    collected.reverse()
    return collected


def _split(lo: int, hi: int) -> list[Coord]:
    """The complete subtrees that leaves ``[lo, hi)`` split into, largest first.

    Every range a proof names starts at a multiple of the largest power of two not
    above its length, so each piece is aligned and hence a stored subtree."""
    coords: list[Coord] = []
    remaining = hi - lo
    pos = lo
    while remaining:
        level = remaining.bit_length() - 1
        coords.append((level, pos >> level))
        pos += 1 << level
        remaining -= 1 << level
    return coords


def _range_hash(lo: int, hi: int, node: NodeReader) -> bytes:
    """MTH of leaves ``[lo, hi)``: one stored subtree when complete, else the fold of
    its pieces right to left (the right edge of an incomplete tree nests)."""
    coords = _split(lo, hi)
    acc = b""
    for level, index in reversed(coords):
        h = node(level, index)
        if type(h) is not bytes or len(h) != HASH_SIZE:
            h = _stored_hash(h, f"stored node {(level, index)}")
        acc = h if not acc else _sha256(b"\x01" + h + acc).digest()
    return acc


def _split_point(n: int) -> int:
    """The largest power of two strictly below ``n`` (n >= 2): RFC 6962's ``k``."""
    return 1 << ((n - 1).bit_length() - 1)


# --- verifying proofs --------------------------------------------------------------------


def verify_inclusion(
    leaf: bytes, index: int, size: int, proof: Sequence[bytes], root: bytes
) -> None:
    """Check that ``leaf`` (a leaf hash) is leaf ``index`` of the tree of ``size``
    leaves whose head is ``root``, RFC 9162 §2.1.3.2. Returns nothing; anything that
    does not verify raises :class:`~assay.errors.InvalidProof` saying why."""
    leaf_h = _given_hash(leaf, "the leaf hash")
    root_h = _given_hash(root, "the root")
    _given_size(index, "the leaf index")
    _given_size(size, "the tree size")
    if index >= size:
        raise InvalidProof(f"leaf index {index} is outside a tree of size {size}")
    path = _given_proof(proof)
    want = _inclusion_length(index, size)
    if len(path) != want:
        raise InvalidProof(
            f"inclusion proof has {len(path)} hashes, a tree of size {size} needs {want} "
            f"for index {index}"
        )
    fn, sn, r = index, size - 1, leaf_h
    for p in path:
        if sn == 0:  # pragma: no cover - the length check above makes this unreachable
            raise InvalidProof("inclusion proof is longer than the path to the root")
        if fn & 1 or fn == sn:
            r = _sha256(b"\x01" + p + r).digest()
            if not fn & 1:
                while fn and not fn & 1:
                    fn >>= 1
                    sn >>= 1
        else:
            r = _sha256(b"\x01" + r + p).digest()
        fn >>= 1
        sn >>= 1
    if sn != 0:  # pragma: no cover - ditto
        raise InvalidProof("inclusion proof is shorter than the path to the root")
    if r != root_h:
        raise InvalidProof(
            f"root mismatch: the inclusion proof leads to {_short(r)}, "
            f"the tree head says {_short(root_h)}"
        )


def verify_consistency(
    old_size: int, new_size: int, old_root: bytes, new_root: bytes, proof: Sequence[bytes]
) -> None:
    """Check that the tree of ``new_size`` leaves with head ``new_root`` extends the
    tree of ``old_size`` leaves with head ``old_root``, RFC 9162 §2.1.4.2.

    Equal sizes need an empty proof and equal roots; an old size of 0 needs an empty
    proof and the empty tree's root (any later tree extends the empty one).
    Anything that does not verify raises :class:`~assay.errors.InvalidProof`.
    """
    old_h = _given_hash(old_root, "the old root")
    new_h = _given_hash(new_root, "the new root")
    _given_size(old_size, "the old tree size")
    _given_size(new_size, "the new tree size")
    path = _given_proof(proof)
    if old_size > new_size:
        raise InvalidProof(f"the old tree size {old_size} is larger than the new one {new_size}")
    if old_size == 0 or old_size == new_size:
        if path:
            raise InvalidProof(
                f"consistency proof has {len(path)} hashes, from size {old_size} to "
                f"{new_size} it must be empty"
            )
        if old_size == 0 and old_h != EMPTY_ROOT:
            raise InvalidProof(
                f"a tree of size 0 has root {_short(EMPTY_ROOT)}, not {_short(old_h)}"
            )
        if old_size == new_size and old_h != new_h:
            raise InvalidProof(
                f"root mismatch: two trees of size {new_size} with different roots "
                f"{_short(old_h)} and {_short(new_h)}"
            )
        return
    want = len(_consistency_ranges(old_size, new_size))
    if len(path) != want:
        raise InvalidProof(
            f"consistency proof has {len(path)} hashes, from size {old_size} to "
            f"{new_size} it needs {want}"
        )
    _check_consistency_path(old_size, new_size, old_h, new_h, path)


def _check_consistency_path(
    old_size: int, new_size: int, old_h: bytes, new_h: bytes, path: list[bytes]
) -> None:
    """RFC 9162 §2.1.4.2 steps 2-7 on a proof of the right length."""
    if old_size & (old_size - 1) == 0:  # a power of two: the old root is a proof node
        path = [old_h, *path]
    fn, sn = old_size - 1, new_size - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:  # pragma: no cover - the length check makes this unreachable
            raise InvalidProof("consistency proof is longer than the path to the root")
        if fn & 1 or fn == sn:
            fr = _sha256(b"\x01" + c + fr).digest()
            sr = _sha256(b"\x01" + c + sr).digest()
            if not fn & 1:
                while fn and not fn & 1:
                    fn >>= 1
                    sn >>= 1
        else:
            sr = _sha256(b"\x01" + sr + c).digest()
        fn >>= 1
        sn >>= 1
    if sn != 0:  # pragma: no cover - ditto
        raise InvalidProof("consistency proof is shorter than the path to the root")
    if fr != old_h:
        raise InvalidProof(
            f"root mismatch: the consistency proof leads to old root {_short(fr)}, "
            f"the old tree head says {_short(old_h)}"
        )
    if sr != new_h:
        raise InvalidProof(
            f"root mismatch: the consistency proof leads to new root {_short(sr)}, "
            f"the new tree head says {_short(new_h)}"
        )


def _inclusion_length(index: int, size: int) -> int:
    """len(PATH(index, D[size])) without building it."""
    return len(_inclusion_ranges(index, size))


# --- argument checks ---------------------------------------------------------------------


def _check_size_arg(name: str, value: object) -> None:
    if type(value) is not int:
        raise ValueError(f"{name} must be an int, got {_describe(value)}")
    if not 0 <= value <= MAX_TREE_SIZE:
        raise ValueError(f"{name} must be between 0 and {MAX_TREE_SIZE}, got {value}")


def _check_index(index: int, size: int) -> None:
    _check_size_arg("index", index)
    _check_size_arg("size", size)
    if index >= size:
        raise ValueError(f"index {index} is outside a tree of size {size}")


def _check_sizes(old_size: int, new_size: int) -> None:
    _check_size_arg("old_size", old_size)
    _check_size_arg("new_size", new_size)
    if old_size > new_size:
        raise ValueError(f"old_size {old_size} is larger than new_size {new_size}")


def _given_size(value: object, what: str) -> None:
    if type(value) is not int:
        raise InvalidProof(f"{what} must be an integer, got {_describe(value)}")
    if not 0 <= value <= MAX_TREE_SIZE:
        raise InvalidProof(f"{what} must be between 0 and {MAX_TREE_SIZE}, got {value}")


def _given_hash(value: object, what: str) -> bytes:
    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise InvalidProof(f"{what} must be {HASH_SIZE} bytes, got {_describe(value)}")
    raw = bytes(value)
    if len(raw) != HASH_SIZE:
        raise InvalidProof(f"{what} must be {HASH_SIZE} bytes, got {len(raw)} bytes")
    return raw


def _given_proof(proof: object) -> list[bytes]:
    if isinstance(proof, (str, bytes, bytearray, memoryview)) or not isinstance(proof, Sequence):
        raise InvalidProof(f"a proof must be a sequence of hashes, got {_describe(proof)}")
    if len(proof) > 2 * 64:  # no proof in a tree of at most 2**64 leaves is longer
        raise InvalidProof(f"a proof of {len(proof)} hashes is longer than any tree needs")
    hashes = list(proof)
    for i, h in enumerate(hashes):
        if type(h) is not bytes or len(h) != HASH_SIZE:
            hashes[i] = _given_hash(h, f"proof hash {i}")
    return hashes


def _stored_hash(value: object, what: str) -> bytes:
    if type(value) is bytes and len(value) == HASH_SIZE:
        return value
    if isinstance(value, (bytearray, memoryview)) and len(value) == HASH_SIZE:
        return bytes(value)
    raise InvalidProof(f"{what} is not a {HASH_SIZE}-byte hash: {_describe(value)}")


def _describe(value: object) -> str:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return f"{type(value).__name__} of length {len(value)}"
    if isinstance(value, bool):
        return f"bool {value}"
    return type(value).__name__


def _short(h: bytes) -> str:
    return h.hex()[:16] + "…"
