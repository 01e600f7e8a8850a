"""A database that cannot be opened is one line on stderr naming it (password hidden)
and the cause, exit 2 when the URL is wrong and 3 when the server does not answer;
``--debug`` shows the traceback instead."""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.exc import OperationalError
from sqlalchemy.pool import NullPool

from assay import ConfigurationError, ControlPlane, DatabaseError
from tests.cli.conftest import cli, one_error_line
from tests.conftest import PG_URL

MAIN = "from assay.cli import main; main()"

# --- SQLite files that are not assay's database -----------------------------------------


def test_a_text_file_as_the_database(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_text("hello, these are notes\n")
    line = one_error_line(cli("runs", "--db", f"sqlite:///{path}"), 2)
    assert line == (
        f"error: cannot open the database sqlite:///{path}: the file is not a SQLite "
        "database (file is not a database)"
    )
    assert path.read_text() == "hello, these are notes\n"  # nothing written to it


def test_random_bytes_as_the_database(tmp_path: Path) -> None:
    path = tmp_path / "noise.db"
    noise = secrets.token_bytes(8192)
    path.write_bytes(noise)
    line = one_error_line(cli("ledger", "verify", "--db", f"sqlite:///{path}"), 2)
    assert "the file is not a SQLite database" in line and str(path) in line
    assert path.read_bytes() == noise


def test_a_directory_as_the_database(tmp_path: Path) -> None:
    line = one_error_line(cli("runs", "--db", f"sqlite:///{tmp_path}"), 2)
    assert line == (
        f"error: cannot open the database sqlite:///{tmp_path}: it is a directory, "
        "not a SQLite file"
    )


def test_a_directory_that_does_not_exist(tmp_path: Path) -> None:
    line = one_error_line(cli("runs", "--db", f"sqlite:///{tmp_path}/no/such/x.db"), 2)
    assert "directory for the SQLite file does not exist" in line


def _cannot_read(path: Path) -> list[str]:
    """How to run the command line as someone who cannot read ``path``: here, or (for
    root, who reads anything) in a process without the capabilities that let it."""
    path.chmod(0)
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: no way to make a file unreadable")
    return [setpriv, "--bounding-set", "-dac_override,-dac_read_search"]


def test_an_unreadable_file(tmp_path: Path) -> None:
    path = tmp_path / "locked.db"
    with ControlPlane.open(f"sqlite:///{path}"):
        pass
    prefix = _cannot_read(path)
    url = f"sqlite:///{path}"
    if not prefix:
        line = one_error_line(cli("runs", "--db", url), 2)
    else:
        done = subprocess.run(
            [*prefix, sys.executable, "-c", MAIN, "runs", "--db", url],
            capture_output=True,
            text=True,
            env={**os.environ, "COLUMNS": "80"},
            timeout=120,
        )
        assert done.returncode == 2 and done.stdout == "", done.stderr
        assert len(done.stderr.splitlines()) == 1, done.stderr
        line = done.stderr.strip()
    assert line == (
        f"error: cannot open the database {url}: permission denied: the file cannot be "
        "read (unable to open database file)"
    )


# --- URLs that do not name a database ------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (
            "sqlite://x.db",
            "error: not a SQLite file URL: 'sqlite://x.db' names a host; a file is "
            "sqlite:///relative/path.db or sqlite:////absolute/path.db",
        ),
        (
            "nosuchdriver://x",
            "error: unsupported database 'nosuchdriver': assay runs on sqlite:/// or "
            "postgresql+psycopg://",
        ),
        ("not a url", "error: not a database URL: 'not a url'"),
        (
            "postgresql://someone:hunter2@db.example:notaport/x",
            "error: not a database URL: 'postgresql+psycopg://someone:***@db.example:notaport/x'",
        ),
        (
            "postgresql+nosuchdriver://u@h/d",
            "error: no driver for 'postgresql+nosuchdriver'; install assay[postgres] for "
            "PostgreSQL",
        ),
    ],
)
def test_malformed_urls(url: str, expected: str) -> None:
    line = one_error_line(cli("runs", "--db", url), 2)
    assert line == expected
    assert "hunter2" not in line


