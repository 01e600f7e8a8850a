"""The verifier's round trips: one model call and one ledger transaction per hand-over,
and a database cache asked once per check, on SQLite and PostgreSQL.

The verdicts must be those the propositions get one at a time; only the number of
round trips changes.
"""

from __future__ import annotations

import json
from collections.abc import Generator, Iterable
from contextlib import contextmanager
from typing import Any

import pytest
from sqlalchemy import Engine, event

from assay import ControlPlane, UnknownRun, _db
from assay.verifier import (
    CacheKey,
    Entailment,
    EntailmentCache,
    InMemoryEntailmentCache,
    LexicalNLI,
    SqlEntailmentCache,
    Verifier,
    cache_key,
)

FACTS = [
    "Line 1: senior associate, 2.5 h at EUR 301/h.",
    "Line 2: partner, 4 h at EUR 520/h.",
    "The engagement letter sets no cap for trainees.",
]


class RecordingNLI:
    """The lexical stand-in, remembering each call's pairs."""

    def __init__(self) -> None:
        self.inner = LexicalNLI()
        self.calls: list[list[tuple[str, str]]] = []

    @property
    def threshold(self) -> float:
        return self.inner.threshold

    def check_many(
        self, pairs: Iterable[tuple[str, str]], *, cache: EntailmentCache | None = None
    ) -> list[Entailment]:
        listed = list(pairs)
        self.calls.append(listed)
        return self.inner.check_many(listed, cache=cache)


@contextmanager
def commits(cp: ControlPlane) -> Generator[list[int], None, None]:
    counted = [0]

    def commit(*_: object) -> None:
        counted[0] += 1

    event.listen(cp.engine, "commit", commit)
    try:
        yield counted
    finally:
        event.remove(cp.engine, "commit", commit)


def _handover(run: str, claims: list[tuple[str, list[str]]]) -> dict[str, Any]:
    return {
        "run_id": run,
        "from_agent": "analyst",
        "status": "ok",
        "claims": [
            {
                "id": f"c{i}",
                "type": "Assertion",
                "text": text,
                "confidence": 0.9,
                "propositions": [{"id": f"c{i}.p", "text": text, "ledger_ids": ids}],
            }
            for i, (text, ids) in enumerate(claims)
        ],
    }


def _world(cp: ControlPlane) -> tuple[str, list[tuple[str, list[str]]]]:
    run = cp.ledger.start_run()
    ids = [cp.ledger.append(run, kind="tool_output", source="t", content=f).id for f in FACTS]
    claims = [
        ("The senior associate billed 2.5 hours at EUR 301 per hour.", [ids[0]]),  # model
        ("The partner worked 4 h at EUR 520/h on line 2.", [ids[1]]),  # model
        ("The partner billed EUR 999 per hour.", [ids[1]]),  # settled: EUR 999 is absent
        ("Line 2: partner, 4 h at EUR 520/h", [ids[1]]),  # settled: verbatim
        ("The engagement letter sets a cap for trainees.", [ids[2]]),  # settled: polarity
        ("Lines 1 and 2 bill a senior associate and a partner.", [ids[0], ids[1]]),  # model
    ]
    return run, claims


def test_one_model_call_and_one_commit_per_hand_over(db_url: str) -> None:
    nli = RecordingNLI()
    with ControlPlane.open(db_url, nli=nli) as cp:
        run, claims = _world(cp)
        with commits(cp) as counted:
            verified = cp.verifier.verify(run, _handover(run, claims))
        assert counted[0] == 1
        assert len(nli.calls) == 1
        together = [v.verdict.model_dump() for v in verified.verdicts]
        one_by_one = [
            cp.verifier.verify(run, _handover(run, [claim])).verdicts[0].verdict.model_dump()
            for claim in claims
        ]
        assert together == one_by_one
        labels = [v.verdict.label for v in verified.verdicts]
        assert labels[2:5] == ["missing_evidence", "entailment", "contradiction"]
        assert len(nli.calls) - 1 >= 2  # several propositions went to the model alone
        assert sorted(p for c in nli.calls[1:] for p in c) == sorted(nli.calls[0])
        recorded = cp.ledger.entries(run, kinds=["verdict", "unsupported"])
        kinds = [e.kind for e in recorded[: len(claims) + len(verified.unsupported)]]
        expected: list[str] = []
        for label in labels:
            expected += ["verdict"] if label == "entailment" else ["verdict", "unsupported"]
        assert kinds == expected
        assert [json.loads(e.text)["claim_id"] for e in recorded if e.kind == "verdict"][
            : len(claims)
        ] == [f"c{i}" for i in range(len(claims))]
        assert cp.ledger.verify(run).ok


