"""The command line starts at once: ``import assay`` and ``import assay.cli`` load
neither the NLI model's libraries nor LangGraph, and commands that need no model do
not load them either. Each is checked in a fresh interpreter, through sys.modules;
times are measured by benchmarks/cli_startup.py, never asserted here."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from assay.cli._groups import DEFERRED, load_group

HEAVY = ("torch", "transformers", "langgraph", "langchain_core")
_REPORT = "\nimport json, sys\nprint(json.dumps(sorted(sys.modules)), file=sys.stderr)"


def _modules(script: str) -> list[str]:
    """Every module ``script`` loaded, in a fresh interpreter."""
    done = subprocess.run(
        [sys.executable, "-c", script + _REPORT],
        capture_output=True,
        text=True,
        check=False,
        timeout=180,
    )
    modules: list[str] = json.loads(done.stderr.strip().splitlines()[-1])
    return modules


def _loaded(script: str, among: tuple[str, ...] = HEAVY) -> list[str]:
    modules = _modules(script)
    return sorted({m.split(".")[0] for m in modules if m.split(".")[0] in among})


def _command(*args: str) -> str:
    return (
        "from assay.cli import app\n"
        "try:\n"
        f"    app({list(args)!r}, prog_name='assay')\n"
        "except SystemExit:\n"
        "    pass"
    )


def test_import_assay_loads_no_model_library_and_no_langgraph() -> None:
    assert _loaded("import assay") == []


def test_a_name_of_assay_loads_what_it_needs() -> None:
    """The same check sees the libraries once a name that needs them is used, so an
    empty list above means they were not loaded, not that they went unseen."""
    assert "langgraph" in _loaded("import assay\nassay.ControlPlane")


@pytest.mark.parametrize("args", [("--version",), ("--help",), ("runs", "--help")])
def test_commands_that_need_no_model_load_none(args: tuple[str, ...]) -> None:
    assert _loaded(_command(*args)) == []


def test_listing_runs_and_verifying_the_ledger_load_no_graph_library(sqlite_url: str) -> None:
    script = (
        _command("runs", "--db", sqlite_url)
        + "\n"
        + _command("ledger", "verify", "--db", sqlite_url)
    )
    assert _loaded(script) == []


def _console_script(*args: str) -> str:
    """What the ``assay`` console script does (``assay.cli:main``) with ``args``."""
    return (
        "import sys\n"
        f"sys.argv = ['assay', *{list(args)!r}]\n"
        "from assay.cli import main\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass"
    )


def test_the_version_is_printed_before_the_command_line_is_built() -> None:
    among = ("typer", "rich", "click", "sqlalchemy", *HEAVY)
    assert _loaded(_console_script("--version"), among) == []
    # The same check sees them once a command is run.
    assert {"typer", "rich"} <= set(_loaded(_console_script("--help"), among))


def test_a_database_at_the_newest_revision_is_opened_without_alembic(sqlite_url: str) -> None:
    from assay import ControlPlane
    from assay.fence import fence
    from assay.verifier import LexicalNLI

    with ControlPlane.open(sqlite_url, nli=LexicalNLI()) as cp:  # migrated, one run listed
        graph = fence(
            lambda state: {"handover": {"run_id": state.get("run_id"), "from_agent": "a"}},
            control_plane=cp,
            name="startup",
        )
        cp.run(graph, {"task": "Nothing to do."}, thread_id="t-1")
    script = (
        _console_script("runs", "--db", sqlite_url)
        + "\n"
        + _command("ledger", "verify", "--db", sqlite_url)
    )
    assert _loaded(script, ("alembic", "mako", *HEAVY)) == []
    # Nor the hand-over's records (pydantic models): a run's thread row needs none.
    records = [m for m in _modules(script) if m.startswith(("assay.contract.", "assay.gate"))]
    assert records == []
    # A database that is not at it yet is migrated, by Alembic.
    fresh = sqlite_url.replace("assay.db", "fresh.db")
    assert _loaded(_console_script("runs", "--db", fresh), ("alembic",)) == ["alembic"]


def test_the_token_help_names_every_role_the_service_has() -> None:
    """The roles are written out in the command line (its help loads no database
    code): they are the service's."""
    from assay.cli._service import ROLE_NAMES
    from assay.service import ROLES

    assert ", ".join(ROLES) == ROLE_NAMES


def test_help_loads_no_sub_command_group_and_no_rich_help() -> None:
    """``assay --help`` and ``assay runs`` import neither the deferred groups' modules
    nor typer's rich help formatting (its import cost more than the rest)."""
    deferred = tuple(module for module, _, _ in DEFERRED.values())
    among = ("typer.rich_utils", "rich.markdown", *deferred)
    for args in (("--help",), ("runs", "--help")):
        modules = _modules(_console_script(*args))
        assert [m for m in among if m in modules] == []
    # The same check sees a group's module once the group is used.
    assert "assay.cli._ledger" in _modules(_console_script("ledger", "--help"))


def test_the_help_lists_every_command_as_its_own_help_begins() -> None:
    """The root's help, drawn from the table of deferred groups, is the help drawn
    from the groups themselves once loaded: same names, same lines."""
    import typer.main

    from assay.cli import app

    lazy = typer.main.get_command(app)
    loaded = typer.main.get_command(app)
    for name in DEFERRED:
        loaded.add_command(load_group(name), name)  # type: ignore[attr-defined]
    with lazy.make_context("assay", ["--help"], resilient_parsing=True) as ctx:
        shown = lazy.get_help(ctx)
    with loaded.make_context("assay", ["--help"], resilient_parsing=True) as ctx:
        expected = loaded.get_help(ctx)
    assert shown == expected
    for name, (_, _, line) in DEFERRED.items():
        assert load_group(name).get_short_help_str(len(line) + 10) == line
        assert f"\n  {name} " in shown
    names = lazy.list_commands(ctx)  # type: ignore[attr-defined]
    assert len(names) == len(set(names)) and set(DEFERRED) < set(names)