def test_the_url_from_the_environment_is_checked_the_same_way(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ASSAY_DATABASE_URL", "sqlite://x.db")
    assert "not a SQLite file URL" in one_error_line(cli("db", "current"), 2)


def test_the_library_raises_assays_own_errors(tmp_path: Path) -> None:
    (tmp_path / "text.db").write_text("text")
    with pytest.raises(ConfigurationError, match="is not a SQLite database") as raised:
        ControlPlane.open(f"sqlite:///{tmp_path / 'text.db'}")
    assert isinstance(raised.value.__cause__, Exception)  # the driver's error, kept


# --- PostgreSQL ------------------------------------------------------------------------------


def _base() -> sa.URL:
    if not PG_URL:
        pytest.skip("PostgreSQL tests need ASSAY_TEST_POSTGRES_URL")
    return sa.make_url(PG_URL)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _shown(url: sa.URL) -> str:
    return url.render_as_string(hide_password=True)


pytestmark_pg = pytest.mark.postgres


def _lets_in_without_a_password(url: sa.URL) -> bool:
    """Whether the server lets ``url``'s role in whatever the password (trust
    authentication): there a wrong password is no mistake to report."""
    engine = sa.create_engine(url, poolclass=NullPool)
    try:
        with engine.connect():
            return True
    except OperationalError:
        return False
    finally:
        engine.dispose()


@pytestmark_pg
def test_postgres_wrong_password() -> None:
    url = _base().set(password="wrong-" + secrets.token_hex(4))
    if _lets_in_without_a_password(url):
        pytest.skip(
            f"the server lets {url.username} in without a password (trust authentication "
            "over TCP), so no password is wrong; .ci/run sets scram-sha-256"
        )
    line = one_error_line(cli("runs", "--db", url.render_as_string(hide_password=False)), 2)
    assert line.startswith(f"error: cannot open the database {_shown(url)}: ")
    assert "password authentication failed" in line
    assert url.password is not None and url.password not in line


@pytestmark_pg
def test_postgres_unknown_database() -> None:
    url = _base().set(database="assay_no_such_" + secrets.token_hex(4))
    line = one_error_line(cli("ledger", "verify", "--db", url.render_as_string(False)), 2)
    assert line.startswith(f"error: cannot open the database {_shown(url)}: ")
    assert f'database "{url.database}" does not exist' in line


@pytestmark_pg
def test_postgres_unknown_role() -> None:
    url = _base().set(username="assay_no_role_" + secrets.token_hex(4))
    line = one_error_line(cli("runs", "--db", url.render_as_string(hide_password=False)), 2)
    assert line.startswith(f"error: cannot open the database {_shown(url)}: ")
    assert f'"{url.username}"' in line  # "password authentication failed for user" or
    # "role ... does not exist", as the server's authentication method has it


@pytestmark_pg
def test_postgres_closed_port_is_a_failure_at_run_time() -> None:
    url = _base().set(host="127.0.0.1", port=_free_port())
    line = one_error_line(cli("runs", "--db", url.render_as_string(hide_password=False)), 3)
    assert line.startswith(f"error: cannot open the database {_shown(url)}: ")
    assert "Connection refused" in line
    with pytest.raises(DatabaseError, match="Connection refused"):
        ControlPlane.open(url.render_as_string(hide_password=False))


@pytestmark_pg
def test_a_connection_the_server_dropped_is_replaced(postgres_url: str) -> None:
    """The pool's ping finds the dropped connection and opens another; the ping's own
    failure is not reported as an error."""
    with ControlPlane.open(postgres_url) as cp:
        assert cp.ledger.runs() == []
        admin = sa.create_engine(postgres_url)
        try:
            with admin.connect() as conn:
                dropped = conn.exec_driver_sql(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                    "WHERE datname = current_database() AND pid <> pg_backend_pid()"
                ).scalar()
        finally:
            admin.dispose()
        assert dropped
        assert cp.ledger.runs() == []


# --- --debug -----------------------------------------------------------------------------------


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    (tmp_path / "text.db").write_text("text")
    command = [sys.executable, "-c", MAIN]
    url = f"sqlite:///{tmp_path / 'text.db'}"
    quiet = subprocess.run([*command, "runs", "--db", url], capture_output=True, text=True)
    assert quiet.returncode == 2 and len(quiet.stderr.splitlines()) == 1, quiet.stderr
    loud = subprocess.run(
        [*command, "--debug", "runs", "--db", url], capture_output=True, text=True
    )
    assert loud.returncode == 1
    assert "Traceback (most recent call last)" in loud.stderr
    assert "assay.errors.ConfigurationError: cannot open the database" in loud.stderr
    assert "sqlite3.DatabaseError: file is not a database" in loud.stderr  # the cause


def test_debug_lets_the_exception_through_in_process(tmp_path: Path) -> None:
    (tmp_path / "text.db").write_text("text")
    result = cli("--debug", "runs", "--db", f"sqlite:///{tmp_path / 'text.db'}")
    assert isinstance(result.exception, ConfigurationError)


def test_db_current_on_a_missing_file_creates_nothing(tmp_path: Path) -> None:
    path = tmp_path / "nowhere.db"
    line = one_error_line(cli("db", "current", "--db", f"sqlite:///{path}"), 2)
    assert "no database at" in line and "nothing was created" in line
    assert not path.exists()
    with ControlPlane.open(f"sqlite:///{path}"):
        pass
    done = cli("db", "current", "--db", f"sqlite:///{path}")
    assert done.exit_code == 0 and "up to date" in done.stdout
