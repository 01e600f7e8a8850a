"""Fixtures shared by every component's tests.

``db_url`` and ``plane`` run each test body once on SQLite (a real file) and once on
a real PostgreSQL server with a fresh database per test. The PostgreSQL half is
skipped, with its reason shown, only when ``ASSAY_TEST_POSTGRES_URL`` is unset; CI
sets ``ASSAY_REQUIRE_POSTGRES=1`` so that a missing server fails instead.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from assay import ControlPlane

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

PG_URL = os.environ.get("ASSAY_TEST_POSTGRES_URL")
REQUIRE_PG = os.environ.get("ASSAY_REQUIRE_POSTGRES") == "1"


def _require_postgres() -> str:
    if PG_URL:
        return PG_URL
    if REQUIRE_PG:
        pytest.fail("ASSAY_REQUIRE_POSTGRES=1 but ASSAY_TEST_POSTGRES_URL is not set")
    pytest.skip("PostgreSQL tests need ASSAY_TEST_POSTGRES_URL (set by .ci/run)")


def fresh_postgres_database() -> Iterator[str]:
    """A fresh, empty PostgreSQL database, dropped when the generator ends: the body
    of :func:`postgres_url`, for fixtures of a wider scope."""
    base = sa.make_url(_require_postgres())
    name = f"assay_t_{secrets.token_hex(6)}"
    admin = sa.create_engine(base, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
        yield base.set(database=name).render_as_string(hide_password=False)
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        admin.dispose()


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A fresh, empty PostgreSQL database for one test, dropped afterwards."""
    yield from fresh_postgres_database()


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'assay.db'}"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db_url(request: pytest.FixtureRequest) -> str:
    """The same test body on each storage engine."""
    name = "sqlite_url" if request.param == "sqlite" else "postgres_url"
    return request.getfixturevalue(name)


@pytest.fixture
def outbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where the reference app's flag tool appends (``ASSAY_OUTBOX``), per test."""
    path = tmp_path / "outbox.jsonl"
    monkeypatch.setenv("ASSAY_OUTBOX", str(path))
    return path


@pytest.fixture
def plane(db_url: str) -> Iterator[ControlPlane]:
    with ControlPlane.open(db_url) as cp:
        yield cp
