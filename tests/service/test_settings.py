"""What ``assay serve`` hands each worker: settings and graphs from the environment,
and an application that opens its database and closes it at shutdown."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest
from fastapi.testclient import TestClient

from assay import ControlPlane
from assay.errors import ConfigurationError, UsageError
from assay.service import (
    GRAPHS_ENV,
    ServiceSettings,
    TokenStore,
    app_from_env,
    create_app,
    parse_graph_specs,
    settings_from_env,
)


def test_settings_are_read_from_the_environment_in_one_place() -> None:
    assert settings_from_env({}) == ServiceSettings()
    read = settings_from_env(
        {
            "ASSAY_SERVICE_MAX_BODY_BYTES": "2048",
            "ASSAY_SERVICE_RATE": "0.5",
            "ASSAY_SERVICE_BURST": "3",
            "ASSAY_SERVICE_SEPARATION_OF_DUTIES": "off",
        }
    )
    assert read == ServiceSettings(
        max_body_bytes=2048, rate_per_second=0.5, rate_burst=3, separation_of_duties=False
    )
    for name, bad in (
        ("ASSAY_SERVICE_SEPARATION_OF_DUTIES", "nope"),
        ("ASSAY_SERVICE_RATE", "fast"),
        ("ASSAY_SERVICE_MAX_BODY_BYTES", "0"),
    ):
        with pytest.raises(ConfigurationError):
            settings_from_env({name: bad})


def test_graph_specs_are_checked() -> None:
    assert parse_graph_specs(["inv=assay.apps.reference:graph"]) == {
        "inv": "assay.apps.reference:graph"
    }
    for bad in (["inv"], ["Inv=a:b"], ["inv=a"], ["a=x:y", "a=x:z"], []):
        with pytest.raises(ConfigurationError):
            parse_graph_specs(bad)


def test_a_worker_builds_the_app_from_the_environment(
    sqlite_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_DATABASE_URL", sqlite_url)
    monkeypatch.setenv(GRAPHS_ENV, "invoices=assay.apps.reference:graph")
    monkeypatch.setenv("ASSAY_OUTBOX", str(tmp_path / "outbox.jsonl"))
    with ControlPlane.open(sqlite_url) as cp:
        secret = TokenStore(cp.engine).create(name="otto", role="auditor").secret
    with TestClient(app_from_env()) as client:
        graphs = client.get("/v1/graphs", headers={"Authorization": f"Bearer {secret}"})
        assert graphs.json() == [{"name": "invoices", "graph": "invoice-audit", "version": "1"}]
    monkeypatch.setenv(GRAPHS_ENV, "invoices=assay.apps.reference:no_such_graph")
    with pytest.raises(ConfigurationError, match="cannot load"):
        app_from_env()
    with pytest.raises(UsageError):
        create_app(sqlite_url, {"not-fenced": lambda cp: cast(Any, object())})
