"""Alembic environment for assay.

At run time assay passes its own open connection in ``config.attributes["connection"]``
(already inside a write transaction); from a checkout, ``alembic -c alembic.ini``
connects to the URL in alembic.ini or ``ASSAY_DATABASE_URL``.
"""

from __future__ import annotations

import os

import sqlalchemy as sa
from alembic import context

VERSION_TABLE = "assay_alembic_version"

config = context.config


def _run(connection: sa.Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=None,
        version_table=VERSION_TABLE,
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()


connection = config.attributes.get("connection")
if connection is not None:
    _run(connection)
else:
    url = os.environ.get("ASSAY_DATABASE_URL") or config.get_main_option("sqlalchemy.url")
    engine = sa.create_engine(url or "sqlite:///./assay.db")
    with engine.begin() as conn:
        _run(conn)
    engine.dispose()
