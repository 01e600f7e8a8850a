"""``assay tools list`` and ``assay tools show`` against a real database."""

from __future__ import annotations

import json

from typer.testing import CliRunner

import assay
import assay.errors
import assay.tool_bus
from assay import ControlPlane
from assay.cli import app
from tests.tool_bus._tools import ADD, FLAG, Counter


def test_list_and_show(db_url: str) -> None:
    with ControlPlane.open(db_url) as cp:
        cp.registry.register(ADD, Counter().add)
        cp.registry.register(FLAG, Counter().flag)
    runner = CliRunner()
    listed = runner.invoke(app, ["tools", "list", "--db", db_url])
    assert listed.exit_code == 0, listed.output
    assert "add" in listed.output and "flag_invoice_line" in listed.output
    assert "irreversible" in listed.output
    shown = runner.invoke(app, ["tools", "show", "add@1.0.0", "--db", db_url])
    assert shown.exit_code == 0, shown.output
    data = json.loads(shown.output)
    assert data["sha256"] == ADD.sha256 and data["input_schema"] == ADD.as_json()["input_schema"]
    missing = runner.invoke(app, ["tools", "show", "ad", "--db", db_url])
    assert missing.exit_code == 2 and "did you mean add" in missing.output
    assert "Traceback" not in missing.output


def test_public_names() -> None:
    exported = {n for n in dir(assay.tool_bus) if not n.startswith("_")}
    modules = {"annotations"} | {
        n for n in exported if type(getattr(assay.tool_bus, n)).__name__ == "module"
    }
    assert set(assay.tool_bus.__all__) == exported - modules
    for name in (
        "ToolSpec",
        "ToolResult",
        "ToolFailure",
        "ErrorDetail",
        "GrantRequest",
        "Grant",
        "ClaimStatus",
        "ClaimStatusSource",
        "argument_errors",
    ):
        assert getattr(assay, name) is getattr(assay.tool_bus, name)
    # The bus's errors have their home in assay.errors, with every other exception.
    for name in ("ToolNotFound", "ToolBusError", "RegistryConflict", "GrantRefused"):
        assert getattr(assay, name) is getattr(assay.errors, name)
        assert not hasattr(assay.tool_bus, name)
