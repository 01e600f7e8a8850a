"""Shared plumbing for the benchmark scripts: machine facts and writing results."""

from __future__ import annotations

import json
import os
import platform
import secrets
import sys
from collections.abc import Generator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa

RESULTS = Path(__file__).resolve().parent / "results"


def machine() -> dict[str, Any]:
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
    }


def write_result(name: str, payload: dict[str, Any]) -> Path:
    """Print the JSON and write it to benchmarks/results/<name>.json."""
    RESULTS.mkdir(exist_ok=True)
    document = {"benchmark": name, "machine": machine(), **payload}
    text = json.dumps(document, indent=2, sort_keys=False)
    print(text)
    path = RESULTS / f"{name}.json"
    path.write_text(text + "\n")
    return path


def postgres_base_url() -> str | None:
    return os.environ.get("ASSAY_BENCH_POSTGRES_URL") or os.environ.get("ASSAY_TEST_POSTGRES_URL")


@contextmanager
def fresh_postgres_database(base_url: str) -> Generator[str, None, None]:
    """A throwaway database on the server at ``base_url``."""
    base = sa.make_url(base_url)
    name = f"assay_bench_{secrets.token_hex(4)}"
    admin = sa.create_engine(base, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
        yield base.set(database=name).render_as_string(hide_password=False)
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        admin.dispose()
