"""Opening a control plane: URLs, migrations, and the errors a user can make."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa

from assay import ConfigurationError, ControlPlane, UsageError, _db


def test_default_url_is_a_sqlite_file_in_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ASSAY_DATABASE_URL", raising=False)
    with ControlPlane.open() as cp:
        cp.ledger.start_run()
        assert cp.url == "sqlite:///./assay.db"
    assert (tmp_path / "assay.db").exists()


def test_environment_variable_chooses_the_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite:///{tmp_path / 'env.db'}"
    monkeypatch.setenv("ASSAY_DATABASE_URL", url)
    with ControlPlane.open() as cp:
        assert cp.url == url


def test_sqlite_runs_in_wal_mode_with_a_busy_timeout(sqlite_url: str) -> None:
    with ControlPlane.open(sqlite_url) as cp, cp.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 30000


def test_postgres_scheme_without_driver_uses_psycopg() -> None:
    assert _db.resolve_url("postgresql://u:p@h/db") == "postgresql+psycopg://u:p@h/db"


@pytest.mark.parametrize(
    "url",
    ["not a url", "mysql://u:p@localhost/db", "sqlite:////no/such/directory/assay.db"],
)
def test_bad_urls_are_usage_errors(url: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        ControlPlane.open(url)
    assert isinstance(caught.value, UsageError)


def test_open_without_migrate_refuses_a_schema_behind_head(sqlite_url: str) -> None:
    with pytest.raises(ConfigurationError, match="assay db upgrade"):
        ControlPlane.open(sqlite_url, migrate=False)
    with ControlPlane.open(sqlite_url):
        pass
    with ControlPlane.open(sqlite_url, migrate=False) as cp:
        assert cp.ledger.runs() == []


def test_migrations_reach_head_and_are_idempotent(db_url: str) -> None:
    with ControlPlane.open(db_url) as cp:
        assert _db.current_revision(cp.engine) == _db.head_revision()
    with ControlPlane.open(db_url) as cp:
        tables = set(sa.inspect(cp.engine).get_table_names())
        assert {"ledger_runs", "ledger_entries", _db.VERSION_TABLE} <= tables


def test_the_newest_revision_is_read_from_the_files_as_alembic_reads_it() -> None:
    assert _db.head_revision() is not None
    assert _db.head_revision() == _db._alembic_head()  # pyright: ignore[reportPrivateUsage]


def test_a_database_a_revision_behind_is_brought_to_the_newest(db_url: str) -> None:
    from alembic import command

    with ControlPlane.open(db_url) as cp:
        with _db.write_transaction(cp.engine) as conn:
            command.downgrade(_db.alembic_config(conn), "-1")
        behind = _db.current_revision(cp.engine)
        assert behind is not None and behind != _db.head_revision()
    with ControlPlane.open(db_url) as cp:
        assert _db.current_revision(cp.engine) == _db.head_revision()


def test_downgrade_to_base_and_back(db_url: str) -> None:
    from alembic import command

    with ControlPlane.open(db_url) as cp:
        with _db.write_transaction(cp.engine) as conn:
            command.downgrade(_db.alembic_config(conn), "base")
        assert "ledger_entries" not in sa.inspect(cp.engine).get_table_names()
        _db.upgrade(cp.engine)
        run = cp.ledger.start_run()
        cp.ledger.append(run, kind="retrieval", source="s", content="x")
        assert cp.ledger.verify(run).ok


def test_the_control_plane_holds_no_application(db_url: str) -> None:
    """Opening it registers no tool and loads no auto-approval rule; it starts no
    thread until a graph is run on it."""
    with ControlPlane.open(db_url) as cp:
        assert cp.registry.list() == []
        assert cp.grants.policy.rules == []
        assert cp.paused() == []
        assert not hasattr(cp, "reference")
