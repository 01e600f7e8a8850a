"""Tokens: stored as a hash, revoked by an insert, append-only in the database, and
managed from the command line (``assay tokens``); the package's public names."""

from __future__ import annotations

import hashlib
import importlib
import inspect
import json
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa
from alembic import command
from typer.testing import CliRunner

from assay import ControlPlane, _db
from assay.cli import app
from assay.errors import LedgerWriteRefused, UsageError
from assay.service import TokenStore, parse_duration

runner = CliRunner()


def test_only_the_hash_of_a_secret_is_stored(plane: ControlPlane) -> None:
    store = TokenStore(plane.engine)
    issued = store.create(name="alice", role="reviewer", expires_in=timedelta(days=30))
    with plane.engine.connect() as conn:
        rows = [dict(r) for r in conn.execute(sa.text("SELECT * FROM service_tokens")).mappings()]
    [row] = rows
    assert issued.secret not in json.dumps(rows, default=str)
    assert row["secret_sha256"] == hashlib.sha256(issued.secret.encode()).hexdigest()
    principal = store.authenticate(issued.secret)
    assert principal is not None and (principal.name, principal.role) == ("alice", "reviewer")
    assert issued.info.expires_at is not None
    assert issued.info.expires_at - issued.info.created_at == timedelta(days=30)


def test_revoking_is_an_insert_and_rows_never_change(plane: ControlPlane) -> None:
    store = TokenStore(plane.engine)
    issued = store.create(name="bob", role="agent")
    first = store.revoke(issued.info.id, reason="left")
    again = store.revoke(issued.info.id)
    assert first.revoked_at is not None and again.revoked_at == first.revoked_at
    assert store.authenticate(issued.secret) is None
    for statement in (
        "UPDATE service_tokens SET role = 'admin'",
        "DELETE FROM service_token_revocations",
        "DELETE FROM service_tokens",
    ):
        with pytest.raises(LedgerWriteRefused), plane.engine.begin() as conn:
            conn.execute(sa.text(statement))
    assert store.get(issued.info.id).role == "agent"


def test_expiry_and_bad_input(plane: ControlPlane) -> None:
    past = TokenStore(plane.engine, clock=lambda: datetime.now(UTC) - timedelta(hours=2))
    expired = past.create(name="eve", role="auditor", expires_in=parse_duration("1h"))
    assert TokenStore(plane.engine).authenticate(expired.secret) is None
    store = TokenStore(plane.engine)
    with pytest.raises(UsageError, match="role must be one of"):
        store.create(name="x", role="root")
    with pytest.raises(UsageError, match="control characters"):
        store.create(name="x\x1b[2J", role="agent")
    with pytest.raises(UsageError, match="no token"):
        store.revoke("tok_0000000000000000")
    for bad in ("0d", "30", "1w", "-1h", ""):
        with pytest.raises(UsageError, match="duration"):
            parse_duration(bad)
    assert parse_duration("90s") == timedelta(seconds=90)


def test_the_tokens_command_line(sqlite_url: str) -> None:
    made = runner.invoke(
        app,
        [
            "tokens",
            "create",
            "--role",
            "reviewer",
            "--name",
            "alice",
            "--expires-in",
            "30d",
            "--db",
            sqlite_url,
        ],
    )
    assert made.exit_code == 0, made.output
    secret = made.stdout.strip().splitlines()[-1]
    assert secret.startswith("assay.tok_")
    with ControlPlane.open(sqlite_url) as cp:
        principal = TokenStore(cp.engine).authenticate(secret)
    assert principal is not None and principal.name == "alice"

    listed = runner.invoke(app, ["tokens", "list", "--json", "--db", sqlite_url])
    [row] = json.loads(listed.stdout)
    assert (row["id"], row["role"], row["revoked_at"]) == (principal.token_id, "reviewer", None)
    assert secret not in listed.stdout

    revoked = runner.invoke(app, ["tokens", "revoke", principal.token_id, "--db", sqlite_url])
    assert revoked.exit_code == 0 and "revoked" in revoked.stdout
    with ControlPlane.open(sqlite_url) as cp:
        assert TokenStore(cp.engine).authenticate(secret) is None

    wrong = runner.invoke(
        app, ["tokens", "create", "--role", "boss", "--name", "x", "--db", sqlite_url]
    )
    assert wrong.exit_code == 2 and "role must be one of" in wrong.output
    serve = runner.invoke(app, ["serve", "--graph", "nonsense", "--db", sqlite_url])
    assert serve.exit_code == 2 and "name=module:attr" in serve.output
    missing = runner.invoke(
        app, ["serve", "--graph", "inv=no_such_module:graph", "--db", sqlite_url]
    )
    assert missing.exit_code == 2 and "cannot load" in missing.output


def test_public_names_are_exactly_all() -> None:
    module = importlib.import_module("assay.service")
    for name in module.__all__:  # a package imports its names when first used (PEP 562)
        getattr(module, name)
    public = {
        name
        for name, value in vars(module).items()
        if not name.startswith("_") and not inspect.ismodule(value) and name != "annotations"
    }
    assert set(module.__all__) == public
    documented = [getattr(module, n) for n in module.__all__]
    assert all(v.__doc__ for v in documented if inspect.isclass(v) or inspect.isfunction(v))


def test_the_tables_come_and_go_with_their_migration(plane: ControlPlane) -> None:
    tables = {"service_tokens", "service_token_revocations", "service_runs"}
    assert tables <= set(sa.inspect(plane.engine).get_table_names())
    with _db.write_transaction(plane.engine) as conn:
        command.downgrade(_db.alembic_config(conn), "0008_eval_runs")
    assert not tables & set(sa.inspect(plane.engine).get_table_names())
    _db.upgrade(plane.engine)
    assert TokenStore(plane.engine).list_all() == []
