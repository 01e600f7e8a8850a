"""The ledger's Merkle tree against published RFC 6962 answers and against a second
implementation written here straight from the RFC's recursive definitions.

Every checkpoint the ledger signs and every proof it hands out is only worth something
if an outside verifier (Go's transparency-dev/merkle, a C2SP witness) computes the same
hashes, so the known answers are the ones those projects publish, and the reference
implementation below shares no code with the module: it hashes with hashlib itself and
follows MTH, PATH, PROOF/SUBPROOF and the RFC 9162 §2.1.3.2 / §2.1.4.2 verification
steps line by line."""

from __future__ import annotations

import contextlib
import hashlib
import random
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.errors import InvalidProof
from assay.ledger._merkle import (
    EMPTY_ROOT,
    HASH_SIZE,
    Frontier,
    consistency_nodes,
    consistency_proof,
    inclusion_nodes,
    inclusion_proof,
    leaf_hash,
    node_hash,
    root,
    root_nodes,
    subtrees_ending_at,
    verify_consistency,
    verify_inclusion,
)

# --- known answers ------------------------------------------------------------------------
# From github.com/transparency-dev/merkle, proof/verify_test.go and rfc6962/rfc6962_test.go
# (the same values as google/certificate-transparency's merkle tree tests): the eight
# standard leaf inputs, the roots of the trees of their first 1..8 leaves, and proofs.

