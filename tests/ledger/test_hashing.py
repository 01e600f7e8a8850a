"""Canonical JSON and the chain's hashes.

``canonical_json`` lets the standard library's encoder write the values it writes as
RFC 8785 does, and the append path joins the metadata's canonical text into the
envelope instead of canonicalising it again: both must give the very bytes
``rfc8785`` gives, or every stored chain and grant would stop verifying."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import rfc8785
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from assay import InvalidMetadata
from assay.ledger import canonical_json, sha256_hex
from assay.ledger._hashing import dedup_key, entry_hash, normalise_metadata

_KEYS = st.text(max_size=6) | st.sampled_from(["a", "é", "\ue000", "\U0001f600", "z\x00"])
_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**60), max_value=2**60)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=3),
    max_leaves=10,
)
_FLOATS = (
    st.floats(allow_nan=True, allow_infinity=True)
    | st.floats(min_value=1e-5, max_value=1e17)
    | st.sampled_from([1e-4, 1e16, 0.1, 1.5, -0.0, 2.0**53, 1e21, 5e-324, 123456789.125])
)
_ODD_KEYS = st.sampled_from(["\ud800", "\uffff", "\U00010000"])
_ANY = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**60), max_value=2**60)
    | _FLOATS
    | st.text(max_size=12)
    | st.sampled_from(["\ud800", "a\udfffb", '\x00\x1f\x7f\u2028"\\/', "\U0001f600\ue000"]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.lists(inner, max_size=3).map(tuple)
        | st.dictionaries(
            _KEYS | st.sampled_from(["\ud800", "\uffff", "\U00010000"]), inner, max_size=3
        )
    ),
    max_leaves=12,
)
_FIELD = st.text(max_size=30) | st.sampled_from(["tool:a@1", '“quoted” \\ "', "\x7f\u2028"])


@settings(max_examples=1500, deadline=None)
@given(value=_ANY)
def test_canonical_json_writes_what_rfc8785_writes(value: object) -> None:
    _same(lambda: _rfc8785(value), lambda: canonical_json(value))


@pytest.mark.parametrize(
    "value",
    [
        {"b": 1, "a": [0.5, None, True, "x"], "\ue000": 1, "\U0001f600": 2},
        [{"k": 1e-4}, {"k": 1e16}, {"k": 1.0}, {"k": -0.0}],
        (1, (2, 3)),
        {1: "int key"},
        {"set": {1}},
        [[[[["deep"]]]]],
    ],
)
def test_canonical_json_at_the_edges(value: object) -> None:
    _same(lambda: _rfc8785(value), lambda: canonical_json(value))


def test_canonical_json_of_deep_and_shared_values() -> None:
    """Past the walk's depth or size, ``rfc8785`` writes the value, as it always did."""
    deep: list[object] = []
    for _ in range(200):
        deep = [deep]
    assert canonical_json(deep) == _rfc8785(deep)
    shared: list[object] = ["leaf"]
    for _ in range(17):
        shared = [shared, shared]  # 131,072 leaves
    assert canonical_json(shared) == _rfc8785(shared)


@settings(max_examples=400, deadline=None)
@given(
    metadata=st.dictionaries(_KEYS, _JSON, max_size=4),
    run_id=_FIELD,
    kind=_FIELD,
    source=_FIELD,
    digest=_FIELD,
    prev=_FIELD,
    seq=st.integers(min_value=-(2**60), max_value=2**60),
)
def test_joined_payloads_hash_as_the_whole_payload_does(
    metadata: dict[str, Any], run_id: str, kind: str, source: str, digest: str, prev: str, seq: int
) -> None:
    try:
        meta, text = normalise_metadata(metadata)
    except InvalidMetadata:
        assume(False)
        return
    common: dict[str, Any] = {
        "run_id": run_id,
        "kind": kind,
        "source": source,
        "content_sha256": digest,
        "metadata": meta,
    }
    whole = {"run_id": run_id, "kind": kind, "source": source, "sha256": digest, "metadata": meta}
    _same(
        lambda: sha256_hex(canonical_json(whole)),
        lambda: dedup_key(**common, metadata_text=text),
        lambda: dedup_key(**common),
    )
    _same(
        lambda: sha256_hex(canonical_json({**whole, "seq": seq, "prev_hash": prev})),
        lambda: entry_hash(**common, seq=seq, prev_hash=prev, metadata_text=text),
        lambda: entry_hash(**common, seq=seq, prev_hash=prev),
    )


def _rfc8785(value: Any) -> bytes:
    """The reference: ``rfc8785`` itself, on any value (it refuses what it cannot write)."""
    return rfc8785.dumps(value)


def _outcome(compute: Callable[[], object]) -> object:
    try:
        return compute()
    except Exception as exc:  # what RFC 8785 refuses, every path must refuse alike
        return type(exc)


def _same(expected: Callable[[], object], *paths: Callable[[], object]) -> None:
    want = _outcome(expected)
    assert [_outcome(path) for path in paths] == [want] * len(paths)


@pytest.mark.parametrize(
    ("run_id", "seq"),
    [("run_\ud800", 1), ("run_a", 2**53), ("run_a", True), ("run_é\U0001f600", 2**53 - 1)],
)
def test_values_json_writes_differently_take_the_full_path(run_id: str, seq: int) -> None:
    meta, text = normalise_metadata({"n": 1.5, "\U0001f600": "x", "\ue000": "y"})
    common: dict[str, Any] = {"kind": "verdict", "source": "s", "content_sha256": "0" * 64}
    whole = {"run_id": run_id, **common, "seq": seq, "prev_hash": "p", "metadata": meta}
    whole["sha256"] = whole.pop("content_sha256")
    _same(
        lambda: sha256_hex(canonical_json(whole)),
        lambda: entry_hash(
            run_id=run_id, **common, seq=seq, prev_hash="p", metadata=meta, metadata_text=text
        ),
    )


@pytest.mark.parametrize("value", [2.0**53, -(2.0**60), [1, {"x": 1e20}]])
def test_metadata_whose_canonical_form_does_not_read_back_is_refused(value: object) -> None:
    """RFC 8785 writes 2.0**53 as integer digits, an integer it then refuses to write:
    such metadata could be stored but never verified, so it is refused up front."""
    with pytest.raises(InvalidMetadata, match="2\\*\\*53"):
        normalise_metadata({"value": value})


def test_metadata_at_the_edge_of_exact_integers_is_kept() -> None:
    assert normalise_metadata({"n": 2**53 - 1, "f": 2.0**52})[0] == {"n": 2**53 - 1, "f": 2**52}
