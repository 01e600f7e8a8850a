"""Fixtures shared by every component's tests.

``db_url`` and ``plane`` run each test body once on SQLite (a real file) and once on
a real PostgreSQL server with a fresh database per test. The PostgreSQL half is
skipped, with its reason shown, only when ``ASSAY_TEST_POSTGRES_URL`` is unset; CI
sets ``ASSAY_REQUIRE_POSTGRES=1`` so that a missing server fails instead.

A fresh database costs its migrations (half a second or more on PostgreSQL), and
most tests open one. So each test process migrates one template per engine once
(with LangGraph's checkpoint tables), and ``db_url`` hands every test its own copy:
a file copy on SQLite, ``CREATE DATABASE ... TEMPLATE`` on PostgreSQL. A test of
the migrations themselves, or of opening a database nobody migrated, asks for
``empty_db_url`` (or ``sqlite_url`` / ``postgres_url``), which stay empty.

Under pytest-xdist every worker has its own templates, databases and temporary
folders; nothing here is shared between workers but the server.
"""

from __future__ import annotations

import os
import secrets
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from assay import ControlPlane

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# Each pytest-xdist worker's torch gets its share of the cores (torch reads this when
# first imported): two workers of two threads each on two cores only wait on each other.
if "PYTEST_XDIST_WORKER_COUNT" in os.environ:
    _share = (os.cpu_count() or 1) // int(os.environ["PYTEST_XDIST_WORKER_COUNT"])
    os.environ.setdefault("OMP_NUM_THREADS", str(max(1, _share)))

PG_URL = os.environ.get("ASSAY_TEST_POSTGRES_URL")
REQUIRE_PG = os.environ.get("ASSAY_REQUIRE_POSTGRES") == "1"
#: The pytest-xdist worker running this process (``gw0``, ``gw1``...), or ``main``.
WORKER = os.environ.get("PYTEST_XDIST_WORKER", "main")


def _require_postgres() -> str:
    if PG_URL:
        return PG_URL
    if REQUIRE_PG:
        pytest.fail("ASSAY_REQUIRE_POSTGRES=1 but ASSAY_TEST_POSTGRES_URL is not set")
    pytest.skip("PostgreSQL tests need ASSAY_TEST_POSTGRES_URL (set by .ci/run)")


def _database_name(kind: str) -> str:
    """A database name no other test or worker uses: the worker and a random part."""
    return f"assay_{kind}_{WORKER}_{secrets.token_hex(5)}"


def fresh_postgres_database(template: str | None = None) -> Iterator[str]:
    """A fresh PostgreSQL database, dropped when the generator ends: empty, or a copy
    of ``template``. The body of :func:`postgres_url`, for fixtures of a wider scope."""
    base = sa.make_url(_require_postgres())
    name = _database_name("t")
    copy = f' TEMPLATE "{template}"' if template else ""
    admin = sa.create_engine(base, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(sa.text(f'CREATE DATABASE "{name}"{copy}'))
        yield base.set(database=name).render_as_string(hide_password=False)
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        admin.dispose()


def _migrate(url: str) -> None:
    """Bring the database at ``url`` to the newest revision, with the checkpoint
    tables LangGraph makes on first use, and close every connection to it."""
    with ControlPlane.open(url) as cp:
        assert cp.checkpointer is not None


@pytest.fixture(scope="session")
def postgres_template() -> Iterator[str]:
    """The name of a PostgreSQL database migrated once for this process, which takes
    no connections: ``CREATE DATABASE ... TEMPLATE`` copies it."""
    databases = fresh_postgres_database()
    url = next(databases)
    _migrate(url)
    name = sa.make_url(url).database
    admin = sa.create_engine(sa.make_url(_require_postgres()), isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(sa.text(f'ALTER DATABASE "{name}" WITH ALLOW_CONNECTIONS false'))
            others = "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = :n"
            conn.execute(sa.text(others), {"n": name})
    finally:
        admin.dispose()
    assert name is not None
    yield name
    next(databases, None)


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite file migrated once for this process, in rollback-journal mode so that
    one file holds all of it (the control plane turns WAL back on when it opens a copy)."""
    path = tmp_path_factory.mktemp("template") / "assay.db"
    _migrate(f"sqlite:///{path}")
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA journal_mode = DELETE")
    conn.close()
    return path


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A fresh, empty PostgreSQL database for one test, dropped afterwards."""
    yield from fresh_postgres_database()


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    """A SQLite file for one test, not yet created."""
    return f"sqlite:///{tmp_path / 'assay.db'}"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def empty_db_url(request: pytest.FixtureRequest) -> str:
    """The same test body on each storage engine, on a database nobody migrated."""
    name = "sqlite_url" if request.param == "sqlite" else "postgres_url"
    return request.getfixturevalue(name)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db_url(request: pytest.FixtureRequest) -> Iterator[str]:
    """The same test body on each storage engine, on a fresh database at the newest
    revision (a copy of this process's template)."""
    if request.param == "sqlite":
        url: str = request.getfixturevalue("sqlite_url")
        template: Path = request.getfixturevalue("sqlite_template")
        shutil.copyfile(template, url.removeprefix("sqlite:///"))
        yield url
    else:
        yield from fresh_postgres_database(request.getfixturevalue("postgres_template"))


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
