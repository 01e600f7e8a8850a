"""Raw-SQL helpers that go around assay, as an attacker with database access would."""

from __future__ import annotations

import sqlalchemy as sa


def raw_engine(url: str) -> sa.Engine:
    """A plain SQLAlchemy engine: no assay events, no error translation."""
    return sa.create_engine(url, isolation_level="AUTOCOMMIT")


def tamper(url: str, *statements: str) -> None:
    """Run ``statements`` with the append-only triggers out of the way."""
    engine = raw_engine(url)
    try:
        with engine.connect() as conn:
            if engine.dialect.name == "postgresql":
                conn.execute(sa.text("ALTER TABLE ledger_entries DISABLE TRIGGER USER"))
                conn.execute(sa.text("ALTER TABLE ledger_runs DISABLE TRIGGER USER"))
                conn.execute(sa.text("ALTER TABLE ledger_tree DISABLE TRIGGER USER"))
            else:
                names = conn.execute(
                    sa.text("SELECT name FROM sqlite_master WHERE type = 'trigger'")
                ).scalars()
                for name in list(names):
                    conn.execute(sa.text(f"DROP TRIGGER {name}"))
            for statement in statements:
                conn.execute(sa.text(statement))
    finally:
        engine.dispose()
