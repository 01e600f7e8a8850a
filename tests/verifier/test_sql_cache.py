"""The database-backed cache on each storage engine."""

from __future__ import annotations

from assay import _db
from assay.verifier import EntailmentCache, SqlEntailmentCache, cache_key


def test_sql_cache_round_trip(db_url: str) -> None:
    engine = _db.create_engine(db_url)
    try:
        _db.upgrade(engine)
        cache = SqlEntailmentCache(engine)
        assert isinstance(cache, EntailmentCache)
        key = cache_key("model@abc", "the premise", "the claim")
        assert cache.get(key) is None
        cache.put(key, (0.5, -1.25, 2.0))
        cache.put(key, (9.0, 9.0, 9.0))  # the first writer wins
        assert cache.get(key) == (0.5, -1.25, 2.0)
        assert cache.get(cache_key("other@abc", "the premise", "the claim")) is None
    finally:
        engine.dispose()


def test_the_database_cache_can_be_turned_off(db_url: str) -> None:
    """Where writers of the database are not trusted, no score is read from it."""
    from assay import ControlPlane
    from assay.verifier import LexicalNLI

    with ControlPlane.open(db_url, nli=LexicalNLI(), verifier_cache=False) as cp:
        assert cp.verifier.cache is None
    with ControlPlane.open(db_url, nli=LexicalNLI()) as cp:
        assert isinstance(cp.verifier.cache, SqlEntailmentCache)