KAT_LEAVES = [
    b"",
    b"\x00",
    b"\x10",
    b"\x20\x21",
    b"\x30\x31",
    b"\x40\x41\x42\x43",
    b"\x50\x51\x52\x53\x54\x55\x56\x57",
    b"\x60\x61\x62\x63\x64\x65\x66\x67\x68\x69\x6a\x6b\x6c\x6d\x6e\x6f",
]
KAT_ROOTS = {
    1: "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    2: "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    3: "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    4: "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    5: "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    6: "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    7: "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    8: "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
}
KAT_EMPTY = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
# (index, size, proof); the Go file numbers leaves from 1.
KAT_INCLUSION = [
    (
        0,
        8,
        [
            "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
        ],
    ),
    (
        5,
        8,
        [
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
            "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        ],
    ),
    (2, 3, ["fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125"]),
    (
        1,
        5,
        [
            "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
        ],
    ),
    (0, 1, []),
]
KAT_CONSISTENCY = [
    (1, 1, []),
    (
        1,
        8,
        [
            "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
        ],
    ),
    (
        6,
        8,
        [
            "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
            "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        ],
    ),
    (
        2,
        5,
        [
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
        ],
    ),
    (
        6,
        7,
        [
            "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
            "b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        ],
    ),
]
# A hash that is no node of any tree here (transparency-dev's sha256SomeHash).
SOME_HASH = bytes.fromhex("abacaba000000000000000000000000000000000000000000060061e00123456")


def _h(hexes: Sequence[str]) -> list[bytes]:
    return [bytes.fromhex(x) for x in hexes]


# --- the reference implementation (RFC 6962 §2.1, RFC 9162 §2.1) ----------------------------


def ref_leaf(data: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + data).digest()


def ref_node(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def ref_k(n: int) -> int:
    """The largest power of two smaller than n (n > 1)."""
    k = 1
    while k * 2 < n:
        k *= 2
    return k


class RefTree:
    """MTH, PATH and PROOF over a fixed list of leaf inputs, by the RFC's recursion;
    ``D[lo:hi]`` is the run of leaves lo..hi-1 (memoised, so that proofs for every
    index of every size stay affordable)."""

    def __init__(self, data: Sequence[bytes]) -> None:
        self.data = list(data)
        self.mth = cache(self._mth)

    def _mth(self, lo: int, hi: int) -> bytes:
        n = hi - lo
        if n == 0:
            return hashlib.sha256(b"").digest()
        if n == 1:
            return ref_leaf(self.data[lo])
        k = ref_k(n)
        return ref_node(self.mth(lo, lo + k), self.mth(lo + k, hi))

    def path(self, m: int, lo: int, hi: int) -> list[bytes]:
        n = hi - lo
        if n == 1:
            return []
        k = ref_k(n)
        if m < k:
            return [*self.path(m, lo, lo + k), self.mth(lo + k, hi)]
        return [*self.path(m - k, lo + k, hi), self.mth(lo, lo + k)]

    def proof(self, m: int, n: int) -> list[bytes]:
        if m in (0, n):
            return []
        return self.subproof(m, 0, n, True)

    def subproof(self, m: int, lo: int, hi: int, b: bool) -> list[bytes]:
        n = hi - lo
        if m == n:
            return [] if b else [self.mth(lo, hi)]
        k = ref_k(n)
        if m <= k:
            return [*self.subproof(m, lo, lo + k, b), self.mth(lo + k, hi)]
        return [*self.subproof(m - k, lo + k, hi, False), self.mth(lo, lo + k)]


def ref_verify_inclusion(
    leaf: bytes, index: int, size: int, path: Sequence[bytes], root_hash: bytes
) -> bool:
    """RFC 9162 §2.1.3.2, step by step."""
    if index >= size:
        return False
    fn, sn, r = index, size - 1, leaf
    for p in path:
        if sn == 0:
            return False
        if fn % 2 == 1 or fn == sn:
            r = ref_node(p, r)
            if fn % 2 == 0:
                while not (fn % 2 == 1 or fn == 0):
                    fn //= 2
                    sn //= 2
        else:
            r = ref_node(r, p)
        fn //= 2
        sn //= 2
    return sn == 0 and r == root_hash


def ref_verify_consistency(
    first: int, second: int, first_hash: bytes, second_hash: bytes, path: Sequence[bytes]
) -> bool:
    """RFC 9162 §2.1.4.2, step by step, for 0 < first < second."""
    if not path:
        return False
    path = list(path)
    if first & (first - 1) == 0:
        path.insert(0, first_hash)
    fn, sn = first - 1, second - 1
    if fn % 2 == 1:
        while fn % 2 == 1:
            fn //= 2
            sn //= 2
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            return False
        if fn % 2 == 1 or fn == sn:
            fr = ref_node(c, fr)
            sr = ref_node(c, sr)
            if fn % 2 == 0:
                while not (fn % 2 == 1 or fn == 0):
                    fn //= 2
                    sn //= 2
        else:
            sr = ref_node(sr, c)
        fn //= 2
        sn //= 2
    return fr == first_hash and sr == second_hash and sn == 0


# --- a store built the way the ledger builds it -----------------------------------------


class Store:
    """What the database holds: every hash ``Frontier.append`` returns, at the
    coordinates ``subtrees_ending_at`` gives; ``reads`` records what a proof fetched."""

    def __init__(self, data: Sequence[bytes]) -> None:
        self.frontier = Frontier()
        self.nodes: dict[tuple[int, int], bytes] = {}
        self.reads: list[tuple[int, int]] = []
        self.roots = [self.frontier.root()]
        for i, d in enumerate(data):
            hashes = self.frontier.append(leaf_hash(d))
            coords = subtrees_ending_at(i)
            assert len(hashes) == len(coords)
            for coord, h in zip(coords, hashes, strict=True):
                assert coord not in self.nodes
                self.nodes[coord] = h
            self.roots.append(self.frontier.root())

    def node(self, level: int, index: int) -> bytes:
        self.reads.append((level, index))
        return self.nodes[(level, index)]

    def bounded(self, size: int) -> Callable[[int, int], bytes]:
        """A node reader that fails on any subtree reaching past ``size`` leaves: a
        proof for a tree may not depend on leaves appended after it."""

        def node(level: int, index: int) -> bytes:
            assert (index + 1) << level <= size, (level, index, size)
            return self.node(level, index)

        return node


N = 300
DATA = [f"ledger entry {i}".encode() for i in range(N)]
REF = RefTree(DATA)
STORE = Store(DATA)
KAT_STORE = Store(KAT_LEAVES)


# --- known-answer tests ------------------------------------------------------------------


def test_hash_primitives_match_published_values() -> None:
    assert EMPTY_ROOT.hex() == KAT_EMPTY
    assert (
        leaf_hash(b"").hex() == "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d"
    )
    assert (
        leaf_hash(b"L123456").hex()
        == "395aa064aa4c29f7010acfe3f25db9485bbd4b91897b6ad7ad547639252b4d56"
    )
    assert (
        node_hash(b"N123", b"N456").hex()
        == "aa217fe888e47007fa15edab33c2b492a722cb106c64667fc2b044444de66bbb"
    )
    assert HASH_SIZE == 32


def test_roots_match_published_values() -> None:
    assert Frontier().root().hex() == KAT_EMPTY
    assert root(0, KAT_STORE.bounded(0)).hex() == KAT_EMPTY
    for size, want in KAT_ROOTS.items():
        assert KAT_STORE.roots[size].hex() == want, size
        assert root(size, KAT_STORE.bounded(size)).hex() == want, size


@pytest.mark.parametrize(("index", "size", "proof"), KAT_INCLUSION)
def test_inclusion_proofs_match_published_values(index: int, size: int, proof: list[str]) -> None:
    built = inclusion_proof(index, size, KAT_STORE.bounded(size))
    assert [h.hex() for h in built] == proof
    kat_root = bytes.fromhex(KAT_ROOTS[size])
    verify_inclusion(leaf_hash(KAT_LEAVES[index]), index, size, _h(proof), kat_root)


@pytest.mark.parametrize(("old", "new", "proof"), KAT_CONSISTENCY)
def test_consistency_proofs_match_published_values(old: int, new: int, proof: list[str]) -> None:
    built = consistency_proof(old, new, KAT_STORE.bounded(new))
    assert [h.hex() for h in built] == proof
    old_root, new_root = bytes.fromhex(KAT_ROOTS[old]), bytes.fromhex(KAT_ROOTS[new])
    verify_consistency(old, new, old_root, new_root, _h(proof))


@pytest.mark.parametrize(("index", "size", "proof"), KAT_INCLUSION[:4])
def test_published_inclusion_probes_fail(index: int, size: int, proof: list[str]) -> None:
    """transparency-dev's corruptInclusionProof probes, each of which must fail."""
    path, good_root = _h(proof), bytes.fromhex(KAT_ROOTS[size])
    leaf = leaf_hash(KAT_LEAVES[index])
    probes: list[tuple[Any, Any, Any, Any, Any]] = [
        (leaf, index - 1, size, path, good_root),
        (leaf, index + 1, size, path, good_root),
        (leaf, index ^ 2, size, path, good_root),
        (leaf, index, size * 2, path, good_root),
        (leaf, index, size // 2, path, good_root),
        (b"WrongLeaf", index, size, path, good_root),
        (leaf, index, size, path, EMPTY_ROOT),
        (leaf, index, size, path, SOME_HASH),
        (leaf, index, size, [*path, b""], good_root),
        (leaf, index, size, [*path, good_root], good_root),
        (leaf, index, size, [b"", *path], good_root),
        (leaf, index, size, [good_root, *path], good_root),
        (leaf, index, size, path[:-1], good_root),
        (leaf, index, size, [path[0], SOME_HASH, *path[1:]], good_root),
    ]
    for i in range(len(path)):
        flipped = list(path)
        flipped[i] = bytes([flipped[i][0] ^ 8]) + flipped[i][1:]
        probes.append((leaf, index, size, flipped, good_root))
    for probe in probes:
        with pytest.raises(InvalidProof):
            verify_inclusion(*probe)


@pytest.mark.parametrize(("old", "new", "proof"), KAT_CONSISTENCY[1:])
def test_published_consistency_probes_fail(old: int, new: int, proof: list[str]) -> None:
    """transparency-dev's corruptConsistencyProof probes, each of which must fail."""
    path = _h(proof)
    r1, r2 = bytes.fromhex(KAT_ROOTS[old]), bytes.fromhex(KAT_ROOTS[new])
    probes: list[tuple[Any, Any, Any, Any, Any]] = [
        (old - 1, new, r1, r2, path),
        (old + 1, new, r1, r2, path),
        (old ^ 2, new, r1, r2, path),
        (old, new * 2, r1, r2, path),
        (old, new // 2, r1, r2, path),
        (old, new, b"WrongRoot", r2, path),
        (old, new, r1, b"WrongRoot", path),
        (old, new, r2, r1, path),
        (old, new, r1, r2, []),
        (old, new, r1, r2, [*path, b""]),
        (old, new, r1, r2, [*path, r1]),
        (old, new, r1, r2, [*path, r2]),
        (old, new, r1, r2, [b"", *path]),
        (old, new, r1, r2, [r1, *path]),
        (old, new, r1, r2, [r2, *path]),
        (old, new, r1, r2, [path[0], *path]),
        (old, new, r1, r2, path[:-1]),
    ]
    for i in range(len(path)):
        flipped = list(path)
        flipped[i] = bytes([flipped[i][0] ^ 16]) + flipped[i][1:]
        probes.append((old, new, r1, r2, flipped))
    for probe in probes:
        with pytest.raises(InvalidProof):
            verify_consistency(*probe)


def test_published_edge_cases_of_consistency() -> None:
    """transparency-dev's TestVerifyConsistency table, less its "don't care" roots:
    here a tree of size 0 must have the empty root."""
    verify_consistency(0, 0, EMPTY_ROOT, EMPTY_ROOT, [])
    verify_consistency(0, 1, EMPTY_ROOT, SOME_HASH, [])
    verify_consistency(1, 1, SOME_HASH, SOME_HASH, [])
    failing: list[tuple[int, int, bytes, bytes, list[bytes]]] = [
        (0, 0, EMPTY_ROOT, SOME_HASH, []),
        (1, 1, EMPTY_ROOT, SOME_HASH, []),
        (1, 0, SOME_HASH, SOME_HASH, []),
        (2, 1, SOME_HASH, SOME_HASH, []),
        (1, 2, SOME_HASH, EMPTY_ROOT, []),
        (0, 0, EMPTY_ROOT, EMPTY_ROOT, [EMPTY_ROOT]),
        (0, 1, EMPTY_ROOT, EMPTY_ROOT, [EMPTY_ROOT]),
        (1, 1, EMPTY_ROOT, EMPTY_ROOT, [EMPTY_ROOT]),
        (0, 5, SOME_HASH, SOME_HASH, []),  # a size-0 tree has the empty root
    ]
    for probe in failing:
        with pytest.raises(InvalidProof):
            verify_consistency(*probe)


# --- agreement with the reference --------------------------------------------------------


def test_frontier_root_and_append_agree_with_mth_at_every_size() -> None:
    frontier = Frontier()
    assert frontier.root() == REF.mth(0, 0)
    for i, d in enumerate(DATA):
        hashes = frontier.append(leaf_hash(d))
        assert frontier.size == i + 1
        assert frontier.root() == REF.mth(0, i + 1), i + 1
        # What append returns is MTH of exactly the leaf ranges the coordinates name.
        coords = subtrees_ending_at(i)
        assert [c[0] for c in coords] == list(range(len(coords)))
        for (level, index), h in zip(coords, hashes, strict=True):
            lo, hi = index << level, (index + 1) << level
            assert hi == i + 1
            assert h == REF.mth(lo, hi)
        # ... and every complete subtree ending at leaf i is among them.
        ending = [lv for lv in range(10) if (i + 1) % (1 << lv) == 0]
        assert len(hashes) == len(ending)
        assert root(i + 1, STORE.bounded(i + 1)) == REF.mth(0, i + 1)


def test_root_nodes_are_the_binary_decomposition() -> None:
    assert root_nodes(0) == []
    for size in range(1, N + 1):
        coords = root_nodes(size)
        assert sum(1 << level for level, _ in coords) == size
        assert len(coords) == size.bit_count()
        start = 0
        for level, index in coords:
            assert index << level == start
            start += 1 << level
        frontier = Frontier(size, [STORE.nodes[c] for c in coords])
        assert frontier.root() == REF.mth(0, size)


def test_inclusion_proofs_agree_with_path_for_every_index() -> None:
    for size in range(1, N + 1):
        tree_root = REF.mth(0, size)
        node = STORE.bounded(size)
        for index in range(size):
            want = REF.path(index, 0, size)
            STORE.reads.clear()
            got = inclusion_proof(index, size, node)
            assert got == want, (index, size)
            assert sorted(STORE.reads) == sorted(inclusion_nodes(index, size)), (index, size)
            leaf = ref_leaf(DATA[index])
            assert ref_verify_inclusion(leaf, index, size, got, tree_root)
            verify_inclusion(leaf, index, size, want, tree_root)


def _pairs() -> list[tuple[int, int]]:
    every = [(m, n) for n in range(1, 65) for m in range(0, n + 1)]
    rng = random.Random(6962)
    sampled = []
    for _ in range(3000):
        n = rng.randint(65, N)
        sampled.append((rng.randint(0, n), n))
    return every + sampled


def test_consistency_proofs_agree_with_proof_for_every_pair() -> None:
    for old, new in _pairs():
        want = REF.proof(old, new)
        STORE.reads.clear()
        got = consistency_proof(old, new, STORE.bounded(new))
        assert got == want, (old, new)
        assert sorted(STORE.reads) == sorted(consistency_nodes(old, new)), (old, new)
        old_root, new_root = REF.mth(0, old), REF.mth(0, new)
        if 0 < old < new:
            assert ref_verify_consistency(old, new, old_root, new_root, got)
        verify_consistency(old, new, old_root, new_root, want)


def test_nodes_are_stored_subtrees_and_logarithmic_in_number() -> None:
    rng = random.Random(9162)
    for _ in range(2000):
        size = rng.randint(1, 2**40)
        index = rng.randrange(size)
        old = rng.randint(0, size)
        bound = 2 * size.bit_length()
        for coords in (inclusion_nodes(index, size), consistency_nodes(old, size)):
            assert len(coords) <= bound
            assert len(set(coords)) == len(coords)
            for level, idx in coords:
                assert level >= 0 and idx >= 0
                assert (idx + 1) << level <= size
        assert len(root_nodes(size)) == size.bit_count()


# --- negative tests ------------------------------------------------------------------------


def _tampered(proof: list[bytes], rng: random.Random) -> list[list[bytes]]:
    """Every single-hash replacement and a spread of single-bit flips of ``proof``,
    plus truncations and extensions."""
    out: list[list[bytes]] = []
    for i, h in enumerate(proof):
        for replacement in (SOME_HASH, EMPTY_ROOT, *(p for j, p in enumerate(proof) if j != i)):
            if replacement != h:
                out.append([*proof[:i], replacement, *proof[i + 1 :]])
        for bit in (0, 7, 255, rng.randrange(256)):
            flipped = bytearray(h)
            flipped[bit // 8] ^= 1 << (bit % 8)
            out.append([*proof[:i], bytes(flipped), *proof[i + 1 :]])
    if proof:
        out += [proof[:-1], proof[1:], proof[::-1]] if len(proof) > 1 else [proof[:-1]]
    out += [[*proof, SOME_HASH], [SOME_HASH, *proof], [*proof, proof[-1]] if proof else []]
    return [p for p in out if p != proof]


def test_every_tampered_inclusion_proof_fails() -> None:
    rng = random.Random(1)
    for size in range(1, 41):
        tree_root = REF.mth(0, size)
        for index in range(size):
            leaf = ref_leaf(DATA[index])
            proof = REF.path(index, 0, size)
            for bad in _tampered(proof, rng):
                with pytest.raises(InvalidProof):
                    verify_inclusion(leaf, index, size, bad, tree_root)
            for other_index in range(size):
                if other_index != index:
                    with pytest.raises(InvalidProof):
                        verify_inclusion(leaf, other_index, size, proof, tree_root)
            for other_size in range(index + 1, 2 * size + 2):
                # A claimed size is bound by the root it comes with (a checkpoint signs
                # both), not by the proof: RFC 9162's check accepts a size whose path
                # has the same shape (index 0 of 3 and of 4 leaves, say). The module
                # must accept exactly what the RFC's algorithm accepts.
                want = other_size == size or ref_verify_inclusion(
                    leaf, index, other_size, proof, tree_root
                )
                assert (
                    _accepts(verify_inclusion, leaf, index, other_size, proof, tree_root) == want
                ), (index, size, other_size)
            with pytest.raises(InvalidProof):
                verify_inclusion(ref_leaf(b"another entry"), index, size, proof, tree_root)
            with pytest.raises(InvalidProof):
                verify_inclusion(leaf, index, size, proof, REF.mth(0, size - 1))


def test_every_bit_of_a_proof_matters() -> None:
    size, index = 300, 137
    proof, tree_root, leaf = REF.path(index, 0, size), REF.mth(0, size), ref_leaf(DATA[index])
    old = 137
    cproof, old_root = REF.proof(old, size), REF.mth(0, old)
    for i in range(len(proof)):
        for bit in range(256):
            bad = list(proof)
            bad[i] = (int.from_bytes(bad[i], "big") ^ (1 << bit)).to_bytes(32, "big")
            with pytest.raises(InvalidProof):
                verify_inclusion(leaf, index, size, bad, tree_root)
    for i in range(len(cproof)):
        for bit in range(256):
            bad = list(cproof)
            bad[i] = (int.from_bytes(bad[i], "big") ^ (1 << bit)).to_bytes(32, "big")
            with pytest.raises(InvalidProof):
                verify_consistency(old, size, old_root, tree_root, bad)
    for bit in range(256):
        with pytest.raises(InvalidProof):
            verify_inclusion(_flip(leaf, bit), index, size, proof, tree_root)
        with pytest.raises(InvalidProof):
            verify_inclusion(leaf, index, size, proof, _flip(tree_root, bit))
        with pytest.raises(InvalidProof):
            verify_consistency(old, size, _flip(old_root, bit), tree_root, cproof)
        with pytest.raises(InvalidProof):
            verify_consistency(old, size, old_root, _flip(tree_root, bit), cproof)


def _accepts(verify: Callable[..., None], *args: Any) -> bool:
    try:
        verify(*args)
    except InvalidProof:
        return False
    return True


def _flip(h: bytes, bit: int) -> bytes:
    return (int.from_bytes(h, "big") ^ (1 << bit)).to_bytes(32, "big")


def test_every_tampered_consistency_proof_fails() -> None:
    rng = random.Random(2)
    for new in range(1, 41):
        new_root = REF.mth(0, new)
        for old in range(1, new):
            old_root = REF.mth(0, old)
            proof = REF.proof(old, new)
            for bad in _tampered(proof, rng):
                with pytest.raises(InvalidProof):
                    verify_consistency(old, new, old_root, new_root, bad)
            for other_old in range(0, new + 1):
                if other_old != old:
                    with pytest.raises(InvalidProof):
                        verify_consistency(other_old, new, old_root, new_root, proof)
            for other_new in range(old, 2 * new + 2):
                # As for inclusion: sizes are bound by the roots they come with, and
                # the module accepts exactly what RFC 9162's algorithm accepts.
                want = other_new == new or (
                    other_new > old
                    and ref_verify_consistency(old, other_new, old_root, new_root, proof)
                )
                assert (
                    _accepts(verify_consistency, old, other_new, old_root, new_root, proof) == want
                ), (old, new, other_new)
            with pytest.raises(InvalidProof):
                verify_consistency(old, new, new_root, old_root, proof)
            with pytest.raises(InvalidProof):
                verify_consistency(old, new, REF.mth(0, old - 1), new_root, proof)
            with pytest.raises(InvalidProof):
                verify_consistency(old, new, old_root, REF.mth(0, new - 1), proof)


GOOD_LEAF, GOOD_ROOT = ref_leaf(DATA[5]), REF.mth(0, 9)
GOOD_PATH = REF.path(5, 0, 9)
NOT_HASHES: list[Any] = [
    None,
    "ab" * 32,
    32,
    b"",
    b"\x00" * 31,
    b"\x00" * 33,
    bytearray(31),
    [b"\x00" * 32],
    object(),
    1.5,
]
NOT_SIZES: list[Any] = [True, False, -1, 1.0, "5", None, 2**64, b"5", [5]]
NOT_PROOFS: list[Any] = [
    None,
    b"\x00" * 32,
    "proof",
    GOOD_PATH[0],
    iter(GOOD_PATH),
    {0: GOOD_PATH[0]},
    5,
    [b"\x00" * 32] * 200,
    [*GOOD_PATH[:-1], "00" * 32],
    [*GOOD_PATH[:-1], None],
    [*GOOD_PATH[:-1], GOOD_PATH[-1][:31]],
    [*GOOD_PATH[:-1], GOOD_PATH[-1] + b"\x00"],
]


@pytest.mark.parametrize("bad", NOT_HASHES)
def test_hashes_of_the_wrong_type_or_length_are_invalid_proofs(bad: Any) -> None:
    for call in (
        lambda: verify_inclusion(bad, 5, 9, GOOD_PATH, GOOD_ROOT),
        lambda: verify_inclusion(GOOD_LEAF, 5, 9, GOOD_PATH, bad),
        lambda: verify_consistency(3, 9, bad, GOOD_ROOT, REF.proof(3, 9)),
        lambda: verify_consistency(3, 9, REF.mth(0, 3), bad, REF.proof(3, 9)),
        lambda: verify_consistency(0, 0, bad, bad, []),
    ):
        with pytest.raises(InvalidProof):
            call()


@pytest.mark.parametrize("bad", NOT_SIZES)
def test_sizes_of_the_wrong_type_or_range_are_invalid_proofs(bad: Any) -> None:
    for call in (
        lambda: verify_inclusion(GOOD_LEAF, bad, 9, GOOD_PATH, GOOD_ROOT),
        lambda: verify_inclusion(GOOD_LEAF, 5, bad, GOOD_PATH, GOOD_ROOT),
        lambda: verify_consistency(bad, 9, REF.mth(0, 3), GOOD_ROOT, REF.proof(3, 9)),
        lambda: verify_consistency(3, bad, REF.mth(0, 3), GOOD_ROOT, REF.proof(3, 9)),
    ):
        with pytest.raises(InvalidProof):
            call()


@pytest.mark.parametrize("bad", NOT_PROOFS, ids=range(len(NOT_PROOFS)))
def test_proofs_that_are_not_lists_of_hashes_are_invalid_proofs(bad: Any) -> None:
    with pytest.raises(InvalidProof):
        verify_inclusion(GOOD_LEAF, 5, 9, bad, GOOD_ROOT)
    with pytest.raises(InvalidProof):
        verify_consistency(5, 9, REF.mth(0, 5), GOOD_ROOT, bad)


def test_bytes_like_hashes_are_accepted() -> None:
    """A driver may hand back bytearray or memoryview; the bytes they hold count."""
    path: Any = [bytearray(h) for h in GOOD_PATH]
    leaf: Any = memoryview(GOOD_LEAF)
    root_hash: Any = bytearray(GOOD_ROOT)
    verify_inclusion(leaf, 5, 9, path, root_hash)
    verify_inclusion(GOOD_LEAF, 5, 9, tuple(GOOD_PATH), GOOD_ROOT)


def test_reasons_are_readable() -> None:
    with pytest.raises(InvalidProof) as caught:
        verify_inclusion(GOOD_LEAF, 5, 9, GOOD_PATH[:-1], GOOD_ROOT)
    assert caught.value.reason == (
        f"inclusion proof has {len(GOOD_PATH) - 1} hashes, a tree of size 9 needs "
        f"{len(GOOD_PATH)} for index 5"
    )
    with pytest.raises(InvalidProof) as caught:
        verify_inclusion(GOOD_LEAF, 5, 9, GOOD_PATH, SOME_HASH)
    assert caught.value.reason.startswith("root mismatch")
    assert SOME_HASH.hex()[:16] in caught.value.reason
    with pytest.raises(InvalidProof, match="index 9 is outside a tree of size 9"):
        verify_inclusion(GOOD_LEAF, 9, 9, GOOD_PATH, GOOD_ROOT)
    with pytest.raises(InvalidProof, match="proof hash 1 must be 32 bytes"):
        verify_inclusion(GOOD_LEAF, 5, 9, [GOOD_PATH[0], b"x", *GOOD_PATH[2:]], GOOD_ROOT)
    with pytest.raises(InvalidProof, match="from size 3 to 9 it needs"):
        verify_consistency(3, 9, REF.mth(0, 3), GOOD_ROOT, [])


@settings(max_examples=300, deadline=None)
@given(
    leaf=st.one_of(st.binary(max_size=40), st.none(), st.integers(), st.text(max_size=5)),
    index=st.one_of(st.integers(min_value=-3, max_value=2**65), st.booleans(), st.none()),
    size=st.one_of(st.integers(min_value=-3, max_value=2**65), st.booleans(), st.floats()),
    proof=st.one_of(
        st.lists(st.one_of(st.binary(min_size=30, max_size=34), st.none()), max_size=70),
        st.binary(max_size=64),
        st.none(),
    ),
    roots=st.tuples(st.binary(min_size=31, max_size=33), st.binary(min_size=31, max_size=33)),
)
def test_junk_input_only_ever_raises_invalid_proof(
    leaf: Any, index: Any, size: Any, proof: Any, roots: tuple[bytes, bytes]
) -> None:
    # Junk could, by a fluke of drawing, be a valid proof (leaf == root, size 1):
    # what matters is that nothing but InvalidProof ever comes out.
    with contextlib.suppress(InvalidProof):
        verify_inclusion(leaf, index, size, proof, roots[0])
    with contextlib.suppress(InvalidProof):
        verify_consistency(index, size, roots[0], roots[1], proof)


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_module_and_reference_verifiers_agree_on_random_proofs(data: st.DataObject) -> None:
    size = data.draw(st.integers(min_value=1, max_value=N))
    index = data.draw(st.integers(min_value=0, max_value=size - 1))
    pool = [REF.mth(0, size), *REF.path(index, 0, size), SOME_HASH, ref_leaf(DATA[index])]
    proof = data.draw(st.lists(st.sampled_from(pool), max_size=12))
    claimed = data.draw(st.sampled_from(pool))
    leaf = data.draw(st.sampled_from(pool))
    want = ref_verify_inclusion(leaf, index, size, proof, claimed)
    try:
        verify_inclusion(leaf, index, size, proof, claimed)
        got = True
    except InvalidProof:
        got = False
    assert got == want
    old = data.draw(st.integers(min_value=1, max_value=size))
    cpool = [REF.mth(0, old), REF.mth(0, size), *REF.proof(old, size), SOME_HASH]
    cproof = data.draw(st.lists(st.sampled_from(cpool), max_size=12))
    r1, r2 = data.draw(st.sampled_from(cpool)), data.draw(st.sampled_from(cpool))
    if old == size:
        want = not cproof and r1 == r2
    else:
        want = ref_verify_consistency(old, size, r1, r2, cproof)
    try:
        verify_consistency(old, size, r1, r2, cproof)
        got = True
    except InvalidProof:
        got = False
    assert got == want


# --- building proofs: the caller's mistakes -----------------------------------------------


THREE_FLOAT: Any = 3.0
THREE_STR: Any = "3"


@pytest.mark.parametrize(
    "call",
    [
        lambda: inclusion_proof(3, 3, STORE.node),
        lambda: inclusion_proof(-1, 3, STORE.node),
        lambda: inclusion_proof(0, 0, STORE.node),
        lambda: inclusion_proof(True, 3, STORE.node),
        lambda: inclusion_proof(0, THREE_FLOAT, STORE.node),
        lambda: inclusion_nodes(5, 5),
        lambda: consistency_proof(4, 3, STORE.node),
        lambda: consistency_proof(-1, 3, STORE.node),
        lambda: consistency_proof(1, False, STORE.node),
        lambda: consistency_nodes(2, 1),
        lambda: root(-1, STORE.node),
        lambda: root(THREE_STR, STORE.node),
        lambda: root_nodes(2**64),
        lambda: subtrees_ending_at(-1),
        lambda: subtrees_ending_at(True),
    ],
)
def test_out_of_range_arguments_to_builders_are_value_errors(call: Callable[[], object]) -> None:
    with pytest.raises(ValueError):
        call()


def test_a_store_that_hands_back_a_bad_hash_is_an_invalid_proof() -> None:
    with pytest.raises(InvalidProof, match="stored node"):
        root(5, lambda level, index: b"short")
    with pytest.raises(InvalidProof, match="stored node"):
        inclusion_proof(1, 5, lambda level, index: "00" * 32)  # type: ignore[arg-type, return-value]


# --- the frontier ---------------------------------------------------------------------------


def test_frontier_round_trips_through_bytes_and_copies_independently() -> None:
    frontier = Frontier()
    for d in DATA[:77]:
        frontier.append(leaf_hash(d))
    data = frontier.to_bytes()
    assert len(data) == 32 * (77).bit_count()
    again = Frontier.from_bytes(77, data)
    assert again.size == 77 and again.hashes == frontier.hashes
    assert again.root() == frontier.root() == REF.mth(0, 77)
    assert Frontier(77, frontier.hashes).root() == REF.mth(0, 77)
    clone = frontier.copy()
    clone.append(leaf_hash(DATA[77]))
    assert frontier.size == 77 and frontier.root() == REF.mth(0, 77)
    assert clone.size == 78 and clone.root() == REF.mth(0, 78)
    # Resuming from stored state gives what appending from scratch gives.
    resumed = Frontier.from_bytes(77, data)
    for i in range(77, N):
        assert resumed.append(leaf_hash(DATA[i])) == [STORE.nodes[c] for c in subtrees_ending_at(i)]
    assert resumed.root() == REF.mth(0, N)
    assert Frontier.from_bytes(0, b"").root() == EMPTY_ROOT


@pytest.mark.parametrize(
    ("size", "data"),
    [
        (3, b"\x00" * 32),
        (3, b"\x00" * 96),
        (4, b"\x00" * 31),
        (0, b"\x00" * 32),
        (-1, b""),
        (True, b"\x00" * 32),
        (2**64, b""),
        (1, "00" * 32),
        (1, None),
    ],
)
def test_frontier_refuses_inconsistent_stored_state(size: Any, data: Any) -> None:
    with pytest.raises(InvalidProof):
        Frontier.from_bytes(size, data)


def test_frontier_constructor_refuses_inconsistent_state() -> None:
    for size, hashes in [(1, []), (2, [b"\x00" * 32, b"\x00" * 32]), (1, [b"x"]), (1, b"x" * 32)]:
        with pytest.raises(InvalidProof):
            Frontier(size, hashes)  # type: ignore[arg-type]


@pytest.mark.parametrize("leaf", [b"", b"\x00" * 31, b"\x00" * 33, "00" * 32, None, bytearray(32)])
def test_frontier_append_refuses_what_is_not_a_leaf_hash(leaf: Any) -> None:
    frontier = Frontier()
    with pytest.raises(ValueError):
        frontier.append(leaf)
    assert frontier.size == 0 and frontier.root() == EMPTY_ROOT


def test_subtrees_ending_at_large_indices() -> None:
    assert subtrees_ending_at(0) == [(0, 0)]
    assert subtrees_ending_at(6) == [(0, 6)]
    assert subtrees_ending_at(7) == [(0, 7), (1, 3), (2, 1), (3, 0)]
    assert subtrees_ending_at(2**40 - 1)[-1] == (40, 0)
    assert subtrees_ending_at(2**40 + 2**39 - 1)[-1] == (39, 2)


# --- cost -----------------------------------------------------------------------------------


def test_append_and_proofs_stay_logarithmic() -> None:
    """The ledger appends a leaf on every entry and builds proofs on demand: an append
    computes only the subtrees it completes (two on average), and a proof reads
    O(log n) stored nodes. Counted, not timed (timings belong in benchmarks/)."""
    frontier = Frontier()
    made = 0
    for i in range(4096):
        made += len(frontier.append(hashlib.sha256(i.to_bytes(8, "big")).digest()))
    assert made == 2 * 4096 - 1  # every complete subtree of a 4096-leaf tree, once

    reads: list[tuple[int, int]] = []

    def node(level: int, index: int) -> bytes:
        reads.append((level, index))
        return hashlib.sha256(f"{level}/{index}".encode()).digest()

    size = 1_000_003
    bound = 2 * (size.bit_length() + 1)
    for index in range(0, size, size // 200):
        reads.clear()
        inclusion_proof(index, size, node)
        assert len(reads) <= bound
        reads.clear()
        consistency_proof(index + 1, size, node)
        assert len(reads) <= bound