def test_a_hand_over_with_nothing_asserted_writes_nothing(db_url: str) -> None:
    with ControlPlane.open(db_url, nli=RecordingNLI()) as cp:
        run = cp.ledger.start_run()
        before = cp.ledger.run(run).head_seq
        verified = cp.verifier.verify(run, _handover(run, []))
        assert verified.verdicts == () and cp.ledger.run(run).head_seq == before


def test_verifying_in_an_unknown_run_is_refused(db_url: str) -> None:
    with ControlPlane.open(db_url, nli=RecordingNLI()) as cp, pytest.raises(UnknownRun):
        cp.verifier.verify("run_missing", _handover("run_missing", []))


def test_the_database_cache_reads_and_writes_many_keys_at_once(db_url: str) -> None:
    engine = _db.create_engine(db_url)
    try:
        _db.upgrade(engine)
        cache = SqlEntailmentCache(engine)
        keys = [cache_key("m@1", f"premise {i}", "claim") for i in range(450)]  # three chunks
        other = cache_key("m@2", "premise 0", "claim")
        cache.put(keys[0], (1.0, 2.0, 3.0))
        cache.put_many([(key, (float(i), 0.0, -1.0)) for i, key in enumerate(keys[:300])])
        cache.put_many([(other, (7.0, 7.0, 7.0))])
        cache.put_many([])
        found = cache.get_many([*keys, other, cache_key("m@3", "x", "y")])
        assert found[keys[0]] == (1.0, 2.0, 3.0)  # the first writer wins
        assert found[keys[299]] == (299.0, 0.0, -1.0)
        assert keys[300] not in found and len(found) == 301
        assert found[other] == (7.0, 7.0, 7.0)
        assert cache.get(keys[5]) == (5.0, 0.0, -1.0)
        assert cache.get_many([]) == {}
    finally:
        engine.dispose()


class CountingCache:
    """An :class:`EntailmentCache` without ``get_many``/``put_many``, counting calls."""

    def __init__(self) -> None:
        self.inner = InMemoryEntailmentCache()
        self.gets = 0
        self.puts = 0

    def get(self, key: CacheKey) -> tuple[float, ...] | None:
        self.gets += 1
        return self.inner.get(key)

    def put(self, key: CacheKey, logits: tuple[float, ...]) -> None:
        self.puts += 1
        self.inner.put(key, logits)


def test_the_model_uses_any_cache_and_a_bulk_one_in_one_round_trip(
    db_url: str, verifier: Verifier
) -> None:
    pairs = [
        ("The store opens at 9 am.", "The store opens in the morning."),
        (FACTS[0], "The senior associate billed 2.5 hours."),
    ]
    plain = CountingCache()
    first = verifier.check_many(pairs, cache=plain)
    assert plain.gets > 0 and plain.puts == plain.gets
    engine = _db.create_engine(db_url)
    try:
        _db.upgrade(engine)
        with commits_on(engine) as counted:
            cold = verifier.check_many(pairs, cache=SqlEntailmentCache(engine))
            assert counted == {"commit": 1, "rollback": 1}
        passes = verifier.forward_passes
        warm = verifier.check_many(pairs, cache=SqlEntailmentCache(engine))
        assert verifier.forward_passes == passes
    finally:
        engine.dispose()
    assert [r.score for r in cold] == pytest.approx([r.score for r in first], abs=1e-6)
    assert warm == cold


@contextmanager
def commits_on(engine: Engine) -> Generator[dict[str, int], None, None]:
    counted = {"commit": 0, "rollback": 0}

    def commit(*_: object) -> None:
        counted["commit"] += 1

    def rollback(*_: object) -> None:
        counted["rollback"] += 1

    event.listen(engine, "commit", commit)
    event.listen(engine, "rollback", rollback)
    try:
        yield counted
    finally:
        event.remove(engine, "commit", commit)
        event.remove(engine, "rollback", rollback)
