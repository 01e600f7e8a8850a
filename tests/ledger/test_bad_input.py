"""Bad input to the ledger raises the ledger's own documented errors, before any write.

Lone surrogates (in content, sources, metadata keys and values), NUL and other
control characters, metadata nested thousands deep or containing itself, a kind
that is not a string, and fields over their one size limit each: every one is a
``UsageError`` subclass on both engines, and neither the chain nor the run list
changes.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assay import (
    ContentTooLarge,
    ControlPlane,
    InvalidEntry,
    InvalidMetadata,
    UnknownEntry,
    UnknownKind,
    UnknownRun,
)
from assay.ledger import Ledger


def _nested(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = {"k": value}
    return value


def _looped() -> dict[str, Any]:
    value: dict[str, Any] = {}
    value["self"] = value
    return value


GOOD: dict[str, Any] = {"kind": "retrieval", "source": "letter.md", "content": "caps at EUR 380"}


def _good(**change: Any) -> dict[str, Any]:
    return {**GOOD, **change}


@pytest.mark.parametrize(
    ("change", "error"),
    [
        ({"content": "caps \ud800 at"}, InvalidEntry),
        ({"source": "letter\udfff.md"}, InvalidEntry),
        ({"source": "letter.md\x00"}, InvalidEntry),
        ({"source": "s" * 5_000_000}, InvalidEntry),
        ({"source": "   "}, InvalidEntry),
        ({"source": None}, InvalidEntry),
        ({"kind": ["retrieval"]}, UnknownKind),
        ({"kind": None}, UnknownKind),
        ({"kind": {"retrieval": 1}}, UnknownKind),
        ({"metadata": {"deep": _nested(5_000)}}, InvalidMetadata),
        ({"metadata": {"deep": _nested(100_000)}}, InvalidMetadata),
        ({"metadata": _looped()}, InvalidMetadata),
        ({"metadata": {"k\ud800": 1}}, InvalidMetadata),
        ({"metadata": {"a": [{"b": {"\udc00": 1}}]}}, InvalidMetadata),
        ({"metadata": {"a": ["ok", "x\ud800"]}}, InvalidMetadata),
        ({"metadata": {"big": "x" * 50_000_000}}, InvalidMetadata),
        ({"metadata": {"many": ["x" * 100] * 1_000}}, InvalidMetadata),
        ({"metadata": {1: "non-string key"}}, InvalidMetadata),
    ],
    ids=[
        "content-surrogate",
        "source-surrogate",
        "source-nul",
        "source-5MB",
        "source-blank",
        "source-none",
        "kind-list",
        "kind-none",
        "kind-dict",
        "metadata-5000-deep",
        "metadata-100000-deep",
        "metadata-self",
        "metadata-surrogate-key",
        "metadata-nested-surrogate-key",
        "metadata-surrogate-value",
        "metadata-50MB",
        "metadata-100KB",
        "metadata-int-key",
    ],
)
def test_bad_fields_raise_documented_errors_before_any_write(
    plane: ControlPlane, change: dict[str, Any], error: type[Exception]
) -> None:
    run = plane.ledger.start_run()
    with pytest.raises(error):
        plane.ledger.append(run, **_good(**change))
    assert plane.ledger.run(run).head_seq == 0 and plane.ledger.entries(run) == []


@pytest.mark.parametrize(
    "run_id",
    ["run_\ud800", "run_\x00", "r" * 100_000, None, 7, ["run"]],
    ids=["surrogate", "nul", "long", "none", "int", "list"],
)
def test_a_run_id_no_run_can_have_is_an_unknown_run(plane: ControlPlane, run_id: Any) -> None:
    with pytest.raises(UnknownRun):
        plane.ledger.append(run_id, **GOOD)
    with pytest.raises(UnknownRun):
        plane.ledger.run(run_id)
    with pytest.raises(UnknownRun):
        plane.ledger.entries(run_id)
    if run_id is not None:  # verify(None) checks every run
        with pytest.raises(UnknownRun):
            plane.ledger.verify(run_id)


@pytest.mark.parametrize(
    "entry_id",
    ["led_\ud800", "led_\x00", "l" * 100_000, None, 3],
    ids=["surrogate", "nul", "long", "none", "int"],
)
def test_an_entry_id_no_entry_can_have_is_an_unknown_entry(
    plane: ControlPlane, entry_id: Any
) -> None:
    with pytest.raises(UnknownEntry):
        plane.ledger.get(entry_id)
    assert plane.ledger.get_many([entry_id, "led_0000000000000000"]) == {}


def test_kinds_to_read_are_checked_like_kinds_to_write(plane: ControlPlane) -> None:
    run = plane.ledger.start_run()
    with pytest.raises(UnknownKind):
        plane.ledger.entries(run, kinds=[["retrieval"]])  # type: ignore[list-item]
    with pytest.raises(UnknownKind):
        plane.ledger.entries(run, kinds="retrieval")


@pytest.mark.parametrize(
    "metadata",
    [
        {"deep": _nested(5_000)},
        _looped(),
        {"k\ud800": 1},
        {"big": "x" * 50_000_000},
        ["not", "a", "mapping"],
    ],
    ids=["deep", "self", "surrogate-key", "50MB", "list"],
)
def test_start_run_metadata_has_the_same_bounds(plane: ControlPlane, metadata: Any) -> None:
    before = len(plane.ledger.runs())
    with pytest.raises(InvalidMetadata):
        plane.ledger.start_run(metadata=metadata)
    assert len(plane.ledger.runs()) == before


def test_each_field_has_one_limit_and_values_at_it_are_accepted(plane: ControlPlane) -> None:
    from assay import _limits

    run = plane.ledger.start_run()
    at_limit = "s" * _limits.MAX_SOURCE_CHARS
    assert plane.ledger.append(run, **_good(source=at_limit)).source == at_limit
    with pytest.raises(InvalidEntry, match="over the limit"):
        plane.ledger.append(run, **_good(source=at_limit + "s"))
    deepest: Any = 1
    for _ in range(_limits.MAX_JSON_DEPTH - 1):
        deepest = [deepest]
    assert plane.ledger.append(run, **GOOD, metadata={"d": deepest}).metadata == {"d": deepest}
    with pytest.raises(InvalidMetadata, match="nested deeper"):
        plane.ledger.append(run, **GOOD, metadata={"d": [deepest]})
    room = _limits.MAX_METADATA_BYTES - len('{"m":""}')
    assert plane.ledger.append(run, **GOOD, metadata={"m": "m" * room}).metadata["m"] == "m" * room
    with pytest.raises(InvalidMetadata, match="limit"):
        plane.ledger.append(run, **GOOD, metadata={"m": "m" * (room + 1)})
    with pytest.raises(InvalidMetadata, match="limit"):  # escapes count: 6 bytes per NUL
        plane.ledger.append(run, **GOOD, metadata={"m": "\x00" * (room // 2)})
    assert plane.ledger.verify(run).ok


def test_text_content_may_hold_nul_and_format_characters(plane: ControlPlane) -> None:
    run = plane.ledger.start_run()
    text = "a\x00b\u202ec\u200bd\ufeff"
    entry = plane.ledger.append(run, **_good(content=text, metadata={"m": text}))
    assert plane.ledger.get(entry.id).content == text
    assert plane.ledger.get(entry.id).metadata == {"m": text}


# --- the fuzz loop --------------------------------------------------------------------

_WEIRD = st.sampled_from(
    ["\ud800", "\udfff", "\x00", "\n", "\x1b", "\x7f", "\x85", "\u202e", "\u200b", "\ufeff", "a"]
)
_TEXT = st.one_of(
    st.lists(_WEIRD | st.text(max_size=4), max_size=8).map("".join),
    st.integers(1_990, 2_010).map(lambda n: "s" * n),
    st.just("z" * 3_000_000),
)
_META = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | _TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
    max_leaves=8,
) | st.integers(60, 5_000).map(_nested)
_DOCUMENTED = (UnknownKind, InvalidEntry, InvalidMetadata, ContentTooLarge)


def test_fuzzed_appends_raise_only_documented_errors(plane: ControlPlane) -> None:
    ledger = Ledger(plane.engine, max_content_bytes=1024 * 1024)
    run = ledger.start_run()

    @settings(
        max_examples=200,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(
        kind=st.sampled_from(["retrieval", "tool_output"]) | _TEXT,
        source=_TEXT,
        content=_TEXT | st.binary(max_size=20),
        metadata=st.none() | st.dictionaries(_TEXT, _META, max_size=3) | _META,
    )
    def one_append(kind: Any, source: Any, content: Any, metadata: Any) -> None:
        before = ledger.run(run).head_seq
        try:
            entry = ledger.append(run, kind=kind, source=source, content=content, metadata=metadata)
        except _DOCUMENTED:
            assert ledger.run(run).head_seq == before  # nothing was written
            return
        stored = ledger.get(entry.id)
        assert (stored.content, stored.source, stored.metadata) == (
            entry.content,
            entry.source,
            entry.metadata,
        )

    one_append()
    assert ledger.verify(run).ok


@pytest.mark.parametrize("limit", [0, -1, "10", 1.5, True], ids=repr)
def test_a_content_limit_that_is_not_a_positive_integer_is_refused(
    plane: ControlPlane, limit: Any
) -> None:
    with pytest.raises(InvalidEntry):
        Ledger(plane.engine, max_content_bytes=limit)
